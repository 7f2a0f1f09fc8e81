package transport

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack29OwedSyncPaidByEarlierCallLengthensPastWindow: a call's `now` is
// read when it starts (newCall), before limitOf reads the learned limits
// from the shared store (a round trip) and before it books; meanwhile
// another call's answer arrives saying the burst is spent in a window that
// has just begun (used 10 of 10, reset 15 s: a service rounds 14.3 s up),
// and the store fails that Sync (a node just down), so it is owed. The
// first call then books and pays it "measured from when it is sent" with
// its own earlier now: owedOp.at adds the difference to the reset, which
// becomes 15.001 s, longer than the window, and the store drops a report
// whose reset exceeds the period (slidingLog.Sync: reset > d changes
// nothing). The service's word is lost for the shared store, which admits
// the key's next calls into the spent burst.
func TestAttack29OwedSyncPaidByEarlierCallLengthensPastWindow(t *testing.T) {
	for _, early := range []bool{false, true} {
		t.Run(map[bool]string{false: "control-paid-at-answer", true: "paid-by-earlier-call"}[early], func(t *testing.T) {
			attack29LengthenedSync(t, early)
		})
	}
}

func attack29LengthenedSync(t *testing.T, early bool) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack29SlowStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}, rtt: 0}
		f := newFailover(&Transport{}, shared, -1)
		k := attack28Key("atkuser")
		l := throttle.Limit{Burst: 10, Sustain: 30}
		callStart := time.Now() // the paying call reads its now
		time.Sleep(time.Millisecond)
		answerAt := time.Now() // another call's answer arrives; the store fails its Sync
		shared.setFail(true)
		f.Sync(context.Background(), k, l, answerAt, throttle.Burst, 10, throttle.BurstPeriod)
		shared.setFail(false)
		if f.nOwed.Load() != 1 {
			t.Fatalf("owed %d, want 1", f.nOwed.Load())
		}
		// The first call books now, with the now it read at its start.
		payAt := answerAt
		if early {
			payAt = callStart
		}
		f.Reserve(context.Background(), k, l, payAt, 0)
		// The key's next call.
		a, _ := f.Reserve(context.Background(), k, l, time.Now(), 0)
		if a.Allowed && !early {
			t.Fatalf("control: paid at the answer's now, the next call was still admitted")
		}
		if a.Allowed {
			snap, _ := shared.MemoryBudgetStore.Snapshot(context.Background(), k, l, time.Now())
			t.Errorf("the service said the burst is spent (10 of 10, reset 15 s) and the report was owed; paid by a "+
				"call whose now was read 1 ms before the answer arrived, its reset was lengthened past the 15 s "+
				"window and the store ignored it: the key's next call was admitted (shared burst count %d of %d). "+
				"Promise: Transport.Budget: \"the next call of this Transport to reach it sends it, a key's reports "+
				"before that key's next booking, measured from when they are sent\"; throttle.BudgetStore.Sync: "+
				"\"When the server has counted more than the budget holds for that window, the missing requests "+
				"are recorded at the window's start\"", snap.Burst.Count, snap.Burst.Limit)
		}
	})
}
