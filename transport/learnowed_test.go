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

// TestLearnedLimitReportedLastHolds: of the store's limit of a window and
// the transport's, the one reported last (its Until later) holds when the
// transport reads the store again.
func TestLearnedLimitReportedLastHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &throttle.MemoryBudgetStore{}
		tr := &Transport{TitleID: title, Budget: store}
		tr.init()
		ctx := context.Background()
		confirm := func(n int) {
			for _, u := range []string{"a", "b"} {
				store.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: n, User: u, At: time.Now()})
			}
		}
		read := func() int {
			tr.learned.readAt.Store(0)
			tr.refreshLearned(ctx, time.Now())
			return tr.scopeMap()[scopeWindow{"profile", throttle.Burst}].Limit
		}
		confirm(8)
		if n := read(); n != 8 {
			t.Fatalf("the store's confirmed 8 read as %d", n)
		}
		time.Sleep(time.Minute)
		tr.setScope("profile", throttle.Burst, throttle.Learned{Scope: "profile", Period: throttle.Burst, Limit: 6, Until: time.Now().Add(throttle.LearnedFor)}, time.Now())
		if n := read(); n != 6 {
			t.Errorf("the transport's 6, reported a minute after the store's 8, read as %d after the store's: want 6", n)
		}
		time.Sleep(time.Minute)
		confirm(7)
		if n := read(); n != 7 {
			t.Errorf("the store's 7, reported a minute after the transport's 6, read as %d: want 7", n)
		}
		time.Sleep(throttle.LearnedFor)
		if n := read(); n != 0 {
			t.Errorf("after LearnedFor the limit read as %d, want none", n)
		}
	})
}
