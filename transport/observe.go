package transport

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
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
	// "status 503", "status 429", "network error" (the attempt failed,
	// or timed out, once sent), "not sent: attempt timed out" (its
	// timeout ended while it was made ready, its Signer or GetBody slow:
	// the service never saw it). A token refreshed after a 401 is sent
	// again at once, with no EventRetry (two EventAttempts tell it).
	EventRetry
	// EventWait: the call waits Wait before an attempt. Reason is "budget"
	// (the local budget), "background" (a background call waits for its
	// part of the budget, then asks again) or "retry-after" (a cached
	// Retry-After).
	EventWait
	// EventLocalRefusal: the call is refused without sending. Wait is the
	// Retry-After it gets; Reason is "budget" or "retry-after".
	EventLocalRefusal
	// EventShadowRefusal: in Shadow mode, the budget would have refused.
	EventShadowRefusal
	// EventServer429: the service answered 429. Wait is its Retry-After,
	// Body its body's fields when they parse.
	EventServer429
	// EventBudgetError: the shared budget store failed (Err) in the
	// operation Reason names ("reserve", "block", "sync", "snapshot"); a
	// local budget stood in for it.
	EventBudgetError
	// EventBudgetFallback: the shared store is out of use after failures,
	// and a local budget decided the call.
	EventBudgetFallback
	// EventRefreshFailed: after a 401, RefreshToken failed (Err) or gave
	// no token; the call returns its 401.
	EventRefreshFailed
	// EventLimitLearned: a learned limit changed (Transport.LearnedLimits).
	// A 429's body (Body) reported a limit other than the one the call
	// counted against: Reason says which and for whom, such as "burst 6 in
	// 15 s for this user until another confirms it (the limits data's 10)"
	// or "... for every user of the scope (confirmed) ..."; or a learned
	// limit ended, with no 429 to confirm it for throttle.LearnedFor (Body
	// nil, Reason "burst 6 expired for the scope: the limits data's 10");
	// or a read of a fleet's store (Transport.Budget) put its limit in
	// force, or ended one user's looser limit in its favour (Body nil,
	// Reason "burst 6 for every user of the scope, read from the shared
	// store (was 8; ...)"). Once per change.
	EventLimitLearned
	// EventCoalesced: with CoalesceReads, a GET was answered without a
	// request of its own: Reason "shared" (another call's request) or
	// "cache" (ReadCacheTTL).
	EventCoalesced
	numEventKinds
)

var eventNames = [numEventKinds]string{"", "attempt", "retry", "wait", "local_refusal", "shadow_refusal", "server_429", "budget_error", "budget_fallback", "refresh_failed", "limit_learned", "coalesced"}

// String returns the event's name: "attempt", "local_refusal", ...
func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// Event is one thing a Transport did for a call, for metrics and tracing
// (package fgrlotel turns them into OpenTelemetry metrics and span events).
// It names the service, never the user: no userhash, token or XUID (a
// 429's text and an error's are scrubbed of the users the request's URL
// names: its path's xuid(…), xuids(…), gt(…), gamertag(…) and XUIDs, its
// query's xuid, xuids, gt and gamertag; a 429's text of every number as
// long as an XUID).
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

// emit reports one thing call c did, the one way every site reports:
// Stats counts it, the Logger logs it and the Observe hook hears it.
func (c *call) emit(e Event) {
	if c.t.Logger != nil || c.t.Observe != nil {
		e.Scope, e.Class = c.scope(), c.class()
		if e.Attempt == 0 {
			e.Attempt = c.attempts
		}
	}
	c.t.emit(c.ctx, e, c)
}

// emit counts, logs and hands on an event; c is its call, nil for an event
// of the budget store alone. Attempts and store fallbacks, one per call, are
// logged at Debug, the rest at Info. Only the userhash names the user: the
// token is never logged.
func (t *Transport) emit(ctx context.Context, e Event, c *call) {
	if e.Kind < numEventKinds && !(e.Kind == EventLimitLearned && e.Body == nil) { // a learned limit's end is no limit learned
		t.stats[e.Kind].Add(1)
	}
	if t.Logger != nil {
		level := slog.LevelInfo
		if e.Kind == EventAttempt || e.Kind == EventBudgetFallback || e.Kind == EventCoalesced {
			level = slog.LevelDebug
		}
		if t.Logger.Enabled(ctx, level) {
			t.Logger.LogAttrs(ctx, level, "fgrl: "+e.Kind.String(), e.attrs(c)...)
		}
	}
	if t.Observe != nil {
		t.Observe(ctx, e)
	}
}

// userText is a key's user as a log or LearnedLimits shows it: a userhash
// (xblauth.UserHash), or REDACTED for anything else a client sent before
// the ';' of its Authorization, which may be its token.
func userText(user string) string {
	if user == "" || xblauth.UserHash(user) {
		return user
	}
	return xblauth.Redacted
}

// eventScope is a key's scope as an Event names it: "" for a host no rule
// covers (the key's "host:" and the host), as a call's own events name it,
// so that an observer's series stay those of the limits data.
func eventScope(scope string) string {
	if strings.HasPrefix(scope, "host:") {
		return ""
	}
	return scope
}

// attrs are an event's log fields: the call's request and key, then the
// event's own fields that are set.
func (e *Event) attrs(c *call) []slog.Attr {
	a := []slog.Attr{slog.String("scope", e.Scope)}
	if c != nil {
		a = append(a, slog.String("method", safetext.Clip(c.req.Method, 64)), slog.String("host", safetext.Clip(c.req.URL.Host, 256)), slog.String("user", userText(c.key.User)))
	}
	if e.Status != 0 {
		a = append(a, slog.Int("status", e.Status))
	}
	if e.Wait != 0 {
		a = append(a, slog.Duration("wait", e.Wait))
	}
	if e.Reason != "" {
		a = append(a, slog.String("reason", e.Reason))
	}
	if e.Err != nil {
		a = append(a, slog.String("error", safetext.Clip(errText(e.Err), 1024))) // a server's text may be quoted whole (net/http's malformed status)
	}
	return a
}

// errText is an error as the log shows it: the URL of a *url.Error in its
// chain (a Base that wraps its failures as http.Client does quotes the
// request's URL whole) as xblauth.RedactURL shows it, without user info
// or credentials in its query.
func errText(err error) string {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		if red := xblauth.RedactURL(ue.URL); red != ue.URL {
			msg = strings.ReplaceAll(msg, strconv.Quote(ue.URL), strconv.Quote(red))
			msg = strings.ReplaceAll(msg, ue.URL, red)
		}
	}
	return msg
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
	keep(resp, b)
	return parse429(b, err, resp.Request)
}
