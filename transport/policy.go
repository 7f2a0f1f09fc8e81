package transport

import (
	"context"
	"time"
)

// Bounds of a Policy.
const (
	// MaxPolicyWait caps Policy.MaxWait: a sustain window (300 s), the
	// longest any budget of the limits needs to free a call.
	MaxPolicyWait = 300 * time.Second
	// LongCallTimeout is XSAPI's long HTTP timeout
	// (XblContextSettingsSetLongHttpTimeout's default), for calls that
	// move much data, such as title storage uploads; it also caps
	// Policy.AttemptTimeout.
	LongCallTimeout = 5 * time.Minute
)

// Priority tells interactive calls from background ones. The zero
// Priority leaves the choice to the policy beneath (a call is
// interactive unless marked).
type Priority uint8

// The priorities.
const (
	// Interactive: a call someone waits for. It may take the share of each
	// key's limits kept for interactive calls (Transport.InteractiveShare).
	Interactive Priority = iota + 1
	// Background: a call no one waits for. It never takes the share kept
	// for interactive calls, and it books no future slot, so an
	// interactive call of the same user and service never queues behind
	// it; while its share is spent it waits (within MaxWait) and asks
	// again, yielding to any call that came meanwhile. While a service's
	// Retry-After runs it waits for it without taking the one place to
	// wait for it (XSAPI's fail-fast rule), which an interactive call
	// that comes after may still take.
	Background
)

// Policy is how the transport treats a call: how long it may wait for its
// budget, whether it is retried, how long each attempt may take, its
// priority and the limits rule it counts against. The zero Policy is
// XSAPI's: waits and retries within the 20 s retry window, XSAPI's attempt
// timeout, interactive, the rule its method, host and path match.
//
// A call's policy is the Transport's Policy with each field its context's
// Policy sets (WithPolicy) in its place; a zero field sets nothing. So a
// per-call policy can add to the Transport's default (wait longer, fail
// fast, send once, mark a priority, name a rule) but not clear a flag the
// default sets. A Policy is comparable: two calls whose contexts carry
// equal Policies are treated alike.
type Policy struct {
	// MaxWait lets the call wait for its budget (or a server's
	// Retry-After) up to this long from its start, past the retry window:
	// a background job's "sleep until the limit resets" instead of a local
	// refusal. At most MaxPolicyWait; the context's own deadline still
	// ends the call, and retries keep XSAPI's 20 s window. A wait is
	// measured from when the call asked its budget: a shared store slow to
	// answer shortens it rather than pushing the call past its bound.
	MaxWait time.Duration
	// FailFast makes the call never wait: a call the budget or a cached
	// Retry-After would hold is refused locally at once (a *ThrottleError
	// with Local), and a failed attempt is not retried, for an interactive
	// call that would rather show "try again" than stall. MaxWait is then
	// ignored.
	FailFast bool
	// NoRetry sends the call once, without retries, as XSAPI sends calls
	// that are not idempotent (write session, send invites, create match
	// ticket, reputation feedback). The budget and the Retry-After cache
	// still apply: it may wait before its one attempt.
	NoRetry bool
	// AttemptTimeout bounds each attempt: zero means XSAPI's (the time left
	// in the retry window, 5 to 30 s); LongCallTimeout is XSAPI's long
	// timeout for calls that move much data. At most LongCallTimeout.
	AttemptTimeout time.Duration
	// Priority marks the call interactive or background.
	Priority Priority
	// Rule makes the call count against the limits rule whose Scope it
	// names (such as "mpsd-search-handle/write"), instead of the rule its
	// method, host and path match: for calls that a path cannot tell
	// apart (creating a search handle and sending an invite are both POST
	// /handles, but count against different limits). The typed client
	// names the rule of every call it makes. When the transport's Limits
	// have no rule of that scope, or the rule does not cover the request's
	// host, path matching decides.
	Rule string
	// BoundBody makes the attempt timeout cover the whole response, body
	// included, as XSAPI's does, for a caller that reads the body in full
	// at once (the typed client does). Without it the timeout stops when
	// the headers arrive and a 200 body streams at the caller's pace,
	// bounded only by the request's own context.
	BoundBody bool
}

// over returns p with each field o sets in its place.
func (p Policy) over(o Policy) Policy {
	if o.MaxWait != 0 {
		p.MaxWait = o.MaxWait
	}
	if o.AttemptTimeout != 0 {
		p.AttemptTimeout = o.AttemptTimeout
	}
	if o.Priority != 0 {
		p.Priority = o.Priority
	}
	if o.Rule != "" {
		p.Rule = o.Rule
	}
	p.FailFast = p.FailFast || o.FailFast
	p.NoRetry = p.NoRetry || o.NoRetry
	p.BoundBody = p.BoundBody || o.BoundBody
	return p
}

// bounded is p with its durations within their bounds.
func (p Policy) bounded() Policy {
	p.MaxWait = min(max(p.MaxWait, 0), MaxPolicyWait)
	p.AttemptTimeout = min(max(p.AttemptTimeout, 0), LongCallTimeout)
	return p
}

type policyKey struct{}

// WithPolicy returns a context whose calls follow p: the context's
// policy, if it has one, with each field p sets in its place (so that
// layers of code can each add what they know: the typed client names the
// rule, the caller the priority), its durations within their bounds (a
// negative one is zero: it sets nothing).
func WithPolicy(ctx context.Context, p Policy) context.Context {
	return context.WithValue(ctx, policyKey{}, PolicyOf(ctx).over(p).bounded())
}

// PolicyOf returns the Policy ctx carries (WithPolicy); the zero Policy
// when none. The Transport's own Policy is not part of it.
func PolicyOf(ctx context.Context) Policy {
	p, _ := ctx.Value(policyKey{}).(Policy)
	return p
}

// policyFor returns the policy of a call made with ctx: the Transport's
// Policy with the context's in its place, within its bounds.
func (t *Transport) policyFor(ctx context.Context) Policy {
	return t.Policy.over(PolicyOf(ctx)).bounded()
}
