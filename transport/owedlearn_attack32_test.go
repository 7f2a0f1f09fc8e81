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

// attack32ArrivalStore is a fleet's store that times a limit report on its
// arrival, as redisstore does on Redis's clock (CallerTime unset), or by
// the report's own time (callerTime), and whose first Learn is taken but
// its answer lost: the caller sees a timeout, as when the reply is lost on
// the network or arrives after the store's Timeout. (The attack ran on a
// real Redis with a go-redis hook losing the answer and a 16 s wait; this
// is the same exchange under synctest.)
type attack32ArrivalStore struct {
	*throttle.MemoryBudgetStore
	callerTime bool
	lost       atomic.Int32
}

func (s *attack32ArrivalStore) Learn(ctx context.Context, r throttle.LimitReport) (throttle.Learned, error) {
	if !s.callerTime {
		r.At = time.Now() // the store's clock, on arrival
	}
	in, err := s.MemoryBudgetStore.Learn(ctx, r)
	if err == nil && s.lost.CompareAndSwap(0, 1) {
		return throttle.Learned{}, errors.New("i/o timeout (attack32: the learn ran, its answer lost)")
	}
	return in, err
}

// attack32OwedLearnOneUser: one user's single 429 (profile's burst 6 where the
// table says 10) is one report. Its Learn reaches the store (the candidate is
// recorded) but its answer is lost, so the failover owes it and pays it
// with a later call, 16 s later. A store timing reports on arrival takes
// the paid report for the same user's report "a period or more after the
// candidate", which confirms the limit for every key of the scope,
// fleet-wide, on one user's one 429.
func attack32OwedLearnOneUser(t *testing.T, callerTime bool) (confirmed []throttle.Learned, otherBurst int) {
	store := &attack32ArrivalStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{}, callerTime: callerTime}
	tr := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
	for range 7 { // the 7th is the service's 429: burst 6
		attack31ProfileAs(tr, "2533274790000001")
	}
	if store.lost.Load() != 1 {
		t.Fatalf("setup: no learn report was sent (%+v)", tr.LearnedLimits())
	}
	f := tr.budget.(*failover)
	if f.nOwed.Load() == 0 {
		t.Fatalf("setup: the report whose answer was lost is not owed")
	}
	time.Sleep(16 * time.Second)              // a burst period after the (one) report
	attack31ProfileAs(tr, "2533274790000002") // pays what is owed
	if f.nOwed.Load() != 0 {
		t.Fatalf("setup: the owed report was not paid (%d owed)", f.nOwed.Load())
	}
	confirmed, err := store.Learned(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
	attack31ProfileAs(other, "2533274790000003") // reads the fleet's limits
	return confirmed, attack31LearnedBurst(other)
}

// TestAttack32OwedLearnRedisClockConfirmsOneUser: see attack32OwedLearnOneUser, with
// redisstore's default (Redis's clock).
func TestAttack32OwedLearnRedisClockConfirmsOneUser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		confirmed, otherBurst := attack32OwedLearnOneUser(t, false)
		if len(confirmed) != 0 || otherBurst != 0 {
			t.Errorf("ONE user's ONE 429 (burst 6), whose Learn reached Redis but whose answer was lost, was owed and paid 16 s later: "+
				"Redis (timing it on arrival) now has %+v confirmed, and another Transport of the fleet holds every user of the scope to burst %d. "+
				"Against Transport.MaxLearnedLimit: \"once another user's 429, or one from a later window, reports the same limit, every key of the scope does\"; throttle.LimitStore.Learn: \"a report of the same limit from another user, or from the same user a period or more after "+
				"the candidate, confirms it (a lone report may be one key's fault, or one replica's)\", and Transport.Budget: \"A store may so get a "+
				"Release, Block or Sync twice ... a Block or Sync twice must be one\": a Learn twice is not one under Redis's clock. "+
				"Fix: pay an owed learn with its own time (a redisstore Learn should take r.At when set, as CallerTime does, or the failover "+
				"should not owe a Learn whose store may have taken it; or learn.lua should treat a report from the candidate's user with an At "+
				"inside the candidate's window as the same report)", confirmed, otherBurst)
		}
	})
}

// held: the same with CallerTime set: the paid report carries its own At, a
// second after the candidate, and confirms nothing.
func TestAttack32OwedLearnCallerTimeOneUserHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		confirmed, otherBurst := attack32OwedLearnOneUser(t, true)
		if len(confirmed) != 0 || otherBurst != 0 {
			t.Errorf("CallerTime: one user's one 429, owed and paid late, confirmed %+v (another Transport: burst %d): want only a candidate",
				confirmed, otherBurst)
		}
	})
}
