package mock

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// The pipeline: every request passes through these stages, in this order,
// and each either answers it or hands it on (docs/ARCHITECTURE.md, "A
// request through the mock", names the file of each):
//
//  1. script: a rule of the script that matches answers it, uncounted
//     unless the rule counts (scripted, script.go);
//  2. identify: a sign-in host goes to the sign-in service (signIn.serve),
//     the RTA host to the RTA service (serveRTA: it authenticates, and its
//     websocket is not counted, as the real service's is not); the title's
//     endpoints (NSAL) without a token or a limits rule are answered
//     uncounted (nsal.go); any other request to the limits rule of its host
//     and path, or 404 uncounted;
//  3. authenticate: a token Token minted, or an X-token of the service
//     sign-in on a request signed with its proof key; else 401 or 403
//     uncounted (authenticate, token.go; boundIdentity, s2sauth.go);
//  4. route: the service's route for the method and path, or 404 or 405
//     uncounted (matchRoute);
//  5. count: FGRL counts it against its user + title + scope, and past a
//     limit refuses it with 429 (count);
//  6. faults: the faults in force may answer it, delay it or cut it short
//     (fault, faults.go);
//  7. answer: its service answers, from the world;
//  8. record: whatever happened, aborted answers included, it becomes one
//     Call in the journal, from which the log, the counters and the live
//     page are derived (record).

// exchange is one request going through the pipeline: the call its
// service answers, and what the stages learn of it for its record.
type exchange struct {
	call
	sw       statusWriter
	body     capture
	answered bool // the pipeline returned, and wrote its answer or had a client to: not aborted
	scope    string
	script   string // the script rule that answered
	counts   throttle.Counts
	wait     time.Duration
	fault    faultKind
	flags    outcome
	ws       wsRecord // a websocket's messages (serveRTA)
}

// ServeHTTP passes the request through the pipeline: it is counted against
// its user + title + service and either refused (429) or served, and
// recorded (Calls).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x, _ := h.exchanges.Get().(*exchange)
	if x == nil {
		x = new(exchange)
	}
	// Back for the next request once recorded (the defers run in
	// reverse): nothing holds x past its request, whose stages all return
	// before ServeHTTP does (an RTA connection's too), and its record is
	// a copy. It goes back empty: a pool keeps what it holds through a
	// collection, and the request's (its context, its body) would stay
	// alive with it.
	defer func() {
		*x = exchange{}
		h.exchanges.Put(x)
	}()
	x.call = call{r: r, maxBody: h.cfg.maxBody}
	x.sw.ResponseWriter = w
	x.w = &x.sw
	if r.Body != nil && r.Body != http.NoBody {
		own := r.Body
		x.body.ReadCloser = own
		r.Body = &x.body
		// The server's own body back when the handler returns, so that
		// net/http tells what was left unread (ConnLimits.Apply).
		defer func() { r.Body = own }()
	}
	defer h.record(x, time.Now())
	h.serve(x)
	// A stage that wrote nothing once its client had gone (a hang or a
	// latency it gave up on) answered no one.
	x.answered = x.sw.status != 0 || r.Context().Err() == nil
}

// serve runs the stages that answer x.
func (h *Handler) serve(x *exchange) {
	r := x.r
	if strings.Contains(r.URL.Path, "//") {
		// An empty path segment ("//users/me/..."), which some clients'
		// joins of base and path send: how the services' front door
		// answers it is not recorded; the mock serves the path with the
		// empty segments dropped, and its record keeps the path as sent.
		r.URL.Path, r.URL.RawPath = collapseSlashes(r.URL.Path), ""
	}
	if st := h.script.Load(); st != nil && h.scripted(st, x) {
		return
	}
	host := strings.ToLower(hostOnly(r.Host))
	if slices.Contains(signInHosts, host) {
		h.signIn.serve(x.w, r, host)
		return
	}
	if host == RTAHost {
		h.serveRTA(x)
		return
	}
	rule, known := h.cfg.limits.Match(r.Method, r.Host, r.URL.Path)
	if host := strings.ToLower(hostOnly(r.Host)); host == titleMgtHost && isNSAL(r.Method, r.URL.Path) && (!known || r.Header.Get("Authorization") == "") {
		// The endpoints are read before any token (xal.py's
		// get_title_endpoints sends none): uncounted then, as no user
		// is known, and where the limits have no rule for the host.
		writeRaw(x.w, http.StatusOK, h.nsal)
		return
	}
	if !known && !h.cfg.fallback {
		writeError(x.w, http.StatusNotFound, "NoSuchHost", "the mock serves no service at host "+safetext.Clip(hostOnly(r.Host), 256))
		return
	}
	if !known {
		rule = h.cfg.limits.Fallback
	}
	id, ok := h.authenticate(x, rule)
	if !ok {
		return
	}
	var rt *route
	if routes := h.routes[rule.Service]; known && len(routes) > 0 {
		// A call the mock does not serve, at a service it answers, is
		// answered uncounted: the real service would serve it, and
		// counting the mock's gap would skew the caller's budget. The
		// services it only counts (the Store's, clubs, ...) count every
		// call.
		if rt = matchRoute(routes, &x.call); rt == nil {
			notServed(routes, &x.call)
			return
		}
	}
	x.id, x.scope = id, rule.Scope()
	if !h.count(x, rule) {
		return
	}
	if f := h.faults.Load(); f.any && h.fault(x, rule, &f.f) {
		return
	}
	switch {
	case rt == nil:
		writeError(x.w, http.StatusNotFound, "NotFound", "no such resource")
	case r.ContentLength > h.cfg.maxBody, r.ContentLength <= 0 && x.body.ReadCloser != nil && !bodyWithin(r, h.cfg.maxBody):
		// Over Config.MaxBody: 413 (counted, as the service's own
		// refusals are) whatever the route, one that reads no body too.
		// A body without a length (chunked, HTTP/2 without
		// content-length) is read first, to the bound.
		writeError(x.w, http.StatusRequestEntityTooLarge, "RequestTooLarge", "request body over the limit")
	default:
		rt.serve(&x.call)
	}
	if tw, ok := x.w.(*truncWriter); ok {
		tw.cut()
	}
}

