package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

// send makes one attempt. After the first attempt the request gets a fresh
// body from GetBody; after a refresh, the new token; with a Signer
// (WithSigner), a signature of its own, made last. Every attempt runs under
// XSAPI's per-attempt timeout (c.timeout): a cancel-cause context that a
// timer ends (attemptTimers: one for the Transport's attempts of a
// timeout), as net/http bounds a request with Client.Timeout. The timer keeps
// running after the headers arrive, so that it bounds the transport's own
// reads of a body (the drain before a retry, a 429's body) as XSAPI's covers
// the whole response; handOver stops it when a body goes to the caller, whose
// reading is its own (BoundBody makes it the attempt's too). Closing the
// body, or reading it to the end, releases the context. It reports false when
// the attempt failed before it reached the base (GetBody or the Signer
// failed: that failure is the caller's own, and waiting does not mend it;
// or a context ended while it was made ready: errUnsent for its own
// timeout, which the call retries).
func (c *call) send() (*http.Response, bool, error) {
	var a *attempt
	req := c.req
	// A request whose own deadline comes first needs no timer of ours.
	if dl, ok := c.ctx.Deadline(); !ok || dl.After(c.now.Add(c.timeout)) {
		a = c.t.newAttempt(c.ctx, c.clk, c.timeout)
		req = req.WithContext(a.ctx)
	}
	var sign Signer
	if !c.dropped {
		sign = signerOf(c.ctx)
	}
	var err error
	if c.readied || c.auth != "" || sign != nil {
		err = c.rewind(&req)
	}
	if err == nil && sign != nil {
		err = sign(req)
	}
	if err != nil {
		// GetBody's or the Signer's error may quote the request's
		// credentials, as a Base's may (errors.Is still reads it).
		err = keepCode(err, scrubSent(req, err))
	}
	switch {
	case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		// Their own failure: it ends the call.
	case c.ctx.Err() != nil:
		// An attempt whose context ended while it was made ready (a slow
		// Signer or GetBody, or one that gave up with that context) is
		// not sent: the call's context ends the call; the attempt's own
		// timeout is an attempt that timed out, retried as one.
		err = c.ctx.Err()
	case a != nil && context.Cause(a.ctx) == context.DeadlineExceeded:
		err = errUnsent
	}
	if err != nil {
		// Not sent, so its booking goes back (unbook), and its body is
		// closed, as a Base closes what it sends; the first attempt's
		// is the caller's, and a retry makes its own (GetBody), since a
		// Signer may have read it.
		a.release()
		if c.readied {
			closeBody(req) // GetBody's
		} else {
			closeBody(c.req)
		}
		c.readied = true
		return nil, false, err
	}
	c.readied = true
	c.attempts++
	var at time.Time
	if c.t.Observe != nil || c.t.Logger != nil || c.stamp {
		at = c.clk.Now()
		c.sentAt = at
	}
	resp, err := c.t.base().RoundTrip(req)
	if err != nil || resp == nil {
		// net/http's errors quote what the server sent; a Base's may quote the URL as text.
		raw := a.cause(err)
		err = keepCode(raw, scrubSent(req, raw))
		a.release()
		if err == nil {
			err = errors.New("transport: base RoundTripper returned no response and no error")
		}
		c.emit(Event{Kind: EventAttempt, Err: err, Duration: c.since(at)})
		return nil, true, err
	}
	c.emit(Event{Kind: EventAttempt, Status: resp.StatusCode, Duration: c.since(at)})
	if resp.Body == nil { // as http.Client reads it: an empty body (golang.org/issue/38095)
		resp.Body = http.NoBody
	}
	// As net/http's Transport sets it: the 429's text is scrubbed of the
	// credentials it names, and BudgetLeft reads its key. A Base's answer
	// that names a request of other credentials (another user's, the token
	// before a renewal) names this attempt's instead.
	if resp.Request == nil || resp.Request != req && !sameCredentials(resp.Request.Header, req.Header) {
		resp.Request = req
	}
	if a != nil {
		a.body.ReadCloser = resp.Body
		resp.Body = &a.body
	}
	c.att = a
	return resp, true, nil
}

