package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// The attempt queue (attempttimers.go) under the real clock: each attempt
// still ends at its own timeout, whatever the others do.

// hangingBase answers a request whose URL has "hang" only when its context
// ends, and every other request at once with a body.
var hangingBase = roundTripFunc(func(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.RawQuery, "hang") {
		<-r.Context().Done()
		return nil, context.Cause(r.Context())
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: ctxBody{r.Context(), strings.NewReader("answer")}, Request: r}, nil
})

// ctxBody reads as net/http's bodies do: not once the request's context
// has ended.
type ctxBody struct {
	ctx context.Context
	r   io.Reader
}

func (b ctxBody) Read(p []byte) (int, error) {
	if err := context.Cause(b.ctx); err != nil {
		return 0, err
	}
	return b.r.Read(p)
}

func (ctxBody) Close() error { return nil }

// timedCall sends one GET with the policy's AttemptTimeout and no retries,
// and returns how long it took and its error.
func timedCall(t *testing.T, tr *Transport, timeout time.Duration, query string) (time.Duration, error) {
	t.Helper()
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: timeout})
	req, err := http.NewRequestWithContext(ctx, "GET", profileURL+"&"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(xuid1, title))
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	return time.Since(start), err
}

func TestAttemptQueueKeepsDeadlineOrder(t *testing.T) {
	var ts attemptTimers
	base := time.Now().Add(time.Hour)
	var as []*attempt
	for _, s := range []int{5, 3, 9, 1, 7, 7, 2} { // read in another order than queued
		ctx, cancel := context.WithCancelCause(context.Background())
		a := &attempt{ctx: ctx, cancel: cancel}
		if !ts.add(a, base.Add(time.Duration(s)*time.Second), time.Hour) {
			t.Fatal("add refused the first timeout")
		}
		as = append(as, a)
	}
	order := func() (got []int) {
		q := ts.q[time.Hour]
		var prev *attempt
		for a := q.head; a != nil; a = a.next {
			if a.prev != prev {
				t.Fatal("a broken back link")
			}
			prev = a
			got = append(got, int(a.deadline.Sub(base)/time.Second))
		}
		if q.tail != prev {
			t.Fatal("tail is not the last")
		}
		return got
	}
	if got, want := order(), []int{1, 2, 3, 5, 7, 7, 9}; !slices.Equal(got, want) {
		t.Fatalf("queue %v, want %v", got, want)
	}
	as[3].stopTimer() // the head (1)
	as[2].stopTimer() // the tail (9)
	as[0].stopTimer() // one inside (5)
	as[0].stopTimer() // twice: no effect
	if got, want := order(), []int{2, 3, 7, 7}; !slices.Equal(got, want) {
		t.Fatalf("after removals %v, want %v", got, want)
	}
	for _, a := range as {
		a.release()
	}
	if q := ts.q[time.Hour]; q.head != nil || q.tail != nil {
		t.Fatal("released attempts left in the queue")
	}
}

// Under the real clock, attempts of two timeouts sent at once each end at
// their own, and a quick call among them is not cut; once every timer has
// fired, the transport holds no queue.
func TestAttemptTimeoutsInOneQueueEndEachAtItsOwn(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	const short, long = 80 * time.Millisecond, 240 * time.Millisecond
	type result struct {
		timeout time.Duration
		err     error
		took    time.Duration
	}
	var wg sync.WaitGroup
	res := make(chan result, 40)
	for i := range 40 {
		timeout, query := short, "hang"
		if i%2 == 1 {
			timeout = long
		}
		if i%5 == 4 {
			query = "quick"
		}
		wg.Go(func() {
			took, err := timedCall(t, tr, timeout, query)
			if query == "quick" {
				timeout = 0
			}
			res <- result{timeout, err, took}
		})
	}
	wg.Wait()
	close(res)
	for r := range res {
		switch {
		case r.timeout == 0:
			if r.err != nil {
				t.Errorf("a quick call failed: %v", r.err)
			}
		case !errors.Is(r.err, context.DeadlineExceeded):
			t.Errorf("an attempt of %v ended with %v, want context.DeadlineExceeded", r.timeout, r.err)
		case r.took < r.timeout || r.took > r.timeout+2*time.Second:
			t.Errorf("an attempt of %v took %v", r.timeout, r.took)
		case r.timeout == long && r.took < long-time.Millisecond:
			t.Errorf("a long attempt ended at the short timeout: %v", r.took)
		}
	}
	queuesDrain(t, tr, 5*time.Second)
}

