package transport

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack34AheadStore is a fleet's LimitStore on a clock ahead of the
// transport's by ahead: as redisstore without CallerTime is on Redis's
// clock (Learn times a report on arrival, Learned reads at Redis's now, and
// each Until is Redis's).
type attack34AheadStore struct {
	*throttle.MemoryBudgetStore
	ahead time.Duration
}

func (s attack34AheadStore) Learn(ctx context.Context, r throttle.LimitReport) (throttle.Learned, error) {
	r.At = time.Now().Add(s.ahead)
	return s.MemoryBudgetStore.Learn(ctx, r)
}

func (s attack34AheadStore) Learned(ctx context.Context, _ time.Time) ([]throttle.Learned, error) {
	return s.MemoryBudgetStore.Learned(ctx, time.Now().Add(s.ahead))
}

// TestAttack34SkewedReplicaKeepsExpiredFleetLimit: a replica's clock is an hour
// behind Redis's. Two users confirm profile's burst 6 in the fleet's store
// (its Until is Redis's: an hour and ten minutes ahead on the replica's
// clock). The service goes back to the table's 10 and nobody reports 6
// again; ten minutes later the store's limit has ended (LearnedFor after
// its last report) and every read of it lacks it. The replica read the
// limit from the store, not during an outage, yet keeps it: "a limit the
// transport has where the store has none stays until its Until", an Until
// on Redis's clock compared with the replica's. It holds the fleet's ended
// 6 for another hour, refusing calls the service would take.
func TestAttack34SkewedReplicaKeepsExpiredFleetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := attack34AheadStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{}, ahead: time.Hour}
		base := &attack34SwitchBase{}
		base.h.Store(attack31Served(t, 6))
		tr := &Transport{Base: base, TitleID: "1234567890", Budget: store, RetryWindow: -1}
		for range 7 {
			attack31ProfileAs(tr, "2533274790000001")
		}
		for range 7 {
			attack31ProfileAs(tr, "2533274790000002")
		}
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Skipf("setup: burst 6 not confirmed: %+v", tr.LearnedLimits())
		}
		base.h.Store(attack31Served(t, 10)) // the service applies the table's 10 again
		time.Sleep(15 * time.Minute)        // LearnedFor and more after the last report of 6
		if in, _ := store.Learned(context.Background(), time.Now()); len(in) != 0 {
			t.Skipf("setup: the store still has %+v", in)
		}
		attack31ProfileAs(tr, "2533274790000009") // reads the store's limits
		learned := tr.LearnedLimits()
		before := tr.Stats()
		for range 10 {
			attack31ProfileAs(tr, "2533274790000003")
		}
		after := tr.Stats()
		if refused := after.LocalRefusals - before.LocalRefusals; len(learned) != 0 || refused != 0 {
			t.Errorf("15 minutes after the last report of profile's burst 6, which the fleet's store has ended (nothing "+
				"in force there), a replica whose clock is an hour behind Redis's still has %+v after reading the store, "+
				"and refused %d of a new user's 10 calls the service takes (the table's 10). Against "+
				"Transport.MaxLearnedLimit: \"A learned limit ... lasts throttle.LearnedFor (two sustain windows) after "+
				"the last 429 that reported it\" and \"its limit of a window holds where it has one. While it fails ... "+
				"a limit confirmed meanwhile stays until its end where the store has none\" (this one was the store's, "+
				"not confirmed during an outage)", learned, refused)
		}
	})
}
