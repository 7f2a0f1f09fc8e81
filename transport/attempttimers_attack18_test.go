package transport

// A second outsider's attack on the attempts' queue, as fixed after the
// first (9e3fdd3, 072447d: transport/attempttimers.go, transport/attempt.go),
// under the real clock.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack18Stalled never yields a byte (a stalled server's body).
type attack18Stalled struct{}

func (attack18Stalled) Read([]byte) (int, error) { select {} }

// attack18BoundBodyCall makes one BoundBody call on a Transport made here and
// returns the attempt's context as the base saw it (the context net/http's
// connection waits on while the body streams); the response is dropped
// unread and unclosed, and so is the Transport unless keep holds it.
func attack18BoundBodyCall(t *testing.T, timeout time.Duration, keep **Transport, freed chan struct{}) context.Context {
	t.Helper()
	ctxs := make(chan context.Context, 1)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		ctxs <- r.Context()
		// The body reads as net/http's do: not once the context ended.
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: ctxBody{r.Context(), io.MultiReader(attack18Stalled{})}, Request: r}, nil
	})
	func() {
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
		runtime.AddCleanup(tr, func(ch chan struct{}) { close(ch) }, freed)
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true, BoundBody: true, AttemptTimeout: timeout})
		resp, err := tr.RoundTrip(attack15Request(t, ctx, "stall"))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp // dropped: neither read to its end nor closed
		if keep != nil {
			*keep = tr
		}
	}()
	return <-ctxs
}

// BREAK. A BoundBody answer whose body the caller drops without closing it,
// on a Transport it drops too (a Transport per user or per job): the next
// collection frees the Transport and its queue (072447d's weak pointer),
// the queue's timer then fires on nothing, and the attempt's context never
// ends: the connection behind the body (net/http's, waiting on that
// context) and its goroutines stay for good. Before 072447d the queue's
// timer kept it, before 9e3fdd3 the attempt's own time.AfterFunc did; an
// http.Client with Timeout ends such a request at its timeout too.
//
// Promised, transport/policy.go (Policy.BoundBody): "BoundBody makes the
// attempt timeout cover the whole response, body included, as XSAPI's
// does"; Policy.AttemptTimeout: "AttemptTimeout bounds each attempt";
// transport/attempt.go (send): "a cancel-cause context that a timer ends
// ... as net/http bounds a request with Client.Timeout. The timer keeps
// running after the headers arrive ... (BoundBody makes it the attempt's
// too)"; RELIABILITY.md "Every call ends, even against a stalled server":
// "Every read the SDK makes is bounded by XSAPI's per-attempt timeout ...
// body included"; RELIABILITY.md "No goroutine leaks".
func TestAttack18BoundBodyDroppedWithItsTransportStillTimesOut(t *testing.T) {
	const timeout = 150 * time.Millisecond
	freed := make(chan struct{})
	start := time.Now()
	actx := attack18BoundBodyCall(t, timeout, nil, freed)
	runtime.GC() // any collection in the attempt's 5 to 30 s would do
	runtime.GC()
	select {
	case <-freed:
	case <-time.After(50 * time.Millisecond):
		t.Log("the Transport was not yet freed")
	}
	select {
	case <-actx.Done():
		if got := context.Cause(actx); got != context.DeadlineExceeded {
			t.Fatalf("the attempt ended with %v, want context.DeadlineExceeded", got)
		}
	case <-time.After(timeout + time.Second):
		t.Fatalf("a BoundBody attempt of %v whose body and Transport were dropped had not ended %v later: its queue was collected and its timer fired on nothing", timeout, time.Since(start).Round(time.Millisecond))
	}
}

// held: the same, the Transport still in use: the dropped body's attempt
// ends at its timeout (the queue's timer cancels it).
//
// Promised: as above (Policy.BoundBody, Policy.AttemptTimeout).
func TestAttack18BoundBodyDroppedTransportKeptTimesOut(t *testing.T) {
	const timeout = 150 * time.Millisecond
	var tr *Transport
	start := time.Now()
	actx := attack18BoundBodyCall(t, timeout, &tr, make(chan struct{}))
	runtime.GC()
	select {
	case <-actx.Done():
		if got := context.Cause(actx); got != context.DeadlineExceeded {
			t.Fatalf("the attempt ended with %v, want context.DeadlineExceeded", got)
		}
		if d := time.Since(start); d < timeout-10*time.Millisecond {
			t.Fatalf("ended after %v, before its timeout %v", d, timeout)
		}
	case <-time.After(timeout + time.Second):
		t.Fatal("the dropped body's attempt did not end")
	}
	runtime.KeepAlive(tr)
}

