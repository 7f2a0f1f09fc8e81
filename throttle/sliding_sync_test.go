package throttle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSlidingSyncWindow: what a server's report adds, at the edges of its
// window. A reset of exactly the period is a window that opens now; a
// reset of zero, one that has ended; admissions older than the window
// (by more than the second its reset was rounded up by) are not in its
// count.
func TestSlidingSyncWindow(t *testing.T) {
	l := Limit{Burst: 10, Sustain: 30}
	tests := []struct {
		name     string
		admitted []time.Time
		now      time.Time
		used     int
		reset    time.Duration
		count    int           // the burst count at now, margin 1 s
		wait     time.Duration // at now
	}{
		{"a reset of the whole period", nil, t0, 10, BurstPeriod, 10, BurstPeriod + time.Second},
		{"a reset of zero", nil, t0, 10, 0, 0, 0},
		{"an admission older than the window", []time.Time{t0}, t0.Add(20 * time.Second), 3, 10 * time.Second, 3, 0},
		{"an admission a second before the window's start", []time.Time{t0}, t1, 1, BurstPeriod, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s slidingLog
			for _, at := range tt.admitted {
				s.Admit(at, l, 0)
			}
			s.Sync(tt.now, l, Burst, tt.used, tt.reset)
			snap := s.Snapshot(tt.now, l, time.Second)
			if snap.Burst.Count != tt.count || snap.Wait != tt.wait {
				t.Errorf("after Sync(used %d, reset %v): burst count %d, wait %v; want %d, %v", tt.used, tt.reset, snap.Burst.Count, snap.Wait, tt.count, tt.wait)
			}
		})
	}
}

// TestSlidingSyncNothingNew: a report the budget already holds (every
// response carries one) changes nothing and allocates nothing.
func TestSlidingSyncNothingNew(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 10, Sustain: 30}
	for range 3 {
		s.Admit(t0, l, 0)
	}
	allocs := testing.AllocsPerRun(100, func() { s.Sync(t1, l, Burst, 3, 14*time.Second) })
	if allocs != 0 || len(s.times) != 4 {
		t.Errorf("Sync of what the budget holds: %v allocations, ring of %d; want 0 and 4", allocs, len(s.times))
	}
}

// TestSlidingSnapshot: the counts in the sliding spans that end at now
// (margin included), the time until the oldest of each leaves its span,
// and the block, which ends at its deadline.
func TestSlidingSnapshot(t *testing.T) {
	l := Limit{Burst: 10, Sustain: 30}
	var s slidingLog
	s.Admit(t0, l, 0)
	s.Admit(t1, l, 0)
	s.Block(t0.Add(30 * time.Second))
	tests := []struct {
		name   string
		at     time.Time
		margin time.Duration
		want   Snapshot
	}{
		{"inside both spans", t2, time.Second, Snapshot{
			Counts:       Counts{Burst: WindowState{Count: 2, Limit: 10, Reset: 14 * time.Second}, Sustain: WindowState{Count: 2, Limit: 30, Reset: 299 * time.Second}},
			BlockedUntil: t0.Add(30 * time.Second),
			Wait:         28 * time.Second,
		}},
		{"the first at the burst span's edge", t4, 0, Snapshot{
			Counts:       Counts{Burst: WindowState{Count: 1, Limit: 10, Reset: time.Second}, Sustain: WindowState{Count: 2, Limit: 30, Reset: 285 * time.Second}},
			BlockedUntil: t0.Add(30 * time.Second),
			Wait:         15 * time.Second,
		}},
		{"the margin keeps it", t4, time.Second, Snapshot{
			Counts:       Counts{Burst: WindowState{Count: 2, Limit: 10, Reset: time.Second}, Sustain: WindowState{Count: 2, Limit: 30, Reset: 286 * time.Second}},
			BlockedUntil: t0.Add(30 * time.Second),
			Wait:         15 * time.Second,
		}},
		{"at the block's deadline", t0.Add(30 * time.Second), 0, Snapshot{
			Counts: Counts{Sustain: WindowState{Count: 2, Limit: 30, Reset: 270 * time.Second}, Burst: WindowState{Limit: 10}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, s.Snapshot(tt.at, l, tt.margin)); diff != "" {
				t.Errorf("Snapshot mismatch (-want +got):\n%s", diff)
			}
		})
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

// TestSlidingCountIn: countIn, which Sync counts the admissions already in
// a server's report with, takes (lo, hi]: an admission at lo is not in it,
// one at hi is, one past hi (booked ahead, not sent) is not.
func TestSlidingCountIn(t *testing.T) {
	var s slidingLog
	l := Limit{Burst: 10}
	for _, at := range []int64{100, 200, 300, 400} {
		s.push(at, l, false)
	}
	for _, c := range []struct {
		lo, hi int64
		want   int
	}{
		{100, 300, 2}, {99, 300, 3}, {100, 299, 1}, {0, 1000, 4}, {400, 500, 0}, {50, 99, 0},
	} {
		if got := s.countIn(c.lo, c.hi); got != c.want {
			t.Errorf("countIn(%d, %d) = %d, want %d", c.lo, c.hi, got, c.want)
		}
	}
}
