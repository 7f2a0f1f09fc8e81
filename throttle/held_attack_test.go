package throttle_test

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held (the doc admits it): MemoryBudgetStore: "Keys are bounded as in
// MemoryServerStore", whose doc says "at MaxKeys a new key evicts idle keys
// or, failing that, the least recently active one of a random sample,
// whose counts restart." Another user's new key evicts a spent budget,
// and the evicted user is admitted again past the limit: the restart is
// written down, its cost to the BudgetStore promise is not.
func TestAttackEvictionRestartsAnotherUsersBudget(t *testing.T) {
	ctx := context.Background()
	b := throttle.MemoryBudgetStore{MaxKeys: 1}
	l := throttle.Limit{Burst: 1, Sustain: 1}
	a, c := throttle.Key{User: "a", Scope: "s"}, throttle.Key{User: "c", Scope: "s"}
	if adm, _ := b.Reserve(ctx, a, l, attackAt(0), 0); !adm.Allowed {
		t.Fatal("first call refused")
	}
	if adm, _ := b.Reserve(ctx, a, l, attackAt(1), 0); adm.Allowed {
		t.Fatal("second call admitted before any eviction")
	}
	b.Reserve(ctx, c, l, attackAt(2), 0) // another user: a is evicted
	if adm, _ := b.Reserve(ctx, a, l, attackAt(3), 0); !adm.Allowed {
		t.Errorf("a's budget survived the eviction the doc describes: %+v", adm)
	}
	if b.Len() != 1 {
		t.Errorf("Len %d with MaxKeys 1", b.Len())
	}
}

// held: Reserve's doc: "maxWait 0 admits now or never"; a negative maxWait
// is read as 0 and a huge one books, never overflowing; a zero Limit is no
// limit; a Sync of more used than the limit, or of a reset over the period,
// never panics and never loosens; Snapshot does not create a key; Release
// of a slot never booked changes nothing.
func TestAttackEdgeArgumentsHold(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 3}
	b.Reserve(ctx, k, l, attackAt(0), 0)
	if a, _ := b.Reserve(ctx, k, l, attackAt(1), -time.Hour); a.Allowed || a.Wait != 15*time.Second {
		t.Errorf("negative maxWait: %+v; want refused, 15 s", a)
	}
	a, _ := b.Reserve(ctx, k, l, attackAt(1), time.Duration(1<<63-1))
	if !a.Allowed || a.Wait != 15*time.Second {
		t.Errorf("huge maxWait: %+v; want booked in 15 s", a)
	}
	before, _ := b.Snapshot(ctx, k, l, attackAt(2))
	b.Sync(ctx, k, l, attackAt(2), throttle.Sustain, 1<<40, 301*time.Second)  // reset over the period: ignored
	b.Sync(ctx, k, l, attackAt(2), throttle.Burst, -5, 10*time.Second)        // negative used
	b.Sync(ctx, k, l, attackAt(2), throttle.Period(9), 1<<40, 10*time.Second) // no such window
	b.Release(ctx, k, l, 12345)                                               // never booked
	after, _ := b.Snapshot(ctx, k, l, attackAt(2))
	if after.Sustain.Count < before.Sustain.Count || after.Wait < before.Wait {
		t.Errorf("edge Syncs loosened: %+v then %+v", before, after)
	}
	b.Sync(ctx, k, l, attackAt(2), throttle.Sustain, 1<<40, 300*time.Second) // used far over the limit
	if s, _ := b.Snapshot(ctx, k, l, attackAt(2)); s.Sustain.Count != 3 || s.Wait != 301*time.Second {
		t.Errorf("a Sync of 2^40 used: %+v; want the ring full (3), 301 s", s)
	}
	n := b.Len()
	b.Snapshot(ctx, throttle.Key{User: "other"}, l, attackAt(2))
	if b.Len() != n {
		t.Errorf("Snapshot created a key")
	}
	for i := range 1000 {
		if a, _ := b.Reserve(ctx, throttle.Key{User: "z"}, throttle.Limit{}, attackAt(3), 0); !a.Allowed {
			t.Fatalf("zero limit refused call %d", i)
		}
	}
}

// BudgetStore.Reserve said "the call is counted at now+Wait and must be
// sent no earlier, so callers that book in turn are served in turn";
// Admission.Slot: "the instant counted".
//
// Burst 2: two calls at 0 s, three booked at 1 s (16 s, 16 s, 32 s), the
// two booked for 16 s cancelled and Released. A call at 2 s is told to go
// at 16 s (before the 32 s booking still held, which it overtakes) while
// the budget counts it at 32 s (its Slot). That is safe (counted later
// than sent only makes the budget stricter; TestAttackBudgetNeverDrawsA429
// found no 429) and the same rule that lets a caller whose clock is a
// little behind another's go without waiting for it; the godoc now says
// so: "counted at now+Wait, or at the key's newest booking when that is
// later ... Such a call may go before that booking." This checks what it
// says: told to go at 16 s, counted at its Slot, 32 s, never earlier than
// it is sent.
func TestAttackReleaseLetsALaterBookingOvertake(t *testing.T) {
	ctx := context.Background()
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Scope: "s"}
	l := throttle.Limit{Burst: 2, Sustain: 100}
	first, _ := b.Reserve(ctx, k, l, attackAt(0), 0)
	b.Reserve(ctx, k, l, attackAt(0), 0)
	// A slot is the instant counted, in microseconds from the store's own
	// origin: the first call's counts attackAt(0).
	slotTime := func(slot int64) time.Time { return attackAt(0).Add(time.Duration(slot-first.Slot) * time.Microsecond) }
	var booked []throttle.Admission
	for range 3 {
		a, _ := b.Reserve(ctx, k, l, attackAt(1), time.Minute)
		booked = append(booked, a)
	}
	held := slotTime(booked[2].Slot)
	b.Release(ctx, k, l, booked[0].Slot)
	b.Release(ctx, k, l, booked[1].Slot)
	d, _ := b.Reserve(ctx, k, l, attackAt(2), time.Minute)
	goAt := attackAt(2).Add(d.Wait)
	counted := slotTime(d.Slot)
	if !d.Allowed || !goAt.Equal(attackAt(16)) || !counted.Equal(held) || counted.Before(goAt) {
		t.Errorf("booked after a call held for %v: told to go at %v, counted at %v; want 16s, counted at %v",
			held.Sub(attackBase), goAt.Sub(attackBase), counted.Sub(attackBase), held.Sub(attackBase))
	}
}
