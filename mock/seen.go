package mock

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/xblgo/fgrl/internal/har"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/throttle"
)

// Call is a request the mock received, as a test asserts on it: Calls
// lists them, the admin API serves them (/_fgrl/api/calls, and as HAR
// /_fgrl/api/calls.har, which xblcall analyze reads).
type Call struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	// URL is https://host/path?query as received (clipped to 1 KiB), with
	// the query's credentials redacted (codes, tokens, secrets, tickets,
	// signatures, however the target is read; every value a sign-in
	// service is sent but the public ones).
	URL   string `json:"url"`
	XUID  string `json:"xuid,omitempty"` // the token's user; "" without a token the mock minted
	Title string `json:"title,omitempty"`
	// Scope is the limits rule the request fell under ("presence/read").
	Scope string `json:"scope,omitempty"`
	// Status is the answer's status; 0 with Aborted, for a connection
	// closed without an answer (a reset fault).
	Status     int    `json:"status"`
	Aborted    bool   `json:"aborted,omitempty"`
	RetryAfter string `json:"retryAfter,omitempty"`
	// Script is the scripted rule that answered ("" for the mock's own
	// answer).
	Script   string            `json:"script,omitempty"`
	Duration throttle.Duration `json:"duration"`

	userhash  string
	host, uri string // URL's parts, joined when the call is read
	body      []byte // the request's body, up to maxCallBody
	textCap   int    // the bytes of the one allocation its strings are parts of
}

// Bounds of the record of calls: the latest maxCalls, and at most
// maxCallsBytes in all (its slots, and every string and body its calls
// keep); older calls go first.
const (
	maxCalls      = 10_000
	maxCallURL    = 1 << 10
	maxCallBody   = 16 << 10
	maxCallsBytes = 32 << 20
	ringBytes     = maxCalls * int(unsafe.Sizeof(Call{}))
)

// callLog is the record of calls: a ring of maxCalls slots, the oldest
// overwritten first, bounded in bytes too.
type callLog struct {
	mu    sync.Mutex
	ring  []Call // allocated on the first call, maxCalls long
	start int    // the oldest call's slot
	n     int    // calls held
	bytes int    // the ring's slots, and what the calls held keep besides
	// dropped counts the calls overwritten; latestDropped is the latest
	// time among them, so that a check knows whether its window is whole.
	dropped       int
	latestDropped time.Time

	exports atomic.Int32 // exports being served (exportCalls)
}

// callSize is the heap c holds beyond its slot in the ring: its text, one
// allocation of which every string it keeps is a part (newCall), and its
// body.
func callSize(c *Call) int { return c.textCap + cap(c.body) }

func (l *callLog) add(c Call) {
	size := callSize(&c)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ring == nil {
		l.ring = make([]Call, maxCalls)
		l.bytes = ringBytes
	}
	for l.n > 0 && (l.n == maxCalls || l.bytes+size > maxCallsBytes) {
		old := &l.ring[l.start]
		l.bytes -= callSize(old)
		if l.dropped++; old.Time.After(l.latestDropped) {
			l.latestDropped = old.Time
		}
		l.ring[l.start] = Call{}
		l.start = (l.start + 1) % maxCalls
		l.n--
	}
	l.ring[(l.start+l.n)%maxCalls] = c
	l.n++
	l.bytes += size
}

// each calls f with every call held, oldest first. The caller holds mu.
func (l *callLog) each(f func(c *Call)) {
	for i := range l.n {
		f(&l.ring[(l.start+i)%maxCalls])
	}
}

// CallFilter picks calls; an empty field matches any.
type CallFilter struct {
	Method string `json:"method,omitempty"`
	Host   string `json:"host,omitempty"`
	// PathPrefix matches the start of the path.
	PathPrefix string `json:"pathPrefix,omitempty"`
	// Scope is a limits rule's scope ("presence/read") or service
	// ("presence").
	Scope  string    `json:"scope,omitempty"`
	XUID   string    `json:"xuid,omitempty"`
	Status int       `json:"status,omitempty"`
	Script string    `json:"script,omitempty"` // "*": any scripted answer
	Since  time.Time `json:"since,omitzero"`
}

