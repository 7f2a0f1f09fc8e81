package transport

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack29ReleaseAfterRecoveryOwedNotSent: a shared store that does not
// isolate failures fails once (the outage is logged: down), then works
// again. 1.5 s later a call books its slot there (the probe succeeds: the
// store answers), and is then not sent (its signing fails, or it is
// cancelled while it waits): its slot goes back. Release sends to the store
// only when no outage is logged, and the outage is logged over only after
// 5 s without errors — so the release, with the store answering and the
// call's context alive, is not even tried: it is owed, and paid only when
// this Transport makes another call. Meanwhile another Transport sharing
// the store (one budget per key, across the fleet) is refused for a call
// that was never sent.
func TestAttack29ReleaseAfterRecoveryOwedNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		other := newFailover(&Transport{}, shared, -1) // another Transport of the fleet
		k := attack28Key("atkuser")
		l := throttle.Limit{Burst: 1, Sustain: 30}
		shared.fail.Store(true)
		f.Reserve(context.Background(), k, l, time.Now(), 0) // the store fails: outage logged
		shared.fail.Store(false)
		time.Sleep(1500 * time.Millisecond)
		a, err := f.Reserve(context.Background(), k, l, time.Now(), 0) // the probe: booked in the shared store
		if err != nil || !a.Allowed {
			t.Fatalf("probe reserve: %+v %v", a, err)
		}
		if s, _ := shared.MemoryBudgetStore.Snapshot(context.Background(), k, l, time.Now()); s.Burst.Count != 1 {
			t.Fatalf("the probe did not book in the shared store (burst %d)", s.Burst.Count)
		}
		f.Release(context.Background(), k, l, a.Slot) // not sent after all: the slot goes back
		time.Sleep(100 * time.Millisecond)
		b, _ := other.Reserve(context.Background(), k, l, time.Now(), 0)
		if !b.Allowed {
			s, _ := shared.MemoryBudgetStore.Snapshot(context.Background(), k, l, time.Now())
			t.Errorf("a slot given back with the call's context alive and the shared store answering (it had just "+
				"booked the slot) was not sent but owed (%d owed), because the outage is logged over only after 5 s "+
				"quiet; the shared store still counts it (burst %d of %d) and another Transport of the fleet was "+
				"refused for a call never sent. Promise: Transport.Budget: \"A call gives the store every operation "+
				"within its own context. One it cannot give, because the store is down or fails it or the call's "+
				"context ends first (...), is kept by the local store and owed\"; \"Share one store between "+
				"Transports on purpose (...) to give them one budget per key\"",
				f.nOwed.Load(), s.Burst.Count, s.Burst.Limit)
		}
	})
}
