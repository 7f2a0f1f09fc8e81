package transport

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack42ReportsStore is a shared store that fails each Sync, Block, Release
// and Learn with probability 1 in 3 while flaky, and honours a dead context.
type attack42ReportsStore struct {
	throttle.MemoryBudgetStore
	flaky atomic.Bool
}

func (s *attack42ReportsStore) fail(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.flaky.Load() && rand.IntN(3) == 0 {
		return errors.New("attack42: not taken")
	}
	return nil
}

func (s *attack42ReportsStore) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if err := s.fail(ctx); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Sync(ctx, k, l, now, p, used, reset)
}

func (s *attack42ReportsStore) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	if err := s.fail(ctx); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Block(ctx, k, now, until)
}

func (s *attack42ReportsStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	if err := s.fail(ctx); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

func (s *attack42ReportsStore) IsolatesFailures() bool { return true }

func (s *attack42ReportsStore) Learn(ctx context.Context, r throttle.LimitReport) (bool, error) {
	return false, s.fail(ctx)
}

func (s *attack42ReportsStore) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	return nil, nil
}

// attack42ReportsCheck returns an error unless nReports equals the reports in
// f.owed plus the sum of f.inFlight, read under f.owedMu, and is not
// negative.
func attack42ReportsCheck(f *failover) error {
	f.owedMu.Lock()
	defer f.owedMu.Unlock()
	want := 0
	for _, o := range f.owed {
		if o.report() {
			want++
		}
	}
	for k, n := range f.inFlight {
		if n <= 0 {
			return fmt.Errorf("inFlight[%v] = %d", k, n)
		}
		want += n
	}
	if got := f.nReports.Load(); int(got) != want || got < 0 || int(f.nOwed.Load()) != len(f.owed) {
		return fmt.Errorf("nReports %d, nOwed %d, but %d reports owed or in flight and %d owed", got, f.nOwed.Load(), want, len(f.owed))
	}
	return nil
}

