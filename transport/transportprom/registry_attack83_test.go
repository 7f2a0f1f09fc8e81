package transportprom_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
	"github.com/xblgo/fgrl/transport/transportprom"
)

// attack83Gather gathers g, flattened into "name{l=v,...}" to value.
func attack83Gather(g prometheus.Gatherer) (map[string]float64, error) {
	families, err := g.Gather()
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out[f.GetName()+"{"+strings.Join(ls, ",")+"}"] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out, err
}

// attack83Send makes n profile calls as user through tr.
func attack83Send(tr *transport.Transport, user string, n int) {
	for range n {
		req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", mock.Token(user, "1234567890"))
		if resp, err := tr.RoundTrip(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}

// held: transportprom.Collector: "Several transports need a Collector
// each, registered with a prometheus.WrapRegistererWith label that tells
// them apart." Registering one transport's Collector twice, or a second
// transport's without a label, is refused (AlreadyRegisteredError, whose
// ExistingCollector reads the first transport): no silent merge, no
// Gather error. With WrapRegistererWith labels, two transports (one
// mock each: 12 and 3 calls) give their own counts in one pedantic
// registry; unregistering one (through its wrapped registerer) removes
// its series only, and it registers again.
func TestAttack83RegisterTwiceTwoTransportsUnregister(t *testing.T) {
	trA := &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890", RetryWindow: -1}
	trB := &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890", RetryWindow: -1}
	attack83Send(trA, "2533274790000001", 12)
	attack83Send(trB, "2533274790000001", 3)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(transportprom.Collector(trA))
	var are prometheus.AlreadyRegisteredError
	if err := reg.Register(transportprom.Collector(trA)); !errors.As(err, &are) {
		t.Errorf("registering trA's Collector twice: %v", err)
	} else if are.ExistingCollector == nil {
		t.Error("no ExistingCollector")
	}
	if err := reg.Register(transportprom.Collector(trB)); err == nil {
		t.Error("a second transport's Collector registered without a label")
	}
	v, err := attack83Gather(reg)
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	if v := v["fgrl_transport_attempts_total{}"]; v != float64(trA.Stats().Attempts) {
		t.Errorf("attempts %v, trA's %d", v, trA.Stats().Attempts)
	}

	reg2 := prometheus.NewPedanticRegistry()
	ra := prometheus.WrapRegistererWith(prometheus.Labels{"transport": "a"}, reg2)
	rb := prometheus.WrapRegistererWith(prometheus.Labels{"transport": "b"}, reg2)
	ra.MustRegister(transportprom.Collector(trA))
	rb.MustRegister(transportprom.Collector(trB))
	v, err = attack83Gather(reg2)
	if err != nil {
		t.Fatalf("Gather of two: %v", err)
	}
	if a, b := v["fgrl_transport_attempts_total{transport=a}"], v["fgrl_transport_attempts_total{transport=b}"]; a != float64(trA.Stats().Attempts) || b != float64(trB.Stats().Attempts) || a == b {
		t.Errorf("attempts a %v (Stats %d), b %v (Stats %d)", a, trA.Stats().Attempts, b, trB.Stats().Attempts)
	}
	if !rb.Unregister(transportprom.Collector(trB)) {
		t.Error("Unregister b: false")
	}
	v, _ = attack83Gather(reg2)
	for k := range v {
		if strings.Contains(k, "transport=b") {
			t.Errorf("after unregistering b: %s", k)
		}
	}
	if _, ok := v["fgrl_transport_attempts_total{transport=a}"]; !ok {
		t.Error("unregistering b removed a")
	}
	if err := rb.Register(transportprom.Collector(trB)); err != nil {
		t.Errorf("registering b again: %v", err)
	}
}

// held: the Collector "reading t on each scrape" gives true counts under
// concurrency (-race): 16 users call profile 20 times each through one
// transport (retries off) whose service answers every third request 429,
// while 2 goroutines Gather: no Gather fails, no counter goes down, and
// at the end fgrl_transport_attempts_total = requests the service got,
// fgrl_transport_server_429s_total = 429s it sent, and every call was
// either sent or refused locally (attempts + local refusals = calls).
func TestAttack83CountsTrueConcurrent(t *testing.T) {
	var seen, sent429 atomic.Int64
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if seen.Add(1)%3 == 0 {
			sent429.Add(1)
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}}, Request: req, Body: io.NopCloser(strings.NewReader(`{}`))}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: req, Body: io.NopCloser(strings.NewReader(`{}`))}, nil
	})
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(transportprom.Collector(tr))
	stop := make(chan struct{})
	var scrapers, calls sync.WaitGroup
	for range 2 {
		scrapers.Go(func() {
			last := map[string]float64{}
			for {
				select {
				case <-stop:
					return
				default:
				}
				vals, err := attack83Gather(reg)
				if err != nil {
					t.Errorf("Gather: %v", err)
					return
				}
				for k, v := range vals {
					if strings.Contains(k, "_total") && v < last[k] {
						t.Errorf("%s went down: %v then %v", k, last[k], v)
					}
					last[k] = v
				}
			}
		})
	}
	const users, each = 16, 20
	for u := range users {
		calls.Go(func() { attack83Send(tr, strconv.Itoa(2533274790000300+u), each) })
	}
	calls.Wait()
	close(stop)
	scrapers.Wait()
	v, err := attack83Gather(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Stats()
	for name, want := range map[string]int64{"attempts": seen.Load(), "server_429s": sent429.Load()} {
		if got := v[fmt.Sprintf("fgrl_transport_%s_total{}", name)]; got != float64(want) {
			t.Errorf("fgrl_transport_%s_total %v, want %d", name, got, want)
		}
	}
	if s.Attempts+s.LocalRefusals != users*each {
		t.Errorf("attempts %d + local refusals %d != %d calls (%+v)", s.Attempts, s.LocalRefusals, users*each, s)
	}
	t.Logf("stats %+v", s)
}
