package admin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestAdminAPI: over loopback, a key's counts, listing, forgetting one key
// and all, and setting faults at run time.
func TestAdminAPI(t *testing.T) {
	srv := serveAll(t, mock.NewHandler())
	for range 12 { // profile: 10 per 15 s
		getProfile(t, srv)
	}
	var k mock.KeyCounts
	if code := api(t, srv, "GET", keyQuery, "", &k); code != 200 || k.Burst.Count != 12 || k.Burst.Limit != 10 || k.User != mock.UserHash(xuid1) {
		t.Errorf("GET key: %d %+v", code, k)
	}
	var list []mock.KeyCounts
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

	var f mock.Faults
	if code := api(t, srv, "PUT", "/_fgrl/api/faults", `{"errorRate": 1, "retryAfter": "http-date"}`, &f); code != 200 ||
		f.ErrorRate != 1 || f.RetryAfter != mock.RetryAfterHTTPDate {
		t.Errorf("PUT faults: %d %+v", code, f)
	}
	if s := getProfile(t, srv); s != 500 && s != 503 {
		t.Errorf("with errorRate 1: status %d", s)
	}
	// A partial update changes what it names, and only that.
	if code := api(t, srv, "PUT", "/_fgrl/api/faults", `{"seed": 9}`, &f); code != 200 || f.ErrorRate != 1 || f.Seed != 9 ||
		f.RetryAfter != mock.RetryAfterHTTPDate {
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
	srv := serveAll(t, mock.NewHandler())
	file := `{"accounts": [{"xuid": "1", "gamerscore": ` + strings.Repeat("9", 1_000_000) + `}]}`
	req, _ := http.NewRequest("PUT", srv.URL+Prefix+"api/world", strings.NewReader(file))
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

// stalledWriter is a client reading an export slowly: its first Write
// says so on started, and every Write waits for release.
type stalledWriter struct {
	header  http.Header
	status  int
	started chan<- struct{}
	release <-chan struct{}
	once    sync.Once
}

func (s *stalledWriter) Header() http.Header { return s.header }
func (s *stalledWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *stalledWriter) Write(p []byte) (int, error) {
	s.once.Do(func() { s.started <- struct{}{} })
	<-s.release
	return len(p), nil
}

// TestCallExportsBounded: at most maxExports exports of the record are
// served at once, each holding its copy of the calls until its client has
// read it; one more gets 503, and once one ends another is served.
func TestCallExportsBounded(t *testing.T) {
	h := mock.NewHandler()
	getProfileVia(t, h)
	a := &admin{h: h}
	started, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for i := range maxExports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.exportCalls(&stalledWriter{header: http.Header{}, started: started, release: release},
				httptest.NewRequest("GET", Prefix+"api/calls", nil), i%2 == 0)
		}()
		<-started
	}
	for _, har := range []bool{false, true} {
		w := httptest.NewRecorder()
		a.exportCalls(w, httptest.NewRequest("GET", Prefix+"api/calls", nil), har)
		if w.Code != http.StatusServiceUnavailable {
			t.Errorf("export %d (HAR %v) with %d being read: %d %s, want 503", maxExports+1, har, maxExports, w.Code, w.Body)
		}
	}
	close(release)
	wg.Wait()
	w := httptest.NewRecorder()
	a.exportCalls(w, httptest.NewRequest("GET", Prefix+"api/calls", nil), false)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "profile.xboxlive.com") {
		t.Errorf("an export once the others ended: %d %s", w.Code, w.Body)
	}
}
