package mock

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

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
//  2. identify: a sign-in host goes to the sign-in service (signIn.serve);
//     any other to the limits rule of its host and path, or 404 uncounted;
//  3. authenticate: a token Token minted, or 401 uncounted (parseToken);
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

// ServeHTTP passes the request through the pipeline: it is counted against
// its user + title + service and either refused (429) or served, and
// recorded (Calls).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{r: r, maxBody: h.cfg.maxBody}
	c.sw.ResponseWriter = w
	c.w = &c.sw
	if r.Body != nil && r.Body != http.NoBody {
		own := r.Body
		c.body.ReadCloser = own
		r.Body = &c.body
		// The server's own body back when the handler returns, so that
		// net/http tells what was left unread (ConnLimits.Apply).
		defer func() { r.Body = own }()
	}
	defer h.record(c, time.Now())
	h.serve(c)
	c.answered = true
}

// serve runs the stages that answer c.
func (h *Handler) serve(c *call) {
	r := c.r
	if st := h.script.Load(); st != nil && h.scripted(st, c) {
		return
	}
	if host := strings.ToLower(hostOnly(r.Host)); slices.Contains(signInHosts, host) {
		h.signIn.serve(c.w, r, host)
		return
	}
	rule, known := h.cfg.limits.Match(r.Method, r.Host, r.URL.Path)
	if !known && !h.cfg.fallback {
		writeError(c.w, http.StatusNotFound, "NoSuchHost", "the mock serves no service at host "+hostOnly(r.Host))
		return
	}
	if !known {
		rule = h.cfg.limits.Fallback
	}
	id, err := parseToken(r.Header.Get("Authorization"))
	if err != nil {
		writeError(c.w, http.StatusUnauthorized, "Unauthorized", err.Error())
		return
	}
	var rt *route
	if routes := h.routes[rule.Service]; known && len(routes) > 0 {
		// A call the mock does not serve, at a service it answers, is
		// answered uncounted: the real service would serve it, and
		// counting the mock's gap would skew the caller's budget. The
		// services it only counts (the Store's, clubs, ...) count every
		// call.
		if rt = matchRoute(routes, c); rt == nil {
			notServed(routes, c)
			return
		}
	}
	c.id, c.scope = id, rule.Scope()
	if !h.count(c, rule) {
		return
	}
	if f := h.faults.Load(); f.any && h.fault(c, rule, &f.f) {
		return
	}
	if rt == nil {
		writeError(c.w, http.StatusNotFound, "NotFound", "no such resource")
	} else {
		rt.serve(c)
	}
	if tw, ok := c.w.(*truncWriter); ok {
		tw.cut()
	}
}

// record makes c, answered or aborted, one Call in the journal.
func (h *Handler) record(c *call, start time.Time) {
	took := time.Since(start)
	status := c.sw.status
	switch {
	case !c.answered:
		status = 0
	case status == 0:
		status = http.StatusOK
	}
	h.journal.add(c.r.Context(), newCall(c, h.cfg.now().Add(-took).UTC(), took, status))
}

// call is one request going through the pipeline: what a service answers
// it from, and what the stages learn of it for its record.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	id      identity // the caller, once authenticated
	params  []string // the route's captures
	buf     [maxParams]string
	q       url.Values // the query, once parsed
	maxBody int64      // Config.MaxBody

	sw       statusWriter
	body     capture
	answered bool // the pipeline returned: not aborted
	scope    string
	script   string // the script rule that answered
	counts   throttle.Counts
	wait     time.Duration
	fault    faultKind
	flags    outcome
}

// user resolves a "me" or "xuid(N)" path segment to an xuid.
func (c *call) user(seg string) string {
	if strings.EqualFold(seg, "me") {
		return c.id.xuid
	}
	return xuidDigits(seg) // the route's pattern has checked the segment
}

