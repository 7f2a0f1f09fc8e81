package transport

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack40PairStore is a shared store built on a throttle.MemoryBudgetStore
// (whose slots are the instants counted, so two bookings may share one):
// it isolates failures (as redisstore does per node), and fails every
// Sync while failSync is set, so a key's reported counts stay owed
// (pending) and its calls are booked in both stores (failover.stricter).
type attack40PairStore struct {
	throttle.MemoryBudgetStore
	failSync atomic.Bool

	mu       sync.Mutex
	reserved int
	released int
}

func (s *attack40PairStore) IsolatesFailures() bool { return true }

func (s *attack40PairStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	a, err := s.MemoryBudgetStore.Reserve(ctx, k, l, now, maxWait)
	if a.Allowed {
		s.mu.Lock()
		s.reserved++
		s.mu.Unlock()
	}
	return a, err
}

func (s *attack40PairStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	s.mu.Lock()
	s.released++
	s.mu.Unlock()
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

func (s *attack40PairStore) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if s.failSync.Load() {
		return errors.New("attack40154: sync not taken")
	}
	return s.MemoryBudgetStore.Sync(ctx, k, l, now, p, used, reset)
}

// attack40PairSetup builds a Transport on a fresh attack40PairStore whose Base
// answers 200 and counts what it was sent; the shared store's burst of
// the profile key of user is spent at one instant (so the next bookings
// wait 16 s, each for the same instant: the same slot), and the service's
// report of one call used is owed (pending).
func attack40PairSetup(t *testing.T, user string) (*Transport, *attack40PairStore, *failover, throttle.Key, throttle.Limit, *atomic.Int32) {
	t.Helper()
	store := &attack40PairStore{}
	store.failSync.Store(true)
	var sent atomic.Int32
	tr := attack39Gate2Transport(store, &sent)
	tr.init()
	f, ok := tr.budget.(*failover)
	if !ok {
		t.Fatalf("tr.budget is %T, want *failover", tr.budget)
	}
	k := throttle.Key{User: user, Title: title, Scope: "profile"}
	rule, ok := tr.limits.ByScope("profile")
	if !ok {
		t.Fatal("no profile rule")
	}
	l := rule.ClientLimit()
	now := time.Now()
	for range l.Burst {
		if a, _ := store.MemoryBudgetStore.Reserve(context.Background(), k, l, now, 0); !a.Allowed {
			t.Fatalf("filling the shared burst: %+v", a)
		}
	}
	tr.budget.Sync(context.Background(), k, l, now, throttle.Burst, 1, 15*time.Second)
	if !f.pending(k) {
		t.Fatal("the key's report is not pending")
	}
	return tr, store, f, k, l, &sent
}

