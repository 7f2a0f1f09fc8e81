package mock

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestEndpoints: every endpoint listed is answered (not 404 or 405) at each
// of its hosts, and the list covers every route.
func TestEndpoints(t *testing.T) {
	h := NewHandler()
	eps := h.Endpoints()
	routes := 0
	for _, rs := range h.routes {
		routes += len(rs)
	}
	if got := len(eps) - len(signInEndpoints()); got != routes {
		t.Errorf("%d service endpoints listed for %d routes", got, routes)
	}
	fill := strings.NewReplacer("gt({})", "gt(MockPlayer)", "{user}", "me", "xuid({n})", "xuid(2533274791234567)", "{tenant}", "consumers", "{}", "x")
	for _, ep := range eps {
		for _, host := range ep.Hosts {
			if strings.Contains(host, "*") {
				continue
			}
			req, _ := http.NewRequest(ep.Method, "https://"+host+fill.Replace(ep.Path), strings.NewReader("{}"))
			req.Header.Set("Authorization", Token(xuid1, title1))
			resp, err := h.RoundTrip(req)
			if err != nil && host == serviceAuthHost {
				continue // it drops a connection without a partner certificate
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// A service may answer 404 for a thing it lacks; the router's
			// own 404 and 405 say the call is not served.
			if strings.Contains(string(b), "no such resource") || strings.Contains(string(b), "no such sign-in endpoint") ||
				resp.StatusCode == http.StatusMethodNotAllowed {
				t.Errorf("%s https://%s%s: %d %s", ep.Method, host, fill.Replace(ep.Path), resp.StatusCode, b)
			}
		}
	}
}
