package transport

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack36ConfirmationDropsStricterKeyLimit: helper 148 made a read of the
// fleet's store keep a user's own limit that is stricter than the scope's it
// brings. The same scope limit confirmed through the transport itself (two
// users' 429s, setScope) still drops every key limit of the window
// (dropKeyLimits), the stricter ones too: user C's 429 reported burst 4 for
// C; users A and B then confirm 6 for the scope, and C's 4 is gone at once,
// 600 s early, with no EventLimitLearned for its end. C's calls count against
// 6 into the service's 4.
func TestAttack36ConfirmationDropsStricterKeyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, _ := attack35Served(map[string]int{attack35A: 6, attack35B: 6, attack35C: 4})
		store := &throttle.MemoryBudgetStore{}
		var mu sync.Mutex
		var events []Event
		tr := &Transport{Base: base, TitleID: title, Budget: store, RetryWindow: -1, Observe: func(_ context.Context, e Event) {
			if e.Kind == EventLimitLearned {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
		}}
		attack31ProfileAs(tr, attack35C)
		var cUser string
		for _, l := range tr.LearnedLimits() {
			if l.User != "" {
				cUser = l.User
			}
		}
		if cUser == "" || attack35Key(tr, cUser) != 4 {
			t.Fatalf("C's 429 of burst 4: LearnedLimits %+v, want C's key limit 4", tr.LearnedLimits())
		}
		time.Sleep(time.Second)
		mu.Lock()
		nBefore := len(events)
		mu.Unlock()
		attack31ProfileAs(tr, attack35A)
		attack31ProfileAs(tr, attack35B)
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Fatalf("two users' 429s of burst 6: confirmed %d, want 6", n)
		}
		mu.Lock()
		got := append([]Event(nil), events[nBefore:]...)
		mu.Unlock()
		if n := attack35Key(tr, cUser); n != 4 {
			var reasons []string
			for _, e := range got {
				reasons = append(reasons, e.Reason)
			}
			t.Errorf("1 s after C's 429 reported burst 4 for C, A's and B's 429s confirmed the scope's looser 6 through this transport, and C's key limit is %d (LearnedLimits %+v; events since: %q): "+
				"setScope's dropKeyLimits drops the stricter limit a read of the store now keeps (applyRead); LearnedLimit: \"A limit one key's 429 reported applies to that key alone (User) "+
				"until a report of the same limit from another user, or from a later window, confirms it for the whole scope; either lasts throttle.LearnedFor (two sustain windows) after the last report of it\"",
				n, tr.LearnedLimits(), reasons)
		}
	})
}
