package transport

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/xblgo/fgrl/internal/clock"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// call is one RoundTrip: the request, its key and rule, and its progress.
type call struct {
	t     *Transport
	req   *http.Request
	ctx   context.Context
	key   throttle.Key
	rule  *limits.Rule   // nil for a host with no rule
	table throttle.Limit // the rule's (zero: no rule)
	full  throttle.Limit // table, or learned (limitOf); zero: no budget
	limit throttle.Limit // full cut to LimitShare: what the budget allows
	start time.Time
	now   time.Time // read once per attempt, before its gate
	clk   clock.Clock
	pol   Policy // what the request's context asks (read once)

	retries   bool           // the request may be retried at all
	timeout   time.Duration  // each attempt's, computed once (attemptTimeout)
	ownsCache bool           // this call marked its Retry-After entry "call pending"
	booked    throttle.Limit // the limit the attempt's budget slot was booked under (zero: none)
	slot      int64          // that slot (throttle.Admission.Slot)
	paired    int64          // the local store's booking kept beside it (failover.stricter; zero: none)
	readied   bool           // an attempt was made ready (sent or not): the next makes its body again (GetBody)
	att       *attempt       // the last attempt, while its timer runs
	attempts  int
	auth      string // replacement Authorization after a refresh
	refreshed bool
	dropped   bool                        // its credentials were dropped at a redirect: it is not signed either
	bo        *backoff.ExponentialBackOff // created at the first retry
	stamp     bool                        // read the time each attempt is sent (sentAt): a coalesced read's
	sentAt    time.Time                   // when the last attempt was sent, with stamp (or an observer)
}

// init prepares c for req; c lives on RoundTrip's stack.
func (c *call) init(t *Transport, req *http.Request) error {
	if err := checkURL(req.URL); err != nil {
		return err
	}
	auth := headerFold(req.Header, "Authorization")
	if req.URL.Scheme == "http" && (auth != "" || headerFold(req.Header, "Signature") != "") &&
		!t.AllowInsecure && !loopback(req.URL.Hostname()) {
		return ErrInsecure
	}
	uhs := xblauth.UserHashOf(auth) // no token: the key's user is ""
	clk := clock.From(req.Context())
	now := clk.Now()
	*c = call{t: t, req: req, ctx: req.Context(), start: now, now: now, clk: clk, pol: t.policyFor(req.Context())}
	c.key, c.rule = t.keyFor(req, uhs, c.pol.Rule)
	if c.rule != nil {
		c.table = c.rule.ClientLimit()
	}
	c.full = t.limitOf(c.ctx, c.key, c.table, now)
	c.limit = t.share(c.full)
	rewindable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	c.retries = t.window() > 0 && rewindable && !c.pol.NoRetry && !c.pol.FailFast
	c.timeout = attemptTimeout(t.window(), 0)
	if c.pol.AttemptTimeout > 0 {
		c.timeout = c.pol.AttemptTimeout
	}
	return nil
}

// attemptTimeout is XSAPI's per-attempt timeout (XblHttpCall::CalcHttpTimeout):
// the time left in the retry window, at least 5 s and at most 30 s. A call
// computes it once and its retries reuse it; with retries off (a window of 0)
// it is 5 s.
func attemptTimeout(window, elapsed time.Duration) time.Duration {
	return min(max(window-elapsed, minAttemptTimeout), maxAttemptTimeout)
}

