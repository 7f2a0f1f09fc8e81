package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

// send makes one attempt. After the first attempt the request gets a fresh
// body from GetBody; after a refresh, the new token. Every attempt runs under
// XSAPI's per-attempt timeout (c.timeout). It keeps running after the
// headers arrive, so that it bounds the transport's own reads of a body
// (the drain before a retry, a 429's body) as XSAPI's covers the whole
// response; handOver stops it when a body goes to the caller, whose reading
// is its own (BoundBody makes it the attempt's too).
func (c *call) send() (*http.Response, error) {
	var a *attempt
	req := c.req
	// A request whose own deadline comes first needs no timer of ours.
	if dl, ok := c.ctx.Deadline(); !ok || dl.After(c.now.Add(c.timeout)) {
		a = newAttempt(c.req, c.clk, &c.t.wheel, c.now, c.timeout)
		req = &a.req
	}
	if c.attempts > 0 || c.auth != "" {
		if err := c.rewind(&req); err != nil {
			a.release()
			return nil, err
		}
	}
	c.attempts++
	c.t.stats.attempts.Add(1)
	var sent time.Time
	if c.t.Observe != nil {
		sent = c.clk.Now()
	}
	resp, err := c.t.base().RoundTrip(req)
	if err != nil || resp == nil {
		a.release()
		if err == nil {
			err = errors.New("transport: base RoundTripper returned no response and no error")
		}
		c.observe(Event{Kind: EventAttempt, Err: err, Duration: c.since(sent)})
		return nil, err
	}
	c.observe(Event{Kind: EventAttempt, Status: resp.StatusCode, Duration: c.since(sent)})
	if a != nil {
		a.body.ReadCloser = resp.Body
		resp.Body = &a.body
	}
	c.att = a
	return resp, nil
}

// since returns the time from t, or 0 when t is zero (no observer).
func (c *call) since(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return c.clk.Now().Sub(t)
}

// handOver gives the caller the last attempt's response: from here reading
// the body is the caller's, bounded by the request's own context, unless
// the request asked for BoundBody.
func (c *call) handOver(resp *http.Response) *http.Response {
	if c.att != nil && !boundBody(c.ctx) {
		c.att.ctx.stopTimer()
	}
	if resp.Request == nil { // so that a redirect it asks for can tell the host it came from
		resp.Request = c.req
	}
	return resp
}

// rewind gives *req its own headers and, after the first attempt, a fresh
// body from GetBody.
func (c *call) rewind(req **http.Request) error {
	r := (*req).Clone((*req).Context())
	if c.attempts > 0 && c.req.Body != nil && c.req.Body != http.NoBody {
		body, err := c.req.GetBody()
		if err != nil {
			return err
		}
		r.Body = body
	}
	if c.auth != "" {
		r.Header.Set("Authorization", c.auth)
	}
	*req = r
	return nil
}

// attempt holds what one timed attempt needs in a single allocation: its
// context, the request copy that carries it, and the body wrapper that
// releases it.
type attempt struct {
	ctx  attemptCtx
	req  http.Request
	body attemptBody
}

func newAttempt(req *http.Request, clk clock.Clock, w *wheel, now time.Time, timeout time.Duration) *attempt {
	a := &attempt{}
	a.ctx.init(req.Context(), clk, w, now, timeout)
	a.req = *req
	a.req = *a.req.WithContext(&a.ctx)
	a.body.a = a
	return a
}

// release ends the attempt's context. It is safe on a nil attempt and safe
// to call twice.
func (a *attempt) release() {
	if a == nil {
		return
	}
	if !a.body.released.CompareAndSwap(false, true) {
		return
	}
	a.ctx.stopTimer()
	if a.ctx.stop != nil {
		a.ctx.stop()
	}
	a.ctx.cancel(context.Canceled)
}

// attemptCtx is a context with its own deadline, derived from a parent. It
// is context.WithTimeout in fewer allocations: the no-retry path is the hot
// path of every call.
type attemptCtx struct {
	parent   context.Context
	deadline time.Time
	timer    clock.Stopper // a virtual clock's timer; nil on the wheel

	// The wheel's list, guarded by wshard.mu.
	wshard       *wheelShard
	wslot        int64
	wprev, wnext *attemptCtx
	inWheel      bool
	stop         func() bool // unregisters the parent hook

	mu       sync.Mutex
	done     chan struct{} // created on first use
	err      error
	afters   []func() // AfterFunc's functions; nil once stopped or run
	afterBuf [2]func()
}

func (c *attemptCtx) init(parent context.Context, clk clock.Clock, w *wheel, now time.Time, timeout time.Duration) {
	c.parent = parent
	c.deadline = now.Add(timeout)
	if d, ok := parent.Deadline(); ok && d.Before(c.deadline) {
		c.deadline = d
	}
	if err := parent.Err(); err != nil {
		c.err = err
	} else if parent.Done() != nil {
		c.stop = context.AfterFunc(parent, func() { c.cancel(parent.Err()) })
	}
	if _, real := clk.(clock.Real); real && w != nil {
		w.add(c, now, now.Add(timeout))
		return
	}
	c.timer = clk.AfterFunc(timeout, c.expire)
}

// stopTimer ends the attempt's timeout, on the wheel or on a virtual clock.
func (c *attemptCtx) stopTimer() {
	if c.wshard != nil {
		c.wshard.remove(c)
		return
	}
	if c.timer != nil {
		c.timer.Stop()
	}
}

func (c *attemptCtx) expire() { c.cancel(context.DeadlineExceeded) }

func (c *attemptCtx) cancel(err error) {
	c.mu.Lock()
	var run []func()
	if c.err == nil {
		c.err = err
		if c.done != nil {
			close(c.done)
		}
		for i, f := range c.afters {
			if f != nil {
				run = append(run, f)
				c.afters[i] = nil
			}
		}
	}
	c.mu.Unlock()
	for _, f := range run {
		go f()
	}
}

// AfterFunc arranges for f to run in its own goroutine once the attempt is
// done, as context.AfterFunc does; the returned stop cancels that. The
// context package (context.WithCancelCause in http.Transport, among others)
// uses this method instead of starting a goroutine that waits on Done, so a
// request through the transport costs no goroutine beyond net/http's own.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	if c.afters == nil {
		c.afters = c.afterBuf[:0]
	}
	c.afters = append(c.afters, f)
	i := len(c.afters) - 1
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if i >= len(c.afters) || c.afters[i] == nil {
			return false
		}
		c.afters[i] = nil
		return true
	}
}

// Deadline returns the earlier of the attempt's and the parent's deadlines.
func (c *attemptCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Done returns a channel closed when the attempt times out or the parent is
// done.
func (c *attemptCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

// Err returns nil, context.DeadlineExceeded, or the parent's error.
func (c *attemptCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value returns the parent's value.
func (c *attemptCtx) Value(key any) any { return c.parent.Value(key) }

// attemptBody releases the attempt when the body is closed.
type attemptBody struct {
	io.ReadCloser
	a        *attempt
	released atomic.Bool // release has run
}

func (b *attemptBody) Close() error {
	err := b.ReadCloser.Close()
	b.a.release()
	return err
}

// discard drains (at most maxDrain bytes, so the connection can be reused)
// and closes a response that will not be returned.
func discard(resp *http.Response) {
	if resp == nil {
		return
	}
	io.CopyN(io.Discard, resp.Body, maxDrain)
	resp.Body.Close()
}
