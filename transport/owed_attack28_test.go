package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack28Store is a shared store that fails every operation (at once, or
// after delay, as redisstore does against an unreachable Redis at its
// timeout) while fail is set, or for the keys of the user in downUser (a
// FailureIsolator with that user's node down, when isolates is set). It
// fails at once under an ended context, as a network store does.
type attack28Store struct {
	*throttle.MemoryBudgetStore
	fail     atomic.Bool
	isolates bool
	delay    time.Duration
	mu       sync.Mutex
	downUser string
	calls    atomic.Int32 // operations tried while failing
	stall    atomic.Bool  // operations wait for their context's end
}

var errAttack28Down = errors.New("attack28: store unreachable")

func (s *attack28Store) IsolatesFailures() bool { return s.isolates }

func (s *attack28Store) setDownUser(u string) { s.mu.Lock(); s.downUser = u; s.mu.Unlock() }

func (s *attack28Store) check(ctx context.Context, k throttle.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.stall.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	s.mu.Lock()
	down := s.fail.Load() || (s.downUser != "" && k.User == s.downUser)
	s.mu.Unlock()
	if !down {
		return nil
	}
	s.calls.Add(1)
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errAttack28Down
}

func (s *attack28Store) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	if err := s.check(ctx, k); err != nil {
		return throttle.Admission{}, err
	}
	return s.MemoryBudgetStore.Reserve(ctx, k, l, now, maxWait)
}

func (s *attack28Store) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	if err := s.check(ctx, k); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

func (s *attack28Store) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	if err := s.check(ctx, k); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Block(ctx, k, now, until)
}

func (s *attack28Store) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if err := s.check(ctx, k); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Sync(ctx, k, l, now, p, used, reset)
}

func (s *attack28Store) Snapshot(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Snapshot, error) {
	if err := s.check(ctx, k); err != nil {
		return throttle.Snapshot{}, err
	}
	return s.MemoryBudgetStore.Snapshot(ctx, k, l, now)
}

func attack28Key(u string) throttle.Key { return throttle.Key{User: u, Title: title, Scope: "profile"} }

const attack28BudgetPromise = "Transport.Budget: \"One it cannot give, because the store is down or the call's context " +
	"ends first (a 429's block or RateLimit counts the service reported; a slot given back by a call cancelled while " +
	"it waited), is kept by the local store and owed to the shared one: the next call of this Transport to reach it " +
	"sends it, a key's reports before that key's next booking\""

// TestAttack28ReportFailedByStoreGoingDownNotOwed: a call's 429 brings a
// Retry-After of 60 s (or RateLimit headers saying the burst is spent); the
// shared store fails that Block (or Sync) with the call's context alive —
// it has just gone down (a non-isolating store: this is the failure that
// starts the outage; an isolating one: the key's node is down). The report
// is kept by the local store only, never owed: when the store is back, the
// key's next call is booked by the shared store, which never heard the
// service's word, and goes into the Retry-After / a spent burst.
func TestAttack28ReportFailedByStoreGoingDownNotOwed(t *testing.T) {
	for _, isolates := range []bool{false, true} {
		for _, op := range []string{opBlock, opSync} {
			t.Run(fmt.Sprintf("%s/isolates=%v", op, isolates), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}, isolates: isolates}
					f := newFailover(&Transport{}, shared, -1)
					k := attack28Key("atkuser")
					l := throttle.Limit{Burst: 10, Sustain: 30}
					now := time.Now()
					if a, err := f.Reserve(context.Background(), k, l, now, 0); err != nil || !a.Allowed {
						t.Fatalf("first reserve: %+v %v", a, err)
					}
					// The call's answer arrives; the store has just gone down
					// (isolating: the user's node).
					if isolates {
						shared.setDownUser(k.User)
					} else {
						shared.fail.Store(true)
					}
					if op == opBlock {
						f.Block(context.Background(), k, now, now.Add(60*time.Second))
					} else {
						f.Sync(context.Background(), k, l, now, throttle.Burst, 10, 10*time.Second)
					}
					owed := f.nOwed.Load()
					time.Sleep(2 * time.Second) // the store is back within the probe interval
					shared.fail.Store(false)
					shared.setDownUser("")
					time.Sleep(2 * time.Second)
					got, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
					if err != nil {
						t.Fatal(err)
					}
					if got.Allowed {
						t.Errorf("a %s the service reported (Retry-After 60 s / burst spent, 10 s to reset) that the "+
							"shared store failed with the call's context alive (the store down, isolates=%v) was not "+
							"owed (owed %d): 4 s later the store, working again, admitted the key's next call (%+v) "+
							"into the service's limit. Promise: %s; RELIABILITY.md (helper 140): \"what a call cannot "+
							"give a store that is down is owed too, and paid when the store is next reached\"",
							op, isolates, owed, got, attack28BudgetPromise)
					}
				})
			})
		}
	}
}

