package transport

// An outsider's attack on the attempts' queue (commit 9e3fdd3:
// transport/attempttimers.go, transport/attempt.go), under the real clock
// unless a test says otherwise.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// attack15SlowStore is a shared budget store that answers every Reserve after a
// delay (a Redis across a slow link, or one that a failover probes while
// it is down).
type attack15SlowStore struct {
	throttle.MemoryBudgetStore
	delay time.Duration
}

func (s *attack15SlowStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	time.Sleep(s.delay)
	return s.MemoryBudgetStore.Reserve(ctx, k, l, now, maxWait)
}

// attack15LifetimeBase hangs every request until its context ends and reports
// how long the request's context lived once it reached the base.
func attack15LifetimeBase(lived chan<- time.Duration) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		start := time.Now()
		<-r.Context().Done()
		lived <- time.Since(start)
		return nil, context.Cause(r.Context())
	})
}

func attack15Request(t *testing.T, ctx context.Context, query string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", profileURL+"&"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(xuid1, title))
	return req
}

// BREAK 1. The attempt's timeout is counted from the time the call read
// before its gate (c.now), not from the attempt: a budget store that takes
// its time to answer eats the attempt's timeout, and one slower than the
// timeout leaves the attempt dead on arrival at the base. Before 9e3fdd3
// (and still today for an attempt beyond the 8 queues, or under a clock of
// the tests' own) the timer started when the attempt was made.
//
// Promised, transport/policy.go: "AttemptTimeout bounds each attempt";
// transport/attempt.go (send): "Every attempt runs under XSAPI's
// per-attempt timeout (c.timeout) ... as net/http bounds a request with
// Client.Timeout"; transport.go: "RetryWindow ... each attempt times out
// after 5 s"; transport/doc.go: "each attempt times out after the time
// left in the window, at least 5 s and at most 30 s".
func TestAttack15AttemptTimeoutNotEatenBySlowBudgetStore(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, delay := range []time.Duration{120 * time.Millisecond, 250 * time.Millisecond} {
		lived := make(chan time.Duration, 1)
		tr := &Transport{Base: attack15LifetimeBase(lived), TitleID: title, Budget: &attack15SlowStore{delay: delay}}
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: timeout})
		_, err := tr.RoundTrip(attack15Request(t, ctx, "hang"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("store %v: err %v, want context.DeadlineExceeded", delay, err)
		}
		if got := <-lived; got < timeout/2 { // the break: 80 ms and 14 µs
			t.Errorf("store answering in %v: the attempt lived %v at the base, want its AttemptTimeout %v", delay, got, timeout)
		}
	}
}

// BREAK 2 (run with -race). stopTimer reads a.q without the queue's mutex,
// while fire writes it (unlink) under the mutex on the timer's goroutine:
// a BoundBody response closed after its timeout has fired, without a read
// in between, is a data race.
//
// Promised: the brief's "no races", and attempt.go's own comment on the
// field: "q *attemptQueue // while queued; guarded by the queue's timers'
// mutex"; README/RELIABILITY: the transport is safe for concurrent use and
// its tests run under -race.
func TestAttack15BoundBodyClosedAfterItsTimeoutNoRace(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	const timeout = 20 * time.Millisecond
	for range 3 {
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: timeout, BoundBody: true})
		resp, err := tr.RoundTrip(attack15Request(t, ctx, "quick"))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * timeout) // the queue's timer fires and unlinks the attempt
		resp.Body.Close()       // release -> stopTimer reads a.q
	}
}

// BREAK 3. A queued attempt whose deadline comes before the queue's
// first (a call whose time was read before another's but that queues
// after it: attemptTimers.add walks back past those) becomes the first,
// but the timer stays armed for the old first: it ends at the other's
// deadline.
//
// Promised, docs/ARCHITECTURE.md: "the attempts' queue
// (transport/attempttimers.go): a Transport's attempts of one timeout wait
// in one list in the order of their deadlines, under one runtime timer
// armed for the first"; attempttimers.go: "its timer is armed for the
// first ... when it fires, it ends the attempts whose deadlines have come".
func TestAttack15QueueEndsAnEarlierAttemptQueuedSecondAtItsDeadline(t *testing.T) {
	var ts attemptTimers
	mk := func() *attempt {
		ctx, cancel := context.WithCancelCause(context.Background())
		return &attempt{ctx: ctx, cancel: cancel}
	}
	const timeout = 500 * time.Millisecond
	start := time.Now()
	later, earlier := mk(), mk()
	ts.add(later, start.Add(400*time.Millisecond), timeout)  // read second, queued first
	ts.add(earlier, start.Add(40*time.Millisecond), timeout) // read first, queued second
	defer later.release()
	defer earlier.release()
	select {
	case <-earlier.ctx.Done():
	case <-time.After(2 * time.Second):
	}
	took := time.Since(start)
	if context.Cause(earlier.ctx) != context.DeadlineExceeded || took > 300*time.Millisecond { // the break: 401 ms
		t.Errorf("an attempt due at 40ms ended at %v with %v, want context.DeadlineExceeded at its deadline", took, context.Cause(earlier.ctx))
	}
}

