package admin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/mock"
)

// send sends one request to h as a game would, with xuid1's token, and
// returns its status and body.
func send(t *testing.T, h *mock.Handler, method, url, contract, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", mock.Token(xuid1, title1))
	req.Header.Set("x-xbl-contract-version", contract)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

const presenceURL = "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")"

// presenceState is xuid1's presence state as the mock answers it.
func presenceState(t *testing.T, h *mock.Handler) string {
	t.Helper()
	_, body := send(t, h, "GET", presenceURL, "3", "")
	var p struct{ State string }
	json.Unmarshal([]byte(body), &p)
	return p.State
}

// TestResetForgetsEverything: one POST /_fgrl/api/reset forgets the
// counts, the record of calls, the faults, the script and what calls
// wrote to the world, and keeps the world as seeded. Before, a test suite
// needed five requests (keys, calls, faults, script, world/reset) and
// could forget one.
func TestResetForgetsEverything(t *testing.T) {
	h := mock.NewHandler()
	srv := serveAll(t, h)
	seeded := presenceState(t, h)
	if code, body := send(t, h, "POST", presenceURL+"/devices/current/titles/current", "3", `{"state":"active"}`); code >= 300 {
		t.Fatalf("presence write: %d %s", code, body)
	}
	if s := presenceState(t, h); s == seeded {
		t.Fatalf("presence after a write: %s, the seeded one", s)
	}
	getProfile(t, srv)
	if code := api(t, srv, "PUT", "/_fgrl/api/faults", `{"errorRate": 0.5}`, nil); code != 200 {
		t.Fatalf("PUT faults: %d", code)
	}
	if code := api(t, srv, "PUT", "/_fgrl/api/script", `{"rules":[{"match":{"path":"/x"},"answers":[{"status":418}]}]}`, nil); code != 200 {
		t.Fatalf("PUT script: %d", code)
	}

	if code := api(t, srv, "POST", "/_fgrl/api/reset", "", nil); code != http.StatusNoContent {
		t.Fatalf("POST reset: %d, want 204", code)
	}
	if diff := cmp.Diff(mock.Faults{}, h.Faults()); diff != "" {
		t.Errorf("faults after reset (-want +got):\n%s", diff)
	}
	if s := h.Script(); len(s.Rules) != 0 {
		t.Errorf("script after reset: %+v, want none", s)
	}
	if c := h.Calls(mock.CallFilter{}); len(c) != 0 {
		t.Errorf("%d calls recorded after reset, want 0", len(c))
	}
	if k := h.Overview(context.Background()).Keys; len(k) != 0 {
		t.Errorf("keys counted after reset: %+v, want none", k)
	}
	var k mock.KeyCounts
	if code := api(t, srv, "GET", keyQuery, "", &k); code != 200 || k.Burst.Count != 0 {
		t.Errorf("profile counts after reset: %d %+v, want 0", code, k)
	}
	if s := presenceState(t, h); s != seeded {
		t.Errorf("presence after reset: %s, want the seeded %s", s, seeded)
	}
}

// TestResetNeedsAdmission: a reset obeys the admin endpoints' rules: from
// a peer off loopback without the token, or naming the mock by a rebound
// name, it is refused and nothing is forgotten.
func TestResetNeedsAdmission(t *testing.T) {
	tests := []struct {
		name       string
		access     Config
		host, peer string
		bearer     string
		want       int
	}{
		{"loopback", Config{}, "127.0.0.1:8080", "127.0.0.1:5000", "", 204},
		{"remote, no token configured", Config{}, "192.0.2.7:8080", "192.0.2.1:5000", "", 403},
		{"remote, no token sent", Config{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "", 401},
		{"remote, wrong token", Config{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "nope", 401},
		{"remote, token", Config{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "t0k", 204},
		{"DNS rebinding", Config{Token: "t0k"}, "attacker.example", "127.0.0.1:5000", "t0k", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := mock.NewHandler()
			getProfileVia(t, h)
			h.SetFaults(mock.Faults{ErrorRate: 0.5})
			req := httptest.NewRequest("POST", "/_fgrl/api/reset", nil)
			req.Host, req.RemoteAddr = tt.host, tt.peer
			if tt.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tt.bearer)
			}
			rec := httptest.NewRecorder()
			Handler(h, tt.access).ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.want, rec.Body)
			}
			reset := h.Faults().ErrorRate == 0 && len(h.Calls(mock.CallFilter{})) == 0
			if reset != (tt.want == 204) {
				t.Errorf("status %d, but reset %v", rec.Code, reset)
			}
		})
	}
}

// TestReadyTellsNothing: GET /_fgrl/api/ready answers 200 and
// {"ready":true} and nothing else (no version, host, token or count),
// whatever the mock's state and config; off loopback it obeys the admin
// rules as every endpoint does.
func TestReadyTellsNothing(t *testing.T) {
	h := mock.NewHandler()
	getProfileVia(t, h)
	for _, tt := range []struct {
		name       string
		access     Config
		peer, auth string
		want       int
		body       string
	}{
		{"loopback", Config{Token: "s3cret-token", Hosts: []string{"mock.internal"}}, "127.0.0.1:5000", "", 200, `{"ready":true}`},
		{"remote with the token", Config{Token: "s3cret-token"}, "192.0.2.1:5000", "Bearer s3cret-token", 200, `{"ready":true}`},
		{"remote without", Config{Token: "s3cret-token"}, "192.0.2.1:5000", "", 401, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/_fgrl/api/ready", nil)
			req.Host, req.RemoteAddr = "127.0.0.1:8080", tt.peer
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			Handler(h, tt.access).ServeHTTP(rec, req)
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d", rec.Code, tt.want)
			}
			if strings.Contains(string(body), "s3cret") || strings.Contains(string(body), "mock.internal") {
				t.Errorf("the answer leaks the config: %s", body)
			}
			if tt.want == 200 && string(body) != tt.body {
				t.Errorf("body %s, want %s", body, tt.body)
			}
		})
	}
}

// TestAdminEmptyListsAreArrays: a fresh mock's admin answers (no keys, no
// calls, no script, the default world, a passing check) write [] for
// each empty list, never null.
func TestAdminEmptyListsAreArrays(t *testing.T) {
	srv := serveAll(t, mock.NewHandler())
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/_fgrl/api/keys", ""},
		{"GET", "/_fgrl/api/calls", ""},
		{"GET", "/_fgrl/api/script", ""},
		{"GET", "/_fgrl/api/world", ""},
		{"GET", "/_fgrl/api/faults", ""},
		{"POST", "/_fgrl/api/check", `{"no429": true}`},
	} {
		var raw json.RawMessage
		if code := api(t, srv, r.method, r.path, r.body, &raw); code != 200 {
			t.Errorf("%s %s: %d", r.method, r.path, code)
		}
		if strings.Contains(string(raw), "null") {
			t.Errorf("%s %s: %s has a null", r.method, r.path, raw)
		}
	}
}
