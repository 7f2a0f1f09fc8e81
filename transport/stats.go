package transport

import (
	"cmp"
	"context"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
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

// Snapshot returns the local budget of a key: used, limit and reset for
// both windows. k.User is a userhash (of a call's Authorization), k.Scope a
// scope of the limits data ("profile", "presence/write"), and an empty
// k.Title means the Transport's TitleID.
func (t *Transport) Snapshot(k throttle.Key) (throttle.Snapshot, error) {
	t.init()
	rule, ok := t.limits.ByScope(k.Scope)
	if !ok {
		return throttle.Snapshot{}, &usageError{"no rule has scope " + safetext.Quote(k.Scope, 64)}
	}
	k.Title, k.Scope = cmp.Or(k.Title, t.TitleID), rule.Scope()
	return t.budget.Snapshot(context.Background(), k, rule.Limit(), time.Now())
}
