package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// endedContext returns a context already cancelled: a call that has
// ended, whose budget operations a store may fail at once.
func endedContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// releaseRecorder is a shared store that records the slots released to it,
// and whether the context of each release had ended.
type releaseRecorder struct {
	*throttle.MemoryBudgetStore
	mu       sync.Mutex
	released []int64
}

func (s *releaseRecorder) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	if err := ctx.Err(); err != nil {
		return err // as a network store fails at once under a done context
	}
	s.mu.Lock()
	s.released = append(s.released, slot)
	s.mu.Unlock()
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

func (s *releaseRecorder) slots() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.released...)
}

// TestCancelledWaitOwesTheSharedRelease: a call cancelled while it waits
// for its booked slot ends at once (TestAttack24CancelledWaitReleaseWithinTheCall)
// and its slot goes back to both stores: the local one at once, the shared
// one, whose release cannot run under the call's ended context, from the
// next call that reaches it; after that the shared store counts the slot no
// more (the next call of the key is booked where the cancelled one was).
func TestCancelledWaitOwesTheSharedRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		shared := &releaseRecorder{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
		tr := &Transport{Base: base, TitleID: title, Budget: shared}
		for range 10 { // profile's burst
			if _, err := get(t, tr, context.Background(), profileURL, xuid1); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := get(t, tr, ctx, profileURL, xuid1)
			done <- err
		}()
		synctest.Wait() // it waits for its booked slot
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled call was sent")
		}
		if got := shared.slots(); len(got) != 0 {
			t.Fatalf("released to the shared store under the ended context: %v", got)
		}
		if n := tr.budget.(*failover).nOwed.Load(); n != 1 {
			t.Fatalf("%d releases owed, want 1", n)
		}
		// The next call to reach the shared store (another user's) pays it.
		if _, err := get(t, tr, context.Background(), profileURL, xuid2); err != nil {
			t.Fatal(err)
		}
		if got := shared.slots(); len(got) != 1 {
			t.Fatalf("the shared store was released %v, want the cancelled call's one slot", got)
		}
		if n := tr.budget.(*failover).nOwed.Load(); n != 0 {
			t.Errorf("%d releases still owed after the next call", n)
		}
		// The slot is free in the shared store: once the burst window has
		// passed, its sustain window counts the ten calls sent, not the
		// cancelled one too.
		time.Sleep(20 * time.Second)
		req, _ := http.NewRequest("GET", profileURL, nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		k, _ := tr.KeyOf(req)
		snap, err := shared.Snapshot(context.Background(), k, throttle.Limit{Burst: 10, Sustain: 30}, time.Now())
		if err != nil || snap.Sustain.Count != 10 {
			t.Errorf("the shared store counts %d calls of the key in its sustain window (%v), want the 10 sent", snap.Sustain.Count, err)
		}
	})
}

