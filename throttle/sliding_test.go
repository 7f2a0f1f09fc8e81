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

// TestSlidingMargin: the margin lengthens both periods, the sustain
// period's too: without it, callers would be refused at the service's
// sustain limit by the second their requests take to be counted.
func TestSlidingMargin(t *testing.T) {
	tests := []struct {
		name  string
		l     Limit
		steps []admit
	}{
		{"burst", Limit{Burst: 1, Sustain: 10}, []admit{
			{t0, true, 0},
			{t4, false, time.Second},
			{t0.Add(16 * time.Second), true, 0},
		}},
		{"sustain", Limit{Burst: 10, Sustain: 1}, []admit{
			{t0, true, 0},
			{t8, false, time.Second},
			{t8.Add(time.Second), true, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s slidingLog
			runSliding(t, &s, tt.l, time.Second, tt.steps)
		})
	}
}

// TestSlidingOneLimit: a budget with a zero burst limit (the Store
// services' per-publisher counter) or a zero sustain limit counts only the
// other limit; zero means no limit, not "refuse".
func TestSlidingOneLimit(t *testing.T) {
	tests := []struct {
		name  string
		l     Limit
		steps []admit
	}{
		{"sustain only", Limit{Sustain: 2}, []admit{
			{t0, true, 0},
			{t0, true, 0},
			{t1, false, 299 * time.Second},
		}},
		{"burst only", Limit{Burst: 2}, []admit{
			{t0, true, 0},
			{t0, true, 0},
			{t1, false, 14 * time.Second},
			{t4, true, 0},
			{t4, true, 0},
			{t8, true, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s slidingLog
			runSliding(t, &s, tt.l, 0, tt.steps)
		})
	}
}

// TestSlidingOutOfOrder: callers whose clocks race admit out of order; an
// admission stamped before the newest is counted as the newest, so the
// budget only becomes stricter and its spans stay ordered.
func TestSlidingOutOfOrder(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 2, Sustain: 10}
	s.Admit(t2, l, 0)
	s.Admit(t1, l, 0) // another caller, its clock a second behind
	at := t0.Add(16500 * time.Millisecond)
	snap := s.Snapshot(at, l, 0)
	// Both count at 2 s: both are in the burst span (1.5 s, 16.5 s].
	if snap.Burst.Count != 2 || snap.Wait != 500*time.Millisecond {
		t.Errorf("Snapshot(16.5s) = %+v, want 2 counted and a 500ms wait", snap)
	}
}

// TestSlidingRelease: every booked slot can be given back, the oldest
// included, and a budget emptied that way admits again.
func TestSlidingRelease(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 3, Sustain: 10}
	var slots []int64
	for _, at := range []time.Time{t0, t1, t2} {
		slots = append(slots, s.Admit(at, l, 0).Slot)
	}
	if a := s.Admit(t2, l, 0); a.Allowed {
		t.Fatalf("a 4th call admitted under a burst of 3: %+v", a)
	}
	for i, slot := range slots { // oldest first
		if !s.Release(slot) {
			t.Errorf("Release(slot %d) = false, want true", i)
		}
	}
	if s.Release(slots[0]) {
		t.Error("a slot released twice")
	}
	for i := range 3 {
		if a := s.Admit(t2, l, 0); !a.Allowed {
			t.Errorf("Admit %d after every slot was given back = %+v, want allowed", i, a)
		}
	}
}

// TestSlidingSteadyState: a key whose ring holds what its limit needs
// admits without allocating.
func TestSlidingSteadyState(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 4, Sustain: 4}
	now := t0
	admit := func() {
		if a := s.Admit(now, l, 0); !a.Allowed {
			t.Fatalf("Admit(%v) = %+v", now.Sub(t0), a)
		}
		now = now.Add(SustainPeriod)
	}
	for range 4 {
		admit()
	}
	if allocs := testing.AllocsPerRun(100, admit); allocs != 0 {
		t.Errorf("Admit into a full ring of the limit's size: %v allocations, want 0", allocs)
	}
}

// TestSlidingKeepsItsRing: when a key's limit drops, its ring keeps the
// admissions it holds: another caller of the key may count them under the
// larger limit (throttle/storetest, "a booking under a smaller limit keeps
// the admissions a larger one counts"). It grows by doubling, to at most
// the largest limit's max(Burst, Sustain).
func TestSlidingKeepsItsRing(t *testing.T) {
	var s slidingLog
	for range 5 {
		s.Admit(t0, Limit{Burst: 10, Sustain: 10}, 0)
	}
	if got := len(s.times); got != 8 {
		t.Fatalf("ring of %d after 5 admissions, want 8 (1, 4, 8)", got)
	}
	s.Admit(t0, Limit{Burst: 6, Sustain: 6}, 0)
	if got := len(s.times); got != 8 || s.n != 6 {
		t.Errorf("ring of %d holding %d after the limit dropped to 6, want 8 holding 6", got, s.n)
	}
	for range 10 {
		s.Admit(t0.Add(time.Hour), Limit{Burst: 10, Sustain: 10}, 0)
	}
	if got := len(s.times); got != 10 {
		t.Errorf("ring of %d under a limit of 10, want 10", got)
	}
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
	// A block that ends when the local count frees a slot: the wait is the
	// count's, not reported as the server's.
	var tie slidingLog
	tie.Admit(t0, Limit{Burst: 1, Sustain: 10}, 0)
	tie.Block(t4)
	if a := tie.Admit(t1, Limit{Burst: 1, Sustain: 10}, 0); a.Allowed || a.Blocked || a.Wait != 14*time.Second {
		t.Errorf("Admit when block and burst end together = %+v, want refused for 14s, not blocked", a)
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