func (f *CallFilter) match(c *Call) bool {
	path, _, _ := strings.Cut(c.uri, "?")
	service, _, _ := strings.Cut(c.Scope, "/")
	switch {
	case f.Method != "" && !strings.EqualFold(f.Method, c.Method),
		f.Host != "" && !strings.EqualFold(f.Host, c.host),
		f.PathPrefix != "" && !strings.HasPrefix(path, f.PathPrefix),
		f.Scope != "" && f.Scope != c.Scope && f.Scope != service,
		f.XUID != "" && f.XUID != c.XUID,
		f.Status != 0 && f.Status != c.Status,
		f.Script == "*" && c.Script == "",
		f.Script != "" && f.Script != "*" && f.Script != c.Script,
		!f.Since.IsZero() && c.Time.Before(f.Since):
		return false
	}
	return true
}

// Calls returns the calls received that f matches, oldest first (at most
// the latest 10,000, within 32 MiB of heap in all).
func (h *Handler) Calls(f CallFilter) []Call {
	out := []Call{}
	h.calls.mu.Lock()
	h.calls.each(func(c *Call) {
		if f.match(c) {
			out = append(out, *c)
		}
	})
	h.calls.mu.Unlock()
	for i := range out { // outside the lock, which every request takes
		out[i].URL = safetext.Cut("https://"+out[i].host+out[i].uri, maxCallURL)
	}
	return out
}

// maxExports bounds the exports of the record (/_fgrl/api/calls and
// calls.har) served at once: each holds its own copy of the calls it lists
// (up to the record's 32 MiB, and 10,000 URLs of up to 1 KiB) until its
// client has read it all, so slow clients could otherwise hold that many
// times over.
const maxExports = 4

