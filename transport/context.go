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
