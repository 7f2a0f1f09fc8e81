package transport

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack29SlowStore is a working shared store whose every operation takes rtt
// (a network store's round trip), failing Block and Sync while failBlock is set.
type attack29SlowStore struct {
	*throttle.MemoryBudgetStore
	rtt       time.Duration
	mu        sync.Mutex
	failBlock bool
}

func (s *attack29SlowStore) wait(ctx context.Context) error {
	select {
	case <-time.After(s.rtt):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *attack29SlowStore) IsolatesFailures() bool { return true }

func (s *attack29SlowStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	if err := s.wait(ctx); err != nil {
		return throttle.Admission{}, err
	}
	return s.MemoryBudgetStore.Reserve(ctx, k, l, now, maxWait)
}

func (s *attack29SlowStore) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	fail := s.failBlock
	s.mu.Unlock()
	if fail {
		return errAttack28Down
	}
	return s.MemoryBudgetStore.Block(ctx, k, now, until)
}

func (s *attack29SlowStore) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	fail := s.failBlock
	s.mu.Unlock()
	if fail {
		return errAttack28Down
	}
	return s.MemoryBudgetStore.Sync(ctx, k, l, now, p, used, reset)
}

func (s *attack29SlowStore) setFail(v bool) { s.mu.Lock(); s.failBlock = v; s.mu.Unlock() }

// held: a key owes a 429's block (the store failed it: the key's node was
// briefly down); two calls of that key come 1 ms apart over a store with a
// 20 ms round trip. The first takes the block out of the owed list and
// sends it; the second sees nothing owed and books at once, but its booking
// arrives after the block (equal round trips), so both are refused. (With
// the block behind other payments it breaks: the two tests below.)
func TestAttack29OwedBlockInFlightKeyBooksPastIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack29SlowStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}, rtt: 20 * time.Millisecond}
		f := newFailover(&Transport{}, shared, -1)
		k := attack28Key("atkuser")
		l := throttle.Limit{Burst: 10, Sustain: 30}
		now := time.Now()
		if a, err := f.Reserve(context.Background(), k, l, now, 0); err != nil || !a.Allowed {
			t.Fatalf("first reserve: %+v %v", a, err)
		}
		shared.mu.Lock()
		shared.failBlock = true
		shared.mu.Unlock()
		f.Block(context.Background(), k, now, now.Add(60*time.Second)) // the 429: Retry-After 60
		shared.mu.Lock()
		shared.failBlock = false
		shared.mu.Unlock()
		if f.nOwed.Load() != 1 {
			t.Fatalf("owed %d, want the block", f.nOwed.Load())
		}
		time.Sleep(time.Second)
		a1, a2 := attack29OneMsApart(f, k, k, l)
		if a1.Allowed || a2.Allowed {
			t.Errorf("a key owing a 60 s block: two of its calls at once admitted %v, %v: the second saw "+
				"nothing owed and booked before the block reached the store. Promise: Transport.Budget: \"the next "+
				"call of this Transport to reach it sends it, a key's reports before that key's next booking\"",
				a1.Allowed, a2.Allowed)
		}
	})
}

// TestAttack29OwedBlockPaidByAnotherKeyInFlight: a key owes a 429's block (its
// node was briefly down), then another user's key owes three reports. The
// other user's call comes first: it takes its three and the key's block
// (the oldest of another key) out of the list and sends them one after
// another, the key's block fourth. Meanwhile the key's own call comes: it
// sees nothing owed, books in the shared store at once — three round
// trips before its block reaches the store — and is admitted into the
// service's Retry-After (the local store, which has the block, refuses it).
func TestAttack29OwedBlockPaidByAnotherKeyInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack29SlowStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}, rtt: 20 * time.Millisecond}
		f := newFailover(&Transport{}, shared, -1)
		k, k2 := attack28Key("atkuser"), attack28Key("otheruser")
		l := throttle.Limit{Burst: 10, Sustain: 30}
		now := time.Now()
		shared.setFail(true)
		f.Block(context.Background(), k, now, now.Add(60*time.Second))
		f.Block(context.Background(), k2, now, now.Add(time.Second+500*time.Millisecond))
		f.Sync(context.Background(), k2, l, now, throttle.Burst, 3, 10*time.Second)
		f.Sync(context.Background(), k2, l, now, throttle.Sustain, 3, 200*time.Second)
		shared.setFail(false)
		if f.nOwed.Load() != 4 {
			t.Fatalf("owed %d, want 4", f.nOwed.Load())
		}
		time.Sleep(time.Second)
		_, a := attack29OneMsApart(f, k2, k, l)
		if a.Allowed {
			snap, _ := f.local.Snapshot(context.Background(), k, l, time.Now())
			t.Errorf("a key owing a 60 s block was admitted by the shared store (local store: blocked until %v): "+
				"another user's call had taken the block out of the owed list to send it fourth, after its own "+
				"three, so the key's own call saw nothing owed and booked before the block arrived. Promise: "+
				"Transport.Budget: \"the next call of this Transport to reach it sends it, a key's reports before "+
				"that key's next booking\"", time.Until(snap.BlockedUntil))
		}
	})
}

// TestAttack29OwedBlockBehindOwnSyncsInFlight: a key owes its RateLimit counts
// of both windows and then a 429's block (the store failed them: its node
// was briefly down). Two calls of that key come at once. The first takes
// all three out of the list and sends them one after another, the block
// third; the second, a millisecond later, sees nothing owed and books in
// the shared store two round trips before the block reaches it: admitted
// into the service's Retry-After.
func TestAttack29OwedBlockBehindOwnSyncsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack29SlowStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}, rtt: 20 * time.Millisecond}
		f := newFailover(&Transport{}, shared, -1)
		k := attack28Key("atkuser")
		l := throttle.Limit{Burst: 10, Sustain: 30}
		now := time.Now()
		shared.setFail(true)
		f.Sync(context.Background(), k, l, now, throttle.Burst, 3, 10*time.Second)
		f.Sync(context.Background(), k, l, now, throttle.Sustain, 3, 200*time.Second)
		f.Block(context.Background(), k, now, now.Add(60*time.Second))
		shared.setFail(false)
		if f.nOwed.Load() != 3 {
			t.Fatalf("owed %d, want 3", f.nOwed.Load())
		}
		time.Sleep(time.Second)
		a1, a2 := attack29OneMsApart(f, k, k, l)
		if a1.Allowed || a2.Allowed {
			t.Errorf("a key owing two counts and a 60 s block: two of its calls at once admitted %v, %v: the "+
				"first took the three out of the owed list and sent the block third; the second saw nothing owed "+
				"and booked in the shared store before the block arrived, into the service's Retry-After. "+
				"Promise: Transport.Budget: \"the next call of this Transport to reach it sends it, a key's reports "+
				"before that key's next booking\"", a1.Allowed, a2.Allowed)
		}
	})
}

// attack29OneMsApart books a call of first and, a millisecond later, one
// of second on f, at once, and returns what each was told.
func attack29OneMsApart(f *failover, first, second throttle.Key, l throttle.Limit) (a1, a2 throttle.Admission) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a1, _ = f.Reserve(context.Background(), first, l, time.Now(), 0) }()
	go func() {
		defer wg.Done()
		time.Sleep(time.Millisecond)
		a2, _ = f.Reserve(context.Background(), second, l, time.Now(), 0)
	}()
	wg.Wait()
	return a1, a2
}