// TestOwedReleasesBounded: the releases owed to a shared store are at most
// maxOwed, the oldest dropped first, and each payment sends the oldest,
// maxPaid of them.
func TestOwedReleasesBounded(t *testing.T) {
	shared := &releaseRecorder{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
	f := newFailover(&Transport{}, shared, 0)
	k := throttle.Key{User: "u", Title: title, Scope: "profile"}
	for i := range maxOwed + 44 {
		f.owe(owedOp{op: opRelease, k: k, l: throttle.Limit{Burst: 10}, slot: int64(i)})
	}
	if n := f.nOwed.Load(); n != maxOwed {
		t.Fatalf("%d owed, want %d", n, maxOwed)
	}
	f.payOwed(context.Background(), throttle.Key{}, time.Now())
	f.payOwed(context.Background(), throttle.Key{}, time.Now())
	if got := shared.slots(); len(got) != 2*maxPaid || got[0] != 44 || got[2*maxPaid-1] != 44+2*maxPaid-1 {
		t.Errorf("paid %v, want the oldest kept %d (44 to %d)", got, 2*maxPaid, 44+2*maxPaid-1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.payOwed(ctx, throttle.Key{}, time.Now()) // a call already ended pays nothing
	if n := f.nOwed.Load(); n != maxOwed-2*maxPaid || len(shared.slots()) != 2*maxPaid {
		t.Errorf("%d owed and %d paid after a payment under an ended context, want %d and %d", n, len(shared.slots()), maxOwed-2*maxPaid, 2*maxPaid)
	}
}

// opRecorder is a shared store that records the operations it takes, in
// order.
type opRecorder struct {
	*throttle.MemoryBudgetStore
	mu  sync.Mutex
	ops []string
}

func (s *opRecorder) note(op string) { s.mu.Lock(); s.ops = append(s.ops, op); s.mu.Unlock() }

func (s *opRecorder) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	s.note(opRelease)
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

func (s *opRecorder) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	s.note(opBlock + " " + until.Sub(now).String())
	return s.MemoryBudgetStore.Block(ctx, k, now, until)
}

func (s *opRecorder) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	s.note(fmt.Sprint(opSync, " ", p, " ", used))
	return s.MemoryBudgetStore.Sync(ctx, k, l, now, p, used, reset)
}

// TestOwedReportsGoFirst: a key owes five releases and, reported twice
// each, a block and the counts of both windows: a key's reports replace
// its owed ones of their kind (the later block's end, a window's latest
// counts), and its next call sends its three reports before its booking,
// then one release; an ended block is dropped, and a block is measured
// from the payment.
func TestOwedReportsGoFirst(t *testing.T) {
	shared := &opRecorder{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
	f := newFailover(&Transport{}, shared, 0)
	k := throttle.Key{User: "u", Title: title, Scope: "profile"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	t0 := time.Now()
	for i := range 5 {
		f.owe(owedOp{op: opRelease, k: k, l: l, slot: int64(i + 1)})
	}
	f.owe(owedOp{op: opBlock, k: k, now: t0, until: t0.Add(30 * time.Second)})
	f.owe(owedOp{op: opBlock, k: k, now: t0, until: t0.Add(20 * time.Second)}) // an earlier end: the later stays
	f.owe(owedOp{op: opSync, k: k, l: l, now: t0, p: throttle.Burst, used: 3, reset: 10 * time.Second})
	f.owe(owedOp{op: opSync, k: k, l: l, now: t0, p: throttle.Burst, used: 5, reset: 10 * time.Second})
	f.owe(owedOp{op: opSync, k: k, l: l, now: t0, p: throttle.Sustain, used: 7, reset: 200 * time.Second})
	if n := f.nOwed.Load(); n != 8 {
		t.Fatalf("%d owed, want 8 (5 releases, 1 block, 2 windows' counts)", n)
	}
	if _, err := f.Reserve(context.Background(), k, l, t0.Add(5*time.Second), 0); err != nil {
		t.Fatal(err)
	}
	want := []string{"block 25s", "sync burst 5", "sync sustain 7", opRelease, "reserve"}
	shared.note("reserve") // after Reserve: what was sent before it is above
	if diff := cmp.Diff(want, shared.ops); diff != "" {
		t.Errorf("what the key's next call sent (-want +got):\n%s", diff)
	}
	// An owed block that has ended says nothing: dropped, not sent.
	shared.ops = nil
	f.owe(owedOp{op: opBlock, k: k, now: t0, until: t0.Add(time.Second)})
	f.payOwed(context.Background(), k, t0.Add(2*time.Second)) // the key's call: its report first
	if len(shared.ops) != 3 || slices.ContainsFunc(shared.ops, func(op string) bool { return strings.HasPrefix(op, opBlock) }) {
		t.Errorf("sent %v: want three of the releases left (the ended block took its place, unsent), and not the block", shared.ops)
	}
}

// TestMergedReportsNeverLooser: two owed reports of a key's kind, in
// either order, say together the stricter: the later end of a block; of
// one window's counts (ends within sameWindow) the most used; of two
// windows, the later one's.
func TestMergedReportsNeverLooser(t *testing.T) {
	t0 := time.Now()
	sync := func(at time.Duration, used int, reset time.Duration) owedOp {
		return owedOp{op: opSync, now: t0.Add(at), p: throttle.Burst, used: used, reset: reset}
	}
	block := func(until time.Duration) owedOp { return owedOp{op: opBlock, now: t0, until: t0.Add(until)} }
	for _, tt := range []struct {
		name       string
		a, b, want owedOp
	}{
		{"a later block's end", block(30 * time.Second), block(20 * time.Second), block(30 * time.Second)},
		{"one window: the most used, though reported first", sync(0, 9, 10*time.Second), sync(time.Second, 3, 9*time.Second), sync(0, 9, 10*time.Second)},
		{"one window, its reset read a second apart", sync(0, 4, 10*time.Second), sync(0, 7, 11*time.Second), sync(0, 7, 11*time.Second)},
		{"the next window's counts, fewer", sync(0, 9, 2*time.Second), sync(3*time.Second, 1, 14*time.Second), sync(3*time.Second, 1, 14*time.Second)},
	} {
		for _, order := range [][2]owedOp{{tt.a, tt.b}, {tt.b, tt.a}} {
			if got := merged(order[0], order[1]); got != tt.want {
				t.Errorf("%s: merged(%+v, %+v) = %+v, want %+v", tt.name, order[0], order[1], got, tt.want)
			}
		}
	}
}

// flakyBlockStore is a working, isolating shared store whose next Block
// fails once when failNext is set.
type flakyBlockStore struct {
	*throttle.MemoryBudgetStore
	failNext atomic.Bool
}

func (s *flakyBlockStore) IsolatesFailures() bool { return true }

func (s *flakyBlockStore) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	if s.failNext.Swap(false) {
		return errors.New("flaky: the node did not answer")
	}
	return s.MemoryBudgetStore.Block(ctx, k, now, until)
}

// TestOwedReportHoldsTheStricter: a key owes a 429's block (the store's
// node failed it); its next
// call's payment of it fails (an isolating store's node, for that moment),
// and the block is owed again; the store otherwise works. The call must
// not be admitted by the shared store, which lacks the block: booked in
// both stores, it holds the stricter, and the local store, which has the
// block, refuses it. A snapshot (BudgetLeft), the
// store answering, pays the block and reads it; the next call is refused
// by the shared store.
func TestOwedReportHoldsTheStricter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &flakyBlockStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
		f := newFailover(&Transport{}, shared, 0)
		k := throttle.Key{User: "u", Title: title, Scope: "profile"}
		l := throttle.Limit{Burst: 10, Sustain: 30}
		now := time.Now()
		shared.failNext.Store(true)
		f.Block(context.Background(), k, now, now.Add(time.Minute)) // the node failed it: owed
		if f.nOwed.Load() != 1 {
			t.Fatalf("%d owed, want the block", f.nOwed.Load())
		}
		shared.failNext.Store(true) // and fails its payment once
		a, err := f.Reserve(context.Background(), k, l, now, 0)
		if err != nil || a.Allowed {
			t.Fatalf("booked %+v (%v) with the key's block still owed: want the local store's refusal", a, err)
		}
		if s, _ := f.Snapshot(context.Background(), k, l, now); !s.BlockedUntil.After(now) {
			t.Errorf("a snapshot with the key's block owed says %+v", s)
		}
		a, _ = f.Reserve(context.Background(), k, l, now, 0)
		shot, _ := shared.MemoryBudgetStore.Snapshot(context.Background(), k, l, now)
		if a.Allowed || !shot.BlockedUntil.After(now) || f.nOwed.Load() != 0 {
			t.Errorf("the next call: %+v; the shared store %+v, %d owed: want the block paid and the call refused", a, shot, f.nOwed.Load())
		}
	})
}

