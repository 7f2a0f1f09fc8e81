package transport

import "context"

type noRetryKey struct{}

// NoRetry returns a context that makes the transport send its request once,
// without retries, as XSAPI does for calls that are not idempotent (write
// session, send invites, create match ticket, reputation feedback). The
// budget and the Retry-After cache still apply.
func NoRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRetryKey{}, true)
}

func noRetry(ctx context.Context) bool {
	v, _ := ctx.Value(noRetryKey{}).(bool)
	return v
}

type ruleKey struct{}

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
	return context.WithValue(ctx, ruleKey{}, scope)
}

func namedRule(ctx context.Context) string {
	s, _ := ctx.Value(ruleKey{}).(string)
	return s
}

type boundBodyKey struct{}

// BoundBody returns a context that makes the per-attempt timeout cover the
// whole response, body included, as XSAPI's does, for a caller that reads
// the body in full at once (the typed client does). Without it the timeout
// stops when the headers arrive and a 200 body streams at the caller's pace,
// bounded only by the request's own context.
func BoundBody(ctx context.Context) context.Context {
	return context.WithValue(ctx, boundBodyKey{}, true)
}

func boundBody(ctx context.Context) bool {
	v, _ := ctx.Value(boundBodyKey{}).(bool)
	return v
}