// exportCalls serves the calls a request's query picks, as JSON or HAR;
// beyond maxExports at once, 503.
func (h *Handler) exportCalls(w http.ResponseWriter, r *http.Request, har bool) {
	f, err := callsQuery(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	if h.calls.exports.Add(1) > maxExports {
		h.calls.exports.Add(-1)
		writeJSON(w, http.StatusServiceUnavailable, apiError{fmt.Sprintf("%d exports of the calls are being read already; retry once one ends", maxExports)})
		return
	}
	defer h.calls.exports.Add(-1)
	if !har {
		writeJSON(w, http.StatusOK, h.Calls(f))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="fgrl-mock-calls.har"`)
	h.WriteHAR(w, f)
}

// ForgetCalls empties the record of calls, as a test does between cases.
func (h *Handler) ForgetCalls() {
	h.calls.mu.Lock()
	defer h.calls.mu.Unlock()
	h.calls.ring, h.calls.start, h.calls.n, h.calls.bytes = nil, 0, 0, 0
	h.calls.dropped, h.calls.latestDropped = 0, time.Time{}
}

// droppedSince returns how many calls the record dropped, when one of
// them was made at or after since (any, for a zero since): the record of
// the calls since then is not whole.
func (h *Handler) droppedSince(since time.Time) int {
	h.calls.mu.Lock()
	defer h.calls.mu.Unlock()
	if h.calls.dropped == 0 || !since.IsZero() && h.calls.latestDropped.Before(since) {
		return 0
	}
	return h.calls.dropped
}

// WriteHAR writes the calls f matches as a HAR 1.2 document, which
// xblcall analyze and analyze.ReadHAR read. No secret is written: the
// Authorization header holds the userhash only, and URLs and bodies are
// redacted as the record keeps them.
func (h *Handler) WriteHAR(w io.Writer, f CallFilter) error {
	hw := har.NewWriter(w)
	for _, c := range h.Calls(f) {
		e := har.Entry{Time: c.Time, Duration: time.Duration(c.Duration), Method: c.Method, URL: c.URL, Status: c.Status,
			RetryAfter: c.RetryAfter, RequestBody: c.body, Authorization: c.authorization()}
		if err := hw.Write(&e); err != nil {
			return err
		}
	}
	return hw.Close()
}

// serveObserved serves r, then records it (and logs it with a Logger),
// also when the answer is aborted.
func (h *Handler) serveObserved(w http.ResponseWriter, r *http.Request) {
	var e logEntry
	sw := &statusWriter{ResponseWriter: w}
	var body *capture
	if r.Body != nil && r.Body != http.NoBody {
		own := r.Body
		body = &capture{ReadCloser: own}
		r.Body = body
		// The server's own body back when the handler returns, so that
		// net/http tells what was left unread (ConnLimits.Apply).
		defer func() { r.Body = own }()
	}
	start := time.Now()
	aborted := true
	defer func() {
		took := time.Since(start)
		if h.cfg.logger != nil {
			h.logRequest(r, &e, sw.status, aborted, took)
		}
		status := sw.status
		if aborted {
			status = 0
		}
		var b []byte
		if body != nil {
			b = body.b
		}
		h.calls.add(newCall(r, &e, h.cfg.now().Add(-took).UTC(), took, status, sw.Header().Get("Retry-After"), b))
	}()
	h.serve(sw, r, &e)
	aborted = false
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
}

// newCall is the record of one request, made in one place. It keeps no
// secret: the query's credentials and the body's are redacted
// (xblauth.RedactParams, RedactBody: at a sign-in host every value but the
// public ones, elsewhere every parameter and field named a credential,
// the rest of the data kept), and of the headers only the userhash is
// kept. Every string it keeps is cut to its bound and copied
// into one allocation, and the body copied, so that a call holds no part
// of the request alive (the method is a substring of the whole request
// line, the userhash of the whole Authorization header) and callSize
// counts all it holds. status is 0 for an aborted answer.
func newCall(r *http.Request, e *logEntry, at time.Time, took time.Duration, status int, retryAfter string, body []byte) Call {
	uri := r.RequestURI
	if uri == "" || uri[0] != '/' {
		uri = r.URL.RequestURI()
	}
	host := safetext.Cut(hostOnly(r.Host), 256)
	uri = safetext.Cut(xblauth.RedactParams(host, safetext.Cut(uri, maxCallURL)), maxCallURL)
	fields := [...]string{safetext.Cut(r.Method, 16), host, uri,
		safetext.Cut(e.xuid, 64), safetext.Cut(e.title, 64), safetext.Cut(e.scope, 256), safetext.Cut(e.script, 256),
		safetext.Cut(retryAfter, 64), safetext.Cut(e.user, 64)}
	n := 0
	for _, f := range fields {
		n += len(f)
	}
	var text strings.Builder
	text.Grow(n)
	for i, f := range fields {
		text.WriteString(f)
		fields[i] = text.String()[text.Len()-len(f):]
	}
	return Call{Time: at, Method: fields[0], host: fields[1], uri: fields[2], XUID: fields[3], Title: fields[4], Scope: fields[5],
		Script: fields[6], RetryAfter: fields[7], userhash: fields[8], Status: status, Aborted: status == 0, Duration: throttle.Duration(took),
		body: bytes.Clone(xblauth.RedactBody(host, body)), textCap: text.Cap()}
}

// capture keeps the first maxCallBody bytes a handler reads of a body.
type capture struct {
	io.ReadCloser
	b []byte
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if room := maxCallBody - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(n, room)]...)
	}
	return n, err
}

// callsQuery reads a CallFilter from an admin request's query.
func callsQuery(r *http.Request) (CallFilter, error) {
	q := r.URL.Query()
	f := CallFilter{Method: q.Get("method"), Host: q.Get("host"), PathPrefix: q.Get("path"), Scope: q.Get("scope"),
		XUID: q.Get("xuid"), Script: q.Get("script")}
	if s := q.Get("status"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			return f, badQuery("status", s)
		}
		f.Status = n
	}
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return f, badQuery("since", s)
		}
		f.Since = t
	}
	return f, nil
}

func badQuery(name, value string) error {
	return fmt.Errorf("calls: %s %s is not one (status: 100 to 599; since: an RFC 3339 time)", name, safetext.Quote(value, 40))
}

// authorization is the call's Authorization as a trace may hold it: the
// userhash the analyzer groups by, never the token (the mock keeps none).
func (c *Call) authorization() string {
	if c.userhash == "" {
		return ""
	}
	return xblauth.Redact("XBL3.0 x=" + c.userhash + ";-")
}