// TestAttack28ReleaseFailedByStoreGoingDownNotOwed: as above for a slot given
// back by a call cancelled while it waited: the shared store fails that
// Release with the releasing context alive (the call was cancelled, the
// Release runs just after — here, with a live context, the store has just
// gone down). The store then counts a call never sent.
func TestAttack28ReleaseFailedByStoreGoingDownNotOwed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		k := attack28Key("atkuser")
		l := throttle.Limit{Burst: 1, Sustain: 30}
		now := time.Now()
		if a, _ := f.Reserve(context.Background(), k, l, now, 0); !a.Allowed {
			t.Fatal("first reserve refused")
		}
		a, err := f.Reserve(context.Background(), k, l, now, time.Minute) // waits ~15 s
		if err != nil || !a.Allowed || a.Wait == 0 {
			t.Fatalf("second reserve: %+v %v", a, err)
		}
		shared.fail.Store(true)
		f.Release(context.Background(), k, l, a.Slot) // the waiter gave up; the store fails it
		owed := f.nOwed.Load()
		shared.fail.Store(false)
		time.Sleep(16 * time.Second)
		b, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Allowed {
			t.Errorf("a slot given back while the shared store failed (context alive) was not owed (owed %d): 16 s "+
				"later the store, working again, still counts the call never sent and refuses the key (%+v). "+
				"Promise: %s", owed, b, attack28BudgetPromise)
		}
	})
}

// TestAttack28OwedPaidToStoreStillDownIsLost: during an outage of a
// non-isolating store, a 429's Block (Retry-After 60 s) is owed. A second
// later another key's call probes the store, still down: it pays the owed
// block (the oldest of another key) to the store, which fails it; the
// payment's context is alive, so the block is neither sent nor owed
// again. When the store is back, the key's next call goes into the
// Retry-After. The same with an isolating store whose user's node is down:
// another user's call pays the block to that node.
func TestAttack28OwedPaidToStoreStillDownIsLost(t *testing.T) {
	for _, isolates := range []bool{false, true} {
		t.Run(fmt.Sprintf("isolates=%v", isolates), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}, isolates: isolates}
				f := newFailover(&Transport{}, shared, -1)
				k, other := attack28Key("atkuser"), attack28Key("other")
				l := throttle.Limit{Burst: 10, Sustain: 30}
				now := time.Now()
				ended := endedContext()
				if isolates {
					shared.setDownUser(k.User)
					f.Block(ended, k, now, now.Add(60*time.Second)) // the caller gone as the 429 came
				} else {
					shared.fail.Store(true)
					f.Reserve(context.Background(), other, l, now, 0) // fails: the outage starts
					f.Block(context.Background(), k, now, now.Add(60*time.Second))
				}
				if n := f.nOwed.Load(); n != 1 {
					t.Fatalf("owed %d, want the block", n)
				}
				time.Sleep(1500 * time.Millisecond)
				f.Reserve(context.Background(), other, l, time.Now(), 0) // a probe / another user's call
				owedAfter := f.nOwed.Load()
				time.Sleep(time.Second)
				shared.fail.Store(false)
				shared.setDownUser("")
				time.Sleep(2 * time.Second)
				got, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
				if err != nil {
					t.Fatal(err)
				}
				if got.Allowed {
					t.Errorf("an owed 429 block (Retry-After 60 s) was paid by another key's call to a store still "+
						"down for the key (isolates=%v), failed, and was dropped (owed after: %d): the store, back "+
						"4.5 s later, admitted the key's next call (%+v) into the service's Retry-After. The "+
						"block never reached the store. Promise: %s", isolates, owedAfter, got, attack28BudgetPromise)
				}
			})
		})
	}
}

