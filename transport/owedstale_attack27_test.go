package transport

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// attack27OwedStore is a redisstore.Store on a fresh redis-server, in its
// default mode (Redis's own clock: CallerTime false), no margin.
func attack27OwedStore(t *testing.T) *redisstore.Store {
	srv := redistest.Start(t)
	return &redisstore.Store{Client: srv.Client(), Margin: -1}
}

// TestAttack27OwedBlockPaidLateExtendsRetryAfter: a 429's Retry-After of 1 s
// reported by a call whose context had ended is owed to redisstore; the
// next call of the key comes 1.2 s later (the service's block is over) and
// pays it before its booking. redisstore measures a block from when it
// arrives (Redis's clock; the op's own now is ignored), so the owed Block
// blocks the key afresh for 1 s from the payment: the paying call itself is
// refused, and so is every Transport of the fleet sharing the store.
func TestAttack27OwedBlockPaidLateExtendsRetryAfter(t *testing.T) {
	t.Parallel() // real time and a Redis of its own
	store := attack27OwedStore(t)
	f := newFailover(&Transport{}, store, 0)
	k := throttle.Key{User: "atkuser", Title: title, Scope: "profile"}
	l := throttle.Limit{Burst: 10, Sustain: 30}

	ended := endedContext()
	t0 := time.Now()
	f.Block(ended, k, t0, t0.Add(time.Second)) // the call that brought the 429 ended first
	if n := f.nOwed.Load(); n != 1 {
		t.Fatalf("owed after a Block under an ended context: %d, want 1", n)
	}

	time.Sleep(1200 * time.Millisecond) // the service's Retry-After is over
	now := time.Now()
	a, err := f.Reserve(context.Background(), k, l, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := store.Snapshot(context.Background(), k, l, time.Now())
	t.Logf("retry-after ended %v ago; reserve: %+v; store blocked for %v more", now.Sub(t0.Add(time.Second)), a, time.Until(snap.BlockedUntil))
	if !a.Allowed || snap.BlockedUntil.After(time.Now()) {
		t.Errorf("a 429's Retry-After of 1 s, owed to the shared store (redisstore) and paid by the key's next call "+
			"1.2 s later, blocked the key again from the payment (reserve %+v, store blocked until %v from now): the "+
			"block the service reported ended 0.2 s before, yet the paying call was refused and every Transport "+
			"sharing the store is. redisstore measures a Block from when it arrives, and the owed op is sent with its "+
			"original now/until, so a late payment extends the block by the delay (hours, if the key is next called "+
			"hours later). Promises: throttle.BudgetStore.Block \"refuses calls for k from now until until (a server "+
			"Retry-After)\"; redisstore.Store.Block \"the service's Retry-After runs from when its answer arrived\"; "+
			"Transport.Budget \"a Block or Sync twice must be one\"",
			a, time.Until(snap.BlockedUntil))
	}
}

// TestAttack27OwedSyncPaidLateRecountsWindow: RateLimit headers saying the
// burst of 10 is spent, the window resetting in 1 s, reported by a call
// whose context had ended: owed. The key's next call comes 1.2 s later (the
// service's window has reset) and pays it: redisstore places the missing
// requests at "now + reset - period" by its own clock, i.e. in a window
// that ends 1 s after the payment, so the paying call is held back.
func TestAttack27OwedSyncPaidLateRecountsWindow(t *testing.T) {
	t.Parallel() // real time and a Redis of its own
	store := attack27OwedStore(t)
	f := newFailover(&Transport{}, store, 0)
	k := throttle.Key{User: "atkuser2", Title: title, Scope: "profile"}
	l := throttle.Limit{Burst: 10, Sustain: 100}

	ended := endedContext()
	t0 := time.Now()
	f.Sync(ended, k, l, t0, throttle.Burst, 10, time.Second)
	if n := f.nOwed.Load(); n != 1 {
		t.Fatalf("owed after a Sync under an ended context: %d, want 1", n)
	}

	time.Sleep(1200 * time.Millisecond) // the service's burst window reset 0.2 s ago
	a, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Allowed {
		t.Errorf("RateLimit counts (burst spent, window resetting in 1 s) owed to redisstore and paid by the key's "+
			"next call 1.2 s later made that call wait %v: the service's window had reset 0.2 s before, but the late "+
			"Sync was measured from its arrival and spent a new window. Promises: throttle.BudgetStore.Sync "+
			"\"absorbs a server's report of one window: used requests in a window of period p that ends in reset\" "+
			"(the window reported ended before the payment); Transport.Budget \"a Block or Sync twice must be one\"", a.Wait)
	}
}

// TestAttack27OwedBlockPaidLateThroughTransport: the same, end to end. A call
// gets a 429 with Retry-After: 1 and its caller gives up as the answer
// arrives (the Block is owed to redisstore); the user's next call 1.2 s
// later, after the service's block, is refused by the transport itself.
func TestAttack27OwedBlockPaidLateThroughTransport(t *testing.T) {
	t.Parallel() // real time and a Redis of its own
	store := attack27OwedStore(t)
	s := &script{answers: []func(http.ResponseWriter){answer(429, "1")}}
	var cancel context.CancelFunc
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := s.RoundTrip(r)
		if cancel != nil {
			cancel() // the caller gives up as the answer arrives
			cancel = nil
		}
		return resp, err
	})
	tr := &Transport{Base: base, TitleID: title, RetryWindow: -1, Budget: store}
	ctx, c := context.WithCancel(context.Background())
	defer c()
	cancel = c
	if resp, err := get(t, tr, ctx, profileURL, xuid1); err == nil {
		resp.Body.Close()
	}
	time.Sleep(1200 * time.Millisecond) // Retry-After: 1 is over
	resp, err := get(t, tr, context.Background(), profileURL, xuid1)
	if err != nil || resp.StatusCode != 200 {
		st := 0
		if resp != nil {
			st = resp.StatusCode
			resp.Body.Close()
		}
		var te *ThrottleError
		errors.As(err, &te)
		t.Errorf("the user's call 1.2 s after a 429 with Retry-After: 1 (whose caller had given up as it arrived) "+
			"was refused (status %d, err %v, throttle error %+v; service calls %d): the owed Block, paid before its "+
			"booking, blocked the key for 1 s from the payment in redisstore. Promise: Transport.Budget \"a 429's block "+
			"... is kept by the local store and owed to the shared one: the next call ... sends it, before its own "+
			"booking\" — a report of a block that already ended must not block anew; redisstore.Store.Block \"the "+
			"service's Retry-After runs from when its answer arrived\"", st, err, te, s.calls())
	} else {
		resp.Body.Close()
	}
}
