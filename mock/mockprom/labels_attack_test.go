package mockprom_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
	"github.com/xblgo/fgrl/mock/mockprom"
)

// attackMetrics returns /metrics' lines that are samples (not comments).
func attackMetrics(t *testing.T, srv *httptest.Server) []string {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") && strings.HasPrefix(l, "fgrl_mock_") {
			out = append(out, l)
		}
	}
	return out
}

// held: the metrics' labels are the limits' scopes and the fault kinds
// only (docs/MOCK.md:96-97, 467-469: fgrl_mock_requests_total{scope=...}):
// 300 calls to hosts and paths of the caller's choosing, with titles of
// the caller's choosing in their tokens and a secret in their query and
// headers, under --fallback (which serves any host), add no series, and
// /metrics holds none of their text.
func TestAttackMetricsLabelsNotCallerChosen(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{Fallback: true}))
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	call := func(host, path, title string) {
		req, _ := http.NewRequest("GET", srv.URL+path+"?access_token=atk-METRIC-SECRET", nil)
		req.Host = host
		req.Header.Set("Authorization", mock.Token("2533274790000001", title))
		req.Header.Set("Cookie", "s=atk-METRIC-SECRET")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	call("profile.xboxlive.com", "/users/me/profile/settings", "1234567890")
	call("atk0.xboxlive.com", "/atk/0", "1234567890")
	before := len(attackMetrics(t, srv))
	for i := range 300 {
		call(fmt.Sprintf("atk%d.xboxlive.com", i), fmt.Sprintf("/atk-path-%d/x", i), fmt.Sprintf("%d", 1000000000+i))
	}
	after := attackMetrics(t, srv)
	if len(after) != before {
		t.Errorf("300 calls to hosts, paths and titles of the caller's choosing: %d series, was %d", len(after), before)
	}
	all := strings.Join(after, "\n")
	for _, s := range []string{"atk-METRIC-SECRET", "atk-path", "atk1", "1000000001"} {
		if strings.Contains(all, s) {
			t.Errorf("/metrics holds %q", s)
		}
	}
}