// BREAK (the queue's purpose, not a call's outcome). A renewed attempt
// after a 401 takes a timeout of its own, computed again from the time
// the call has taken (assess.go: the time left in the 20 s window, to the
// nanosecond): each renewal makes a queue of one attempt, a timeout used
// once, which keeps its slot until its timer fires, about 20 s later. Seven
// renewals (a token that expires for a few users) fill the 8 queues for the
// retry window, and every other timeout's attempts then go back to a
// time.AfterFunc armed and stopped per attempt: the cost the queue exists
// to save.
//
// Promised, attempttimers.go: "attemptTimers ends a Transport's attempts
// at their timeouts with one runtime timer for each timeout in use ...
// A busy Transport so arms a timer about once per timeout";
// docs/ARCHITECTURE.md "the attempts' queue": "a Transport's attempts of
// one timeout wait in one list ... under one runtime timer ... The loopback
// target without a deadline (5 % over base-cancel) is missed by about 9 %
// without it".
func TestAttack18RenewalsDoNotTakeTheQueues(t *testing.T) {
	expired := mock.Token(xuid1, title)
	renewed := mock.Token(xuid1+"9", title)
	var tr *Transport
	queued := make(chan bool, 1)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Header.Get("Authorization") == expired {
			return &http.Response{StatusCode: 401, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		if r.URL.Query().Has("probe") {
			tr.timers.mu.Lock()
			_, ok := tr.timers.q[50*time.Millisecond]
			tr.timers.mu.Unlock()
			queued <- ok
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr = &Transport{Base: base, TitleID: title, DisableBudget: true,
		RefreshToken: func(*http.Request) (string, error) { return renewed, nil }}
	for i := range 8 {
		req := attack15Request(t, context.Background(), "renew")
		req.Header.Set("Authorization", expired)
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("call %d: %v %v", i, resp, err)
		}
		resp.Body.Close()
	}
	tr.timers.mu.Lock()
	var keys []time.Duration
	for k := range tr.timers.q {
		keys = append(keys, k)
	}
	tr.timers.mu.Unlock()
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: 50 * time.Millisecond})
	req := attack15Request(t, ctx, "probe")
	req.Header.Set("Authorization", renewed)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !<-queued {
		t.Fatalf("after 8 calls renewed once each, the queues' timeouts are %v: a call of 50ms gets a timer of its own", keys)
	}
}

// held: a queue whose only attempt left early keeps its timer; an attempt
// that joins it before that timer fires, with a later deadline, is not cut
// by the stale fire nor left out when the queue is dropped: it ends at its
// own timeout and the queue stays while it waits. After the queue is
// dropped, a new queue of the same timeout ends its attempt at its own
// timeout too.
//
// Promised, attempttimers.go: "when it fires, it ends the attempts whose
// deadlines have come and arms itself again for the next, or, with none
// left, drops the queue"; policy.go: "AttemptTimeout bounds each attempt".
func TestAttack18StaleFireOfAnEmptiedQueue(t *testing.T) {
	const timeout = 100 * time.Millisecond
	lived := make(chan time.Duration, 1)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Has("hang") {
			return attack15LifetimeBase(lived).RoundTrip(r)
		}
		return hangingBase.RoundTrip(r)
	})
	var tr *Transport
	// The look at the queue must fall after the stale fire and before the
	// second attempt's own deadline, a window of 35 ms a loaded machine can
	// miss (CI, beside other packages under -race): a queue dropped while
	// its attempt waits fails every try; a look that missed the window
	// only some.
	for try := 1; ; try++ {
		tr = &Transport{Base: base, TitleID: title, DisableBudget: true}
		if _, err := timedCall(t, tr, timeout, "quick"); err != nil { // the queue's timer armed for now+100ms
			t.Fatal(err)
		}
		time.Sleep(timeout / 2)
		start := time.Now()
		done := make(chan error, 1)
		go func() { _, err := timedCall(t, tr, timeout, "hang"); done <- err }()
		time.Sleep(timeout*3/4 + 10*time.Millisecond) // past the stale fire, before its own deadline
		tr.timers.mu.Lock()
		q := tr.timers.q[timeout]
		waiting := q != nil && q.head != nil
		tr.timers.mu.Unlock()
		if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
		if got := <-lived; got < timeout-10*time.Millisecond || time.Since(start) > 3*timeout {
			t.Fatalf("the attempt lived %v, want %v", got, timeout)
		}
		if waiting {
			break
		}
		if try == 3 {
			t.Fatal("the queue was dropped, or emptied, while an attempt waited in it (3 tries)")
		}
	}
	queuesDrain(t, tr, time.Second)
	_, err := timedCall(t, tr, timeout, "hang")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if got := <-lived; got < timeout-10*time.Millisecond || got > 3*timeout {
		t.Fatalf("the new queue's attempt lived %v, want %v", got, timeout)
	}
}

