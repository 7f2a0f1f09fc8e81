package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestSameOriginOffLoopbackNeedsToken: "Sec-Fetch-Site: same-origin",
// which any non-browser client may send, admits no peer off loopback
// without the admin token, whatever its Origin; and every endpoint that
// changes the mock is not a GET (a page's <img>, <script> or navigation
// sends a GET with no Origin).
func TestSameOriginOffLoopbackNeedsToken(t *testing.T) {
	h := Handler(mock.NewHandler(), Config{Token: "tok"})
	for _, c := range []struct{ method, path, origin string }{
		{"PUT", "api/faults", ""}, {"PUT", "api/faults", "null"}, {"POST", "api/reset", "http://192.0.2.1:8080"},
		{"GET", "api/calls", ""}, {"DELETE", "api/calls", "http://evil.example"}, {"GET", "api/calls.har", ""},
	} {
		req := httptest.NewRequest(c.method, Prefix+c.path, strings.NewReader(`{"errorRate":0.5}`))
		req.Host, req.RemoteAddr = "192.0.2.1:8080", "192.0.2.7:5000"
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s %s off loopback, same-origin, Origin %q, no token: %d, want 401", c.method, c.path, c.origin, rec.Code)
		}
	}
	for _, e := range endpoints {
		method, path, _ := strings.Cut(e.pattern, " ")
		if method == "GET" && (strings.Contains(path, "reset") || strings.Contains(path, "forget")) {
			t.Errorf("%s changes the mock on a GET", e.pattern)
		}
	}
}