// query returns the first value of a query parameter (r.URL.Query, parsed
// once per call).
func (c *call) query(key string) string {
	if c.q == nil {
		c.q = c.r.URL.Query()
	}
	return c.q.Get(key)
}

// decode reads a JSON body into v; on failure it answers 400 or 413 and
// returns false.
func (c *call) decode(v any) bool {
	body := http.MaxBytesReader(c.w, c.r.Body, c.maxBody)
	err := json.NewDecoder(body).Decode(v)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(c.w, http.StatusRequestEntityTooLarge, "RequestTooLarge", "request body over the limit")
	case err != nil:
		writeError(c.w, http.StatusBadRequest, "BadRequest", "malformed JSON body: "+err.Error())
	default:
		return true
	}
	return false
}

// count is FGRL's stage: it counts c against its key, and its publisher's
// for a rule with a publisher sustain limit, and reports whether c may be
// served; when not, it has answered (429, or 503 when the store fails).
// A legacy title is not counted.
func (h *Handler) count(c *call, rule *limits.Rule) bool {
	c.flags |= counted
	if h.cfg.legacy[c.id.title] {
		return true
	}
	now := h.cfg.now()
	k := throttle.Key{User: c.id.userhash, Title: c.id.title, Scope: rule.Scope()}
	d, err := h.cfg.store.Take(c.r.Context(), k, rule.Limit(), now)
	if err != nil {
		return h.storeFailed(c, err)
	}
	aspect := "{userId;titleId}"
	if rule.PublisherSustain > 0 {
		pk := throttle.Key{User: c.id.userhash, Title: h.cfg.publisher(c.id.title), Scope: rule.PublisherScope()}
		pd, err := h.cfg.store.Take(c.r.Context(), pk, throttle.Limit{Sustain: rule.PublisherSustain}, now)
		if err != nil {
			return h.storeFailed(c, err)
		}
		if !pd.Allowed && (d.Allowed || pd.RetryAfter > d.RetryAfter) {
			d, aspect = pd, "{userId;publisherId}"
		}
	}
	c.counts, c.flags = d.Counts, c.flags|decided
	ratelimit.SetHeaders(c.w.Header(), d)
	if d.Allowed {
		return true
	}
	c.wait, c.flags = d.RetryAfter, c.flags|refused|throttled
	h.write429(c.w, rule, d, aspect, now)
	return false
}

// storeFailed answers 503 for a store that failed, unless Config.FailOpen
// serves the request, and reports whether it may be served.
func (h *Handler) storeFailed(c *call, err error) bool {
	c.flags |= storeFailed
	if h.cfg.failOpen {
		return true
	}
	c.flags |= unavailable
	writeError(c.w, http.StatusServiceUnavailable, "ThrottleStoreUnavailable", "rate limit store failed: "+err.Error())
	return false
}

// write429 answers 429 for decision d as the rule's service does: the
// Store's services in text, naming the limit's aspect, the others in JSON.
func (h *Handler) write429(w http.ResponseWriter, rule *limits.Rule, d throttle.Decision, aspect string, now time.Time) {
	h.setRetryAfter(w.Header(), d.RetryAfter, now)
	b := ratelimit.BodyOf(d)
	if rule.Store {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(ratelimit.StoreText(b.MaxRequests, b.PeriodInSeconds, aspect)))
		return
	}
	writeJSON(w, http.StatusTooManyRequests, b)
}

// errorBody is the JSON error answer, in the shape Xbox services use.
type errorBody struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

func writeError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, errorBody{Code: code, Description: desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"code":"InternalError","description":"encoding failed"}`)
	}
	writeRaw(w, status, b)
}

// jsonType is the Content-Type of every JSON answer, shared rather than
// built per answer (net/http only reads it; an Add would copy it, as its
// capacity is its length).
var jsonType = []string{"application/json; charset=utf-8"}

// writeRaw answers a JSON document already encoded.
func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	w.Write(b)
}

// hostOnly is a Host header without its port.
func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		return h[:i]
	}
	return h
}
