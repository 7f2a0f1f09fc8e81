package transport

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// The failover gives every Release to both stores, on the ground that "a
// slot is booked in one of them, and a slot number unknown to a store
// changes nothing there" (failover.Release). But a MemoryBudgetStore's slot
// is the instant it counts (microseconds from an origin), and both stores compute that instant
// from the same inputs: a 429's Block (every waiter's slot is the block's
// end) or a Sync (the synced admissions sit at the window's start, so the
// next free slot is start+period+margin in both). A call booked in the
// shared store and another booked in the local one (an outage; a key whose
// reports are pending) then hold the same slot number, and a Release of one
// frees the other's booking too, in the store where that other call was
// sent.

const attack30SlotsBudgetPromise = "throttle.BudgetStore: \"A budget admits a call at t only if fewer than Burst " +
	"admissions lie in (t-BurstPeriod-margin, t]\"; BudgetStore.Release: \"Release gives back a slot Reserve " +
	"booked (Admission.Slot) for a call that was then not sent, so it no longer counts\"; Transport.Budget: " +
	"\"While it fails, the transport uses a local budget\" / \"Share one store ... to give them one budget per key\""

// TestAttack30SlotsReleaseOfSharedBookingFreesLocalBooking: a 429's Retry-After
// blocks key k in both stores until U. Call A waits for U in the shared
// store (slot U). The store goes down; call B of k waits for U in the local
// store (slot U as well). A is cancelled while it waits and gives its slot
// back: the local store's Release(U) frees B's booking, though B is sent at
// U. During the outage the local budget (burst 1) then admits C right after
// B: two calls in one burst window of a limit of one.
func TestAttack30SlotsReleaseOfSharedBookingFreesLocalBooking(t *testing.T) {
	shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
	f := newFailover(&Transport{}, shared, 0)
	k := attack28Key("slots-user")
	l := throttle.Limit{Burst: 1, Sustain: 100}
	ctx := context.Background()
	t0 := time.Now()
	u := t0.Add(2 * time.Second)

	f.Block(ctx, k, t0, u) // a 429's Retry-After of 2 s, kept by both stores
	a, _ := f.Reserve(ctx, k, l, t0, 5*time.Second)
	if !a.Allowed {
		t.Fatalf("A not booked: %+v", a)
	}
	shared.fail.Store(true) // the store goes down
	b, _ := f.Reserve(ctx, k, l, t0.Add(time.Millisecond), 5*time.Second)
	if !b.Allowed {
		t.Fatalf("B not booked locally: %+v", b)
	}
	t.Logf("A's slot (shared store) %d, B's slot (local store) %d", a.Slot, b.Slot)

	// A is cancelled while it waits: its slot goes back.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	f.Release(cctx, k, l, a.Slot)

	// B is sent at its slot. C comes 1 ms later, the store still down.
	c, _ := f.Reserve(ctx, k, l, t0.Add(time.Millisecond+b.Wait).Add(time.Millisecond), 0) // B goes at its wait's end
	if c.Allowed {
		t.Fatalf("the local budget (burst 1 per 15 s) admitted C 1 ms after B was sent at its slot: A's release "+
			"(a slot booked in the shared store, %d) freed B's booking in the local store (slot %d), which B was "+
			"sent on; against %s", a.Slot, b.Slot, attack30SlotsBudgetPromise)
	}
}

// TestAttack30SlotsReleaseOfLocalBookingFreesSharedBooking: the same two
// bookings the other way round, across a fleet. A (Transport 1) waits for U
// in the shared store; the store fails B's booking (Transport 1's same key),
// which waits for U in the local store. The store recovers; B is cancelled
// and gives its slot back to both stores: the shared store's Release(U)
// frees A's booking, though A is sent at U. Transport 2 of the fleet is
// then admitted by the shared store (burst 1) right after A: two calls in
// one burst window of a limit of one, for the fleet.
func TestAttack30SlotsReleaseOfLocalBookingFreesSharedBooking(t *testing.T) {
	shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
	f1 := newFailover(&Transport{}, shared, 0)
	f2 := newFailover(&Transport{}, shared, 0)
	k := attack28Key("slots-user")
	l := throttle.Limit{Burst: 1, Sustain: 100}
	ctx := context.Background()
	t0 := time.Now()
	u := t0.Add(2 * time.Second)

	f1.Block(ctx, k, t0, u)
	a, _ := f1.Reserve(ctx, k, l, t0, 5*time.Second)
	if !a.Allowed {
		t.Fatalf("A not booked: %+v", a)
	}
	shared.fail.Store(true) // a blip: B's booking fails
	b, _ := f1.Reserve(ctx, k, l, t0.Add(time.Millisecond), 5*time.Second)
	if !b.Allowed {
		t.Fatalf("B not booked locally: %+v", b)
	}
	shared.fail.Store(false) // back
	t.Logf("A's slot (shared store) %d, B's slot (local store) %d", a.Slot, b.Slot)

	// B is cancelled while it waits: its slot goes back (to both stores,
	// within B's context: a working store takes it at once, or it is owed
	// and paid by the next call).
	f1.Release(ctx, k, l, b.Slot)
	f1.payOwed(ctx, k, time.Now())

	// A is sent at its slot; Transport 2's call comes 1 ms later.
	c, _ := f2.Reserve(ctx, k, l, t0.Add(a.Wait).Add(time.Millisecond), 0) // A goes at its wait's end
	if c.Allowed {
		t.Fatalf("the shared store (burst 1 per 15 s) admitted another Transport's call 1 ms after A was sent "+
			"at its slot: B's release (a slot booked in the local store, %d) freed A's booking in the shared store "+
			"(slot %d), which A was sent on; the fleet overspends; against %s", b.Slot, a.Slot, attack30SlotsBudgetPromise)
	}
}