// ruleFor returns the rule req counts against: the one of scope, which its
// policy names (Policy.Rule), when that rule covers its host, else the one
// its method, host and path match.
func (t *Transport) ruleFor(req *http.Request, host, scope string) (*limits.Rule, bool) {
	if scope != "" {
		if r, ok := t.limits.ByScope(scope); ok && r.CoversHost(host) {
			return r, true
		}
	}
	return t.limits.Match(req.Method, host, req.URL.Path)
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return "transport: " + e.msg }

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// run is the attempt loop: gate, send, assess, and either finish or wait and
// go again.
func (c *call) run() (*http.Response, error) {
	defer c.disown()
	for {
		if c.attempts > 0 {
			c.now = c.clk.Now()
		}
		if err := c.gate(); err != nil {
			if c.attempts == 0 {
				closeBody(c.req)
			}
			return nil, err
		}
		resp, sent, err := c.send()
		var v verdict // an attempt that failed before it was sent (its body or signature) is not retried
		if sent {
			v = c.assess(resp, err)
		} else {
			c.unbook() // never sent: the service never counted it
			if err == errUnsent {
				v = c.assess(nil, err) // retried as an attempt that timed out
			}
		}
		again := v.again || (v.retry && c.mayRetry(v.delay))
		if again && !v.again && resp != nil {
			// The answer's body is read before the wait, and a service
			// may take up to the attempt's timeout to send it: the window
			// is asked again after it, and an answer not retried after
			// all goes to the caller whole.
			drain(resp)
			again = c.mayRetry(v.delay)
		}
		c.cacheRetryAfter(v, again)
		if again {
			discard(resp)
			if v.retry {
				c.emit(Event{Kind: EventRetry, Status: status(resp), Err: err, Wait: v.delay, Reason: retryReason(resp, err)})
				if err := c.sleep(v.delay); err != nil {
					return nil, err
				}
			}
			continue
		}
		return c.finish(resp, err, v)
	}
}

// remaining returns the time left in the call's retry window.
func (c *call) remaining(now time.Time) time.Duration {
	return c.start.Add(c.t.window()).Sub(now)
}

// maxWait returns the longest the call may wait before its next attempt: the
// wait must end inside its retry window (or the longer wait Policy.MaxWait
// allows; none with FailFast) and before its context deadline.
func (c *call) maxWait(now time.Time) time.Duration {
	if c.t.window() == 0 || c.pol.FailFast {
		return 0
	}
	w := c.remaining(now)
	if d := c.pol.MaxWait; d > 0 {
		w = max(w, c.start.Add(d).Sub(now)) // the call's own policy (Policy.MaxWait)
	}
	if dl, ok := c.ctx.Deadline(); ok {
		w = min(w, dl.Sub(now)-1)
	}
	return max(w, 0)
}

// canWait reports whether the call may wait d before its next attempt.
func (c *call) canWait(d time.Duration) bool { return d <= c.maxWait(c.now) }

// mayRetry applies XSAPI's rule: retry only with more than 5 s left in the
// window and at least delay + 5 s; never sleep past the context deadline.
func (c *call) mayRetry(delay time.Duration) bool {
	if !c.retries || requestCancelled(c.req) {
		return false
	}
	now := c.clk.Now()
	rem := c.remaining(now)
	if rem <= minRemaining || rem < delay+minRemaining {
		return false
	}
	dl, ok := c.ctx.Deadline()
	return !ok || now.Add(delay).Before(dl)
}

// requestCancelled reports whether req's caller gave up through the
// deprecated Request.Cancel channel, which net/http still honours: its
// attempt ended with "request canceled", and another would end so too.
func requestCancelled(req *http.Request) bool {
	//lint:ignore SA1019 net/http still honours the deprecated Cancel: a caller may give up through it
	if req.Cancel == nil {
		return false
	}
	select {
	//lint:ignore SA1019 as above
	case <-req.Cancel:
		return true
	default:
		return false
	}
}

// sleep waits d or until the call's context is done.
func (c *call) sleep(d time.Duration) error { return c.clk.Sleep(c.ctx, d) }

// retryReason says why a call retries, for its event.
func retryReason(resp *http.Response, err error) string {
	switch {
	case err == errUnsent:
		return "not sent: attempt timed out"
	case err != nil:
		return "network error"
	case resp == nil:
		return "no answer"
	}
	return "status " + strconv.Itoa(resp.StatusCode)
}
