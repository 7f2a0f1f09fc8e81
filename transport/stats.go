package transport

import (
	"cmp"
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/limits"
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
	LimitsLearned  int64 // limits learned from 429 bodies that differ from the one the call counted against, the data's or a learned one (LearnedLimits lists them); their ends are not counted
	Coalesced      int64 // GETs answered by another call's request or the read cache (CoalesceReads)
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
		LimitsLearned: s[EventLimitLearned].Load(), Coalesced: s[EventCoalesced].Load(),
	}
}

// Snapshot returns the local budget of a key: used, limit and reset for
// both windows. k.User is a userhash (of a call's Authorization), k.Scope a
// scope of the limits data ("profile", "presence/write"), and an empty
// k.Title means the Transport's TitleID.
func (t *Transport) Snapshot(k throttle.Key) (throttle.Snapshot, error) {
	return t.snapshot(context.Background(), k)
}

// ruleByScope is the rule of a key's scope, as Snapshot and NewTicker take
// it from their caller.
func (t *Transport) ruleByScope(scope string) (*limits.Rule, error) {
	t.init()
	rule, ok := t.limits.ByScope(scope)
	if !ok {
		return nil, &usageError{"no rule has scope " + safetext.Quote(scope, 64)}
	}
	return rule, nil
}

// snapshot is Snapshot with the context of the store's call.
func (t *Transport) snapshot(ctx context.Context, k throttle.Key) (throttle.Snapshot, error) {
	rule, err := t.ruleByScope(k.Scope)
	if err != nil {
		return throttle.Snapshot{}, err
	}
	k.Title, k.Scope = cmp.Or(k.Title, t.TitleID), rule.Scope()
	now := time.Now()
	return t.budget.Snapshot(ctx, k, t.share(t.limitOf(ctx, k, rule.ClientLimit(), now)), now)
}

// BudgetLeft returns what is left, now, of the budget of the call that got
// resp: the windows of its user and scope (what is used of burst and
// sustain, their limits and when each frees a call), the server's
// Retry-After deadline and the wait before the next call. An app reads it
// after a call to pace the next ones; the mock's RateLimit headers say
// the same from the service's side.
func (t *Transport) BudgetLeft(resp *http.Response) (throttle.Snapshot, error) {
	if resp == nil || resp.Request == nil {
		return throttle.Snapshot{}, &usageError{"BudgetLeft needs a response of this transport"}
	}
	req := resp.Request
	host := cmp.Or(req.Host, req.URL.Host)
	rule, ok := t.ruleFor(req, host, t.policyFor(req.Context()).Rule)
	if !ok {
		return throttle.Snapshot{}, &usageError{"no rule of the limits covers " + safetext.Quote(host, 64)}
	}
	uhs := xblauth.UserHashOf(headerFold(req.Header, "Authorization"))
	return t.Snapshot(throttle.Key{User: uhs, Scope: rule.Scope()})
}
