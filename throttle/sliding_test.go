package throttle

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type admit struct {
	t       time.Time
	allowed bool
	wait    time.Duration
}

func runSliding(t *testing.T, s *slidingLog, l Limit, margin time.Duration, steps []admit) {
	t.Helper()
	for i, st := range steps {
		a := s.Admit(st.t, l, margin)
		got := admit{st.t, a.Allowed, a.Wait}
		if diff := cmp.Diff(st, got, cmp.AllowUnexported(admit{})); diff != "" {
			t.Errorf("step %d: Admit(%v) mismatch (-want +got):\n%s", i, st.t.Sub(t0), diff)
		}
	}
}

func TestSlidingTimeline(t *testing.T) {
	l := Limit{Burst: 2, Sustain: 3}
	var s slidingLog
	runSliding(t, &s, l, 0, []admit{
		{t0, true, 0},
		{t1, true, 0},
		{t2, false, 13 * time.Second},  // 2 in (t2-15s, t2]; t0 leaves at 15 s
		{t4, true, 0},                  // t0 has left the burst span
		{t5, false, 271 * time.Second}, // sustain full until t0+300 s
		{t8, true, 0},                  // t0 has left the sustain span
		{t8, false, time.Second},       // t1 leaves it at 301 s
	})
}

func TestSlidingMargin(t *testing.T) {
	var s slidingLog
	runSliding(t, &s, Limit{Burst: 1, Sustain: 10}, time.Second, []admit{
		{t0, true, 0},
		{t4, false, time.Second},
		{t0.Add(16 * time.Second), true, 0},
	})
}

func TestSlidingBlock(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 10, Sustain: 10}
	s.Block(t0.Add(20 * time.Second))
	s.Block(t0.Add(10 * time.Second)) // an earlier deadline never shortens the block
	a := s.Admit(t1, l, 0)
	if a.Allowed || !a.Blocked || a.Wait != 19*time.Second {
		t.Errorf("Admit while blocked = %+v, want blocked 19s", a)
	}
	if a := s.Admit(t0.Add(20*time.Second), l, 0); !a.Allowed {
		t.Errorf("Admit at deadline = %+v, want allowed", a)
	}
}

func TestSlidingSync(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 10, Sustain: 30}
	s.Admit(t0, l, 0)
	// The server says 10 burst requests are counted in a window that ends in 5 s.
	s.Sync(t1, l, Burst, 10, 5*time.Second)
	snap := s.Snapshot(t1, l, 0)
	if snap.Burst.Count != 10 || snap.Wait != 5*time.Second {
		t.Errorf("after Sync: %+v, want 10 counted and a 5s wait", snap)
	}
	// A report of fewer requests changes nothing.
	s.Sync(t1, l, Burst, 1, 5*time.Second)
	if got := s.Snapshot(t1, l, 0).Burst.Count; got != 10 {
		t.Errorf("after a smaller report: count %d, want 10", got)
	}
	// Nonsense reports are ignored.
	s.Sync(t1, l, Burst, 1<<30, time.Hour)
	s.Sync(t1, l, None, 5, time.Second)
	if got := s.Snapshot(t1, l, 0).Sustain.Count; got != 10 {
		t.Errorf("after nonsense reports: sustain count %d, want 10", got)
	}
}

func TestSlidingResize(t *testing.T) {
	var s slidingLog
	small := Limit{Burst: 2, Sustain: 2}
	s.Admit(t0, small, 0)
	s.Admit(t1, small, 0)
	big := Limit{Burst: 5, Sustain: 5}
	for i := 0; i < 3; i++ {
		if a := s.Admit(t2, big, 0); !a.Allowed {
			t.Fatalf("Admit %d after growing the limit = %+v", i, a)
		}
	}
	if a := s.Admit(t2, big, 0); a.Allowed {
		t.Fatalf("sixth Admit under limit 5 allowed")
	}
	if a := s.Admit(t2, small, 0); a.Allowed {
		t.Fatalf("Admit after shrinking allowed")
	}
}

