package transport

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// attack24SlowStore is a shared budget store whose Block, Sync and Release take
// as long as redisstore's against an unreachable Redis: until its own
// 250 ms Timeout (redisstore.DefaultTimeout) or the context passed,
// whichever ends first. It honours its context as a store must.
type attack24SlowStore struct {
	*throttle.MemoryBudgetStore
}

func attack24Stall(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
	defer cancel()
	<-ctx.Done()
	return ctx.Err()
}

func (s attack24SlowStore) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	return attack24Stall(ctx)
}

func (s attack24SlowStore) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	return attack24Stall(ctx)
}

func (s attack24SlowStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	attack24Stall(ctx)
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

// TestAttack24FeedbackSyncWithinTheCall: a 200 whose RateLimit headers report
// the service's counts makes the transport Sync the shared store under
// context.WithoutCancel of the call's context (assess.go, feedback): with
// the store unreachable, a call with a 50 ms deadline takes the store's
// whole timeout. RELIABILITY.md promises "Every call ends, even against a
// stalled server" and, for the store's other call on the same path
// (learned limits), "within the store's Timeout whatever the client, and
// within the call's own context (the local store keeps the report)".
func TestAttack24FeedbackSyncWithinTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler() // answers with RateLimit / RateLimit-Policy headers
		tr := &Transport{Base: h, TitleID: title, Budget: attack24SlowStore{&throttle.MemoryBudgetStore{}}}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		resp, err := get(t, tr, ctx, profileURL, xuid1)
		d := time.Since(start)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("call: %v", err)
		}
		if d > 50*time.Millisecond {
			t.Errorf("a call with a 50 ms deadline, answered at once (200 with RateLimit headers), returned after %v: "+
				"the budget Sync runs under context.WithoutCancel and waits for the stalled store "+
				"(RELIABILITY.md: \"Every call ends, even against a stalled server\"; learned limits: \"within the call's own context\")", d)
		}
	})
}

// TestAttack24FeedbackBlockWithinTheCall: a 429 with a Retry-After makes the
// transport Block the key in the shared store, under
// context.WithoutCancel: the call outlives its 50 ms deadline by the
// stalled store's timeout.
func TestAttack24FeedbackBlockWithinTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"30"}}, Body: http.NoBody, Request: r}, nil
		})
		tr := &Transport{Base: base, TitleID: title, Budget: attack24SlowStore{&throttle.MemoryBudgetStore{}}}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := get(t, tr, ctx, profileURL, xuid1)
		d := time.Since(start)
		if d > 50*time.Millisecond {
			t.Errorf("a call with a 50 ms deadline, answered 429 at once, returned after %v (%v): "+
				"the budget Block runs under context.WithoutCancel and waits for the stalled store "+
				"(RELIABILITY.md: \"Every call ends, even against a stalled server\")", d, err)
		}
	})
}

// TestAttack24CancelledWaitReleaseWithinTheCall: a call waiting for its booked
// budget slot is cancelled; it gives the slot back with Release under
// context.WithoutCancel (gate.go), so it returns only when the stalled
// store does. RELIABILITY.md (proxy table): "an application that gives up
// on a call waiting for its budget | the call's context ends at once; the
// slot it had booked goes back".
func TestAttack24CancelledWaitReleaseWithinTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &Transport{Base: base, TitleID: title, Budget: attack24SlowStore{&throttle.MemoryBudgetStore{}}}
		for range 10 { // profile's burst
			if _, err := get(t, tr, context.Background(), profileURL, xuid1); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan time.Duration, 1)
		go func() {
			start := time.Now()
			get(t, tr, ctx, profileURL, xuid1)
			done <- time.Since(start)
		}()
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		cancel()
		at := time.Now()
		<-done
		if d := time.Since(at); d > 0 {
			t.Errorf("a call waiting for its budget returned %v after its cancel: Release runs under "+
				"context.WithoutCancel and waits for the stalled store (RELIABILITY.md: \"the call's context ends at once; the slot it had booked goes back\")", d)
		}
	})
}