// queuesDrain fails t unless tr holds no attempt queue within d: once the
// timers have fired on empty queues, none is left.
func queuesDrain(t *testing.T, tr *Transport, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		tr.timers.mu.Lock()
		n := len(tr.timers.q)
		tr.timers.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d queues left %v after the last call", n, d)
		}
	}
}

// A body handed to the caller is read at the caller's pace (the attempt
// leaves its queue); one asked for with BoundBody is not.
func TestQueuedAttemptHandsOverItsBody(t *testing.T) {
	const timeout = 60 * time.Millisecond
	for _, bound := range []bool{false, true} {
		tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: timeout, BoundBody: bound})
		req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * timeout)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bound && (err != nil || string(b) != "answer") {
			t.Errorf("handed-over body read after the timeout: %q, %v", b, err)
		}
		if bound && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("BoundBody read after the timeout: %q, %v; want context.DeadlineExceeded", b, err)
		}
	}
}

// Attempts of more timeouts than there are queues each still end at their
// own, the rest on timers of their own, and the queues stay bounded.
func TestAttemptQueuesAreBounded(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	var wg sync.WaitGroup
	for i := range 3 * maxAttemptQueues {
		timeout := 50*time.Millisecond + time.Duration(i)*time.Millisecond
		wg.Go(func() {
			took, err := timedCall(t, tr, timeout, "hang")
			if !errors.Is(err, context.DeadlineExceeded) || took < timeout {
				t.Errorf("an attempt of %v: %v after %v", timeout, err, took)
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	tr.timers.mu.Lock()
	n := len(tr.timers.q)
	tr.timers.mu.Unlock()
	wg.Wait()
	if n > maxAttemptQueues {
		t.Fatalf("%d queues, at most %d", n, maxAttemptQueues)
	}
}

// A transport used outside a synctest bubble and then inside one: the
// bubble's attempts end at their own timeout on the bubble's clock, and
// the transport's real queue never touches them.
func TestAttemptTimeoutInABubbleAfterRealUse(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	if _, err := timedCall(t, tr, 50*time.Millisecond, "hang"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("outside: %v", err)
	}
	if _, err := timedCall(t, tr, 20*time.Second, "quick"); err != nil { // leaves the 20 s queue armed, on the real clock
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		took, err := timedCall(t, tr, 20*time.Second, "hang")
		if !errors.Is(err, context.DeadlineExceeded) || took != 20*time.Second {
			t.Fatalf("inside the bubble: %v after %v, want context.DeadlineExceeded after 20s", err, took)
		}
	})
}

// The queue adds no goroutine: a hundred quick calls leave none behind.
func TestAttemptQueueStartsNoGoroutine(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	timedCall(t, tr, time.Minute, "quick")
	before := runtime.NumGoroutine()
	for range 100 {
		if _, err := timedCall(t, tr, time.Minute, "quick"); err != nil {
			t.Fatal(err)
		}
	}
	if after := goroutinesSettle(before); after > before {
		t.Fatalf("%d goroutines after 100 calls, %d before", after, before)
	}
}

// goroutinesSettle returns the number of goroutines once it is at most
// before, or after a second: a timer of an earlier test's firing runs a
// goroutine for a moment.
func goroutinesSettle(before int) int {
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	return after
}