// bodyWithin reads r's body, one of no stated length, to max bytes and
// reports whether it ended within them (peekBody).
func bodyWithin(r *http.Request, max int64) bool {
	b, err := peekBody(r, max+1)
	return err != nil || int64(len(b)) <= max // a read that failed is the route's to report
}

// peekBody reads at most n bytes of r's body and gives them again to
// whoever reads r.Body next, then the rest: a look at a body (the
// script's, the bound's) leaves the service the whole of it.
func peekBody(r *http.Request, n int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, n))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	return b, err
}

// readCloser is a body read from Reader and closed by Closer.
type readCloser struct {
	io.Reader
	io.Closer
}

// record makes x, answered or aborted, one Call in the journal. An
// aborted answer keeps the status it was sent with (a body cut short), 0
// when none was sent (a reset).
func (h *Handler) record(x *exchange, start time.Time) {
	took := time.Since(start)
	status := x.sw.status
	if status == 0 && x.answered {
		status = http.StatusOK // the server's, for a handler that wrote nothing
	}
	h.journal.add(x.r.Context(), newCall(x, h.journal.seed, h.cfg.now().Add(-took).UTC(), took, status))
}

// count is FGRL's stage: it counts x against its key, and its publisher's
// for a rule with a publisher sustain limit, and reports whether c may be
// served; when not, it has answered (429, or 503 when the store fails).
// A legacy title is not counted.
func (h *Handler) count(x *exchange, rule *limits.Rule) bool {
	x.flags |= counted
	if h.cfg.legacy[x.id.title] {
		return true
	}
	now := h.cfg.now()
	k := throttle.Key{User: x.id.userhash, Title: x.id.title, Scope: rule.Scope()}
	d, err := h.cfg.store.Take(x.r.Context(), k, rule.Limit(), now)
	if err != nil {
		return h.storeFailed(x, err)
	}
	aspect := ratelimit.AspectTitle
	if rule.PublisherSustain > 0 {
		pk := throttle.Key{User: x.id.userhash, Title: h.cfg.publisher(x.id.title), Scope: rule.PublisherScope()}
		pd, err := h.cfg.store.Take(x.r.Context(), pk, throttle.Limit{Sustain: rule.PublisherSustain}, now)
		if err != nil {
			return h.storeFailed(x, err)
		}
		// The RateLimit headers say both windows, the title's burst and
		// the sustain window that binds (the publisher's when it leaves
		// less, or when the title has none), refused or not, so that a
		// client keeping in sync with them keeps within both; a refusal
		// says the window that refused.
		counts := d.Counts
		switch {
		case !pd.Allowed && (d.Allowed || publisherRefuses(d, pd)):
			d, aspect = pd, ratelimit.AspectPublisher
			counts.Sustain = pd.Sustain
		case d.Allowed || d.Limiter == throttle.Burst:
			if counts.Sustain.Limit == 0 || pd.Sustain.Limit-pd.Sustain.Count < counts.Sustain.Limit-counts.Sustain.Count {
				counts.Sustain = pd.Sustain
			}
		}
		d.Counts = counts
	}
	x.counts, x.flags = d.Counts, x.flags|decided
	ratelimit.SetHeaders(x.w.Header(), d)
	if d.Allowed {
		return true
	}
	x.wait, x.flags = d.RetryAfter, x.flags|refused
	h.write429(x.w, rule, d, aspect, now)
	return false
}

// publisherRefuses reports whether the refusal of both counters is the
// publisher's: its window ends later (in the whole seconds Retry-After
// says: on a Redis store each counter reads the server's clock apart, and
// windows one title started together end microseconds apart), or on a tie
// its limit is the lower, the one that binds.
func publisherRefuses(d, pd throttle.Decision) bool {
	t, p := ratelimit.CeilSeconds(d.RetryAfter), ratelimit.CeilSeconds(pd.RetryAfter)
	if p != t {
		return p > t
	}
	return pd.Sustain.Limit < d.Counts.Window(d.Limiter).Limit
}

// storeFailed answers 503 for a store that failed, unless Config.FailOpen
// serves the request, and reports whether it may be served.
func (h *Handler) storeFailed(x *exchange, err error) bool {
	x.flags |= storeFailed
	if h.cfg.failOpen {
		return true
	}
	x.flags |= unavailable
	writeError(x.w, http.StatusServiceUnavailable, "ThrottleStoreUnavailable", "rate limit store failed: "+err.Error())
	return false
}

// write429 answers 429 for decision d as the rule's service does: the
// Store's services in text, naming the limit's aspect, the others in JSON.
func (h *Handler) write429(w http.ResponseWriter, rule *limits.Rule, d throttle.Decision, aspect string, now time.Time) {
	setRetryAfter(h.faults.Load().f.RetryAfter, w.Header(), d.RetryAfter, now)
	b := ratelimit.BodyOf(d)
	if rule.Store {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(ratelimit.StoreText(b.MaxRequests, b.PeriodInSeconds, aspect)))
		return
	}
	writeJSON(w, http.StatusTooManyRequests, b)
}

// collapseSlashes returns p with every run of '/' made one.
func collapseSlashes(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// hostOnly is a Host header without its port.
func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		return h[:i]
	}
	return h
}