// syncFailingStore is a working, isolating shared store that fails every
// Sync (a replica that takes no writes of that kind, say).
type syncFailingStore struct{ *throttle.MemoryBudgetStore }

func (s syncFailingStore) IsolatesFailures() bool { return true }

func (s syncFailingStore) Sync(context.Context, throttle.Key, throttle.Limit, time.Time, throttle.Period, int, time.Duration) error {
	return errors.New("syncfailing: not taken")
}

// TestPendingReportKeepsTheFleetCounted: a key's RateLimit counts (3 of
// its burst of 10 used) cannot reach the shared store, which fails every
// Sync: they stay owed, and the local store has them. Transport A's calls
// of the key are booked in both stores, holding the stricter: A is
// admitted 7 (the local store's 3 + 7), and the shared store counts those
// 7, so Transport B of the same fleet is admitted 3: ten in all, the
// burst. (Booked in the local store alone, A's calls were counted for no
// one else: B was admitted ten more, and a fleet of two proxies sent a
// call into a 429 in CI's TestProxyFleet.)
func TestPendingReportKeepsTheFleetCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := syncFailingStore{&throttle.MemoryBudgetStore{Margin: -1}}
		a, b := newFailover(&Transport{}, shared, -1), newFailover(&Transport{}, shared, -1)
		k := throttle.Key{User: "u", Title: title, Scope: "profile"}
		l := throttle.Limit{Burst: 10, Sustain: 30}
		now := time.Now()
		a.Sync(context.Background(), k, l, now, throttle.Burst, 3, 15*time.Second) // fails: owed
		admitted := 0
		for _, f := range []*failover{a, a, a, a, a, a, a, a, a, a, b, b, b, b, b, b, b, b, b, b} {
			if ad, _ := f.Reserve(context.Background(), k, l, now, 0); ad.Allowed {
				admitted++
			}
		}
		if admitted != 10 {
			t.Errorf("the fleet admitted %d calls of a burst of 10 (3 of them reported used, not yet in the shared store), want 10", admitted)
		}
	})
}
