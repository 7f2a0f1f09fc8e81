package transport

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack33OwedLearnEvictsBlock: a long outage leaves the failover owing
// maxOwed (256) blocks, one per user (each user's 429 with a minute's
// Retry-After). One more user's 429 body then reports a limit: the learn
// owed for it finds no release or learn to drop, and drops the oldest user's
// block instead. When the store is back, that user's next call is booked in
// the shared store, which never heard the 429, and is admitted into the
// service's Retry-After. A learn (a limit the transport keeps anyway, the
// comment on maxOwed says) pushed a report out.
func TestAttack33OwedLearnEvictsBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}}
		f := newFailover(&Transport{}, shared, -1)
		l := throttle.Limit{Burst: 10, Sustain: 30}
		ctx := context.Background()
		shared.fail.Store(true)
		now := time.Now()
		for i := range maxOwed {
			f.Block(ctx, attack28Key(fmt.Sprintf("u%03d", i)), now, now.Add(time.Minute))
		}
		if n := f.nOwed.Load(); n != maxOwed {
			t.Fatalf("setup: %d owed, want %d", n, maxOwed)
		}
		// call.learn's owe, as a 429 body's report the store failed.
		f.owe(owedOp{op: opLearn, k: throttle.Key{Scope: "profile"}, learn: throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 6, User: "u999", At: now}})
		blocked := 0
		for _, o := range f.owed {
			if o.op == opBlock {
				blocked++
			}
		}
		time.Sleep(2 * time.Second)
		shared.fail.Store(false)
		a, _ := f.Reserve(ctx, attack28Key("u000"), l, time.Now(), 0)
		if blocked != maxOwed || a.Allowed {
			t.Errorf("256 users' blocks owed (a long outage), then one learn report owed: %d blocks still owed (want 256), and after recovery the first user, blocked by the service for a minute, is admitted=%v (want refused). "+
				"A learn pushed out a report. Against Transport.Budget: \"at most 256 are owed (releases dropped first)\" and a 429's block the store could not take \"is kept by the local store and owed to the shared one: the next call of this Transport to reach it sends it, a key's reports before that key's next booking\"; "+
				"the failover's own maxOwed comment: \"a report dropped lets calls into a limit\". "+
				"Fix: in owe, when the list is full of reports and o is a release or a learn, drop o itself rather than the oldest report",
				blocked, a.Allowed)
		}
	})
}
