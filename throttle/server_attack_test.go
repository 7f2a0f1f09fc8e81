package throttle_test

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// ServerStore (server.go): "a request is refused when either count is
// already at or over its limit, and every request, refused or not,
// increments both counts."
//
// The mock reads its clock before Take takes the store's lock
// (mock/pipeline.go, count), so two requests racing at a window's opening
// reach the store a millisecond out of order. The earlier-stamped one,
// taken second, restarts both windows: the first request's count is
// forgotten and a burst of 1 serves two requests in a millisecond.
func TestAttackServerRequestStampedBeforeWindowStartRestartsIt(t *testing.T) {
	var s throttle.MemoryServerStore // windows open at the first request
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	d1, _ := s.Take(context.Background(), k, l, attackAt(10.001))
	d2, _ := s.Take(context.Background(), k, l, attackAt(10))
	if !d1.Allowed || d2.Allowed || d2.Burst.Count != 2 || d2.Sustain.Count != 2 {
		t.Errorf("2nd request (stamped 1 ms before the 1st) = %+v; want refused, burst and sustain counts 2", d2)
	}
}

// held: ServerStore's rule, against a brute-force fixed-window model: at a
// random offset, with random request times (bursts at one instant
// included), both alignments, every decision and both counts match a
// direct count of the requests since each window opened.
func TestAttackServerMatchesFixedWindowModel(t *testing.T) {
	rng := newAtkRand(7)
	for trial := range 300 {
		align := throttle.Align(trial % 2)
		s := throttle.MemoryServerStore{Align: align}
		k := throttle.Key{User: "u", Title: "t", Scope: "s"}
		l := throttle.Limit{Burst: rng.intn(6), Sustain: rng.intn(20)}
		if l.Burst == 0 && l.Sustain == 0 {
			l.Sustain = 1
		}
		now := attackBase.Add(time.Duration(rng.intn(1_000_000_000)) * time.Millisecond)
		type win struct {
			start time.Time
			n     int
			open  bool
		}
		var bw, sw win
		roll := func(w *win, p time.Duration) {
			if w.open && now.Sub(w.start) < p {
				return
			}
			w.open, w.n, w.start = true, 0, now
			if align == throttle.ClockAligned {
				w.start = now.Add(-time.Duration(now.UnixNano() % int64(p)))
			}
		}
		for range 200 {
			now = now.Add(time.Duration(rng.intn(4000)) * time.Millisecond * time.Duration(rng.intn(2)))
			roll(&bw, throttle.BurstPeriod)
			roll(&sw, throttle.SustainPeriod)
			over := (l.Burst > 0 && bw.n >= l.Burst) || (l.Sustain > 0 && sw.n >= l.Sustain)
			bw.n++
			sw.n++
			d, _ := s.Take(context.Background(), k, l, now)
			if d.Allowed == over || d.Burst.Count != bw.n || d.Sustain.Count != sw.n {
				t.Fatalf("trial %d align %d %+v at %v: got %+v, model allowed %v burst %d sustain %d", trial, align, l, now, d, !over, bw.n, sw.n)
			}
			if !d.Allowed && (d.RetryAfter <= 0 || d.RetryAfter > throttle.SustainPeriod) {
				t.Fatalf("RetryAfter %v", d.RetryAfter)
			}
		}
	}
}

// attackRand is a small deterministic generator (splitmix64).
type attackRand struct{ s uint64 }

func newAtkRand(seed uint64) *attackRand { return &attackRand{seed} }

func (r *attackRand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *attackRand) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.next() % uint64(n))
}
