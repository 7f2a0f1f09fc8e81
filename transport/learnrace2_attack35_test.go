package transport

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held: 16 goroutines of 16 users whose 429s report burst 6 or 8 (by user),
// the fleet's store failing and recovering every few seconds, reads of it
// (refreshLearned) and confirmations (setScope, setKey, dropKeyLimits)
// interleaved for two minutes, also under -race: no race, no panic, the
// owed list within its 256, the learned limits one scope limit of burst
// (6 or 8) and at most one key limit per user.
func TestAttack35LearnInterleavedRefreshAndOutages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		users := map[string]int{}
		for i := range 16 {
			users[fmt.Sprintf("25332747900001%02d", i)] = 6 + 2*(i%2)
		}
		base, _ := attack35Served(users)
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		tr := &Transport{Base: base, TitleID: title, Budget: store, RetryWindow: -1}
		var wg sync.WaitGroup
		for u := range users {
			wg.Go(func() {
				for range 40 {
					attack31ProfileAs(tr, u)
					time.Sleep(3 * time.Second)
				}
			})
		}
		wg.Go(func() {
			for i := range 30 {
				store.fail.Store(i%3 == 1)
				time.Sleep(4 * time.Second)
			}
			store.fail.Store(false)
		})
		wg.Go(func() {
			for range 120 {
				_ = tr.LearnedLimits()
				time.Sleep(time.Second)
			}
		})
		wg.Wait()
		if n := tr.budget.(*failover).nOwed.Load(); n > maxOwed {
			t.Errorf("owed %d > %d", n, maxOwed)
		}
		scope, keys := 0, 0
		for _, l := range tr.LearnedLimits() {
			if l.User == "" {
				scope++
				if l.Period == throttle.Burst && l.Learned != 6 && l.Learned != 8 {
					t.Errorf("scope burst %d, reported were 6 and 8", l.Learned)
				}
			} else {
				keys++
			}
		}
		if scope > 1 || keys > len(users) {
			t.Errorf("learned limits %+v", tr.LearnedLimits())
		}
	})
}
