package throttle

import (
	"context"
	"fmt"
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
