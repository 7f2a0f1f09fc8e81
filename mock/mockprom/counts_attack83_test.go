package mockprom_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
	"github.com/xblgo/fgrl/mock/mockprom"
)

// attack83Samples scrapes srv's /metrics and returns its fgrl_mock_ samples,
// "name{labels}" to value, and the whole text.
func attack83Samples(t *testing.T, srv *httptest.Server) (map[string]float64, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Error(err)
		return nil, ""
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/metrics: %d %q", resp.StatusCode, b)
		return nil, ""
	}
	out := map[string]float64{}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "fgrl_mock_") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, _ := strconv.ParseFloat(l[i+1:], 64)
		out[l[:i]] = v
	}
	return out, string(b)
}

// attack83Call makes one call as user to host+path through srv; the status.
func attack83Call(t *testing.T, srv *httptest.Server, host, path, user string) int {
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	req.Host = host
	req.Header.Set("Authorization", mock.Token(user, "1234567890"))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// BREAK. mockprom.Handler: "fgrl_mock_requests_total{scope} requests to a
// service, by rule scope / fgrl_mock_throttled_total{scope} 429 answers,
// by rule scope" (the 503 line names its causes, "store failures, injected
// faults"; the 429 line names none); docs/MOCK.md: "Scripted answers are
// not counted against FGRL unless `count: true`".
//
// A script rule with count: true answers presence 429 (Retry-After 1):
// five calls, all answered 429 to the client. The scrape counts them as
// presence/read requests (fgrl_mock_requests_total 5) yet
// fgrl_mock_throttled_total{scope="presence/read"} stays 0: the
// dashboard of a rehearsal built on scripted 429s shows no 429 answer.
func TestAttack83ScriptedCounted429NotThrottledTotal(t *testing.T) {
	s, err := mock.ReadScript(strings.NewReader(`
rules:
  - match: {host: userpresence.xboxlive.com}
    count: true
    answers: [{status: 429, headers: {Retry-After: "1"}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	h := mock.Must(mock.New(mock.Config{Script: s}))
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	for i := range 5 {
		if code := attack83Call(t, srv, "userpresence.xboxlive.com", "/users/xuid(2533274790000001)", "2533274790000001"); code != 429 {
			t.Fatalf("setup: call %d: %d", i, code)
		}
	}
	m, _ := attack83Samples(t, srv)
	req, thr := m[`fgrl_mock_requests_total{scope="presence/read"}`], m[`fgrl_mock_throttled_total{scope="presence/read"}`]
	if thr != 5 {
		t.Errorf("5 presence calls answered 429: fgrl_mock_requests_total{scope=\"presence/read\"} %v, fgrl_mock_throttled_total %v", req, thr)
	}
}

// held: mockprom's counters are true and never go back, under concurrency
// (-race), through a reset: fgrl_mock_throttled_total is "429 answers, by
// rule scope", fgrl_mock_requests_total "requests to a service",
// fgrl_mock_service_faults_injected_total "service faults answered, by
// rule scope and kind"; mock.Handler.Reset: "the counters (Metrics)
// stay". 8 goroutines make 25 presence calls each (a user each, below
// presence/read's burst of 30) under a
// presence service fault of 429 at rate 0.5, while 3 goroutines scrape
// and one Reset happens mid-run (which ends the fault): no counter goes
// down between two scrapes of one scraper, and the last scrape's
// presence/read requests = calls made, throttled = 429s the clients got =
// the injected 429s. No scrape holds an XUID, a userhash, a token or a
// gamertag.
func TestAttack83CountsTrueUnderConcurrency(t *testing.T) {
	h := mock.NewHandler()
	if err := h.SetFaults(mock.Faults{Services: []mock.ServiceFault{{Service: "presence", Status: 429, Rate: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	var calls, scrapers sync.WaitGroup
	var made, got429 atomic.Int64
	stop := make(chan struct{})
	var users []string
	for u := range 8 {
		users = append(users, strconv.Itoa(2533274790000200+u))
	}
	var leaks sync.Map
	for range 3 {
		scrapers.Go(func() {
			last := map[string]float64{}
			for {
				select {
				case <-stop:
					return
				default:
				}
				m, text := attack83Samples(t, srv)
				for k, v := range m {
					if strings.Contains(k, "_total") && v < last[k] {
						t.Errorf("%s went down: %v then %v", k, last[k], v)
					}
					last[k] = v
				}
				for _, u := range users {
					for _, s := range []string{u, mock.UserHash(u), "XBL3.0", mock.Token(u, "1234567890")} {
						if strings.Contains(text, s) {
							leaks.Store(s, true)
						}
					}
				}
			}
		})
	}
	for u := range 8 {
		calls.Go(func() {
			for i := range 25 {
				if u == 0 && i == 12 {
					if err := h.Reset(context.Background()); err != nil {
						t.Error(err)
					}
				}
				code := attack83Call(t, srv, "userpresence.xboxlive.com", "/users/xuid("+users[u]+")", users[u])
				made.Add(1)
				if code == 429 {
					got429.Add(1)
				}
			}
		})
	}
	calls.Wait()
	close(stop)
	scrapers.Wait()
	leaks.Range(func(k, _ any) bool { t.Errorf("/metrics holds %q", k); return true })
	m, _ := attack83Samples(t, srv)
	want := map[string]float64{
		`fgrl_mock_requests_total{scope="presence/read"}`:                           float64(made.Load()),
		`fgrl_mock_throttled_total{scope="presence/read"}`:                          float64(got429.Load()),
		`fgrl_mock_service_faults_injected_total{kind="429",scope="presence/read"}`: float64(got429.Load()),
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if got429.Load() == 0 {
		t.Error("setup: no 429")
	}
	t.Logf("calls %d, 429s %d", made.Load(), got429.Load())
}

// held: two mocks side by side, each with its own mockprom.Handler on
// one server (and a second Handler of the same mock): each scrape counts
// its own mock's calls only; two Handlers of one mock agree.
func TestAttack83TwoMocksTwoHandlers(t *testing.T) {
	a, b := mock.NewHandler(), mock.NewHandler()
	mux := http.NewServeMux()
	mux.Handle("/a/metrics", mockprom.Handler(a))
	mux.Handle("/b/metrics", mockprom.Handler(b))
	mux.Handle("/a2/metrics", mockprom.Handler(a))
	srvA := httptest.NewServer(a)
	defer srvA.Close()
	srvB := httptest.NewServer(b)
	defer srvB.Close()
	metrics := httptest.NewServer(mux)
	defer metrics.Close()
	for range 12 {
		attack83Call(t, srvA, "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag", "2533274790000001")
	}
	for range 3 {
		attack83Call(t, srvB, "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag", "2533274790000001")
	}
	scrape := func(p string) string {
		resp, err := metrics.Client().Get(metrics.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var keep []string
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "fgrl_mock_") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	ta, tb, ta2 := scrape("/a/metrics"), scrape("/b/metrics"), scrape("/a2/metrics")
	for _, c := range []struct{ text, want string }{
		{ta, `fgrl_mock_requests_total{scope="profile"} 12`},
		{ta, `fgrl_mock_throttled_total{scope="profile"} 2`},
		{tb, `fgrl_mock_requests_total{scope="profile"} 3`},
		{tb, `fgrl_mock_throttled_total{scope="profile"} 0`},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("scrape lacks %s:\n%s", c.want, c.text)
		}
	}
	if ta != ta2 {
		t.Errorf("two Handlers of one mock differ:\n%s\n--\n%s", ta, ta2)
	}
}
