package transport

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack34BudgetOnly is a shared BudgetStore that keeps no learned limits (not
// a throttle.LimitStore).
type attack34BudgetOnly struct{ m *throttle.MemoryBudgetStore }

func (s attack34BudgetOnly) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	return s.m.Reserve(ctx, k, l, now, maxWait)
}
func (s attack34BudgetOnly) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	return s.m.Release(ctx, k, l, slot)
}
func (s attack34BudgetOnly) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	return s.m.Block(ctx, k, now, until)
}
func (s attack34BudgetOnly) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	return s.m.Sync(ctx, k, l, now, p, used, reset)
}
func (s attack34BudgetOnly) Snapshot(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Snapshot, error) {
	return s.m.Snapshot(ctx, k, l, now)
}

// held: a shared Budget that is not a throttle.LimitStore: every learn is
// owed to it (limitStore is the local one) though it can never take one;
// 300 users' 429s owed learns, yet the owed list stays bounded and drains
// with the calls, the limit is confirmed in the transport, and the third
// and later users get no 429.
func TestAttack34NonLimitStoreOwedLearnsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: attack34BudgetOnly{&throttle.MemoryBudgetStore{}}, RetryWindow: -1}
		for range 7 {
			attack31ProfileAs(tr, "2533274790000001")
		}
		for range 7 {
			attack31ProfileAs(tr, "2533274790000002")
		}
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Fatalf("two users' 429s of burst 6 with a non-LimitStore Budget: confirmed burst %d, want 6", n)
		}
		before := tr.Stats().Server429s
		for i := range 300 {
			for range 7 {
				attack31ProfileAs(tr, fmt.Sprintf("25332747902%05d", i))
			}
		}
		if n := tr.Stats().Server429s - before; n != 0 {
			t.Errorf("300 users after the confirmation collected %d 429s, want 0", n)
		}
		f := tr.budget.(*failover)
		if n := f.nOwed.Load(); n > maxOwed {
			t.Errorf("owed list %d > %d", n, maxOwed)
		}
		time.Sleep(time.Minute)
		for i := range 300 {
			attack31ProfileAs(tr, fmt.Sprintf("25332747903%05d", i))
		}
		if n := f.nOwed.Load(); n != 0 {
			t.Errorf("after 300 calls to a working store, %d operations still owed", n)
		}
	})
}

// held: MaxLearnedLimit < 0 with a fleet's LimitStore that is down: 429s
// teach nothing, nothing is owed, nothing reaches the store's limits.
func TestAttack34LearningOffOwesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		tr := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1, MaxLearnedLimit: -1}
		store.fail.Store(true)
		for _, u := range []string{"2533274790000001", "2533274790000002"} {
			for range 8 {
				attack31ProfileAs(tr, u)
			}
		}
		f := tr.budget.(*failover)
		f.owedMu.Lock()
		for _, o := range f.owed {
			if o.op == opLearn {
				t.Errorf("learning off, yet a learn is owed: %+v", o.learn)
			}
		}
		f.owedMu.Unlock()
		store.fail.Store(false)
		time.Sleep(20 * time.Second)
		for range 4 {
			attack31ProfileAs(tr, "2533274790000009")
		}
		if ll := tr.LearnedLimits(); len(ll) != 0 {
			t.Errorf("learning off, yet learned %+v", ll)
		}
		if in, _ := store.MemoryBudgetStore.Learned(context.Background(), time.Now()); len(in) != 0 {
			t.Errorf("learning off, yet the store has %+v", in)
		}
	})
}