// BREAK 4. The runtime timer is not stopped when the attempt ends: a
// Transport whose one call is over stays reachable from the timer
// (queue -> &Transport.timers) until its attempt timeout passes (20 s by
// default, LongCallTimeout 5 min), with all it holds (read cache up to 64
// MiB, learned limits, budgets). Before 9e3fdd3 the timer was stopped and
// the first collection freed the Transport.
//
// Promised, RELIABILITY.md "No goroutine leaks": "the transport's
// per-attempt timer is a runtime timer, stopped when the attempt ends";
// the same file's precedent for the mock (a Handler kept alive by a field
// of its own): "the first collection frees both the request and a Handler
// no longer used".
func TestAttack15TransportFreedAfterItsCallEnds(t *testing.T) {
	freed := make(chan struct{})
	func() {
		tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
		runtime.AddCleanup(tr, func(ch chan struct{}) { close(ch) }, freed)
		if _, err := timedCall(t, tr, 0, "quick"); err != nil { // XSAPI's default timeout
			t.Fatal(err)
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		select {
		case <-freed:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("a Transport whose only call ended (body read and closed) was still reachable 2 s later: its attempt queue's timer holds it")
}

// held: many concurrent calls of 12 distinct timeouts (more than the 8
// queues), 1 ns among them, quick calls mixed in: each hung attempt ends
// with context.DeadlineExceeded, no earlier than its timeout; no quick call
// is cut by another's timer; the queues drain; no goroutine is left.
//
// Promised, transport/policy.go: "AttemptTimeout bounds each attempt";
// attempttimers.go: "the attempts of a timeout beyond them get timers of
// their own"; RELIABILITY.md: "the transport [starts] none of [its
// goroutines]".
func TestAttack15ManyTimeoutsConcurrentEachEndsAtItsOwn(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	before := runtime.NumGoroutine()
	timeouts := []time.Duration{time.Nanosecond, 10 * time.Millisecond, 15 * time.Millisecond, 20 * time.Millisecond,
		25 * time.Millisecond, 30 * time.Millisecond, 35 * time.Millisecond, 40 * time.Millisecond,
		45 * time.Millisecond, 50 * time.Millisecond, 60 * time.Millisecond, 70 * time.Millisecond}
	var wg sync.WaitGroup
	for round := range 3 {
		for i := range 60 {
			timeout := timeouts[(i+round)%len(timeouts)]
			query := "hang"
			if i%4 == 3 && timeout > time.Millisecond {
				query = "quick"
			}
			wg.Go(func() {
				took, err := timedCall(t, tr, timeout, query)
				switch {
				case query == "quick":
					if err != nil {
						t.Errorf("a quick call of %v failed: %v", timeout, err)
					}
				case !errors.Is(err, context.DeadlineExceeded):
					t.Errorf("an attempt of %v ended with %v", timeout, err)
				case took < timeout || took > timeout+2*time.Second:
					t.Errorf("an attempt of %v took %v", timeout, took)
				}
			})
		}
		time.Sleep(7 * time.Millisecond) // new attempts while the timers fire
	}
	wg.Wait()
	queuesDrain(t, tr, 3*time.Second)
	if after := goroutinesSettle(before); after > before {
		t.Errorf("%d goroutines after the calls, %d before", after, before)
	}
}

// held: the context's own deadline before the attempt's ends the call at
// the context's; after it, the attempt's timeout ends it, both with
// context.DeadlineExceeded.
//
// Promised, transport/doc.go: "It never sleeps past the request's context
// deadline"; policy.go: "AttemptTimeout bounds each attempt".
func TestAttack15ContextDeadlineAndAttemptTimeout(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	for _, c := range []struct{ ctxDL, attempt, want time.Duration }{
		{40 * time.Millisecond, 300 * time.Millisecond, 40 * time.Millisecond},
		{400 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), c.ctxDL)
		ctx = WithPolicy(ctx, Policy{NoRetry: true, AttemptTimeout: c.attempt})
		start := time.Now()
		_, err := tr.RoundTrip(attack15Request(t, ctx, "hang"))
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || took < c.want-time.Millisecond || took > c.want+time.Second {
			t.Errorf("context %v, attempt %v: %v after %v, want context.DeadlineExceeded at %v", c.ctxDL, c.attempt, err, took, c.want)
		}
	}
}

// held: a handed-over body is read after its attempt's timeout (while other
// attempts of the same timeout fire in the same queue), read again after
// EOF released it: never context.DeadlineExceeded.
//
// Promised, attempt.go: "handOver stops it when a body goes to the caller,
// whose reading is its own ... Closing the body, or reading it to the end,
// releases the context".
func TestAttack15HandedOverBodyNeverDeadlineExceeded(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	const timeout = 30 * time.Millisecond
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: timeout})
	resp, err := tr.RoundTrip(attack15Request(t, ctx, "quick"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { timedCall(t, tr, timeout, "hang") })
	}
	wg.Wait()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "answer" {
		t.Fatalf("handed-over body after the timeout: %q, %v", b, err)
	}
	time.Sleep(2 * timeout)
	if _, err := resp.Body.Read(make([]byte, 8)); errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a released body read later: %v", err)
	}
	resp.Body.Close()
}

