package throttle

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var ctx = context.Background()

func TestServerIsolation(t *testing.T) {
	var s MemoryServerStore
	l := Limit{Burst: 2, Sustain: 10}
	a := Key{"u1", "t1", "profile"}
	for i := 0; i < 5; i++ {
		s.take(a, l, t0)
	}
	for _, k := range []Key{{"u2", "t1", "profile"}, {"u1", "t2", "profile"}, {"u1", "t1", "social"}, {"u1t1", "", "profile"}} {
		if d, _ := s.Take(ctx, k, l, t0); !d.Allowed || d.Burst.Count != 1 {
			t.Errorf("Take(%+v) after throttling %+v = %+v, want a fresh key", k, a, d)
		}
	}
	if d, _ := s.Peek(ctx, a, l, t0); d.Burst.Count != 5 || d.Allowed {
		t.Errorf("Peek(%+v) = %+v, want 5 counted and refused", a, d)
	}
}

// TestServerConcurrent: many goroutines on one key admit exactly the limit
// per window.
func TestServerConcurrent(t *testing.T) {
	var s MemoryServerStore
	l := Limit{Burst: 30, Sustain: 100}
	k := Key{"u", "t", "svc"}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Go(func() {
			for i := 0; i < 50; i++ {
				if s.take(k, l, t0).Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 30 {
		t.Errorf("allowed %d of 800 concurrent calls, want exactly the burst limit 30", got)
	}
	if d, _ := s.Peek(ctx, k, l, t0); d.Sustain.Count != 800 {
		t.Errorf("sustain count %d, want 800 (refused calls count)", d.Sustain.Count)
	}
}

func TestServerMaxKeys(t *testing.T) {
	s := MemoryServerStore{MaxKeys: 640}
	l := Limit{Burst: 1, Sustain: 1}
	// Active keys beyond the cap: the table stays bounded.
	for i := 0; i < 10000; i++ {
		s.take(Key{fmt.Sprint(i), "t", "p"}, l, t0)
	}
	if n := s.Len(); n > 640 {
		t.Errorf("Len() = %d with MaxKeys 640", n)
	}
}

func TestServerLazyExpiry(t *testing.T) {
	var s MemoryServerStore
	l := Limit{Burst: 1, Sustain: 1}
	for i := 0; i < 1000; i++ {
		s.take(Key{fmt.Sprint(i), "t", "p"}, l, t0)
	}
	later := t0.Add(SustainPeriod)
	for i := 0; i < 1000; i++ {
		s.take(Key{fmt.Sprint("n", i), "t", "p"}, l, later)
	}
	// Each insertion examines two entries, so most idle keys are gone.
	if n := s.Len(); n > 1500 {
		t.Errorf("Len() = %d after 1000 idle + 1000 new keys, want idle ones mostly dropped", n)
	}
}

func TestBudgetConcurrentShared(t *testing.T) {
	var b MemoryBudgetStore
	l := Limit{Burst: 10, Sustain: 30}
	k := Key{"u", "t", "profile"}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			now := t0
			for i := 0; i < 400; i++ {
				now = now.Add(time.Second)
				if a, _ := b.Reserve(ctx, k, l, now, 0); a.Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	// 400 s of demand: at most 30 per sliding 300 s, and the clocks race, so
	// the exact figure is between one and two sustain allowances.
	if got := allowed.Load(); got < 30 || got > 60 {
		t.Errorf("allowed %d, want between 30 and 60", got)
	}
}

func TestBudgetBlockAndSnapshot(t *testing.T) {
	b := MemoryBudgetStore{Margin: time.Second}
	l := Limit{Burst: 10, Sustain: 30}
	k := Key{"u", "t", "profile"}
	b.Reserve(ctx, k, l, t0, 0)
	if err := b.Block(ctx, k, t0, t0.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	a, _ := b.Reserve(ctx, k, l, t1, 0)
	if a.Allowed || !a.Blocked || a.Wait != 29*time.Second {
		t.Errorf("Reserve while blocked = %+v", a)
	}
	if err := b.Sync(ctx, k, l, t1, Sustain, 25, 100*time.Second); err != nil {
		t.Fatal(err)
	}
	snap, _ := b.Snapshot(ctx, k, l, t1)
	if snap.Sustain.Count != 25 || snap.Burst.Count != 1 || !snap.BlockedUntil.Equal(t0.Add(30*time.Second)) {
		t.Errorf("Snapshot = %+v", snap)
	}
	if b.Len() != 1 {
		t.Errorf("Len() = %d, want 1", b.Len())
	}
}

// Both in-memory stores satisfy the interfaces a Redis store will implement.
var (
	_ ServerStore = (*MemoryServerStore)(nil)
	_ BudgetStore = (*MemoryBudgetStore)(nil)
)

func TestMarginOr(t *testing.T) {
	for _, tt := range []struct{ in, want time.Duration }{
		{0, DefaultMargin},
		{-1, 0},
		{-time.Hour, 0},
		{time.Nanosecond, time.Nanosecond},
		{3 * time.Second, 3 * time.Second},
	} {
		if got := MarginOr(tt.in); got != tt.want {
			t.Errorf("MarginOr(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestServerSweep: a key is dropped once both its windows have ended, and
// kept while either is open, also a burst window that outlives the sustain
// window: forgotten, it would serve its caller beyond the burst limit.
func TestServerSweep(t *testing.T) {
	l := Limit{Burst: 2, Sustain: 2}
	k := Key{"u", "t", "profile"}
	tests := []struct {
		name string
		at   time.Time
		kept bool
	}{
		{"sustain window open", t0.Add(299 * time.Second), true},
		{"burst window open past the sustain window", t8, true},
		{"both ended", t0.Add(305 * time.Second), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s MemoryServerStore
			s.take(k, Limit{}, t0) // the sustain window opens at 0
			s.take(k, l, t0.Add(290*time.Second))
			s.take(k, l, t0.Add(290*time.Second))          // the burst window [290 s, 305 s) is full
			s.take(Key{"other", "t", "profile"}, l, tt.at) // an insertion examines the one other key
			if kept := s.Len() == 2; kept != tt.kept {
				t.Fatalf("at %v: key kept %v, want %v", tt.at.Sub(t0), kept, tt.kept)
			}
			if d, _ := s.Take(ctx, k, l, tt.at); tt.kept && tt.at.Before(t0.Add(305*time.Second)) && d.Allowed {
				t.Errorf("at %v: a third call in the burst window served: %+v", tt.at.Sub(t0), d)
			}
		})
	}
}

// TestBudgetSweep: a budget is dropped once nothing it holds can affect a
// decision (its newest admission two sustain periods old, the longest
// margin allowed; its block over), and kept while anything can: a budget
// holding fresh admissions, forgotten, would let its caller over-send.
func TestBudgetSweep(t *testing.T) {
	l := Limit{Burst: 1, Sustain: 10}
	k := Key{"u", "t", "profile"}
	admit := func(b *MemoryBudgetStore) { b.Reserve(ctx, k, l, t0, 0) }
	block := func(b *MemoryBudgetStore) { b.Block(ctx, k, t0, t0.Add(30*time.Second)) }
	tests := []struct {
		name  string
		setup func(*MemoryBudgetStore)
		at    time.Time
		kept  bool
	}{
		{"a fresh admission", admit, t1, true},
		{"an admission a nanosecond younger than two sustain periods", admit, t0.Add(2*SustainPeriod - 1), true},
		{"an admission two sustain periods old", admit, t0.Add(2 * SustainPeriod), false},
		{"a block running", block, t0.Add(29 * time.Second), true},
		{"a block ending now", block, t0.Add(30 * time.Second), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b MemoryBudgetStore
			tt.setup(&b)
			b.Reserve(ctx, Key{"other", "t", "profile"}, l, tt.at, 0) // an insertion examines the one other key
			if kept := b.Len() == 2; kept != tt.kept {
				t.Fatalf("key kept %v, want %v", kept, tt.kept)
			}
			if a, _ := b.Reserve(ctx, k, l, t1, 0); tt.at.Equal(t1) && a.Allowed {
				t.Errorf("a second call in the burst span admitted: %+v", a)
			}
		})
	}
}

// TestTableSweepsTwo: each new key examines two others for idleness, never
// the whole table: an insertion's work is bounded, whatever the table holds.
func TestTableSweepsTwo(t *testing.T) {
	var s MemoryServerStore
	l := Limit{Burst: 1, Sustain: 1}
	for i := range 100 {
		s.take(Key{fmt.Sprint(i), "t", "p"}, l, t0)
	}
	s.take(Key{"new", "t", "p"}, l, t8) // all 100 are idle by now
	if got := s.Len(); got != 99 {
		t.Errorf("Len() = %d after one insertion among 100 idle keys, want 99 (two examined and dropped)", got)
	}
}

// TestTableEvictsLeastRecent: a full table with no idle key evicts the
// least recently active key of its sample (here, of all its keys).
func TestTableEvictsLeastRecent(t *testing.T) {
	l := Limit{Burst: 5, Sustain: 5}
	keys := []Key{{"a", "t", "p"}, {"b", "t", "p"}, {"c", "t", "p"}}
	for trial := range 20 { // the sample's order is random: 20 trials
		s := MemoryServerStore{MaxKeys: 3}
		for i, k := range keys {
			s.take(k, l, t0.Add(time.Duration(i)*time.Second))
		}
		s.take(Key{"d", "t", "p"}, l, t3)
		var counts []int
		for _, k := range keys {
			d, _ := s.Peek(ctx, k, l, t3)
			counts = append(counts, d.Burst.Count)
		}
		if !slices.Equal(counts, []int{0, 1, 1}) {
			t.Fatalf("trial %d: burst counts of a, b, c after evicting one = %v, want [0 1 1] (a, the least recent, evicted)", trial, counts)
		}
	}
}

// TestBudgetTableEvictsLeastRecent: the same for client budgets: a full
// MemoryBudgetStore with no idle key evicts the key admitted least
// recently (slidingLog.last), whose budget restarts; the others keep theirs.
func TestBudgetTableEvictsLeastRecent(t *testing.T) {
	l := Limit{Burst: 1, Sustain: 5}
	keys := []Key{{"a", "t", "p"}, {"b", "t", "p"}, {"c", "t", "p"}}
	for trial := range 20 { // the sample's order is random: 20 trials
		b := MemoryBudgetStore{MaxKeys: 3}
		for i, k := range keys {
			b.Reserve(ctx, k, l, t0.Add(time.Duration(i)*time.Second), 0)
		}
		b.Reserve(ctx, Key{"d", "t", "p"}, l, t3, 0)
		var counts []int
		for _, k := range keys { // Snapshot creates no key, evicting none
			s, _ := b.Snapshot(ctx, k, l, t3)
			counts = append(counts, s.Burst.Count)
		}
		if !slices.Equal(counts, []int{0, 1, 1}) {
			t.Fatalf("trial %d: burst counts of a, b, c after evicting one = %v, want [0 1 1] (a, the least recent, evicted)", trial, counts)
		}
	}
}

// TestTableDropsIdleFirst: a full table drops an idle key rather than
// evict an active one, whichever of its sweep and its eviction finds it.
func TestTableDropsIdleFirst(t *testing.T) {
	l := Limit{Burst: 5, Sustain: 5}
	for trial := range 20 {
		s := MemoryServerStore{MaxKeys: 3}
		s.take(Key{"idle", "t", "p"}, l, t0)
		s.take(Key{"b", "t", "p"}, l, t7)
		s.take(Key{"c", "t", "p"}, l, t7)
		s.take(Key{"d", "t", "p"}, l, t8) // the first key's windows ended at 300 s
		for _, k := range []string{"b", "c", "d"} {
			if d, _ := s.Peek(ctx, Key{k, "t", "p"}, l, t8); d.Burst.Count != 1 {
				t.Fatalf("trial %d: %s's burst count %d, want 1 (the idle key dropped, not an active one)", trial, k, d.Burst.Count)
			}
		}
	}
}

// TestTableEvictsFromASample: a full table examines a sample of 32 keys for
// the one to evict, not every key: with a million keys, a new one costs
// the same. So the least recent of 1,000 is seldom the one evicted.
func TestTableEvictsFromASample(t *testing.T) {
	l := Limit{Burst: 5, Sustain: 5}
	globalLeast := 0
	for range 5 {
		s := MemoryServerStore{MaxKeys: 1000}
		for i := range 1000 {
			s.take(Key{fmt.Sprint(i), "t", "p"}, l, t0.Add(time.Duration(i)*time.Millisecond))
		}
		s.take(Key{"new", "t", "p"}, l, t2)
		if d, _ := s.Peek(ctx, Key{"0", "t", "p"}, l, t2); d.Burst.Count == 0 {
			globalLeast++
		}
	}
	// Each trial evicts the least recent of all with odds 32/1000.
	if globalLeast == 5 {
		t.Error("5 trials of 5 evicted the least recent of all 1,000 keys: the whole table is examined")
	}
}

// TestServerStampedAPeriodBeforeItsWindow: a request stamped before its
// window's start by less than a period, or by exactly one, counts in it
// (rollOne); one stamped earlier still opens a new window.
func TestServerStampedAPeriodBeforeItsWindow(t *testing.T) {
	l := Limit{Burst: 1, Sustain: 100}
	for _, c := range []struct {
		before  time.Duration
		allowed bool
	}{{time.Millisecond, false}, {BurstPeriod, false}, {BurstPeriod + time.Millisecond, true}} {
		var s MemoryServerStore
		k := Key{"u", "t", "p"}
		s.Take(ctx, k, l, t0.Add(time.Hour))
		if d, _ := s.Take(ctx, k, l, t0.Add(time.Hour-c.before)); d.Allowed != c.allowed {
			t.Errorf("a request stamped %v before its burst window opened: allowed %v, want %v", c.before, d.Allowed, c.allowed)
		}
	}
}

// TestLookFixesNoOrigin: a Snapshot or a Peek before a store's first
// decision, at an odd time (the zero Time), does not place the span the
// store counts (the package doc: 73 years before its first decision to
// 200 after): decisions in 2026 that follow keep to the limit.
func TestLookFixesNoOrigin(t *testing.T) {
	ctx := context.Background()
	k := Key{User: "u", Title: "t", Scope: "s"}
	l := Limit{Burst: 1, Sustain: 10}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := &MemoryBudgetStore{Margin: -1}
	b.Snapshot(ctx, k, l, time.Time{})
	b.Reserve(ctx, k, l, now, 0)
	if a, _ := b.Reserve(ctx, k, l, now.Add(time.Second), 0); a.Allowed || a.Wait != 14*time.Second {
		t.Errorf("budget after a Snapshot at the zero Time: %+v; want refused, Wait 14s", a)
	}
	s := &MemoryServerStore{}
	s.Peek(ctx, k, l, time.Time{})
	s.Take(ctx, k, l, now)
	if d, _ := s.Take(ctx, k, l, now.Add(time.Second)); d.Allowed || d.RetryAfter != 14*time.Second {
		t.Errorf("server after a Peek at the zero Time: %+v; want refused, RetryAfter 14s", d)
	}
}
