package transport

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack32OwedStaleLearnOverridesNewerFleetLimit: transport A's two users
// learn profile's burst 8 while the fleet's store is down (A owes the two
// reports). The store recovers; the service has meanwhile tightened to
// burst 6, which transport B's two users report and the fleet's store
// confirms: the limit reported last. A then pays what it owes (its calls
// after the probe's pacing), replaying the two stale reports of 8: the
// store takes them as a fresh confirmation and replaces the fleet's newer
// 6 with the older 8. A new transport C on the store then holds the scope
// to burst 8, and its user's burst goes into the service's 429s.
func TestAttack32OwedStaleLearnOverridesNewerFleetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		a := &Transport{Base: attack31Served(t, 8), TitleID: "1234567890", Budget: store, RetryWindow: -1}
		store.fail.Store(true)
		for range 10 {
			attack31ProfileAs(a, "2533274790000001")
		}
		for range 10 {
			attack31ProfileAs(a, "2533274790000002")
		}
		if n := attack31LearnedBurst(a); n != 8 {
			t.Fatalf("setup: A confirmed burst %d during the outage, want 8 (%+v)", n, a.LearnedLimits())
		}
		time.Sleep(20 * time.Second)
		store.fail.Store(false) // recovered; the service now applies 6
		b := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
		for range 8 {
			attack31ProfileAs(b, "2533274790000003")
		}
		for range 8 {
			attack31ProfileAs(b, "2533274790000004")
		}
		in, _ := store.MemoryBudgetStore.Learned(context.Background(), time.Now())
		if len(in) != 1 || in[0].Limit != 6 {
			t.Fatalf("setup: the fleet's store has %+v, want burst 6 confirmed by B", in)
		}
		time.Sleep(2 * time.Second) // past A's probe pacing
		for i := range 10 {         // A's calls pay what it owes, one of another key each
			attack31ProfileAs(a, fmt.Sprintf("25332747900001%02d", i))
			time.Sleep(100 * time.Millisecond)
		}
		in, _ = store.MemoryBudgetStore.Learned(context.Background(), time.Now())
		c := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
		attack31ProfileAs(c, "2533274790000020") // reads the fleet's limits
		got := attack31LearnedBurst(c)
		before := c.Stats().Server429s
		for range 8 {
			attack31ProfileAs(c, "2533274790000021")
		}
		n429 := c.Stats().Server429s - before
		if len(in) != 1 || in[0].Limit != 6 || got != 6 || n429 != 0 {
			t.Errorf("the fleet's store confirmed burst 6 (B's users, ~20 s after A's users reported 8 during the outage); A then "+
				"paid its owed reports of 8 and the store now has %+v; a new transport C holds the scope to burst %d and its "+
				"user's 8 calls collected %d 429s (want 6 and 0). The older reports, replayed, replaced the limit reported last. "+
				"Against Transport.MaxLearnedLimit: \"of its limit of a window and the transport's, the one reported last holds\" "+
				"and throttle.LimitStore.Learn: \"the limit is then in force for every key of the scope until LearnedFor after the "+
				"last report of it\". Fix: a store should not let a report older than the window's limit in force (r.At before "+
				"Until-LearnedFor) replace it (learnedRecord.apply and learn.lua), or the failover should not pay a learn older than "+
				"the store's limit of its window", in, got, n429)
		}
	})
}
