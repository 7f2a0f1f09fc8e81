package transport

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack27OwedBlockBehindThreeOfItsKey: key k owes, oldest first, a
// cancelled waiter's Release, the two Syncs of a 200 whose RateLimit
// headers a cancelled call brought (few used), then a 429's Block
// (Retry-After 30 s) whose caller also gave up. Four owed of k, none of
// another key. The key's next call pays "those of its own key first
// (before its Reserve), at most four a call" — but it pays three (the
// fourth place is kept for another key, and there is none), books in the
// shared store, which never heard the block, and is admitted into the
// service's Retry-After.
func TestAttack27OwedBlockBehindThreeOfItsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := attack25CtxStore{&throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, 0)
		k := throttle.Key{User: "atkuser", Title: title, Scope: "profile"}
		l := throttle.Limit{Burst: 10, Sustain: 30}
		now := time.Now()
		a, err := shared.Reserve(context.Background(), k, l, now, time.Minute)
		if err != nil || !a.Allowed {
			t.Fatalf("reserve: %+v %v", a, err)
		}
		ended := endedContext()
		f.Release(ended, k, l, a.Slot)                                 // a waiter cancelled
		f.Sync(ended, k, l, now, throttle.Burst, 2, 10*time.Second)    // a 200's headers, caller gone
		f.Sync(ended, k, l, now, throttle.Sustain, 2, 200*time.Second) // idem
		f.Block(ended, k, now, now.Add(30*time.Second))                // a 429's Retry-After 30, caller gone
		if n := f.nOwed.Load(); n != 4 {
			t.Fatalf("owed: %d, want 4", n)
		}
		time.Sleep(time.Second)
		got, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed {
			t.Errorf("key k owed four operations, the newest a 429's Block (Retry-After 30 s); its next call, 1 s "+
				"later, was admitted by the shared store (%+v, still owed %d): the call paid only three of its key's "+
				"owed operations before its booking, and the block the service reported had not reached the budget. "+
				"Promises: Transport.Budget \"the next call of this Transport to reach it sends it, before its own "+
				"booking when it is of that call's key (at most 256 owed, four sent a call)\"; RELIABILITY.md "+
				"\"the next call to reach the store sends those of its own key first, before its booking (at most "+
				"four a call ...): the report reaches the budget before the key's next booking\"", got, f.nOwed.Load())
		}
	})
}

// held: the four-a-call bound with other keys owed: k owes three (a
// Block last), another key one older; the paying call sends k's three
// first (the Block among them) and the other key's one, and is refused.
func TestAttack27OwedThreeOfKeyPlusOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := attack25CtxStore{&throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, 0)
		k := throttle.Key{User: "atkuser", Title: title, Scope: "profile"}
		other := throttle.Key{User: "other", Title: title, Scope: "profile"}
		l := throttle.Limit{Burst: 10, Sustain: 30}
		now := time.Now()
		ended := endedContext()
		f.Block(ended, other, now, now.Add(5*time.Second))
		f.Sync(ended, k, l, now, throttle.Burst, 2, 10*time.Second)
		f.Sync(ended, k, l, now, throttle.Sustain, 2, 200*time.Second)
		f.Block(ended, k, now, now.Add(30*time.Second))
		time.Sleep(time.Second)
		got, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed || f.nOwed.Load() != 0 {
			t.Errorf("admitted %+v, owed %d", got, f.nOwed.Load())
		}
		s, _ := shared.Snapshot(context.Background(), other, l, time.Now())
		if !s.BlockedUntil.After(time.Now()) {
			t.Errorf("other key's owed block not paid: %+v", s)
		}
	})
}
