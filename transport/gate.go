package transport

import (
	"math"
	"net/http"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// gate runs before every attempt: the Retry-After cache, then the budget.
// It waits when the call may, and otherwise returns the refusal.
func (c *call) gate() error {
	c.booked, c.paired = throttle.Limit{}, 0
	if err := c.gateCache(); err != nil {
		return err
	}
	if c.limit == (throttle.Limit{}) || c.t.DisableBudget {
		return nil
	}
	if err := c.ctx.Err(); err != nil {
		return err // a call that has ended books nothing
	}
	return c.gateBudget()
}

// gateCache applies XSAPI's fail-fast rule: while a cached Retry-After for
// the key runs, one call may wait for it (if it ends within that call's
// window and deadline); every other call fails at once, sending nothing.
func (c *call) gateCache() error {
	c.disown() // this call is the pending one: it is about to send
	wait, status, ok := c.t.cache.pending(c.key, c.now)
	if !ok {
		return nil
	}
	// A background call waits without the one place to wait (claim): an
	// interactive call that comes after takes it, rather than be refused
	// for a call that yields to it. After the wait the budget's background
	// share still paces it (gateBackground).
	background := c.pol.Priority == Background
	if c.canWait(wait) && (background || c.t.cache.claim(c.key)) {
		c.ownsCache = !background // released when this call sends again, or ends
		err := c.waitFor(wait, "retry-after")
		c.disown()
		return err
	}
	c.emit(Event{Kind: EventLocalRefusal, Wait: wait, Status: status, Reason: "retry-after"})
	return &ThrottleError{Status: status, Wait: wait, Local: true, Sent: c.attempts > 0, Scope: c.scope()}
}

// gateBudget books the attempt's slot in the local budget, waiting for it when
// it comes within the call's window and deadline, and refuses it otherwise.
// Booking (rather than waking up to race for a slot) serves waiting calls in
// turn.
func (c *call) gateBudget() error {
	if c.pol.Priority == Background {
		return c.gateBackground()
	}
	a, wait, may := c.reserve(c.limit, false)
	for !a.Allowed && may && !c.t.Shadow {
		// A refusal the call can wait out: a shared store's booking held
		// to a report of the key it lacks yet (failover.stricter), which
		// a booking after the wait finds there. The call waits and asks
		// again, as a background call does.
		if err := c.waitFor(wait, "budget"); err != nil {
			return err
		}
		a, wait, may = c.reserve(c.limit, false)
	}
	switch {
	case a.Allowed:
		return c.book(c.limit, a.Slot, wait, "budget")
	case c.t.Shadow:
		return c.shadowRefusal(wait)
	}
	return c.refuseBudget(wait)
}

// shadowRefusal reports the refusal Shadow mode does not enforce, and lets
// the call go unbooked, unless its context has ended meanwhile (a slow
// store's answer).
func (c *call) shadowRefusal(wait time.Duration) error {
	c.emit(Event{Kind: EventShadowRefusal, Wait: wait, Reason: "budget"})
	return c.ctx.Err()
}

// book keeps the slot the budget admitted the call to, of limit l, once
// the wait left before it is over; when the call's context ends first,
// the call will not be sent: the slot goes back, so that the budget keeps
// counting what the service counts, and the call ends with its context's
// error. The release is given within that context all the same, and a
// shared store that fails it so is owed it (failover). A context that
// had ended while the budget answered is the attempt's to read (send),
// which then gives the booking back (unbook).
func (c *call) book(l throttle.Limit, slot int64, wait time.Duration, reason string) error {
	if wait > 0 {
		if err := c.waitFor(wait, reason); err != nil {
			c.release(l, slot)
			return err
		}
	}
	c.booked, c.slot = l, slot
	return nil
}

// release gives back the budget's booking slot of limit l, and the local
// store's booking kept beside it, if any (c.paired, failover.reserve).
func (c *call) release(l throttle.Limit, slot int64) {
	c.t.budget.Release(c.ctx, c.key, l, slot)
	if c.paired != 0 {
		c.t.budget.(*failover).local.Release(c.ctx, c.key, l, c.paired)
		c.paired = 0
	}
}

// unbook gives back the slot the budget booked for the last attempt, which
// the service did not count: it was never sent, or the service answered
// 401, refusing a token that names nobody it can count a call against (a
// token expired, or made up with another user's userhash: that user's
// budget is not spent by it). The mock, as the services, authenticates
// before it counts, and counts no 401.
func (c *call) unbook() {
	if c.booked == (throttle.Limit{}) {
		return
	}
	c.release(c.booked, c.slot)
	c.booked = throttle.Limit{}
}

// refuseBudget refuses the call for its budget: the service would answer
// 429 for wait yet.
func (c *call) refuseBudget(wait time.Duration) error {
	c.emit(Event{Kind: EventLocalRefusal, Wait: wait, Status: http.StatusTooManyRequests, Reason: "budget"})
	return &ThrottleError{Status: http.StatusTooManyRequests, Wait: wait, Local: true, Sent: c.attempts > 0, Scope: c.scope()}
}

// gateBackground admits a background call only now, within the limits less
// the interactive share, so it never holds a future slot an interactive
// call would queue behind; while that share is spent it waits and asks
// again (yielding to whoever came meanwhile), as long as its window and
// deadline allow.
func (c *call) gateBackground() error {
	l := c.t.backgroundLimit(c.limit)
	for {
		a, wait, may := c.reserve(l, true)
		switch {
		case a.Allowed:
			return c.book(l, a.Slot, wait, "background")
		case c.t.Shadow:
			return c.shadowRefusal(wait)
		case !may:
			return c.refuseBudget(wait)
		}
		if err := c.waitFor(wait, "background"); err != nil {
			return err
		}
	}
}

// reserve books a slot of limit l for the call: within the wait the
// call's window and deadline allow from its time, or, for a background
// call, only at that time. It returns the budget's answer, the wait left
// of it, and whether the call may wait the answer's wait: whether the
// instant it names lies within that window and deadline. A wait counts
// from the time the call asked at: when the answer took a while (a shared
// store under load), the call's time is read again and the wait left is
// that much shorter (zero once the instant has passed), so that the call
// goes at the instant booked, never past its window or deadline by the
// store's delay. The budget never fails: a shared store fails over to a
// local one.
func (c *call) reserve(l throttle.Limit, background bool) (a throttle.Admission, wait time.Duration, may bool) {
	maxWait := c.maxWait(c.now)
	ask := maxWait
	if background {
		ask = 0
	}
	if f, ok := c.t.budget.(*failover); ok {
		a, c.paired = f.reserve(c.ctx, c.key, l, c.now, ask)
	} else {
		a, _ = c.t.budget.Reserve(c.ctx, c.key, l, c.now, ask)
	}
	if a.Allowed && a.Wait > ask {
		// A store that booked past what it was asked (a BudgetStore
		// books only within maxWait): its booking is given back and
		// read as the refusal it should have been.
		c.release(l, a.Slot)
		a = throttle.Admission{Wait: a.Wait, Blocked: a.Blocked}
	}
	if a.Wait <= 0 {
		return a, 0, false // nothing to wait out: a refusal without a wait is final
	}
	now := c.clk.Now()
	wait = max(a.Wait-now.Sub(c.now), 0)
	c.now = now
	return a, wait, a.Wait <= maxWait
}

// waitFor waits d before the call's next booking or attempt (an EventWait
// saying why, when d is not zero), or until its context is done, and reads
// the call's time again.
func (c *call) waitFor(d time.Duration, reason string) error {
	if d > 0 {
		c.emit(Event{Kind: EventWait, Wait: d, Reason: reason})
	}
	err := c.sleep(d)
	c.now = c.clk.Now()
	return err
}

// backgroundLimit is l less the share kept for interactive calls: each
// limit loses its share rounded up, keeping at least one call.
func (t *Transport) backgroundLimit(l throttle.Limit) throttle.Limit {
	share := t.InteractiveShare
	switch {
	case share < 0:
		return l
	case share == 0:
		share = DefaultInteractiveShare
	}
	return perWindow(l, func(n int) int { return n - min(int(math.Ceil(float64(n)*min(share, 1))), n-1) })
}

// cacheRetryAfter records an attempt's Retry-After for the key, marked "call
// pending" when this call will itself retry at it (libHttpClient
// HC_CALL::ShouldRetry writes the entry with callPending = shouldRetry).
func (c *call) cacheRetryAfter(v verdict, retrying bool) {
	if v.cacheUntil.IsZero() {
		return
	}
	pending := retrying && !v.again
	c.t.cache.store(c.key, c.clk.Now(), v.cacheUntil, v.status, pending)
	c.ownsCache = c.ownsCache || pending
}

// disown releases the "call pending" mark this call holds, if any.
func (c *call) disown() {
	if c.ownsCache {
		c.ownsCache = false
		c.t.cache.release(c.key)
	}
}
