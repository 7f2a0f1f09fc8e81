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

// counters counts each kind of event (Transport.emit).
type counters [numEventKinds]atomic.Int64

// Stats returns the counters.
func (t *Transport) Stats() Stats {
	s := &t.stats
	return Stats{
		Attempts: s[EventAttempt].Load(), Retries: s[EventRetry].Load(), Waits: s[EventWait].Load(),
		LocalRefusals: s[EventLocalRefusal].Load(), Server429s: s[EventServer429].Load(),
		ShadowRefusals: s[EventShadowRefusal].Load(), BudgetErrors: s[EventBudgetError].Load(),
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