// TestSlidingNeverExceeds drives random demand and checks, against every
// sliding span, that no period ever holds more than its limit, and that the
// budget admits whenever the exact rule would.
func TestSlidingNeverExceeds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 100; trial++ {
		l := Limit{Burst: 1 + r.IntN(10), Sustain: 1 + r.IntN(40)}
		var s slidingLog
		var admitted []time.Time
		now := t0
		for i := 0; i < 400; i++ {
			now = now.Add(time.Duration(r.Int64N(int64(3 * time.Second))))
			want := inSpan(admitted, now, BurstPeriod) < l.Burst && inSpan(admitted, now, SustainPeriod) < l.Sustain
			a := s.Admit(now, l, 0)
			if a.Allowed != want {
				t.Fatalf("trial %d step %d %+v: Allowed %v, want %v", trial, i, l, a.Allowed, want)
			}
			if a.Allowed {
				admitted = append(admitted, now)
			} else if a.Wait <= 0 {
				t.Fatalf("refused with wait %v", a.Wait)
			}
		}
	}
}

func inSpan(ts []time.Time, now time.Time, span time.Duration) int {
	n := 0
	for _, t := range ts {
		if t.After(now.Add(-span)) {
			n++
		}
	}
	return n
}

// TestSlidingSafeAgainstServer shows the point of the budget: a caller that
// only sends what the budget admits is never refused by the server rule,
// whichever alignment the server uses.
func TestSlidingSafeAgainstServer(t *testing.T) {
	for _, a := range []Align{FirstRequest, ClockAligned} {
		r := rand.New(rand.NewPCG(5, 6))
		l := Limit{Burst: 10, Sustain: 30}
		var s slidingLog
		var w fixedWindows
		now := t0.Add(7 * time.Second)
		sent := 0
		for i := 0; i < 20000; i++ {
			now = now.Add(time.Duration(r.Int64N(int64(400 * time.Millisecond))))
			if !s.Admit(now, l, 0).Allowed {
				continue
			}
			sent++
			if d := w.Take(now, l, a); !d.Allowed {
				t.Fatalf("align %d: server refused admitted call %d at %v: %+v", a, sent, now.Sub(t0), d)
			}
		}
		if sent < 30*int(now.Sub(t0)/SustainPeriod) {
			t.Errorf("align %d: sent %d in %v, below the sustain allowance", a, sent, now.Sub(t0))
		}
	}
}

func TestSlidingReserve(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 2, Sustain: 10}
	steps := []struct {
		t       time.Time
		maxWait time.Duration
		allowed bool
		wait    time.Duration
	}{
		{t0, 0, true, 0},
		{t0, 0, true, 0},
		{t1, 20 * time.Second, true, 14 * time.Second},  // booked at 15 s
		{t1, 20 * time.Second, true, 14 * time.Second},  // booked at 15 s too: burst 2
		{t1, 20 * time.Second, false, 29 * time.Second}, // next slot at 30 s
		{t1, 30 * time.Second, true, 29 * time.Second},
	}
	for i, st := range steps {
		a := s.Reserve(st.t, l, 0, st.maxWait)
		if a.Allowed != st.allowed || a.Wait != st.wait {
			t.Errorf("step %d: Reserve = %+v, want allowed %v wait %v", i, a, st.allowed, st.wait)
		}
	}
}

// TestSlidingSyncRounding: a report whose reset was rounded up to whole
// seconds does not double-count the call that produced it.
func TestSlidingSyncRounding(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 10, Sustain: 30}
	s.Admit(t0, l, 0)
	// The server counted it 3 ms later and reports 1 used, reset 15 s (14.997 s rounded up).
	s.Sync(t0.Add(5*time.Millisecond), l, Burst, 1, 15*time.Second)
	if got := s.Snapshot(t1, l, 0).Burst.Count; got != 1 {
		t.Errorf("count after an echo of our own call = %d, want 1", got)
	}
}
