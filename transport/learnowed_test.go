package transport

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestOwedLearnReachesTheFleet: two users' 429s confirm profile's burst 6
// while the fleet's store is down (it fails Learn too); once it is back,
// the reports it could not take are paid to it (owed, as a key's block and
// counts are), so that another Transport on it learns the limit without a
// 429 of its own.
func TestOwedLearnReachesTheFleet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		tr := &Transport{Base: attack31Served(t, 6), TitleID: title, Budget: store, RetryWindow: -1}
		store.fail.Store(true)
		for range 8 {
			attack31ProfileAs(tr, "2533274790000001")
		}
		for range 8 {
			attack31ProfileAs(tr, "2533274790000002")
		}
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Fatalf("during the outage the transport confirmed burst %d, want 6", n)
		}
		if in, _ := store.MemoryBudgetStore.Learned(context.Background(), time.Now()); len(in) != 0 {
			t.Fatalf("setup: the store took reports while down: %+v", in)
		}
		store.fail.Store(false)
		time.Sleep(20 * time.Second) // past the probe's pacing; the windows free
		for i := range 8 {           // each call pays one that another key owes (eight are: blocks, counts, reports)
			attack31ProfileAs(tr, fmt.Sprintf("25332747900001%02d", i))
		}
		in, err := store.MemoryBudgetStore.Learned(context.Background(), time.Now())
		if err != nil || len(in) != 1 || in[0].Limit != 6 || in[0].Period != throttle.Burst {
			t.Fatalf("after the outage the fleet's store has %+v (%v), want profile's burst 6 confirmed", in, err)
		}
		other := &Transport{Base: attack31Served(t, 6), TitleID: title, Budget: store, RetryWindow: -1}
		attack31ProfileAs(other, "2533274790000020") // reads the store's limits
		if n := attack31LearnedBurst(other); n != 6 {
			t.Errorf("another Transport on the fleet's store confirmed burst %d, want 6 (%+v)", n, other.LearnedLimits())
		}
	})
}

// TestStoresLearnedLimitHolds: the store's limit of a window holds where it
// has one, over one the transport confirmed while the store failed (which
// came last cannot be told across two clocks); one the store has none of
// stays until its own end; while the local store stands in for the
// fleet's, the fleet's limit the transport read stays.
func TestStoresLearnedLimitHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		tr := &Transport{TitleID: title, Budget: store}
		tr.init()
		ctx := context.Background()
		confirm := func(scope string, n int) {
			for _, u := range []string{"a", "b"} {
				store.MemoryBudgetStore.Learn(ctx, throttle.LimitReport{Scope: scope, Period: throttle.Burst, Limit: n, User: u, At: time.Now()})
			}
		}
		read := func(scope string) int {
			tr.learned.readAt.Store(0)
			tr.refreshLearned(ctx, time.Now())
			return tr.scopeMap()[scopeWindow{scope, throttle.Burst}].Limit
		}
		confirm("profile", 8)
		if n := read("profile"); n != 8 {
			t.Fatalf("the store's confirmed 8 read as %d", n)
		}
		store.fail.Store(true)
		time.Sleep(time.Minute)
		tr.budget.Reserve(ctx, attack28Key("u"), throttle.Limit{Burst: 10, Sustain: 30}, time.Now(), 0) // finds the store down
		if n := read("profile"); n != 8 {
			t.Errorf("the fleet's 8, read while the local store stands in, read as %d: want 8 kept", n)
		}
		// Confirmed while the store fails (as call.learn does with the local store's answer).
		until := time.Now().Add(throttle.LearnedFor)
		tr.setScope("profile", throttle.Burst, throttle.Learned{Scope: "profile", Period: throttle.Burst, Limit: 6, Until: until}, true, time.Now())
		tr.setScope("social", throttle.Burst, throttle.Learned{Scope: "social", Period: throttle.Burst, Limit: 5, Until: until}, true, time.Now())
		store.fail.Store(false)
		time.Sleep(2 * time.Second) // past the probe's pacing
		if n := read("profile"); n != 8 {
			t.Errorf("the store's 8 against the transport's 6 learned during the outage read as %d: want the store's", n)
		}
		if n := read("social"); n != 5 {
			t.Errorf("social's 5, learned during the outage, which the store has none of, read as %d: want it kept", n)
		}
		time.Sleep(throttle.LearnedFor)
		if n := read("social"); n != 0 {
			t.Errorf("after LearnedFor social's limit read as %d, want none", n)
		}
	})
}
