package redisstore

// An outside attack (attack2102) on 78d0c78: the Redis budget against the
// memory one, and the Redis meta hash's expiry.

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

var attack2Base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxLimit (throttle.go): "the budget stores read a larger one as
// MaxLimit"; Snapshot: "Counts hold, for each window, ... the limit".
// The memory store reports a burst limit of MaxLimit for a limit over it,
// the Redis store the limit as given.
func TestAttack2RedisSnapshotLimitOverMaxLimit(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rs := &Store{Client: srv.Client(), CallerTime: true, Prefix: "attack2102m"}
	var ms throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: throttle.MaxLimit + 1, Sustain: 5}
	ms.Reserve(ctx, k, l, attack2Base, 0)
	rs.Reserve(ctx, k, l, attack2Base, 0)
	a, _ := ms.Snapshot(ctx, k, l, attack2Base)
	b, err := rs.Snapshot(ctx, k, l, attack2Base)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("memory %+v, redis %+v", a, b)
	}
}

// held: the package doc: "Keys carry a hash tag ...; they expire with
// their windows"; reserve.lua: meta's cap is set "where an admission was
// added, whose expiry then covers meta too". After each path that can
// write meta (a reserve that books, a reserve refused after cap was set,
// a sync that adds and one that adds nothing, a block, a release that
// finds nothing and leaves a mark, a release that empties the log), meta
// and the log have an expiry, never none.
func TestAttack2RedisMetaAlwaysExpires(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client()
	rs := &Store{Client: c, CallerTime: true, Prefix: "attack2102e"}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	big, small := throttle.Limit{Burst: 50, Sustain: 500}, throttle.Limit{Burst: 1, Sustain: 2}
	check := func(step string) {
		t.Helper()
		for _, kind := range []string{"log", "meta"} {
			key := rs.key(k, kind)
			n, _ := c.Exists(ctx, key).Result()
			if n == 0 {
				continue
			}
			if ttl, _ := c.PTTL(ctx, key).Result(); ttl <= 0 {
				t.Errorf("after %s: %s has no expiry (PTTL %v)", step, kind, ttl)
			}
		}
	}
	at := func(s float64) time.Time { return attack2Base.Add(time.Duration(s * float64(time.Second))) }
	a, _ := rs.Reserve(ctx, k, big, at(0), 0)
	check("a reserve under a large limit")
	if cp, _ := c.HGet(ctx, rs.key(k, "meta"), "cap").Int(); cp != 500 {
		t.Errorf("meta cap %d, want 500", cp)
	}
	rs.Reserve(ctx, k, small, at(1), 0)
	rs.Reserve(ctx, k, small, at(1), 0) // refused
	check("a refused reserve")
	rs.Sync(ctx, k, small, at(2), throttle.Burst, 0, 10*time.Second)
	check("a sync that adds nothing")
	rs.Sync(ctx, k, small, at(2), throttle.Burst, 5, 10*time.Second)
	check("a sync that adds")
	rs.Block(ctx, k, at(3), at(2))
	check("a block in the past")
	rs.Release(ctx, k, small, 12345)
	check("a release leaving a mark")
	rs.Release(ctx, k, small, a.Slot)
	check("a release")
	// empty the log: everything expires from the span
	rs.Snapshot(ctx, k, big, at(1000))
	rs.Release(ctx, k, small, 777)
	check("a release after the span")
	// meta alone, with cap, after the log is gone: a new reserve
	c.Del(ctx, rs.key(k, "log"))
	rs.Reserve(ctx, k, small, at(2000), 0)
	check("a reserve on meta alone")
}

// attack2Stores returns a memory and a Redis budget store (CallerTime), both
// with DefaultMargin.
func attack2Stores(t *testing.T, prefix string) map[string]throttle.BudgetStore {
	srv := redistest.Start(t)
	return map[string]throttle.BudgetStore{
		"memory": new(throttle.MemoryBudgetStore),
		"redis":  &Store{Client: srv.Client(), CallerTime: true, Prefix: prefix, Timeout: 10 * time.Second},
	}
}

func attack2At(s float64) time.Time { return attack2Base.Add(time.Duration(s * float64(time.Second))) }

// BudgetStore: "A budget admits a call at t only if ... fewer than Sustain
// [admissions lie] in (t-SustainPeriod-margin, t] ... Several transports
// share one store on purpose, so that together they stay within one
// budget"; RELIABILITY.md (78d0c78): "a key's ring never shrinks while it
// lives (it is sized by the largest limit it has been given)". 78d0c78's
// own cases take a burst-only limit as the smaller one (TestAttackSync...:
// "a second transport on the store with a smaller share, or a burst-only
// limit").
//
// whole {Burst 4, Sustain 8} sends 4 at 0 s: the memory ring has grown to
// 4, not 8. A transport under {Burst 3} sends 3 at 17 s: each push into
// the full ring of 4 drops one of the 0 s admissions. whole is then
// admitted 4 more at 34 s: 11 calls in 34 s under sustain 8.
// The Redis store (cap 8 in meta) admits 1: it holds; the memory store
// breaks.
func TestAttack2BurstOnlyCallerDropsAdmissions(t *testing.T) {
	ctx := context.Background()
	for name, s := range attack2Stores(t, "attack2102b") {
		k := throttle.Key{User: "u", Title: "t", Scope: "s"}
		whole, burstOnly := throttle.Limit{Burst: 4, Sustain: 8}, throttle.Limit{Burst: 3}
		sent := 0
		for _, c := range []struct {
			at float64
			l  throttle.Limit
		}{{0, whole}, {0, whole}, {0, whole}, {0, whole}, {17, burstOnly}, {17, burstOnly}, {17, burstOnly}, {34, whole}, {34, whole}, {34, whole}, {34, whole}} {
			if a, err := s.Reserve(ctx, k, c.l, attack2At(c.at), 0); err != nil {
				t.Fatal(err)
			} else if a.Allowed {
				sent++
			}
		}
		if sent > whole.Sustain {
			t.Errorf("%s: %d calls admitted in 34 s on one key, under a sustain of %d", name, sent, whole.Sustain)
		}
	}
}

