package admin

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/mock"
)

const (
	xuid1  = "2533274791234567"
	title1 = "1234567890"
)

// serveAll serves h and its admin endpoints on one loopback address, as
// xblcall mock does.
func serveAll(t *testing.T, h *mock.Handler) *httptest.Server {
	srv := httptest.NewServer(WithServices(h, Config{}))
	t.Cleanup(srv.Close)
	return srv
}

// getProfile sends a profile read for xuid1 through the server as a game would,
// the service's name in the Host header.
func getProfile(t *testing.T, srv *httptest.Server) int {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag", nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", mock.Token(xuid1, title1))
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

// TestDocListsEveryEndpoint: the package doc lists every endpoint the mux
// serves, and no other: each pattern of endpoints (and Config.Metrics')
// is a "METHOD path" line of the doc, and each such line a pattern. Before,
// the doc of mock.Handler.Admin listed 7 of its 19.
func TestDocListsEveryEndpoint(t *testing.T) {
	src, err := os.ReadFile("admin.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, ok := strings.Cut(string(src), "\npackage admin\n")
	if !ok {
		t.Fatal("admin.go has no package clause")
	}
	listed := map[string]bool{}
	line := regexp.MustCompile(`(?m)^//\t(GET|PUT|POST|DELETE) +(/\S*)`)
	for _, m := range line.FindAllStringSubmatch(doc, -1) {
		path, _, _ := strings.Cut(m[2], "?")
		listed[m[1]+" "+path] = true
	}
	served := map[string]bool{metricsPattern: true}
	for _, e := range endpoints {
		served[strings.TrimSuffix(e.pattern, "{$}")] = true
	}
	if diff := cmp.Diff(served, listed); diff != "" {
		t.Errorf("endpoints served (-) and listed in the package doc (+):\n%s", diff)
	}
	if len(served) < 19 {
		t.Errorf("%d endpoints served; the test reads too few", len(served))
	}
}

// TestEveryEndpointServed: each endpoint the doc lists answers at its
// pattern (not the mux's 404 or 405), Config.Metrics' only when set.
func TestEveryEndpointServed(t *testing.T) {
	h := mock.NewHandler()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("metrics")) })
	for _, withMetrics := range []bool{false, true} {
		c := Config{}
		if withMetrics {
			c.Metrics = metrics
		}
		srv := httptest.NewServer(WithServices(h, c))
		patterns := []string{metricsPattern}
		for _, e := range endpoints {
			patterns = append(patterns, e.pattern)
		}
		for _, p := range patterns {
			method, path, _ := strings.Cut(strings.TrimSuffix(p, "{$}"), " ")
			if strings.HasSuffix(path, "events") {
				continue // a stream: TestEvents
			}
			req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader("{}"))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			missing := resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed
			if want := p != metricsPattern || withMetrics; missing == want {
				t.Errorf("%s (metrics %v): %d", p, withMetrics, resp.StatusCode)
			}
		}
		srv.Close()
	}
}