// held: an isolating store with the key's node down, the key owing a block,
// both windows' counts and a release: 20 bookings of the key each report one
// EventBudgetError (the first payment fails, the rest stay owed, the booking
// is local), the owed list does not grow (3 reports merged + 1 release), and
// nothing stays in flight.
func TestAttack30SlotsOwedNodeDownOneErrorPerCall(t *testing.T) {
	shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}, isolates: true}
	var errs, fallbacks int
	tr := &Transport{Observe: func(_ context.Context, e Event) {
		switch e.Kind {
		case EventBudgetError:
			errs++
		case EventBudgetFallback:
			fallbacks++
		}
	}}
	f := newFailover(tr, shared, 0)
	k := attack28Key("node-down")
	l := throttle.Limit{Burst: 10, Sustain: 100}
	ctx := context.Background()
	shared.setDownUser(k.User)
	now := time.Now()
	f.Block(ctx, k, now, now.Add(time.Minute))
	f.Sync(ctx, k, l, now, throttle.Burst, 3, 10*time.Second)
	f.Sync(ctx, k, l, now, throttle.Sustain, 5, 200*time.Second)
	f.Release(ctx, k, l, 12345)
	errs = 0
	for i := range 20 {
		at := now.Add(time.Duration(i+1) * time.Millisecond)
		f.Sync(ctx, k, l, at, throttle.Burst, 3, 10*time.Second) // each answer's counts, owed again
		before := errs
		f.Reserve(ctx, k, l, at, 0)
		if d := errs - before; d > 2 {
			t.Fatalf("call %d reported %d budget errors (one for its Sync, one for its payment expected at most)", i, d)
		}
	}
	if n := f.nOwed.Load(); n != 4 {
		t.Fatalf("%d owed, want 4 (a block, two counts, a release)", n)
	}
	if n := f.nReports.Load(); n != 3 || len(f.inFlight) != 0 {
		t.Fatalf("after every call ended: %d reports owed or in flight (want the 3 owed), in flight %v", n, f.inFlight)
	}
	t.Logf("budget errors %d, fallbacks %d over 20 calls", errs, fallbacks)
}

// TestAttack30SlotsSyncedWindowGivesBothStoresOneSlot: no 429 needed: RateLimit
// counts (the burst spent, resetting in 2 s) put the synced admissions at
// the same instant in both stores, so the next free slot is one number in
// both; A's release (shared booking) frees B's local booking.
func TestAttack30SlotsSyncedWindowGivesBothStoresOneSlot(t *testing.T) {
	shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
	f := newFailover(&Transport{}, shared, 0)
	k := attack28Key("slots-sync")
	l := throttle.Limit{Burst: 1, Sustain: 100}
	ctx := context.Background()
	t0 := time.Now()

	f.Sync(ctx, k, l, t0, throttle.Burst, 1, 2*time.Second)
	a, _ := f.Reserve(ctx, k, l, t0, 5*time.Second)
	shared.fail.Store(true)
	b, _ := f.Reserve(ctx, k, l, t0.Add(time.Millisecond), 5*time.Second)
	if !a.Allowed || !b.Allowed {
		t.Fatalf("not booked: A %+v, B %+v", a, b)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	f.Release(cctx, k, l, a.Slot)
	c, _ := f.Reserve(ctx, k, l, t0.Add(time.Millisecond+b.Wait).Add(time.Millisecond), 0) // B goes at its wait's end
	if c.Allowed {
		t.Fatalf("after RateLimit counts synced to both stores, A's slot in the shared store (%d) and B's in the "+
			"local one (%d) are one number: A's release freed B's booking, and the local budget (burst 1) admitted "+
			"C 1 ms after B was sent; against %s", a.Slot, b.Slot, attack30SlotsBudgetPromise)
	}
}