// TestAttack28OwedSyncReplacedBySmallerCount: two answers of one key's window
// arrive out of order while the store is down: the one whose RateLimit
// headers say the burst is spent (10 of 10) is handled first, then an
// earlier request's (3 of 10, the same window, its reset 10 ms later
// counted from 10 ms earlier). Sent as they come, the store keeps the
// strictest (Sync: "a report of fewer changes nothing, so the budget only
// ever becomes stricter"); owed, the later-handled smaller count replaces
// the larger one, and the key's next call is admitted into a spent burst.
func TestAttack28OwedSyncReplacedBySmallerCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := throttle.Limit{Burst: 10, Sustain: 300}
		k := attack28Key("atkuser")
		now := time.Now()
		reports := func(s throttle.BudgetStore, ctx context.Context) {
			s.Sync(ctx, k, l, now, throttle.Burst, 10, 10*time.Second)
			s.Sync(ctx, k, l, now.Add(10*time.Millisecond), throttle.Burst, 3, 10*time.Second-10*time.Millisecond)
		}
		// Control: sent as they come, to a working store.
		direct := &throttle.MemoryBudgetStore{Margin: -1}
		reports(direct, context.Background())
		if a, _ := direct.Reserve(context.Background(), k, l, now.Add(time.Second), 0); a.Allowed {
			t.Fatalf("control: the strictest report kept, the store should refuse: %+v", a)
		}

		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		ended := endedContext()
		reports(f, ended) // both callers gone as their answers came: owed
		time.Sleep(time.Second)
		got, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed {
			t.Errorf("two owed Syncs of one window, 10 of 10 then (out of order) 3 of 10: the smaller replaced the "+
				"larger, and the shared store admitted the key's next call into a burst the service said was spent "+
				"(%+v); sent as they came, the store refused. Promises: throttle.BudgetStore.Sync \"a report of fewer "+
				"changes nothing, so the budget only ever becomes stricter\"; BudgetStore.Release \"a Block or Sync "+
				"twice is one\"; Transport.Budget \"A key owes at most its latest block and its latest counts of each "+
				"window\" — the later block wins (owe keeps the later until), but a window's smaller count wins too", got)
		}
	})
}

// TestAttack28OwedBoundDropsNewestBlock: a key's 429 block is owed, then 255
// releases of other keys, then a newer 429 block of that key (Retry-After
// 60 s), which replaces the first in its place, the oldest; one more
// release drops it: the newest block the service reported is dropped as
// "the oldest", while 255 older releases are kept. The key's next call
// goes into the Retry-After.
func TestAttack28OwedBoundDropsNewestBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		k := attack28Key("atkuser")
		l := throttle.Limit{Burst: 10, Sustain: 30}
		now := time.Now()
		ended := endedContext()
		f.Block(ended, k, now, now.Add(5*time.Second))
		for i := range maxOwed - 1 {
			f.Release(ended, attack28Key(fmt.Sprintf("u%d", i)), l, int64(i+1))
		}
		f.Block(ended, k, now.Add(time.Millisecond), now.Add(60*time.Second)) // the newest report
		f.Release(ended, attack28Key("last"), l, 999)                         // the 257th op
		time.Sleep(time.Second)
		got, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed {
			t.Errorf("the owed list at its bound of 256 dropped the key's block (Retry-After 60 s, owed after 255 "+
				"releases of other keys) as the oldest, keeping 255 older releases: the shared store admitted the "+
				"key's next call into the Retry-After (%+v). Promise: RELIABILITY.md \"at most 256, the oldest "+
				"dropped\"; failover.go \"a key's reports replace its owed ones ... the later block wins\" — the "+
				"newest block kept the first one's place and was dropped for being old", got)
		}
	})
}

