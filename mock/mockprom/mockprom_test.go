package mockprom_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
	"github.com/xblgo/fgrl/mock/mockprom"
)

// TestMetrics: /metrics, served by the admin endpoints with this package's handler,
// counts requests, 429s and 503s per scope, behind the admin access check.
func TestMetrics(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	for range 12 { // profile's burst is 10: two 429s
		req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag", nil)
		req.Host = "profile.xboxlive.com"
		req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// A presence outage: one call answered 503 by a service fault.
	if err := h.SetFaults(mock.Faults{Services: []mock.ServiceFault{{Service: "presence", Status: 503}}}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/users/me", nil)
	req.Host = "userpresence.xboxlive.com"
	req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
	if resp, err := srv.Client().Do(req); err != nil || resp.StatusCode != 503 {
		t.Fatalf("presence in an outage: %v %v", resp, err)
	}
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "fgrl_mock_") {
			got = append(got, sc.Text())
		}
	}
	want := []string{
		"fgrl_mock_fault_switches_total 1",
		"fgrl_mock_keys 2",
		`fgrl_mock_requests_total{scope="presence/read"} 1`,
		`fgrl_mock_requests_total{scope="profile"} 12`,
		`fgrl_mock_service_faults{service="presence"} 1`,
		`fgrl_mock_service_faults_injected_total{kind="503",scope="presence/read"} 1`,
		"fgrl_mock_store_errors_total 0",
		"fgrl_mock_store_keys 2",
		`fgrl_mock_throttled_total{scope="presence/read"} 0`,
		`fgrl_mock_throttled_total{scope="profile"} 2`,
		`fgrl_mock_unavailable_total{scope="presence/read"} 1`,
		`fgrl_mock_unavailable_total{scope="profile"} 0`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	req = httptest.NewRequest("GET", "/metrics", nil)
	req.RemoteAddr = "192.0.2.7:5000" // off this machine, no token
	rec := httptest.NewRecorder()
	admin.Handler(h, admin.Config{Metrics: mockprom.Handler(h)}).ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a remote peer without the token got %d from /metrics, want 403", rec.Code)
	}
}
