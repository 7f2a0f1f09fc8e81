package transport

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack35ReadReplacesOutageLimitSilently: the fleet's store is down; users
// A and B of this transport confirm burst 8 (an outage entry, with its
// EventLimitLearned). Meanwhile the fleet confirmed 6 in the store. The
// store recovers and is read: the store's 6 holds, LearnedLimits goes from
// 8 to 6, and every key of the scope now counts against 6, without an
// EventLimitLearned: an observer (fgrlotel, a log) still believes 8.
func TestAttack35ReadReplacesOutageLimitSilently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, _ := attack35Served(map[string]int{attack35A: 8, attack35B: 8})
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		var mu sync.Mutex
		var events []Event
		tr := &Transport{Base: base, TitleID: title, Budget: store, RetryWindow: -1, Observe: func(_ context.Context, e Event) {
			if e.Kind == EventLimitLearned {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
		}}
		attack31ProfileAs(tr, attack35D) // the store read once while up
		store.fail.Store(true)
		attack31ProfileAs(tr, attack35A)
		attack31ProfileAs(tr, attack35B)
		if n := attack31LearnedBurst(tr); n != 8 {
			t.Fatalf("two users' 429s of 8 in the outage: confirmed %d, want 8", n)
		}
		now := time.Now()
		for _, u := range []string{"fleetX", "fleetY"} {
			store.MemoryBudgetStore.Learn(context.Background(), throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 6, User: u, At: now})
		}
		store.fail.Store(false)
		mu.Lock()
		nBefore := len(events)
		mu.Unlock()
		for range 3 {
			time.Sleep(11 * time.Second)
			attack31ProfileAs(tr, attack35D)
		}
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Fatalf("after recovery the store's 6 should hold (Transport.MaxLearnedLimit: \"its limit of a window holds where it has one\"); confirmed %d", n)
		}
		mu.Lock()
		got := events[nBefore:]
		mu.Unlock()
		if len(got) == 0 {
			t.Errorf("the scope's learned burst went from 8 to 6 (LearnedLimits) with no EventLimitLearned; EventLimitLearned: \"a learned limit changed " +
				"(Transport.LearnedLimits) ... Once per change\"; Transport.MaxLearnedLimit: \"(Transport.LearnedLimits, Stats.LimitsLearned, an EventLimitLearned per change)\"")
		}
	})
}
