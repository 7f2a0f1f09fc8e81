package transport

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// Stats counts what a Transport did since it was created.
type Stats struct {
	Attempts       int64 // requests sent to Base, retries included
	Retries        int64 // attempts after the first, backoff waits included
	Waits          int64 // waits before an attempt (budget or cached Retry-After)
	LocalRefusals  int64 // calls refused without sending (budget or cache)
	Server429s     int64 // 429 answers received
	ShadowRefusals int64 // calls the budget would have refused (Shadow mode)
	BudgetErrors   int64 // failures of the shared budget store (calls then use a local one)
}

type counters struct {
	attempts, retries, waits, localRefusals, server429s, shadowRefusals, budgetErrors atomic.Int64
}

// Stats returns the counters.
func (t *Transport) Stats() Stats {
	s := &t.stats
	return Stats{
		Attempts: s.attempts.Load(), Retries: s.retries.Load(), Waits: s.waits.Load(),
		LocalRefusals: s.localRefusals.Load(), Server429s: s.server429s.Load(),
		ShadowRefusals: s.shadowRefusals.Load(), BudgetErrors: s.budgetErrors.Load(),
	}
}

// Snapshot returns the local budget of one user (the userhash of its
// Authorization) for one scope of the limits data ("profile",
// "presence/write"): used, limit and reset for both windows.
func (t *Transport) Snapshot(userhash, scope string) (throttle.Snapshot, error) {
	t.init()
	rule, ok := t.limits.ByScope(scope)
	if !ok {
		return throttle.Snapshot{}, &usageError{"no rule has scope " + scope}
	}
	k := throttle.Key{User: userhash, Title: t.TitleID, Scope: rule.Scope()}
	return t.budget.Snapshot(context.Background(), k, rule.Limit(), time.Now())
}

// log records an event for the call. Only the userhash identifies the user:
// the token is never logged.
func (t *Transport) log(msg string, c *call, args ...any) {
	if t.Logger == nil {
		return
	}
	base := []any{"method", c.req.Method, "host", c.req.URL.Host, "scope", c.key.Scope, "user", c.key.User}
	t.Logger.Info("fgrl: "+msg, append(base, args...)...)
}
