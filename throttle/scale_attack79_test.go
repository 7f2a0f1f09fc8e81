package throttle_test

// An outside attack on the accounting core (attack79): many keys, one key's
// clock against another's, concurrency.

import (
	"context"
	"github.com/xblgo/fgrl/internal/scaletest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held: MemoryServerStore, restated after this test (it was
// TestAttack79ServerFarAheadKeySweepsAnothersWindows: one request of user B
// timed a day ahead swept user A's windows as idle): "A key is judged idle
// at the time of the decision that sweeps it, whatever key that decision
// is for ... One store, one clock". With one clock, B's requests never
// sweep A's windows: A's third request in a sustain window of 2 is refused.
func TestAttack79ServerFarAheadKeySweepsAnothersWindows(t *testing.T) {
	ctx := context.Background()
	s := &throttle.MemoryServerStore{}
	a := throttle.Key{User: "a", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 100, Sustain: 2}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Take(ctx, a, l, t0)
	s.Take(ctx, a, l, t0)
	for i := range 50 {
		s.Take(ctx, throttle.Key{User: "b" + strconv.Itoa(i), Title: "t", Scope: "s"}, l, t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	if d, _ := s.Take(ctx, a, l, t0.Add(10*time.Second)); d.Allowed {
		t.Errorf("A's third request 10 s into a sustain window of 2 served: %+v", d)
	}
}

// held: MemoryServerStore: "at MaxKeys a new key evicts idle keys or,
// failing that, the least recently active one"; Key's names cost nothing
// (the table holds hashes): 20,000 distinct users with 4 KB names,
// MaxKeys 1,000, leave at most 1,000 keys and a heap that did not grow
// with the names; the same for MemoryBudgetStore.
func TestAttack79ChurnBoundedHeld(t *testing.T) {
	ctx := context.Background()
	s := &throttle.MemoryServerStore{MaxKeys: 1000}
	b := &throttle.MemoryBudgetStore{MaxKeys: 1000}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pad := strings.Repeat("x", 4096)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for i := range 20_000 {
		k := throttle.Key{User: pad + strconv.Itoa(i), Title: "t", Scope: "s"}
		now := t0.Add(time.Duration(i) * time.Millisecond)
		s.Take(ctx, k, l, now)
		b.Reserve(ctx, k, l, now, 0)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if s.Len() > 1000 || b.Len() > 1000 {
		t.Errorf("Len: server %d, budget %d; MaxKeys 1000", s.Len(), b.Len())
	}
	if grew := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grew > 8<<20 {
		t.Errorf("heap grew %d bytes for 1,000 keys", grew)
	}
}

// held: per-key isolation (ServerStore: "each key has a fixed burst window
// and a fixed sustain window"): keys differing in one field, or whose
// fields' concatenations are equal ("ab"+"c" vs "a"+"bc"), count apart.
func TestAttack79KeysCountApartHeld(t *testing.T) {
	ctx := context.Background()
	s := &throttle.MemoryServerStore{}
	b := &throttle.MemoryBudgetStore{}
	l := throttle.Limit{Burst: 1, Sustain: 1}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	keys := []throttle.Key{
		{User: "ab", Title: "c", Scope: "s"}, {User: "a", Title: "bc", Scope: "s"},
		{User: "a", Title: "b", Scope: "cs"}, {User: "a", Title: "bcs", Scope: ""},
		{User: "", Title: "abc", Scope: "s"}, {User: "abc", Title: "", Scope: "s"},
		{User: "a\x00b", Title: "c", Scope: "s"}, {User: "a", Title: "\x00bc", Scope: "s"},
	}
	for i, k := range keys {
		if d, _ := s.Take(ctx, k, l, t0); !d.Allowed {
			t.Errorf("server key %d %+v refused on its first request", i, k)
		}
		if a, _ := b.Reserve(ctx, k, l, t0, 0); !a.Allowed {
			t.Errorf("budget key %d %+v refused on its first call", i, k)
		}
	}
}

// held: ServerStore: "Implementations must make each Take atomic";
// BudgetStore: "Implementations must make each Reserve atomic". 64
// goroutines on one key at one instant: exactly the limit admitted, every
// request counted; budgets under Reserve/Release/Snapshot/Sync/Block/Learn
// run at once (run with -race).
func TestAttack79ConcurrentExactHeld(t *testing.T) {
	ctx := context.Background()
	s := &throttle.MemoryServerStore{}
	b := &throttle.MemoryBudgetStore{Margin: -1}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 17, Sustain: 1000}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var served, admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if d, _ := s.Take(ctx, k, l, t0); d.Allowed {
					served.Add(1)
				}
				if a, _ := b.Reserve(ctx, k, l, t0, 0); a.Allowed {
					admitted.Add(1)
				}
				other := throttle.Key{User: "o" + strconv.Itoa(g), Title: "t", Scope: "s"}
				if a, _ := b.Reserve(ctx, other, l, t0, time.Minute); a.Allowed {
					b.Release(ctx, other, l, a.Slot)
				}
				b.Snapshot(ctx, other, l, t0)
				b.Sync(ctx, other, l, t0, throttle.Burst, 3, 10*time.Second)
				b.Block(ctx, other, t0, t0.Add(time.Second))
				b.Learn(ctx, throttle.LimitReport{Scope: "s", Period: throttle.Burst, Limit: 5, User: strconv.Itoa(g), At: t0})
				b.Learned(ctx, t0)
				s.Peek(ctx, other, l, t0)
			}
		}()
	}
	wg.Wait()
	if served.Load() != 17 || admitted.Load() != 17 {
		t.Errorf("served %d, admitted %d of 640 at one instant; want 17 each", served.Load(), admitted.Load())
	}
	if d, _ := s.Peek(ctx, k, l, t0); d.Burst.Count != 640 {
		t.Errorf("server counted %d of 640 requests", d.Burst.Count)
	}
}

// held: time in the number of keys is linear: 5,000 then 50,000 new keys
// (server Take and budget Reserve each), the larger run under 30x the
// smaller (10x the keys).
func TestAttack79ManyKeysLinearHeld(t *testing.T) {
	ctx := context.Background()
	l := throttle.Limit{Burst: 10, Sustain: 30}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(n int) {
		s := &throttle.MemoryServerStore{}
		b := &throttle.MemoryBudgetStore{}
		runtime.GC() // each run starts from a collected heap
		for i := range n {
			k := throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "s"}
			now := t0.Add(time.Duration(i) * time.Millisecond)
			s.Take(ctx, k, l, now)
			b.Reserve(ctx, k, l, now, 0)
		}
	}
	// Alternately, the least of a few (internal/scaletest): a busy
	// machine's pauses.
	g := scaletest.Measure(3, func() { run(5_000) }, func() { run(50_000) })
	t.Logf("5,000 keys, then 50,000: %v", g)
	if g.Ratio() > 30 {
		t.Errorf("over 30x for 10x the keys: %v", g)
	}
}
