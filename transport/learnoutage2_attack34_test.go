package transport

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// TestAttack34StandInLoneReportNeverConfirmed: a shared store that does not
// isolate failures is down; within the second after its failure the
// failover stands in for it (limitStore is the local one: the shared store
// is not even tried). User 1's 429 reports profile's burst 6: a candidate
// in the local store, owed to the fleet's. The store recovers; user 2's
// 429 reports the same 6 to the shared store. Two users of this one
// transport have now reported the same limit, which the doc says confirms
// it for every key of the scope; but user 1's owed report is not paid (the
// local store never confirmed it: "a lone report, which the store may have
// taken already" — yet the stand-in never tried the store, so it cannot
// have), and user 2's report is a lone candidate in the shared store.
// A third user's burst of 8 is sent into the service's 429s.
func TestAttack34StandInLoneReportNeverConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		tr := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
		attack31ProfileAs(tr, "2533274790000009") // the store reached once
		store.fail.Store(true)                    // the outage starts
		for range 8 {
			attack31ProfileAs(tr, "2533274790000001")
		}
		if store.calls.Load() == 0 {
			t.Skip("setup: the outage was never seen")
		}
		if n := attack31LearnedBurst(tr); n != 0 {
			t.Skipf("setup: one report confirmed burst %d", n)
		}
		store.fail.Store(false)      // recovered
		time.Sleep(20 * time.Second) // probe time passed, windows free
		for i := range 4 {           // other users' calls: they pay what is owed
			attack31ProfileAs(tr, "253327479000002"+string(rune('0'+i)))
		}
		for range 8 {
			attack31ProfileAs(tr, "2533274790000002")
		}
		time.Sleep(20 * time.Second)
		got, learned := attack31LearnedBurst(tr), tr.LearnedLimits()
		before := tr.Stats().Server429s
		for range 8 {
			attack31ProfileAs(tr, "2533274790000003")
		}
		n429 := tr.Stats().Server429s - before
		if got != 6 || n429 != 0 {
			t.Errorf("two users of one transport reported profile's burst 6 (the first while the failover stood in "+
				"for the shared store, which was never tried, the second after it recovered): confirmed burst %d "+
				"(want 6; learned then: %+v), and a third user's 8 calls collected %d 429s (want 0; its 429 then confirmed the limit with user 2's). The first "+
				"report was owed but never paid (not confirmed locally: \"a lone report, which the store may have "+
				"taken already\", though the store was not tried), so neither store ever saw both. Against "+
				"Transport.MaxLearnedLimit: \"once another user's 429, or one from a later window, reports the same "+
				"limit, every key of the scope does\" and \"While it fails they are kept in the transport ... its "+
				"reports are owed to the store\"", got, learned, n429)
		}
	})
}

// attack34SwitchBase sends each request to the mock handler in h.
type attack34SwitchBase struct{ h atomic.Pointer[mock.Handler] }

func (s *attack34SwitchBase) RoundTrip(r *http.Request) (*http.Response, error) {
	return s.h.Load().RoundTrip(r)
}

// TestAttack34FleetConfirmedLimitLeavesStaleKeyLimit: transport A's user 1 got a
// 429 reporting profile's burst 8 (a key limit, awaiting confirmation).
// The service then applies 6; transport B's users 2 and 3 confirm 6 in the
// fleet's store. A reads the store's limits (refreshLearned) and has the
// confirmed 6 for the scope; but user 1's unconfirmed key limit of 8 is
// kept and counts before the scope's, so user 1's burst of 8 is sent into
// the service's 429. Had the confirmation come through A itself (setScope)
// the key limit would have been dropped.
func TestAttack34FleetConfirmedLimitLeavesStaleKeyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &throttle.MemoryBudgetStore{}
		h6 := attack31Served(t, 6)
		base := &attack34SwitchBase{}
		base.h.Store(attack31Served(t, 8))
		a := &Transport{Base: base, TitleID: "1234567890", Budget: store, RetryWindow: -1}
		b := &Transport{Base: h6, TitleID: "1234567890", Budget: store, RetryWindow: -1}
		for range 9 {
			attack31ProfileAs(a, "2533274790000001")
		}
		if ll := a.LearnedLimits(); len(ll) != 1 || ll[0].User == "" || ll[0].Learned != 8 {
			t.Skipf("setup: user 1's key limit of 8 not learned: %+v", ll)
		}
		time.Sleep(20 * time.Second)
		for range 7 {
			attack31ProfileAs(b, "2533274790000002")
		}
		for range 7 {
			attack31ProfileAs(b, "2533274790000003")
		}
		if n := attack31LearnedBurst(b); n != 6 {
			t.Skipf("setup: B did not confirm 6: %+v", b.LearnedLimits())
		}
		base.h.Store(h6)
		time.Sleep(20 * time.Second) // A's next call reads the store's limits
		attack31ProfileAs(a, "2533274790000009")
		learned := a.LearnedLimits()
		before := a.Stats().Server429s
		for range 8 {
			attack31ProfileAs(a, "2533274790000001")
		}
		if n429 := a.Stats().Server429s - before; n429 != 0 {
			t.Errorf("the fleet's store confirmed profile's burst 6 and transport A read it (A's learned limits: %+v), "+
				"yet A's user 1, whose lone earlier 429 reported 8, still counts against 8: its 8 calls collected %d "+
				"429s (want 0: 6 sent, 2 refused locally). Against Transport.MaxLearnedLimit: \"once another user's "+
				"429, or one from a later window, reports the same limit, every key of the scope does ... Reports and "+
				"confirmed limits are kept in Budget when it is a throttle.LimitStore, shared with every transport on "+
				"it; its limit of a window holds where it has one\" and LearnedLimit: \"applies to that key alone "+
				"(User) until a report of the same limit from another user ... confirms it for the whole scope\"",
				learned, n429)
		}
	})
}
