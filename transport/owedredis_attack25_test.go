package transport

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// held: the slot still goes back. A release owed to a redisstore.Store
// (a cancelled waiter's) is paid by the next call, whose 200 ms deadline
// ends while Redis is paused (Timeout 250 ms). The store reports that as
// the node's failure (the deadline gave it more than half its Timeout),
// not as the caller's ctx.Err(): failover.callersEnd says no and the
// payment is not owed again, but the command was written before the cut,
// and Redis runs it on resuming: the slot is not counted afterwards.
func TestAttack25OwedPaymentCutByDeadlineReachesRedis(t *testing.T) {
	t.Parallel() // real time and a Redis of its own
	srv := redistest.Start(t)
	store := &redisstore.Store{Client: srv.Client(), Timeout: 250 * time.Millisecond}
	f := newFailover(&Transport{}, store, 0)
	k := throttle.Key{User: "atkuser", Title: title, Scope: "profile"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	a, err := store.Reserve(context.Background(), k, l, time.Now(), 0)
	if err != nil || !a.Allowed {
		t.Fatalf("reserve: %+v %v", a, err)
	}
	f.owe(owedOp{op: opRelease, k: k, l: l, slot: a.Slot}) // as failover.Release does for a cancelled waiter

	srv.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	f.payOwed(ctx, throttle.Key{}, time.Now()) // the paying call's deadline cuts the payment short
	cancel()
	srv.Resume()
	owedAfterCut := f.nOwed.Load()

	// Redis answers again: later calls pay what is still owed.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if f.nOwed.Load() == 0 {
			break
		}
		pctx, pcancel := context.WithTimeout(context.Background(), time.Second)
		f.payOwed(pctx, throttle.Key{}, time.Now())
		pcancel()
		time.Sleep(50 * time.Millisecond)
	}
	var snap throttle.Snapshot
	for time.Now().Before(deadline) {
		if snap, err = store.Snapshot(context.Background(), k, l, time.Now()); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("owed after the cut: %d; burst count after resume: %d", owedAfterCut, snap.Burst.Count)
	if snap.Burst.Count != 0 {
		t.Errorf("a release owed to Redis whose payment the paying call's 200 ms deadline cut short (Redis paused) "+
			"was dropped (owed after the cut: %d); Redis still counts the slot (burst count %d, want 0). "+
			"Promise: RELIABILITY.md \"a payment is one store operation within the paying call's context, and one its "+
			"context cuts short is owed again\"; Transport.Budget \"a slot a call gives back then (cancelled while it "+
			"waited) is owed to the store and sent by the next call that reaches it\"",
			owedAfterCut, snap.Burst.Count)
	}
}