// held: 600 attempts of one timeout queued at once from as many goroutines
// (their times read in one order, queued in another): the list is whole and
// in the order of the deadlines, its links agree, and each ends with
// context.DeadlineExceeded no earlier than its timeout; the queue drains.
//
// Promised, attempttimers.go: "The attempts of one timeout wait in a queue
// in the order of their deadlines"; policy.go: "AttemptTimeout bounds each
// attempt".
func TestAttack18ManyGoroutinesOneQueueStaysOrdered(t *testing.T) {
	const n, timeout = 600, 2 * time.Second // long enough for 600 goroutines to queue on a loaded machine under -race (at 300 ms CI once saw 456)
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	var wg sync.WaitGroup
	var early, wrong atomic.Int32
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := timedCall(t, tr, timeout, "hang")
			if !errors.Is(err, context.DeadlineExceeded) {
				wrong.Add(1)
			} else if d < timeout-5*time.Millisecond {
				early.Add(1)
			}
		}()
	}
	// Until every attempt is queued, or half the timeout has passed.
	queued := func() int {
		tr.timers.mu.Lock()
		defer tr.timers.mu.Unlock()
		k := 0
		if q := tr.timers.q[timeout]; q != nil {
			for a := q.head; a != nil; a = a.next {
				k++
			}
		}
		return k
	}
	for start := time.Now(); queued() < n && time.Since(start) < timeout/2; {
		time.Sleep(5 * time.Millisecond)
	}
	tr.timers.mu.Lock()
	q := tr.timers.q[timeout]
	count := 0
	if q != nil {
		var prev *attempt
		for a := q.head; a != nil; prev, a = a, a.next {
			count++
			if a.prev != prev || a.q != q || prev != nil && prev.deadline.After(a.deadline) {
				t.Errorf("link %d out of order or inconsistent", count)
				break
			}
		}
		if q.tail != prev {
			t.Error("the tail is not the last attempt")
		}
	}
	tr.timers.mu.Unlock()
	if count != n {
		t.Errorf("%d attempts in the queue, want %d", count, n)
	}
	wg.Wait()
	if early.Load() > 0 || wrong.Load() > 0 {
		t.Fatalf("%d attempts ended early, %d with another error", early.Load(), wrong.Load())
	}
	queuesDrain(t, tr, time.Second)
}

// held: BoundBody bodies closed (twice) from other goroutines at about the
// moment the queue's timer cancels them: no race (-race), no panic, each
// read ends with the body's content or context.DeadlineExceeded, the
// queues drain.
//
// Promised, attempt.go: "release ... is safe on a nil attempt and safe to
// call twice"; the project's rule: no races.
func TestAttack18BoundBodiesClosedWhileTheirTimerFires(t *testing.T) {
	const timeout = 20 * time.Millisecond
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	var wg sync.WaitGroup
	var bad atomic.Int32
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := WithPolicy(context.Background(), Policy{NoRetry: true, BoundBody: true, AttemptTimeout: timeout})
			resp, err := tr.RoundTrip(attack15Request(t, ctx, "quick"))
			if err != nil {
				bad.Add(1)
				return
			}
			time.Sleep(timeout - 2*time.Millisecond + time.Duration(i%5)*time.Millisecond)
			var cwg sync.WaitGroup
			for range 2 {
				cwg.Add(1)
				go func() { defer cwg.Done(); resp.Body.Close() }()
			}
			if _, err := io.ReadAll(resp.Body); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				bad.Add(1)
			}
			cwg.Wait()
		}()
	}
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d calls failed otherwise", bad.Load())
	}
	queuesDrain(t, tr, time.Second)
}

// held: Transports made, used once with the long timeout (5 min) and
// dropped, 1,000 times: each is freed, and what their timers keep (a
// runtime timer each, armed for 5 min, holding a weak pointer) stays small
// in bytes.
//
// Promised, RELIABILITY.md "No goroutine leaks": "the transport's attempts
// end on runtime timers, one per timeout in use, which hold their queues
// weakly: a Transport no longer used is freed by the next collection";
// the project's rule: memory bounded in bytes.
func TestAttack18ManyDroppedTransportsFreed(t *testing.T) {
	const n = 1000
	var freed atomic.Int32
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	before2 := runtime.NumGoroutine()
	for range n {
		tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
		runtime.AddCleanup(tr, func(*atomic.Int32) { freed.Add(1) }, &freed)
		if _, err := timedCall(t, tr, LongCallTimeout, "quick"); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(2 * time.Second); freed.Load() < n && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	per := (int64(ms.HeapAlloc) - int64(before)) / n
	t.Logf("%d of %d freed; %d B of heap per dropped Transport", freed.Load(), n, per)
	if freed.Load() < n*9/10 {
		t.Fatalf("only %d of %d dropped Transports freed", freed.Load(), n)
	}
	if per > 1024 {
		t.Fatalf("%d B of heap left per dropped Transport", per)
	}
	if after := goroutinesSettle(before2); after > before2 {
		t.Fatalf("%d goroutines, %d before", after, before2)
	}
}