// sameCredentials reports whether a and b carry the same Authorization
// and Signature.
func sameCredentials(a, b http.Header) bool {
	return headerFold(a, "Authorization") == headerFold(b, "Authorization") && headerFold(a, "Signature") == headerFold(b, "Signature")
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
	if c.att != nil && !c.pol.BoundBody {
		c.att.stopTimer()
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
	if c.readied && c.req.Body != nil && c.req.Body != http.NoBody {
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

// attempt is one attempt's context and the timer that ends it with
// context.DeadlineExceeded as its cause (net/http returns the cause).
type attempt struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	// Under the real clock the attempt waits in its Transport's queue for
	// its timeout (attemptTimers); under another (clock.With), on a timer
	// of its own.
	timer    clock.Stopper
	ts       *attemptTimers // the queues it went to, set once
	q        *attemptQueue  // while queued; q, prev and next are guarded by ts.mu
	prev     *attempt
	next     *attempt
	out      atomic.Bool // taken out of its queue, for good: stopTimer need not lock to look
	deadline time.Time
	body     attemptBody // the response's body, made with the attempt
}

func (t *Transport) newAttempt(parent context.Context, clk clock.Clock, timeout time.Duration) *attempt {
	ctx, cancel := context.WithCancelCause(parent)
	a := &attempt{ctx: ctx, cancel: cancel}
	a.body.a = a
	// A time read in a synctest bubble carries no monotonic reading
	// (Round(0) strips one): there, and under a clock of a test's own,
	// the attempt gets a timer of its own, which belongs to its bubble.
	// The timeout counts from here, not from the call's time (c.now), read
	// before its gate, which a slow budget store may have held.
	if _, real := clk.(clock.Real); !real || !queueable(a, &t.timers, timeout) {
		a.timer = clk.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	}
	return a
}

// queueable queues a in ts under the real clock, and reports whether it
// did.
func queueable(a *attempt, ts *attemptTimers, timeout time.Duration) bool {
	now := time.Now()
	return now != now.Round(0) && ts.add(a, now.Add(timeout), timeout)
}

// stopTimer ends the attempt's timer, leaving its context to release.
func (a *attempt) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
	} else if a.ts != nil && !a.out.Load() { // a call stops it at hand-over, and its body at the end
		a.ts.remove(a)
	}
}

// errUnsent is an attempt whose timeout ended before it was sent, while it
// was made ready: nothing reached the service, and the call retries it as
// an attempt that timed out.
var errUnsent = fmt.Errorf("transport: the attempt timed out before it was sent: %w", context.DeadlineExceeded)

// cause returns err, or context.DeadlineExceeded in place of the
// context.Canceled of a base that returns its context's Err (net/http
// returns the cause itself) when the attempt timed out.
func (a *attempt) cause(err error) error {
	if err == nil || err == io.EOF { // a body's every read: errors.Is reads cold type data
		return err
	}
	if a != nil && errors.Is(err, context.Canceled) && context.Cause(a.ctx) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// release ends the attempt's timer and context. It is safe on a nil attempt
// and safe to call twice.
func (a *attempt) release() {
	if a == nil {
		return
	}
	a.stopTimer()
	a.cancel(context.Canceled)
}

// attemptBody releases the attempt when the body is closed or read to its
// end.
type attemptBody struct {
	io.ReadCloser
	a *attempt
}

func (b *attemptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.a.release()
	}
	return n, b.a.cause(err)
}

func (b *attemptBody) Close() error {
	err := b.ReadCloser.Close()
	b.a.release()
	return err
}

// drain reads at most maxDrain bytes of resp's body (so that its
// connection can be reused when the body ends within them) and leaves in
// resp.Body what it read, then what is left: whether the answer is retried
// can then be decided after the time its body took, and one that is not
// is handed over uncut (as peek429 leaves a 429's).
func drain(resp *http.Response) {
	var b bytes.Buffer
	io.CopyN(&b, resp.Body, maxDrain) // an error is the rest's to give again
	keep(resp, b.Bytes())
}

// keep leaves in resp.Body read, the bytes the transport read of it, then
// the rest.
func keep(resp *http.Response, read []byte) {
	resp.Body = &keptBody{Reader: io.MultiReader(bytes.NewReader(read), resp.Body), rest: resp.Body}
}

// keptBody is a body the transport read the first bytes of (drain,
// peek429): it gives them again, then the rest.
type keptBody struct {
	io.Reader
	rest io.ReadCloser
}

func (b *keptBody) Close() error { return b.rest.Close() }

// attemptOf returns the attempt whose timer bounds body, through the
// bodies the transport kept the first bytes of; nil when none does.
func attemptOf(body io.ReadCloser) *attempt {
	for {
		switch b := body.(type) {
		case *attemptBody:
			return b.a
		case *keptBody:
			body = b.rest
		default:
			return nil
		}
	}
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
