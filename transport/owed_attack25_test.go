package transport

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack25OwedReleaseOtherTransportNeverPays: two Transports share one
// in-process throttle.MemoryBudgetStore (Transport.Budget: "a
// throttle.MemoryBudgetStore in one process ... to give them one budget
// per key"). Transport A's ten callers book slots, wait, and are
// cancelled; their releases are owed in A's own failover. Transport B's
// calls then reach the shared store but never send them: the store, which
// never stalls, keeps counting ten calls that were never sent, and B's
// calls wait a whole burst window that the service would not make them wait.
func TestAttack25OwedReleaseOtherTransportNeverPays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		shared := &throttle.MemoryBudgetStore{}
		a := &Transport{Base: base, TitleID: title, Budget: shared}
		b := &Transport{Base: base, TitleID: title, Budget: shared}
		for range 10 { // profile's burst, sent by A
			if _, err := get(t, a, context.Background(), profileURL, xuid1); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 10)
		for range 10 {
			go func() { _, err := get(t, a, ctx, profileURL, xuid1); done <- err }()
		}
		time.Sleep(time.Second)
		synctest.Wait() // each waits for its booked slot in the next burst window
		cancel()
		for range 10 {
			if err := <-done; err == nil {
				t.Fatal("a cancelled call was sent")
			}
		}
		owed := a.budget.(*failover).nOwed.Load()
		// The burst window of the ten sent has passed: the service would
		// take ten more at once (20 of the sustain's 30).
		time.Sleep(15 * time.Second)
		start := time.Now()
		for i := range 10 {
			if _, err := get(t, b, context.Background(), profileURL, xuid1); err != nil {
				t.Fatalf("B's call %d: %v", i, err)
			}
		}
		if waited := time.Since(start); waited > 0 {
			t.Errorf("B's 10 calls (after A's 10 sent and 10 cancelled waits, %d releases owed in A) waited %v; "+
				"the shared store counted A's cancelled slots, which B's calls never paid. Promise broken: "+
				"Transport.Budget \"a slot a call gives back then (cancelled while it waited) is owed to the store "+
				"and sent by the next call that reaches it\" and RELIABILITY.md \"a cancelled wait gives its slot back\"",
				owed, waited)
		}
	})
}

// held: a cancelled waiter's owed release paid by a call whose own context
// is already done is owed again, not lost and not paid twice: after one
// live call pays it, the shared store no longer counts the slot.
func TestAttack25OwedPaidOnceAfterDeadCtxPayer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		shared := &releaseRecorder{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
		tr := &Transport{Base: base, TitleID: title, Budget: shared}
		for range 10 {
			if _, err := get(t, tr, context.Background(), profileURL, xuid1); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := get(t, tr, ctx, profileURL, xuid1); done <- err }()
		synctest.Wait()
		cancel()
		<-done
		f := tr.budget.(*failover)
		dead, c2 := context.WithCancel(context.Background())
		c2()
		for range 3 {
			get(t, tr, dead, profileURL, xuid2) // ends at once; its payment is cut short
		}
		if n := f.nOwed.Load(); n != 1 {
			t.Fatalf("%d owed after dead payers, want 1", n)
		}
		if got := shared.slots(); len(got) != 0 {
			t.Fatalf("paid under a dead context: %v", got)
		}
		for range 3 {
			if _, err := get(t, tr, context.Background(), profileURL, xuid2); err != nil {
				t.Fatal(err)
			}
		}
		if got := shared.slots(); len(got) != 1 || f.nOwed.Load() != 0 {
			t.Errorf("released %v, %d still owed; want the one slot once", got, f.nOwed.Load())
		}
	})
}

// held: 200 releases owed by concurrent cancelled waiters while 200
// payments run at once (half under an ended context, owed again): after
// live payments every slot reached the shared store exactly once; none
// lost, none paid twice (also under -race).
func TestAttack25OwedConcurrentOweAndPay(t *testing.T) {
	shared := &releaseRecorder{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
	f := newFailover(&Transport{}, shared, 0)
	k := throttle.Key{User: "u", Title: title, Scope: "profile"}
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			f.owe(owedOp{op: opRelease, k: k, l: throttle.Limit{Burst: 10}, slot: int64(i + 1)})
		}()
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				f.payOwed(dead, throttle.Key{}, time.Now())
			} else {
				f.payOwed(context.Background(), throttle.Key{}, time.Now())
			}
		}()
	}
	wg.Wait()
	for f.nOwed.Load() > 0 {
		f.payOwed(context.Background(), throttle.Key{}, time.Now())
	}
	seen := map[int64]int{}
	for _, s := range shared.slots() {
		seen[s]++
	}
	for i := range 200 {
		if seen[int64(i+1)] != 1 {
			t.Errorf("slot %d released %d times, want once", i+1, seen[int64(i+1)])
		}
	}
}
