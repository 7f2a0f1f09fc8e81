package mockprom_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
	"github.com/xblgo/fgrl/mock/mockprom"
)

func attackScrape(t *testing.T, srv *httptest.Server) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

func attackControl(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }

// The package doc of mockprom: Handler "serves h's metrics", among them
// fgrl_mock_service_faults, "service faults in force now, by service or
// scope"; mock.ServiceFault.Service "is a rule's service ("presence") or
// scope ("presence/write"), or RTAService"; mock.Config.Faults "are
// injected from the start; Handler.SetFaults changes them", and
// "Config configures a Handler; New checks it". RELIABILITY.md: "Bad
// input never panics".
//
// TestAttackConfigFaultServiceScrape: SetFaults refuses a service no rule
// has ("no rule has service or scope"), but New takes one in
// Config.Faults. Named "presence\xff" (not UTF-8), it makes every scrape
// of /metrics fail: 500, "prometheus collector panic recovered ...
// not valid UTF-8" and a goroutine's stack trace as the body, instead of
// the mock's metrics.
func TestAttackConfigFaultServiceScrape(t *testing.T) {
	h, err := mock.New(mock.Config{Faults: mock.Faults{Services: []mock.ServiceFault{{Service: "presence\xff", Status: 503}}}})
	if err != nil {
		t.Logf("held: New refused it: %v", err)
		return
	}
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	code, text := attackScrape(t, srv)
	if code != 200 || !strings.Contains(text, "fgrl_mock_requests_total") && !strings.Contains(text, "fgrl_mock_keys") {
		first, _, _ := strings.Cut(text, "stack trace")
		t.Errorf("/metrics with a fault New took for service %q: %d %q", "presence\xff", code, strings.TrimSpace(first))
	}
}

// RELIABILITY.md, the observers' attack (TestHostileHostScope): "every
// label value a scrape shows is escaped (no control character reaches a
// terminal that reads /metrics)"; the mock's metrics attack (2026-12-05,
// 10:55): "the metrics' labels are the limits' scopes and the fault kinds".
//
// TestAttackConfigFaultServiceLabelEscaped: a service fault New took in
// Config.Faults for the service "\x1b]0;pwned\a\x1b[2Jpresence" (no rule
// has it) is a label of /metrics, its escape codes raw.
func TestAttackConfigFaultServiceLabelEscaped(t *testing.T) {
	h, err := mock.New(mock.Config{Faults: mock.Faults{Services: []mock.ServiceFault{{Service: "\x1b]0;pwned\a\x1b[2Jpresence", Status: 503}}}})
	if err != nil {
		t.Logf("held: New refused it: %v", err)
		return
	}
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	_, text := attackScrape(t, srv)
	for _, l := range strings.Split(text, "\n") {
		if strings.ContainsFunc(l, attackControl) {
			t.Errorf("/metrics holds a control character: %q", l)
		}
	}
}

// held: the same fault through the admin API (PUT /_fgrl/api/faults, as
// a test in another language sets it): refused, 400, "no rule has service
// or scope", and /metrics holds no control character.
func TestAttackAdminFaultServiceLabelRefused(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	req, _ := http.NewRequest("PUT", srv.URL+"/_fgrl/api/faults",
		strings.NewReader(`{"services": [{"service": "\u001b]0;pwned\u0007\u001b[2Jpresence", "status": 503}]}`))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || strings.ContainsFunc(string(body), attackControl) {
		t.Errorf("PUT /_fgrl/api/faults with a hostile service name: %d %q", resp.StatusCode, body)
	}
	code, text := attackScrape(t, srv)
	if code != 200 || strings.ContainsFunc(text, attackControl) {
		t.Errorf("/metrics: %d, control characters %v", code, strings.ContainsFunc(text, attackControl))
	}
}
