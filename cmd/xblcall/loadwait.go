package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// waiting is what a load run waits for: the latest end of the waits the
// transport reported (its Observe hook), their scope and reason, so that
// the progress says when and why the run stands still. It is safe for
// concurrent use.
type waiting struct {
	mu     sync.Mutex
	until  time.Time
	scope  string
	reason string // transport.Event.Reason of a wait: "budget", "background" or "retry-after"
}

// observe hears the transport's events and keeps the wait that ends last.
func (w *waiting) observe(_ context.Context, ev transport.Event) {
	if ev.Kind != transport.EventWait {
		return
	}
	until := time.Now().Add(ev.Wait)
	w.mu.Lock()
	defer w.mu.Unlock()
	if until.After(w.until) {
		w.until, w.scope, w.reason = until, ev.Scope, ev.Reason
	}
}

// say is the wait running at now in words, such as "waiting 12 s for
// presence/read's burst window", or "" when none runs. snap reads the
// budget of the run's key: the window that is full is the one waited
// for; when neither is full at now (the waits book slots ahead of now), a
// wait past a burst window and its margin is the sustain window's.
func (w *waiting) say(now time.Time, snap func() (throttle.Snapshot, error)) string {
	w.mu.Lock()
	until, scope, reason := w.until, w.scope, w.reason
	w.mu.Unlock()
	left := until.Sub(now)
	if left <= 0 {
		return ""
	}
	secs := int64(math.Ceil(left.Seconds()))
	who := safetext.Clip(scope, 40)
	if who == "" {
		who = "the service"
	}
	if reason == "retry-after" {
		return fmt.Sprintf("waiting %d s for %s's Retry-After", secs, who)
	}
	window := "burst"
	if s, err := snap(); err == nil && s.Sustain.Limit > 0 && s.Sustain.Count >= s.Sustain.Limit ||
		left > throttle.BurstPeriod+throttle.DefaultMargin {
		window = "sustain"
	}
	share := ""
	if reason == "background" {
		share = " (the background share)"
	}
	return fmt.Sprintf("waiting %d s for %s's %s window%s", secs, who, window, share)
}

// budgetOf reads the budget of req's key in t, for waiting.say.
func budgetOf(t *transport.Transport, req *http.Request) func() (throttle.Snapshot, error) {
	return func() (throttle.Snapshot, error) { return t.BudgetLeft(&http.Response{Request: req}) }
}