// TestAttack40PairsSameSlotTwoCancelledCalls: while a key's report is pending,
// two calls are booked in both stores at one instant. The shared store is
// a MemoryBudgetStore (wrapped to fail its Syncs): its slot is the instant
// counted, so both bookings are the same slot, and failover.pair keys its
// pairs by (key, shared slot): the second pair overwrites the first. Both
// calls are cancelled while they wait: each gives back its shared slot,
// but only one local booking is given back; the other stays in the local
// store, counting a call never sent.
func TestAttack40PairsSameSlotTwoCancelledCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const user = "attack40154-pair-user"
		tr, store, f, k, l, sent := attack40PairSetup(t, user)
		localBefore, _ := f.local.Snapshot(context.Background(), k, l, time.Now())
		sharedBefore, _ := store.MemoryBudgetStore.Snapshot(context.Background(), k, l, time.Now())

		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() { errs[i] = attack39Gate2CancelledCall(tr, context.Background(), user, time.Second) })
			synctest.Wait() // booked at the same instant, one after the other
		}
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("call %d, cancelled while it waited for its booking: %v; want context.Canceled", i, err)
			}
		}
		if sent.Load() != 0 {
			t.Fatalf("sent %d, want 0", sent.Load())
		}
		localAfter, _ := f.local.Snapshot(context.Background(), k, l, time.Now())
		sharedAfter, _ := store.MemoryBudgetStore.Snapshot(context.Background(), k, l, time.Now())
		if sharedAfter.Burst.Count != sharedBefore.Burst.Count {
			t.Errorf("the shared store's burst went from %d to %d used, nothing sent", sharedBefore.Burst.Count, sharedAfter.Burst.Count)
		}
		if localAfter.Burst.Count != localBefore.Burst.Count {
			t.Errorf("two calls booked in both stores at one instant (the shared MemoryBudgetStore gave both the same slot), both cancelled "+
				"while they waited, none sent: the local store's burst went from %d to %d used (of %d); want it unchanged. "+
				"Promise broken: failover.Release: \"A shared booking paired with a local one (stricter) gives both back\", and "+
				"\"a booking is kept only while the call's context lives (otherwise its slot is released and the call ends with its "+
				"context's error)\" (RELIABILITY.md): failover.pair keys pairs by (key, shared slot), so the second call's pair "+
				"overwrote the first's and one local booking is never given back",
				localBefore.Burst.Count, localAfter.Burst.Count, l.Burst)
		}
	})
}

// TestAttack40PairsReleaseFreesAnotherCallsLocalBooking: call A is booked in
// both stores while the key's report is pending (paired) and goes at its
// instant. Meanwhile the report lands (the store takes Syncs again), and
// call B, booked in the shared store alone, gets the same slot (the
// instant counted), and is cancelled while it waits. B's Release finds A's
// pair and gives back A's local booking: the local store no longer counts
// a call that was sent.
func TestAttack40PairsReleaseFreesAnotherCallsLocalBooking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const user = "attack40154-pair-user2"
		tr, store, f, k, l, sent := attack40PairSetup(t, user)
		localBefore, _ := f.local.Snapshot(context.Background(), k, l, time.Now())

		aDone := make(chan error, 1)
		go func() { aDone <- attack39Gate2CancelledCall(tr, context.Background(), user, time.Hour) }()
		synctest.Wait() // A is booked in both stores and waits its 16 s
		localA, _ := f.local.Snapshot(context.Background(), k, l, time.Now())
		if localA.Burst.Count != localBefore.Burst.Count+1 {
			t.Fatalf("A booked in both stores: the local burst went from %d to %d, want one more", localBefore.Burst.Count, localA.Burst.Count)
		}

		store.failSync.Store(false) // the next call pays the report: it lands
		if err := attack39Gate2CancelledCall(tr, context.Background(), user, time.Second); !errors.Is(err, context.Canceled) {
			t.Fatalf("call B, cancelled while it waited: %v; want context.Canceled", err)
		}
		localB, _ := f.local.Snapshot(context.Background(), k, l, time.Now())
		if err := <-aDone; err != nil {
			t.Fatalf("call A: %v", err)
		}
		if sent.Load() != 1 {
			t.Fatalf("sent %d, want 1 (A)", sent.Load())
		}
		if localB.Burst.Count != localA.Burst.Count {
			t.Errorf("call A, booked in both stores while the key's report was pending, went (sent %d); call B, booked in the "+
				"shared store alone with the same slot, was cancelled: the local store's burst went from %d (before A) to %d "+
				"(A booked) to %d after B's release; want A's booking kept (%d). Promise broken: failover.stricter: \"A call that goes "+
				"is counted in both stores: the local one, which has the report, counts the calls it lets go while the report is "+
				"pending (given back, they would leave both stores short of them)\", and failover.Release: \"Release gives the slot "+
				"back to the store that booked it\": B's Release found A's pair by (key, slot) and gave back A's local booking",
				sent.Load(), localBefore.Burst.Count, localA.Burst.Count, localB.Burst.Count, localA.Burst.Count)
		}
	})
}