// attack15ReentrantCtx is a request context whose AfterFunc (context's
// afterFuncer) runs user code when a child context is cancelled: the
// stop function calls back into the transport, sending a call of the
// same timeout. Had the queue's mutex been held while an attempt is
// cancelled, this would deadlock.
type attack15ReentrantCtx struct {
	context.Context
	done  chan struct{}
	tr    *Transport
	calls atomic.Int32
}

func (c *attack15ReentrantCtx) Done() <-chan struct{} { return c.done }

func (c *attack15ReentrantCtx) AfterFunc(f func()) func() bool {
	return func() bool {
		c.calls.Add(1)
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: 30 * time.Millisecond})
		req, _ := http.NewRequestWithContext(ctx, "GET", profileURL+"&quick", nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		if resp, err := c.tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		return true
	}
}

// held: cancelling an attempt (the timer firing, or a release) runs user
// code (the parent context's AfterFunc stop) that calls back into the
// transport: no deadlock.
//
// Promised: the brief's "deadlocks ... the queue's mutex taken while a
// context's cancel runs user code"; attempttimers.go's fire cancels after
// Unlock; transport/doc.go: every call ends within its context.
func TestAttack15CancelRunningUserCodeNoDeadlock(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	done := make(chan struct{})
	// Every call's context, not the last one's: the last call hangs until
	// the queue's timer cancels its attempt, and a cancel closes the
	// context's Done before it calls the parent's stop, so the call can end
	// before the timer's goroutine gets to the stop (CI, 2026-12-06, 0.04 s
	// in). A quick call's attempt is released by its body's read on the
	// caller's own goroutine, so its stop has run when the call ends.
	var rcs []*attack15ReentrantCtx
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for i := range 8 {
			rctx := &attack15ReentrantCtx{Context: WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: 30 * time.Millisecond}), done: make(chan struct{}), tr: tr}
			rcs = append(rcs, rctx)
			query := "hang"
			if i%2 == 0 {
				query = "quick"
			}
			wg.Go(func() {
				resp, err := tr.RoundTrip(attack15Request(t, rctx, query))
				if err == nil {
					io.ReadAll(resp.Body)
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("deadlock: calls whose cancel calls back into the transport did not end in 10 s")
	}
	var calls int32
	for _, rc := range rcs {
		calls += rc.calls.Load()
	}
	if calls == 0 {
		t.Error("no call's context had its AfterFunc stop called: the attack did not run")
	}
}

// held: RefreshToken's retry is an attempt of its own: after a quick 401,
// the renewed attempt gets its whole AttemptTimeout.
//
// Promised, policy.go: "AttemptTimeout bounds each attempt"; assess.go:
// "the call's own timeout (Policy.AttemptTimeout) bounds the renewed
// attempt too".
func TestAttack15RefreshRetryGetsItsWholeTimeout(t *testing.T) {
	const timeout = 120 * time.Millisecond
	lived := make(chan time.Duration, 2)
	var n atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if n.Add(1) == 1 {
			time.Sleep(60 * time.Millisecond)
			return &http.Response{StatusCode: 401, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		return attack15LifetimeBase(lived).RoundTrip(r)
	})
	tr := &Transport{Base: base, TitleID: title, DisableBudget: true, RetryWindow: 5 * time.Second,
		RefreshToken: func(*http.Request) (string, error) { return mock.Token(xuid1, title), nil }}
	ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: timeout})
	_, err := tr.RoundTrip(attack15Request(t, ctx, "hang"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want context.DeadlineExceeded", err)
	}
	if got := <-lived; got < timeout-15*time.Millisecond {
		t.Errorf("the renewed attempt lived %v, want %v", got, timeout)
	}
}