// TestAttack28ProbeHeldByOwedPayments: a store that fails as redisstore does
// against an unreachable Redis (after its 250 ms timeout). During the
// outage the key's three reports and another key's block are owed. The probe a second later
// (one call, its store still down) first pays the four owed operations to
// the store, each failing after 250 ms, then tries its own booking: the
// call waits 1.25 s rather than 250 ms, five timeouts of a store known
// to be down.
func TestAttack28ProbeHeldByOwedPayments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}, delay: 250 * time.Millisecond}
		f := newFailover(&Transport{}, shared, -1)
		l := throttle.Limit{Burst: 10, Sustain: 30}
		prober := attack28Key("prober")
		now := time.Now()
		shared.fail.Store(true)
		f.Reserve(context.Background(), prober, l, now, 0) // the outage starts (250 ms)
		now = time.Now()
		// The prober's key's own reports, owed (the store is down): a 429's
		// block, each window's counts; and another key's block.
		f.Block(context.Background(), prober, now, now.Add(time.Minute))
		f.Sync(context.Background(), prober, l, now, throttle.Burst, 3, 10*time.Second)
		f.Sync(context.Background(), prober, l, now, throttle.Sustain, 3, 200*time.Second)
		f.Block(context.Background(), attack28Key("u0"), now, now.Add(time.Minute))
		time.Sleep(1100 * time.Millisecond)
		start := time.Now()
		before := shared.calls.Load()
		f.Reserve(context.Background(), prober, l, start, 0)
		took, tries := time.Since(start), shared.calls.Load()-before
		if took > 300*time.Millisecond {
			t.Errorf("a probe of a shared store known to be down (its operations fail after 250 ms) took %v and %d "+
				"round trips: it paid owed operations to the store before trying its own booking. Promise: failover "+
				"\"a store that does not isolate failures itself is probed at most once a second, so calls do not "+
				"each wait for its timeout\"; Transport.Budget \"tries the store again every second\" (one try)",
				took, tries)
		}
	})
}

// held: 64 goroutines owe, pay and reserve on one failover while its store
// flaps (fail toggled every 50 ms, half the contexts ended) under -race:
// no race, no panic, the owed list stays within 256 and every call ends.
func TestAttack28FlappingStoreManyGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		l := throttle.Limit{Burst: 5, Sustain: 30}
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
					shared.fail.Store(!shared.fail.Load())
				}
			}
		}()
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := attack28Key(fmt.Sprintf("u%d", g%8))
				for i := range 40 {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
					if i%2 == 0 {
						cancel()
					}
					now := time.Now()
					a, _ := f.Reserve(ctx, k, l, now, 0)
					f.Sync(ctx, k, l, now, throttle.Burst, i%7, 10*time.Second)
					f.Block(ctx, k, now, now.Add(time.Duration(i)*time.Millisecond))
					if a.Allowed {
						f.Release(ctx, k, l, a.Slot)
					}
					cancel()
					time.Sleep(7 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
		close(stop)
		if n := f.nOwed.Load(); n > maxOwed {
			t.Errorf("owed %d > %d", n, maxOwed)
		}
		f.owedMu.Lock()
		if len(f.owed) != int(f.nOwed.Load()) {
			t.Errorf("nOwed %d != len(owed) %d", f.nOwed.Load(), len(f.owed))
		}
		f.owedMu.Unlock()
	})
}

