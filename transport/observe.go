package transport

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/xblgo/fgrl/ratelimit"
)

// EventKind names what an Event reports.
type EventKind uint8

// The events a Transport reports to its Observe hook.
const (
	// EventAttempt: an attempt's answer arrived, or it failed. Attempt,
	// Status or Err, Duration (until the answer's headers).
	EventAttempt EventKind = iota + 1
	// EventRetry: the call will send again after Wait. Reason says why:
	// "status 503", "status 429", "network error", "token refreshed".
	EventRetry
	// EventWait: the call waits Wait before an attempt. Reason is "budget"
	// (the local budget) or "retry-after" (a cached Retry-After).
	EventWait
	// EventLocalRefusal: the call is refused without sending. Wait is the
	// Retry-After it gets; Reason is "budget" or "retry-after".
	EventLocalRefusal
	// EventShadowRefusal: in Shadow mode, the budget would have refused.
	EventShadowRefusal
	// EventServer429: the service answered 429. Wait is its Retry-After,
	// Body its body's fields when they parse.
	EventServer429
	// EventBudgetError: the shared budget store failed (Err); the call's
	// decision fell back to a local budget.
	EventBudgetError
	// EventBudgetFallback: the shared store is out of use after failures,
	// and a local budget decided the call.
	EventBudgetFallback
)

var eventNames = [...]string{"", "attempt", "retry", "wait", "local_refusal", "shadow_refusal", "server_429", "budget_error", "budget_fallback"}

// String returns the event's name: "attempt", "local_refusal", ...
func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// Event is one thing a Transport did for a call, for metrics and tracing
// (package fgrlotel turns them into OpenTelemetry metrics and span events).
// It names the service, never the user: no userhash, token or XUID.
type Event struct {
	Kind     EventKind
	Scope    string // the rule's scope ("profile", "presence/write"); "" for a host without a rule
	Class    string // "read" or "write"
	Attempt  int    // the attempt's number, from 1
	Status   int    // the answer's status, or 0
	Err      error
	Wait     time.Duration
	Duration time.Duration
	Reason   string
	Body     *ratelimit.Body // a 429's body, when it parses
}

// observe reports an event of call c when an Observe hook is set.
func (c *call) observe(e Event) {
	if c.t.Observe == nil {
		return
	}
	e.Scope, e.Class = c.scope(), c.class()
	if e.Attempt == 0 {
		e.Attempt = c.attempts
	}
	c.t.Observe(c.ctx, e)
}

// class returns "read" or "write": the rule's class when it has one, else
// what the method says.
func (c *call) class() string {
	if c.rule != nil && (c.rule.Class == "read" || c.rule.Class == "write") {
		return c.rule.Class
	}
	switch c.req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return "read"
	}
	return "write"
}

// peek429 reads a 429's body for its event, leaving the body readable.
func peek429(resp *http.Response) *ratelimit.Body {
	b, err := io.ReadAll(io.LimitReader(resp.Body, ratelimit.MaxBodySize+1))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), rest), rest}
	return parse429(b, err)
}

// observeStore reports a shared-store event for a budget decision.
func (t *Transport) observeStore(ctx context.Context, scope string, kind EventKind, err error) {
	if t.Observe != nil {
		t.Observe(ctx, Event{Kind: kind, Scope: scope, Err: err, Reason: kind.String()})
	}
}
