package transport

import (
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/xblgo/fgrl/internal/clock"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// verdict is what to do after an attempt.
type verdict struct {
	retry      bool            // retryable; mayRetry decides
	again      bool            // retry at once, unconditionally (401 refresh)
	delay      time.Duration   // wait before the retry
	retryAfter time.Duration   // the response's Retry-After, if any
	cacheUntil time.Time       // when set: cache the status until then
	status     int             // the status to cache
	body       *ratelimit.Body // a 429's, when assess read it (learning or Observe)
}

// retryable reports whether XSAPI retries a status.
func retryable(status int) bool {
	switch status {
	case 408, 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// assess learns from an attempt (Retry-After cache, budget feedback) and
// decides whether to retry it.
func (c *call) assess(resp *http.Response, err error) verdict {
	if err != nil {
		if c.ctx.Err() != nil || permanent(err) {
			return verdict{}
		}
		return verdict{retry: true, delay: c.backoff()}
	}
	a := reply{resp: resp}
	if retryable(resp.StatusCode) {
		a.read(c.clk)
	}
	var body *ratelimit.Body // a 429's, read for learning and the event
	if resp.StatusCode == http.StatusTooManyRequests && (c.t.learning() || c.t.Observe != nil) {
		body = peek429(resp)
		c.learn(body)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		c.unbook() // before feedback: counts the answer reports are the service's, and win
	}
	c.feedback(&a)
	if resp.StatusCode == http.StatusUnauthorized && c.t.RefreshToken != nil && !c.refreshed {
		return c.refresh(resp)
	}
	if !retryable(resp.StatusCode) {
		return verdict{}
	}
	now := a.now
	v := verdict{retry: true, delay: c.backoff(), body: body}
	if a.hasRetryAfter {
		v.retryAfter = a.retryAfter
		v.cacheUntil, v.status = now.Add(a.retryAfter), resp.StatusCode
		v.delay = max(v.delay, jitterUp(a.retryAfter))
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		c.emit(Event{Kind: EventServer429, Status: 429, Wait: v.retryAfter, Body: body})
	}
	if resp.StatusCode == http.StatusInternalServerError {
		v.delay = max(v.delay, serverErrorWait)
	}
	return v
}

// reply is what an attempt's response says about time: when it arrived and
// its Retry-After. It is read at most once per response, and only when
// needed, so a plain 200 costs no clock reading.
type reply struct {
	resp          *http.Response
	done          bool
	now           time.Time
	retryAfter    time.Duration
	hasRetryAfter bool
}

// read takes the arrival time and parses Retry-After, once.
func (a *reply) read(clk clock.Clock) {
	if a.done {
		return
	}
	a.done = true
	a.now = clk.Now() // a Retry-After runs from when the answer arrived
	a.retryAfter, a.hasRetryAfter = ratelimit.ParseRetryAfter(a.resp.Header.Get("Retry-After"), a.now, MaxRetryAfter)
}

// feedback feeds the budget what the service reports: a 429's Retry-After
// blocks the key (the service is authoritative), and RateLimit headers resync
// the counts.
//
// It reads the clock only when there is something to record: a plain 200
// from a service that sends no RateLimit headers costs nothing here.
func (c *call) feedback(a *reply) {
	if c.limit == (throttle.Limit{}) || c.t.DisableBudget {
		return
	}
	// What the service reports is of its own limit (c.full), not of the
	// share of it this transport's budget keeps to (c.limit).
	counts, reported := ratelimit.ParseHeaders(a.resp.Header, c.full)
	blocked := a.resp.StatusCode == http.StatusTooManyRequests && a.hasRetryAfter // 429 is retryable: a is read
	if !reported && !blocked {
		return
	}
	a.read(c.clk)
	now := a.now
	// Within the call's own context, as every budget operation of the
	// call: with a shared store the local one keeps the report first, and
	// the shared one is owed what the call's end cuts short (failover).
	if blocked {
		c.t.budget.Block(c.ctx, c.key, now, now.Add(a.retryAfter))
	}
	for _, p := range []throttle.Period{throttle.Burst, throttle.Sustain} {
		// A window of a higher limit than the key's (a publisher's, which
		// counts other titles' calls too) is synced by what it leaves: the
		// calls used are the key's limit less those. (A lower one is the
		// service's drift: its 429 teaches it.)
		w := counts.Window(p)
		if n := max(w.Count-max(w.Limit-windowOf(c.full, p), 0), 0); n > 0 {
			c.t.budget.Sync(c.ctx, c.key, c.limit, now, p, n, w.Reset)
		}
	}
}

// refresh gets a new token after a 401 and asks for one immediate retry.
// Like XSAPI (HandleAuthError), it does so only for a call that may be
// retried: a call sent once (NoRetry, retries off, a body without GetBody)
// returns its 401 and is never sent twice.
func (c *call) refresh(resp *http.Response) verdict {
	c.refreshed = true
	if !c.retries {
		return verdict{}
	}
	tok, err := c.t.RefreshToken(c.req)
	if err != nil || tok == "" {
		// RefreshToken's error may quote the token it could not refresh.
		c.emit(Event{Kind: EventRefreshFailed, Status: http.StatusUnauthorized, Err: scrubSent(c.req, err)})
		return verdict{}
	}
	c.auth = tok
	if c.pol.AttemptTimeout == 0 { // the call's own timeout (Policy.AttemptTimeout) bounds the renewed attempt too
		c.timeout = attemptTimeout(c.t.window(), c.clk.Now().Sub(c.start)) // XSAPI computes it again for the new call
	}
	return verdict{again: true}
}

// backoff returns XSAPI's wait for the next retry: attempt n waits a value in
// [2^n, 2^(n+1)) seconds, capped at 60 s. One ExponentialBackOff per call.
func (c *call) backoff() time.Duration {
	if c.bo == nil {
		c.bo = backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(3*time.Second),
			backoff.WithRandomizationFactor(1.0/3),
			backoff.WithMultiplier(2),
			backoff.WithMaxInterval(maxBackoff),
			backoff.WithMaxElapsedTime(0),
		)
	}
	return min(c.bo.NextBackOff(), maxBackoff)
}

// jitterUp returns d × [1.0, 1.2): XSAPI only ever waits longer than asked.
func jitterUp(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

// finish turns the last attempt into RoundTrip's result.
func (c *call) finish(resp *http.Response, err error, v verdict) (*http.Response, error) {
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusTooManyRequests || c.t.Raw429 {
		return c.handOver(resp), nil
	}
	wait := v.retryAfter
	if wait == 0 {
		wait = v.delay // no usable Retry-After: suggest the backoff XSAPI would wait
	}
	body := v.body
	if body == nil {
		body = readBody(resp)
	} else {
		resp.Body.Close() // assess read and parsed it already
	}
	return nil, &ThrottleError{Status: 429, Wait: wait, Sent: true, Scope: c.scope(), Body: body}
}

func (c *call) scope() string {
	if c.rule == nil {
		return ""
	}
	return c.rule.Scope()
}

func status(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}