// attack40FlapStore is an isolating shared store whose slots are unique ids (as
// redisstore's): every booking waits 2 s; it fails every Sync while
// failSync, and every other Release while failRelease. It tracks the
// bookings it holds, and flags a slot given back twice or never booked.
type attack40FlapStore struct {
	throttle.MemoryBudgetStore
	failSync, failRelease atomic.Bool

	mu    sync.Mutex
	next  int64
	held  map[int64]bool
	flip  int
	wrong []int64
}

func (s *attack40FlapStore) IsolatesFailures() bool { return true }

func (s *attack40FlapStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = map[int64]bool{}
	}
	s.next++
	s.held[s.next] = true
	return throttle.Admission{Allowed: true, Wait: min(2*time.Second, maxWait), Slot: s.next}, nil
}

func (s *attack40FlapStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failRelease.Load() {
		if s.flip++; s.flip%2 == 1 {
			return errors.New("attack40154: release not taken")
		}
	}
	if !s.held[slot] {
		s.wrong = append(s.wrong, slot)
	}
	delete(s.held, slot)
	return nil
}

func (s *attack40FlapStore) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if s.failSync.Load() {
		return errors.New("attack40154: sync not taken")
	}
	return nil
}

// held: while a key's report is pending, six concurrent calls are booked in both
// stores (paired); three are cancelled in their wait, three go; the shared
// store fails every other Release (owed). Once the store recovers and the
// owed operations are paid, each store holds exactly the bookings of the
// calls sent: no slot given back twice, to the wrong store, or kept.
func TestAttack40PairsFlappingReleaseConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack40FlapStore{}
		store.failSync.Store(true)
		store.failRelease.Store(true)
		var sent atomic.Int32
		tr := attack39Gate2Transport(store, &sent)
		tr.init()
		f := tr.budget.(*failover)
		const user = "attack40154-flap-user"
		k := throttle.Key{User: user, Title: title, Scope: "profile"}
		rule, _ := tr.limits.ByScope("profile")
		l := rule.ClientLimit()
		tr.budget.Sync(context.Background(), k, l, time.Now(), throttle.Burst, 1, 15*time.Second)
		localBefore, _ := f.local.Snapshot(context.Background(), k, l, time.Now())

		var wg sync.WaitGroup
		var cancelled atomic.Int32
		for i := range 6 {
			wg.Go(func() {
				cancelAt := time.Hour
				if i%2 == 0 {
					cancelAt = time.Second
				}
				if err := attack39Gate2CancelledCall(tr, context.Background(), user, cancelAt); errors.Is(err, context.Canceled) {
					cancelled.Add(1)
				} else if err != nil {
					t.Errorf("call %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		localAfter, _ := f.local.Snapshot(context.Background(), k, l, time.Now())
		if got, want := localAfter.Burst.Count-localBefore.Burst.Count, int(sent.Load()); got != want {
			t.Errorf("local store: %d bookings kept for %d calls sent (%d cancelled)", got, want, cancelled.Load())
		}
		// The store recovers; calls pay what it is owed.
		store.failSync.Store(false)
		store.failRelease.Store(false)
		for range 3 {
			if err := attack39Gate2CancelledCall(tr, context.Background(), user, time.Hour); err != nil {
				t.Fatalf("a call after recovery: %v", err)
			}
		}
		if n := f.nOwed.Load(); n != 0 {
			t.Errorf("%d operations still owed after recovery", n)
		}
		store.mu.Lock()
		defer store.mu.Unlock()
		if len(store.held) != int(sent.Load()) || len(store.wrong) != 0 {
			t.Errorf("shared store holds %d bookings for %d calls sent; slots given back twice or never booked: %v", len(store.held), sent.Load(), store.wrong)
		}
		if cancelled.Load() != 3 {
			t.Errorf("%d calls cancelled, want 3", cancelled.Load())
		}
	})
}
