package transportprom_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
	"github.com/xblgo/fgrl/transport/transportprom"
)

// attack62Server answers 429 with a body reporting a burst of 6 (the table says
// 10 for profile) and quoting the caller's path and Authorization back,
// with escape codes and a bad surrogate.
func attack62Server() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(429)
		fmt.Fprintf(w, `{"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"Rate %s %s \u001b[2J\ud800"}`, r.URL.Path, r.Header.Get("Authorization"))
	}))
}

func attack62Call(tr *transport.Transport, srv *httptest.Server, host, xuid string) {
	req, _ := http.NewRequest("GET", srv.URL+"/users/xuid("+xuid+")/profile/settings?settings=Gamertag", nil)
	req.Host = host
	req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
	if resp, err := tr.RoundTrip(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// held: Collector's fgrl_transport_limit is "each limit learned for a whole
// scope" (one user's is skipped: "a label per user would grow without
// bound"), Stats "counts what a Transport did".
//
// TestAttack62TenThousandUsersSeriesBounded: 10,000 distinct users (XUID in the
// path, token in the header, both quoted back by the 429) each meet a 429
// of profile, and 300 hosts the data lacks two users each: the scrape's
// series do not grow with the users (at most the 9 counters plus 2
// sources × 2 windows of each scope), no label names a user (XUID,
// userhash, token), and every label value is valid UTF-8 without control
// characters.
func TestAttack62TenThousandUsersSeriesBounded(t *testing.T) {
	srv := attack62Server()
	defer srv.Close()
	tr := &transport.Transport{TitleID: "1234567890", RetryWindow: -1}
	var uhs []string
	for i := range 10000 {
		xuid := strconv.Itoa(2533274790000000 + i)
		uhs = append(uhs, mock.UserHash(xuid))
		attack62Call(tr, srv, "profile.xboxlive.com", xuid)
	}
	for i := range 300 {
		attack62Call(tr, srv, fmt.Sprintf("atk%d.example.com", i), "2533274799999991")
		attack62Call(tr, srv, fmt.Sprintf("atk%d.example.com", i), "2533274799999992")
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(transportprom.Collector(tr))
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	n := 0
	var text strings.Builder
	for _, f := range families {
		for _, m := range f.GetMetric() {
			n++
			for _, l := range m.GetLabel() {
				v := l.GetValue()
				text.WriteString(v + "\n")
				if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
					t.Errorf("%s: label %s=%q", f.GetName(), l.GetName(), v)
				}
			}
		}
	}
	all := text.String()
	for _, s := range []string{"25332747", "XBL3.0", uhs[0], uhs[9999]} {
		if strings.Contains(all, s) {
			t.Errorf("a label holds %q", s)
		}
	}
	if max := 9 + 2*2*(1+300); n > max {
		t.Errorf("%d series, over %d", n, max)
	}
	t.Logf("%d series; stats %+v; learned %d", n, tr.Stats(), len(tr.LearnedLimits()))
}

// held: Collector reads t "on each scrape"; its counters are Prometheus
// counters (_total), which never go down.
//
// TestAttack62ScrapeWhileLearning: 8 goroutines call 200 hosts the data lacks
// (two users each, so limits are confirmed for their scopes) and profile,
// while two goroutines Gather in a loop: no Gather fails (no duplicate
// series, no invalid label), no counter goes down between two scrapes,
// and the last scrape's counters equal Stats.
func TestAttack62ScrapeWhileLearning(t *testing.T) {
	srv := attack62Server()
	defer srv.Close()
	tr := &transport.Transport{TitleID: "1234567890", RetryWindow: -1}
	reg := prometheus.NewRegistry()
	reg.MustRegister(transportprom.Collector(tr))
	done := make(chan struct{})
	var scrapers sync.WaitGroup
	for range 2 {
		scrapers.Go(func() {
			last := map[string]float64{}
			for {
				select {
				case <-done:
					return
				default:
				}
				families, err := reg.Gather()
				if err != nil {
					t.Errorf("Gather: %v", err)
					return
				}
				for _, f := range families {
					if !strings.HasSuffix(f.GetName(), "_total") {
						continue
					}
					v := f.GetMetric()[0].GetCounter().GetValue()
					if v < last[f.GetName()] {
						t.Errorf("%s went down: %v then %v", f.GetName(), last[f.GetName()], v)
					}
					last[f.GetName()] = v
				}
			}
		})
	}
	var calls sync.WaitGroup
	for g := range 8 {
		calls.Go(func() {
			for i := range 200 {
				attack62Call(tr, srv, fmt.Sprintf("atk%d.example.com", (i+g*25)%200), strconv.Itoa(2533274790000000+g))
				attack62Call(tr, srv, "profile.xboxlive.com", strconv.Itoa(2533274790000000+g))
			}
		})
	}
	calls.Wait()
	close(done)
	scrapers.Wait()
	s := tr.Stats()
	for name, want := range map[string]int64{"fgrl_transport_attempts_total": s.Attempts, "fgrl_transport_server_429s_total": s.Server429s,
		"fgrl_transport_local_refusals_total": s.LocalRefusals, "fgrl_transport_limits_learned_total": s.LimitsLearned} {
		got := attack62One(t, reg, name)
		if got != float64(want) {
			t.Errorf("%s = %v, Stats %d", name, got, want)
		}
	}
	if n := len(tr.LearnedLimits()); n == 0 || n > 2*throttle.MaxLearned+8*2 {
		t.Errorf("setup: %d learned limits", n)
	}
	t.Logf("stats %+v, %d learned", s, len(tr.LearnedLimits()))
}

// attack62One is the value of the one counter named name in reg's scrape.
func attack62One(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}