// TestAttack28ReowedStaleSyncReplacesNewer: a key owes RateLimit counts of its
// burst window (3 of 10, its caller gone). Its next call pays them, and
// the store stalls; meanwhile another of the key's answers says the burst
// is spent (10 of 10), its caller gone too: owed, replacing the 3. The
// paying call is then cancelled: the payment it cut short is owed again,
// and replaces the newer 10 with the older 3. The key's next call is
// admitted into a burst the service said was spent.
func TestAttack28ReowedStaleSyncReplacesNewer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		k := attack28Key("atkuser")
		l := throttle.Limit{Burst: 10, Sustain: 300}
		ended := endedContext()
		now := time.Now()
		f.Sync(ended, k, l, now, throttle.Burst, 3, 10*time.Second) // owed
		shared.stall.Store(true)
		payer, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); f.Reserve(payer, k, l, time.Now(), 0) }()
		synctest.Wait() // the payment of the 3 is in flight
		time.Sleep(100 * time.Millisecond)
		later := time.Now()
		f.Sync(ended, k, l, later, throttle.Burst, 10, 10*time.Second-100*time.Millisecond) // newer: spent, owed
		stop()                                                                              // the payer gives up
		<-done
		var owedUsed []int
		f.owedMu.Lock()
		for _, o := range f.owed {
			owedUsed = append(owedUsed, o.used)
		}
		f.owedMu.Unlock()
		shared.stall.Store(false)
		time.Sleep(time.Second)
		got, err := f.Reserve(context.Background(), k, l, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed {
			t.Errorf("a key's owed counts (3 of 10) cut short in payment were owed again after the key's newer "+
				"counts (10 of 10: burst spent) and replaced them: the shared store admitted the key's next call "+
				"into the spent burst (%+v; owed counts after the cut: %v). Promise: Transport.Budget \"A key owes at most its latest block and its "+
				"latest counts of each window\" (the latest were the 10); throttle.BudgetStore.Sync \"the budget only "+
				"ever becomes stricter\"", got, owedUsed)
		}
	})
}

// held: with nothing owed a call's booking takes no lock of the owed
// operations (the owed lock held elsewhere does not hold a healthy call),
// and Release/Block/Sync to a working store take none either.
func TestAttack28HealthyPathTakesNoOwedLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		k := attack28Key("atkuser")
		l := throttle.Limit{Burst: 10, Sustain: 300}
		f.owedMu.Lock()
		done := make(chan struct{})
		go func() {
			defer close(done)
			now := time.Now()
			a, _ := f.Reserve(context.Background(), k, l, now, 0)
			f.Sync(context.Background(), k, l, now, throttle.Burst, 1, 5*time.Second)
			f.Block(context.Background(), k, now, now.Add(time.Second))
			f.Release(context.Background(), k, l, a.Slot)
		}()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Error("a healthy call with nothing owed waited for the owed operations' lock")
		}
		f.owedMu.Unlock()
		<-done
	})
}

// held: 200 keys each owe a 429's block (the store's callers gone); the
// newest key's next call, its block behind 199 others, pays its own block
// before its booking and is refused; every other key's call does too.
func TestAttack28OwedManyKeysNoStarvation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{Margin: -1}}
		f := newFailover(&Transport{}, shared, -1)
		l := throttle.Limit{Burst: 10, Sustain: 300}
		ended := endedContext()
		now := time.Now()
		for i := range 200 {
			f.Block(ended, attack28Key(fmt.Sprintf("u%d", i)), now, now.Add(time.Minute))
		}
		time.Sleep(time.Second)
		for i := 199; i >= 0; i-- {
			got, err := f.Reserve(context.Background(), attack28Key(fmt.Sprintf("u%d", i)), l, time.Now(), 0)
			if err != nil || got.Allowed {
				t.Fatalf("key u%d owed a block and was admitted: %+v %v", i, got, err)
			}
		}
		if n := f.nOwed.Load(); n != 0 {
			t.Errorf("owed %d after every key's call", n)
		}
	})
}
