package transport

import (
	"context"
	"time"
)

// NoRetry returns a context that makes the transport send its request once,
// without retries, as XSAPI does for calls that are not idempotent (write
// session, send invites, create match ticket, reputation feedback). The
// budget and the Retry-After cache still apply.
func NoRetry(ctx context.Context) context.Context {
	return withPolicy(ctx, func(p *Policy) { p.noRetry = true })
}

// WithRule returns a context that makes the transport count its request
// against the limits rule whose Scope is scope (such as
// "mpsd-search-handle/write"), instead of the rule its method, host and path
// match. It is for calls that a path cannot tell apart: creating a search
// handle and sending an invite are both POST /handles, but count against
// different limits. The typed client names the rule of every call it makes.
// When the transport's Limits have no rule of that scope, or the rule does
// not cover the request's host, path matching decides, as it does for a
// request without this context.
func WithRule(ctx context.Context, scope string) context.Context {
	return withPolicy(ctx, func(p *Policy) { p.rule = scope })
}

// BoundBody returns a context that makes the per-attempt timeout cover the
// whole response, body included, as XSAPI's does, for a caller that reads
// the body in full at once (the typed client does). Without it the timeout
// stops when the headers arrive and a 200 body streams at the caller's pace,
// bounded only by the request's own context.
func BoundBody(ctx context.Context) context.Context {
	return withPolicy(ctx, func(p *Policy) { p.boundBody = true })
}

// Per-call policy: how long a call may wait for budget, and how long an
// attempt may take.
const (
	// MaxPolicyWait caps WithMaxWait: a sustain window (300 s), the longest
	// any budget of the limits needs to free a call.
	MaxPolicyWait = 300 * time.Second
	// LongCallTimeout is XSAPI's long HTTP timeout
	// (XblContextSettingsSetLongHttpTimeout's default), for calls that
	// move much data, such as title storage uploads.
	LongCallTimeout = 5 * time.Minute
)

// WithMaxWait returns a context that lets the call wait for its budget (or
// a server's Retry-After) up to d from its start, past the retry window:
// a background job's "sleep until the limit resets" instead of a local
// refusal. d is capped at MaxPolicyWait; the context's own deadline still
// ends the call. Retries keep XSAPI's 20 s window.
func WithMaxWait(ctx context.Context, d time.Duration) context.Context {
	return withPolicy(ctx, func(p *Policy) { p.maxWait = min(max(d, 0), MaxPolicyWait) })
}

// FailFast returns a context that makes the call never wait: a call the
// budget or a cached Retry-After would hold is refused locally at once
// (a *ThrottleError with Local), and a failed attempt is not retried, for
// an interactive call that would rather show "try again" than stall.
func FailFast(ctx context.Context) context.Context {
	return withPolicy(ctx, func(p *Policy) { p.failFast = true })
}

// LongCall returns a context that gives each attempt of the call XSAPI's
// long timeout (LongCallTimeout, 5 min) instead of the 5 to 30 s of the
// retry window, for calls that move much data (title storage uploads).
func LongCall(ctx context.Context) context.Context {
	return withPolicy(ctx, func(p *Policy) { p.longCall = true })
}

// Background returns a context that makes the call a background one: it
// never takes the share of its key's burst and sustain kept for interactive
// calls (Transport.InteractiveShare), and it books no future slot, so an
// interactive call of the same user and service never queues behind it.
// While its share is spent it waits (within its window, or WithMaxWait's)
// and tries again, yielding to any call that came meanwhile. Calls are
// interactive unless marked.
func Background(ctx context.Context) context.Context {
	return withPolicy(ctx, func(p *Policy) { p.background = true })
}

// Policy is everything a request's context asks of its call: what the
// options above set, one value under one context key, which a call reads
// once. It is comparable: two calls whose contexts carry equal Policies are
// treated alike, which is what code merging several callers' calls into one
// request must know (the client merges lookups into a batch only when their
// Policies are equal). The zero value is the policy of a context that sets
// none.
type Policy struct {
	noRetry, boundBody, failFast, longCall, background bool
	maxWait                                            time.Duration
	rule                                               string // WithRule's scope
}

type policyKey struct{}

// PolicyOf returns the Policy ctx carries; the zero Policy when none.
func PolicyOf(ctx context.Context) Policy {
	p, _ := ctx.Value(policyKey{}).(Policy)
	return p
}

// withPolicy returns ctx with its policy changed by set.
func withPolicy(ctx context.Context, set func(*Policy)) context.Context {
	p := PolicyOf(ctx)
	set(&p)
	return context.WithValue(ctx, policyKey{}, p)
}