// BudgetStore.Sync: "When the server has counted more than the budget
// holds for that window, the missing requests are recorded at the
// window's start; ... the budget only ever becomes stricter"; storetest
// (78d0c78): "a sync under a smaller limit keeps the admissions a larger
// one counts".
//
// whole {Burst 10, Sustain 30} and a half share {Burst 5, Sustain 15} on
// one key. whole sends 1 at 0 s; at 10 s the service reports, to the half
// transport, 30 counted in its sustain window since 0 s (the user's other
// processes). Both stores record at most the half's limit of the missing
// 29 (memory: min(missing, ring) after growing the ring to 15; Redis:
// min(missing, this call's cap)): whole then holds 16, not 30, and is
// admitted up to 15 more, 45 counted by a service whose limit is 30.
func TestAttack2SyncUnderSmallerLimitCapsTheMissing(t *testing.T) {
	ctx := context.Background()
	for name, s := range attack2Stores(t, "attack2102s") {
		k := throttle.Key{User: "u", Title: "t", Scope: "s"}
		whole, half := throttle.Limit{Burst: 10, Sustain: 30}, throttle.Limit{Burst: 5, Sustain: 15}
		s.Reserve(ctx, k, whole, attack2At(0), 0)
		if err := s.Sync(ctx, k, half, attack2At(10), throttle.Sustain, 30, 290*time.Second); err != nil {
			t.Fatal(err)
		}
		snap, _ := s.Snapshot(ctx, k, whole, attack2At(10))
		admitted := 0
		for i := range 30 {
			if a, _ := s.Reserve(ctx, k, whole, attack2At(20+float64(i)*2), 0); a.Allowed {
				admitted++
			}
		}
		if snap.Sustain.Count < 30 || admitted > 0 {
			t.Errorf("%s: after a Sync of 30 counted: sustain count %d, then %d more calls admitted under sustain 30", name, snap.Sustain.Count, admitted)
		}
	}
}

// ServerStore (throttle.go): "each key has a fixed burst window and a
// fixed sustain window"; Decision.RetryAfter: "the time until the
// Limiter's window ends"; BurstPeriod is 15 s. take.lua's roll (78d0c78):
// "A request stamped before the window's start ... counts in it".
//
// The callers' clock (CallerTime) steps back 1000 s after a request opened
// the burst window at 1000 s; requests 20 s apart then all count in that
// window, refused under burst 1 with a Retry-After of about 17 minutes.
func TestAttack2RedisServerClockStepBackFreezesWindow(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s := &Store{Client: srv.Client(), CallerTime: true, Prefix: "attack2102w"}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 100}
	if _, err := s.Take(ctx, k, l, attack2At(1000)); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for i := range 5 {
		d, err := s.Take(ctx, k, l, attack2At(float64(20*i)))
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			refused++
		}
		if d.RetryAfter > throttle.BurstPeriod {
			t.Errorf("request at %d s: RetryAfter %v for a %v window", 20*i, d.RetryAfter, throttle.BurstPeriod)
			break
		}
	}
	if refused > 1 {
		t.Errorf("%d of 5 requests 20 s apart refused under burst 1", refused)
	}
}

// TestLimitOverMaxLimitHeld: a store keeps at most MaxLimit admissions, so a
// larger limit, which they could never reach, is read as MaxLimit, not as
// none (reserve.lua holds it; the memory store's TestAttackLimitOverMaxLimitIsNoLimit).
// Apart from the conformance suite: it fills a log with MaxLimit admissions,
// a quarter of a second that each of the suite's runs (one per edit of the
// Lua scripts' table) would pay.
func TestLimitOverMaxLimitHeld(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s := &Store{Client: srv.Client(), CallerTime: true, Margin: -1, Timeout: 10 * time.Second}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: throttle.MaxLimit + 1}
	if err := s.Sync(ctx, k, l, attack2Base, throttle.Burst, 1<<40, throttle.BurstPeriod); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Reserve(ctx, k, l, attack2Base, 0); err != nil || a.Allowed || a.Wait != throttle.BurstPeriod {
		t.Errorf("a call under burst MaxLimit+1 with MaxLimit admissions in the span: %+v, %v; want refused for 15 s", a, err)
	}
}