// held: coalesced reads whose leader hangs all end within twice their
// timeout, with the attempt's context.DeadlineExceeded or
// ErrSharedReadTimeout; a too-large body of a coalesced leader, its timer
// stopped (coalesce.go's stopTimer), reads in full after the timeout.
//
// Promised, Transport.CoalesceReads: "A caller waits for another's answer
// no longer than its own call could take (ErrSharedReadTimeout) ... a
// caller that waited takes at most twice its own call's time. An answer
// too large to read in full ... stays its caller's"; coalesce.go: "the
// rest of an answer too large to share then comes at the caller's pace".
func TestAttack15CoalescedLeaderTimeouts(t *testing.T) {
	const timeout = 60 * time.Millisecond
	big := MaxCoalescedBody + 1<<20
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if strings.Contains(r.URL.RawQuery, "big") {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: ctxBody{r.Context(), io.LimitReader(attack15Zeros{}, int64(big))}, Request: r}, nil
		}
		return hangingBase.RoundTrip(r)
	})
	tr := &Transport{Base: base, TitleID: title, DisableBudget: true, CoalesceReads: true}
	var wg sync.WaitGroup
	var deadlines atomic.Int32
	for range 6 {
		wg.Go(func() {
			took, err := timedCall(t, tr, timeout, "hang")
			if errors.Is(err, context.DeadlineExceeded) {
				deadlines.Add(1)
			} else if !errors.Is(err, ErrSharedReadTimeout) {
				t.Errorf("a coalesced hung read ended with %v", err)
			}
			if took > 2*timeout+time.Second {
				t.Errorf("a coalesced hung read took %v", took)
			}
		})
	}
	wg.Wait()
	if deadlines.Load() == 0 {
		t.Error("no coalesced read ended with context.DeadlineExceeded")
	}
	const bigTimeout = 2 * time.Second // the leader reads 16 MiB under it
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: bigTimeout})
	resp, err := tr.RoundTrip(attack15Request(t, ctx, "big"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(bigTimeout + 100*time.Millisecond)
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != int64(big) {
		t.Errorf("a too-large coalesced body read after the timeout: %d of %d bytes, %v", n, big, err)
	}
}

type attack15Zeros struct{}

func (attack15Zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// held: a Transport used for real (its queues armed on the real clock),
// then in a synctest bubble with more timeouts than queues: each attempt
// ends at exactly its timeout on the bubble's clock; then for real again.
//
// Promised, transport/doc.go: "tests run it inside testing/synctest, which
// makes both virtual"; ARCHITECTURE.md: "a time read in a
// testing/synctest bubble (no monotonic reading) keeps a timer of its own".
func TestAttack15BubbleBetweenRealUses(t *testing.T) {
	tr := &Transport{Base: hangingBase, TitleID: title, DisableBudget: true}
	for i := range 9 {
		if _, err := timedCall(t, tr, time.Duration(i+1)*time.Second, "quick"); err != nil {
			t.Fatal(err)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 12 {
			timeout := time.Duration(i+1) * time.Second
			wg.Go(func() {
				took, err := timedCall(t, tr, timeout, "hang")
				if !errors.Is(err, context.DeadlineExceeded) || took != timeout {
					t.Errorf("in the bubble: %v after %v, want context.DeadlineExceeded after %v", err, took, timeout)
				}
			})
		}
		wg.Wait()
	})
	took, err := timedCall(t, tr, 30*time.Millisecond, "hang")
	if !errors.Is(err, context.DeadlineExceeded) || took < 30*time.Millisecond || took > time.Second {
		t.Errorf("after the bubble: %v after %v", err, took)
	}
}
