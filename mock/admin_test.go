package mock

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// serveAll serves h and its Admin endpoints on one loopback address, as
// xblcall mock does.
func serveAll(t *testing.T, h *Handler) *httptest.Server {
	srv := httptest.NewServer(h.WithAdmin(AdminAccess{}, nil))
	t.Cleanup(srv.Close)
	return srv
}

// getProfile sends a profile read for xuid1 through the server as a game would,
// the service's name in the Host header.
func getProfile(t *testing.T, srv *httptest.Server) int {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag", nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// api sends an admin request and decodes its JSON answer into v (when not
// nil); it returns the status.
func api(t *testing.T, srv *httptest.Server, method, path, body string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

const keyQuery = "/_fgrl/api/keys?xuid=" + xuid1 + "&title=" + title1 + "&scope=profile"

// TestAdminAPI: over loopback, a key's counts, listing, forgetting one key
// and all, and setting faults at run time.
func TestAdminAPI(t *testing.T) {
	srv := serveAll(t, NewHandler())
	for range 12 { // profile: 10 per 15 s
		getProfile(t, srv)
	}
	var k KeyCounts
	if code := api(t, srv, "GET", keyQuery, "", &k); code != 200 || k.Burst.Count != 12 || k.Burst.Limit != 10 || k.User != UserHash(xuid1) {
		t.Errorf("GET key: %d %+v", code, k)
	}
	var list []KeyCounts
	if api(t, srv, "GET", "/_fgrl/api/keys", "", &list); len(list) != 1 || list[0].Sustain.Count != 12 {
		t.Errorf("GET keys: %+v", list)
	}
	if code := api(t, srv, "DELETE", keyQuery, "", nil); code != http.StatusNoContent {
		t.Errorf("DELETE key: %d", code)
	}
	if api(t, srv, "GET", keyQuery, "", &k); k.Burst.Count != 0 || getProfile(t, srv) != 200 {
		t.Errorf("after DELETE: %+v", k)
	}
	api(t, srv, "DELETE", "/_fgrl/api/keys", "", nil)
	if api(t, srv, "GET", "/_fgrl/api/keys", "", &list); len(list) != 0 {
		t.Errorf("after DELETE all: %+v", list)
	}

	var f Faults
	if code := api(t, srv, "PUT", "/_fgrl/api/faults", `{"errorRate": 1, "retryAfter": "http-date"}`, &f); code != 200 ||
		f.ErrorRate != 1 || f.RetryAfter != RetryAfterHTTPDate {
		t.Errorf("PUT faults: %d %+v", code, f)
	}
	if s := getProfile(t, srv); s != 500 && s != 503 {
		t.Errorf("with errorRate 1: status %d", s)
	}
	// A partial update changes what it names, and only that.
	if code := api(t, srv, "PUT", "/_fgrl/api/faults", `{"seed": 9}`, &f); code != 200 || f.ErrorRate != 1 || f.Seed != 9 ||
		f.RetryAfter != RetryAfterHTTPDate {
		t.Errorf("a partial PUT: %d %+v, want errorRate and retryAfter kept", code, f)
	}
	if code := api(t, srv, "DELETE", "/_fgrl/api/faults", "", nil); code != 204 {
		t.Errorf("DELETE faults: %d", code)
	}
	if s := getProfile(t, srv); s != 200 {
		t.Errorf("faults cleared: status %d", s)
	}
	var e apiError
	for path, body := range map[string]string{
		"/_fgrl/api/faults":  `{"errorRate": 2}`,
		"/_fgrl/api/faults?": `{"retryAfter": "later"}`,
	} {
		if code := api(t, srv, "PUT", path, body, &e); code != 400 || e.Error == "" {
			t.Errorf("PUT %s: %d %q", body, code, e.Error)
		}
	}
	if code := api(t, srv, "GET", "/_fgrl/api/keys?title=1", "", &e); code != 400 || !strings.Contains(e.Error, "needs user") {
		t.Errorf("a key without a user: %d %q", code, e.Error)
	}
	if code := api(t, srv, "GET", "/_fgrl/api/keys?xuid=abc&title=1&scope=profile", "", &e); code != 400 || !strings.Contains(e.Error, "xuid") {
		t.Errorf("a key with a bad xuid: %d %q", code, e.Error)
	}
}

// TestAdminRefusalBounded: the admin API answers a refused world with its
// error, which quoted a number as written: a 1,000,000-digit gamerscore
// made a 400 of 1 MB.
func TestAdminRefusalBounded(t *testing.T) {
	srv := serveAll(t, NewHandler())
	file := `{"accounts": [{"xuid": "1", "gamerscore": ` + strings.Repeat("9", 1_000_000) + `}]}`
	req, _ := http.NewRequest("PUT", srv.URL+AdminPrefix+"api/world", strings.NewReader(file))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || len(b) > 1000 {
		t.Errorf("answer %d of %d bytes %.200q, want 400 of at most 1000", resp.StatusCode, len(b), b)
	}
}

// TestMetrics: the counters that /metrics (package mockprom) exports:
// requests, 429s and 503s per scope, keys, store keys and errors.
func TestMetrics(t *testing.T) {
	h := NewHandler()
	srv := serveAll(t, h)
	for range 12 {
		getProfile(t, srv)
	}
	h.SetFaults(Faults{ErrorRate: 1, Seed: 2})
	getProfile(t, srv) // still a 429: faults apply to admitted requests
	want := Metrics{Scopes: map[string]ScopeCounts{"profile": {Requests: 13, Throttled: 3}}, Keys: 1, StoreKeys: 1,
		FaultSwitches: 1, FaultsActive: map[string]int{}, FaultsInjected: map[[2]string]int64{}}
	if diff := cmp.Diff(want, h.Metrics()); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// TestEvents: the event stream sends a snapshot at once and then every
// second, and ends when the client goes.
func TestEvents(t *testing.T) {
	srv := serveAll(t, NewHandler())
	getProfile(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/_fgrl/events", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	var s Overview
	if err != nil || !strings.HasPrefix(line, "data: ") || json.Unmarshal([]byte(line[6:]), &s) != nil || len(s.Keys) != 1 || s.Scopes["profile"].Requests != 1 {
		t.Errorf("first event %q: %v", line, err)
	}
}