// held: nReports' accounting driven through every path at once, from four
// goroutines under -race: reports of 300 keys (so the owed list is full at
// maxOwed = 256, evicting reports alone and releases and learns), merges
// of a key's reports with one owed, releases and learns owed, payments of
// up to maxPaid by concurrent payers of the same keys, some with a dead
// context, some at a time when the reports have ended (dropped by at()),
// a store that fails one in three of each. After every step nReports
// equals the reports owed plus those in flight (under owedMu); once the
// store works and everything is paid, it is back to zero (pending's fast
// path lock-free again) and no key is pending.
func TestAttack42ReportsCountAlwaysMatches(t *testing.T) {
	store := &attack42ReportsStore{}
	store.flaky.Store(true)
	tr := &Transport{TitleID: title, Budget: store}
	tr.init()
	f := tr.budget.(*failover)
	l := throttle.Limit{Burst: 10, Sustain: 30}
	base := time.Now()
	key := func(i int) throttle.Key {
		return throttle.Key{User: fmt.Sprintf("attack42-u%d", i), Title: title, Scope: "profile"}
	}
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	// The owed list filled past maxOwed: with releases and learns first
	// (they go before any report), then with reports alone (a report
	// takes the oldest report's place).
	for i := range 40 {
		f.owe(owedOp{op: opRelease, k: key(i), l: l, slot: int64(i + 1)})
		f.owe(owedOp{op: opLearn, k: throttle.Key{Scope: "profile"}, learn: throttle.LimitReport{
			Scope: "profile", Period: throttle.Sustain, Limit: i + 1, User: "attack42-learn", At: base}})
	}
	for i := range 300 {
		f.owe(owedOp{op: opSync, k: key(i), l: l, now: base, p: throttle.Sustain, used: 5, reset: 30 * time.Second})
		f.owe(owedOp{op: opBlock, k: key(i), now: base, until: base.Add(20 * time.Second)})
		if err := attack42ReportsCheck(f); err != nil {
			t.Fatalf("filling the owed list, key %d: %v", i, err)
		}
	}
	if n, o := f.nReports.Load(), f.nOwed.Load(); n != maxOwed || o != maxOwed {
		t.Fatalf("owed list filled with reports: nReports %d, nOwed %d, want %d", n, o, maxOwed)
	}
	var fails atomic.Int32
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 156))
			for step := range 6000 {
				k := key(r.IntN(300))
				now := base.Add(time.Duration(r.IntN(40)) * time.Second)
				ctx := context.Background()
				if r.IntN(8) == 0 {
					ctx = dead
				}
				switch r.IntN(7) {
				case 0:
					f.Sync(ctx, k, l, now, throttle.Sustain, r.IntN(30), time.Duration(1+r.IntN(20))*time.Second)
				case 1:
					f.Sync(ctx, k, l, now, throttle.Burst, r.IntN(10), time.Duration(1+r.IntN(15))*time.Second)
				case 2:
					f.Block(ctx, k, now, now.Add(time.Duration(1+r.IntN(20))*time.Second))
				case 3:
					f.Release(ctx, k, l, int64(1+r.IntN(1<<20)))
				case 4:
					f.owe(owedOp{op: opLearn, k: throttle.Key{Scope: "profile"}, learn: throttle.LimitReport{
						Scope: "profile", Period: throttle.Burst, Limit: 1 + r.IntN(50), User: k.User, At: now}})
				default:
					f.payOwed(ctx, k, now)
					f.pending(k)
				}
				if step%50 == 0 {
					if err := attack42ReportsCheck(f); err != nil {
						fails.Add(1)
						t.Errorf("goroutine %d step %d: %v", g, step, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err := attack42ReportsCheck(f); err != nil {
		t.Fatalf("after the run: %v", err)
	}
	t.Logf("after the run: %d owed, %d reports owed or in flight", f.nOwed.Load(), f.nReports.Load())
	store.flaky.Store(false)
	for range 1000 {
		if f.nOwed.Load() == 0 {
			break
		}
		f.payOwed(context.Background(), key(0), base)
	}
	if err := attack42ReportsCheck(f); err != nil {
		t.Fatalf("after everything was paid: %v", err)
	}
	if n, o := f.nReports.Load(), f.nOwed.Load(); n != 0 || o != 0 {
		t.Errorf("everything paid: nReports %d, nOwed %d, want 0: pending takes the lock on every call forever "+
			"(failover.pending: \"reports whether the shared store lacks a report of k: one on its way there ..., or still owed\")", n, o)
	}
	for i := range 300 {
		if f.pending(key(i)) {
			t.Errorf("key %d pending with nothing owed", i)
		}
	}
}

// held: one key's reports paid by 12 concurrent payers while the store
// fails one in three, and new reports of the key owed (merged) by 4 more
// meanwhile: the count matches after every step, and returns to zero, the
// key no longer pending, once everything lands.
func TestAttack42ReportsConcurrentPayersOneKey(t *testing.T) {
	store := &attack42ReportsStore{}
	store.flaky.Store(true)
	tr := &Transport{TitleID: title, Budget: store}
	tr.init()
	f := tr.budget.(*failover)
	k := throttle.Key{User: "attack42-one", Title: title, Scope: "profile"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	now := time.Now()
	for f.nReports.Load() == 0 {
		f.Sync(context.Background(), k, l, now, throttle.Sustain, 3, time.Hour)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				if g%4 == 0 {
					f.owe(owedOp{op: opSync, k: k, l: l, now: now, p: throttle.Sustain, used: i % 30, reset: time.Hour})
				} else {
					f.payOwed(context.Background(), k, now)
				}
				if err := attack42ReportsCheck(f); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := attack42ReportsCheck(f); err != nil {
		t.Fatal(err)
	}
	store.flaky.Store(false)
	for f.nOwed.Load() != 0 {
		f.payOwed(context.Background(), k, now)
	}
	if n := f.nReports.Load(); n != 0 || f.pending(k) {
		t.Errorf("all paid: nReports %d, pending %v", n, f.pending(k))
	}
}

// failLearnStore is a fleet's LimitStore whose Learn fails (its answer
// lost, perhaps after it took the report).
type failLearnStore struct{ throttle.MemoryBudgetStore }

func (s *failLearnStore) Learn(ctx context.Context, r throttle.LimitReport) (throttle.Learned, error) {
	return throttle.Learned{}, errors.New("learn: no answer")
}

// TestOwedLearnFailedInPaymentIsTried: a learn report owed and then failed
// by the store when a call paid it may have reached the store (its answer
// lost): it is owed again marked tried, so that it is sent again only once
// the local store has its limit confirmed (learnNews), as one failed when
// first sent is (a lone report sent again would be timed on arrival and
// confirm a limit one 429 made). It was owed again untried (helper 156).
func TestOwedLearnFailedInPaymentIsTried(t *testing.T) {
	tr := &Transport{TitleID: title, Budget: &failLearnStore{}}
	tr.init()
	f := tr.budget.(*failover)
	now := time.Now()
	r := throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 7, User: "learn-user", At: now}
	f.owe(owedOp{op: opLearn, k: throttle.Key{Scope: r.Scope}, learn: r})
	f.payOwed(context.Background(), throttle.Key{User: "payer", Title: title, Scope: "profile"}, now)
	f.owedMu.Lock()
	defer f.owedMu.Unlock()
	if len(f.owed) != 1 || f.owed[0].op != opLearn || !f.owed[0].tried {
		t.Errorf("a learn the store failed when paid: owed %+v; want it owed again, marked tried", f.owed)
	}
}
