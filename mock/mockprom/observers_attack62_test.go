package mockprom_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
	"github.com/xblgo/fgrl/mock/mockprom"
)

func attack62Get(t *testing.T, srv *httptest.Server, host, path, auth string) {
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	req.Host = host
	req.Header.Set("Authorization", auth)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func attack62Body(t *testing.T, srv *httptest.Server) string {
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %q", resp.StatusCode, b)
	}
	return string(b)
}

// held: mockprom's metrics are counts "by rule scope" and key totals
// (fgrl_mock_keys, fgrl_mock_store_keys are numbers): a mock.Handler's
// per-user data is not exposed, and /metrics does not grow with users.
//
// TestAttack62TenThousandUsersMetricsBounded: 10,000 distinct users (XUID in the
// path, gamertag in the query) call profile (each once, some twice into a
// 429) and presence: /metrics is as many lines after as after the first
// two users, within a few bytes (the numbers' digits), and holds no XUID,
// userhash, gamertag or token.
func TestAttack62TenThousandUsersMetricsBounded(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	call := func(i int) {
		xuid := strconv.Itoa(2533274790000000 + i)
		auth := mock.Token(xuid, "1234567890")
		attack62Get(t, srv, "profile.xboxlive.com", "/users/xuid("+xuid+")/profile/settings?settings=Gamertag&gt=AtkGamer"+strconv.Itoa(i), auth)
		attack62Get(t, srv, "userpresence.xboxlive.com", "/users/xuid("+xuid+")?level=all", auth)
	}
	call(0)
	call(1)
	before := attack62Body(t, srv)
	for i := 2; i < 10000; i++ {
		call(i)
	}
	after := attack62Body(t, srv)
	if nb, na := strings.Count(before, "\n"), strings.Count(after, "\n"); na != nb || len(after) > len(before)+200 {
		t.Errorf("/metrics: %d lines, %d bytes after 2 users; %d lines, %d bytes after 10,000", nb, len(before), na, len(after))
	}
	for _, s := range []string{"25332747", "AtkGamer", mock.UserHash("2533274790000005"), "XBL3.0"} {
		if strings.Contains(after, s) {
			t.Errorf("/metrics holds %q", s)
		}
	}
	if !strings.Contains(after, `fgrl_mock_requests_total{scope="profile"}`) {
		t.Errorf("setup: no profile requests counted:\n%s", after)
	}
	t.Logf("%d bytes after 10,000 users", len(after))
}

// held: the counters (_total) of /metrics never go down while calls run,
// and every concurrent scrape, the first ones included (the registry
// "made on the first scrape"), answers 200.
func TestAttack62ScrapeWhileServing(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	done := make(chan struct{})
	var scrapers sync.WaitGroup
	for range 4 {
		scrapers.Go(func() {
			last := map[string]float64{}
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, l := range strings.Split(attack62Body(t, srv), "\n") {
					name, v, ok := strings.Cut(l, " ")
					if !ok || strings.HasPrefix(l, "#") || !strings.Contains(name, "_total") {
						continue
					}
					f, _ := strconv.ParseFloat(v, 64)
					if f < last[name] {
						t.Errorf("%s went down: %v then %v", name, last[name], f)
					}
					last[name] = f
				}
			}
		})
	}
	var calls sync.WaitGroup
	for u := range 8 {
		calls.Go(func() {
			auth := mock.Token(strconv.Itoa(2533274790000000+u), "1234567890")
			for range 30 {
				attack62Get(t, srv, "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag", auth)
			}
		})
	}
	calls.Wait()
	close(done)
	scrapers.Wait()
	m := h.Metrics()
	if c := m.Scopes["profile"]; c.Requests != 240 {
		t.Errorf("profile requests %d, want 240 (%+v)", c.Requests, c)
	}
}
