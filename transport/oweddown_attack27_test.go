package transport

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack27FlakyStore is a shared store (not a FailureIsolator) whose Reserve
// fails while fail is set.
type attack27FlakyStore struct {
	*throttle.MemoryBudgetStore
	fail     atomic.Bool
	releases atomic.Int32
}

func (s *attack27FlakyStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	if s.fail.Load() {
		return throttle.Admission{}, errors.New("atk: store unreachable")
	}
	return s.MemoryBudgetStore.Reserve(ctx, k, l, now, maxWait)
}

func (s *attack27FlakyStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	s.releases.Add(1)
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

// TestAttack27ReleaseDuringOutageNeitherSentNorOwed: a call books a slot in
// the shared store (a wait of 15 s); another call's Reserve then fails
// (one failed round trip: the outage is logged, down is set); the first
// call is cancelled while it waits and gives its slot back. The shared
// store is neither given the Release nor owed it: once the store works
// again it counts a call never sent, for the key's whole window.
func TestAttack27ReleaseDuringOutageNeitherSentNorOwed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack27FlakyStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		k := throttle.Key{User: "atkuser", Title: title, Scope: "profile"}
		l := throttle.Limit{Burst: 1, Sustain: 30}
		now := time.Now()
		if a, _ := f.Reserve(context.Background(), k, l, now, 0); !a.Allowed {
			t.Fatal("first reserve refused")
		}
		a, err := f.Reserve(context.Background(), k, l, now, time.Minute) // waits ~15 s
		if err != nil || !a.Allowed || a.Wait == 0 {
			t.Fatalf("second reserve: %+v %v", a, err)
		}
		shared.fail.Store(true)
		f.Reserve(context.Background(), throttle.Key{User: "x", Title: title, Scope: "profile"}, l, now, 0) // fails: down
		shared.fail.Store(false)
		ended := endedContext()
		f.Release(ended, k, l, a.Slot) // the waiter was cancelled
		sent, owed := shared.releases.Load(), f.nOwed.Load()
		time.Sleep(16 * time.Second) // the first booking's burst is over
		// The key's next call (through the failover, as a Transport's) pays
		// what is owed before it books: the slot is free.
		b, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Allowed || shared.releases.Load() != 1 {
			t.Errorf("a slot given back by a call cancelled while it waited, during an outage of a non-isolating "+
				"shared store, was neither sent (releases sent %d) nor owed (owed %d): 16 s later the store, working "+
				"again, still counts the call never sent and refuses the key (%+v). Promise: Transport.Budget \"A call "+
				"gives the store every operation within its own context. One it cannot give before its context ends "+
				"(... a slot given back by a call cancelled while it waited) is kept by the local store and owed to "+
				"the shared one\"", sent, owed, b)
		}
	})
}
