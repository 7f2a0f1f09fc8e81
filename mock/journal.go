package mock

import (
	"bytes"
	"context"
	"hash/maphash"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/throttle"
)

// Call is one request the mock answered, as its journal keeps it: the one
// record of what happened to it. The journal keeps the latest (Calls,
// WriteHAR, the admin API's /_fgrl/api/calls and calls.har, Check), and
// derives the rest from each as it comes: the request log
// (Config.Logger), the counters (Metrics, /metrics) and the live page's
// keys and recent 429s (Overview).
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
	// Status is the answer's status, as its status line went out: a
	// truncation fault's (its body cut short, Aborted) too. It is 0 only
	// when the connection was closed before a status was sent (a reset
	// fault, a hang the client gave up on; Aborted).
	Status int `json:"status"`
	// Aborted is set when the answer did not end as a whole one: the
	// connection closed without an answer or in its body.
	Aborted    bool   `json:"aborted,omitempty"`
	RetryAfter string `json:"retryAfter,omitempty"`
	// Script is the scripted rule that answered ("" for the mock's own
	// answer).
	Script   string            `json:"script,omitempty"`
	Duration throttle.Duration `json:"duration"`
	// Messages are the messages of a websocket call (an RTA connection,
	// recorded when it closes), the first 100; MoreMessages counts those
	// past them.
	Messages     []WSMessage `json:"messages,omitempty"`
	MoreMessages int         `json:"moreMessages,omitempty"`

	userhash  string
	host, uri string // URL's parts, joined when the call is read
	pathSum   uint64 // the whole path's pathSum when uri clipped it; 0 when uri holds it whole
	body      []byte // the request's body, up to maxCallBody
	textCap   int    // the bytes of the one allocation its strings are parts of
	wsBytes   int    // the bytes of its Messages' data
	// What the pipeline did with it, which the counters, the log and the
	// live page read.
	counts throttle.Counts // its key's counts after it, with decided
	wait   time.Duration   // the wait FGRL's 429 asked for, with refused
	fault  faultKind       // the service fault it met
	flags  outcome
}

// outcome is what the pipeline's stages did with a request.
type outcome uint8

const (
	counted     outcome = 1 << iota // it reached FGRL's stage: its scope's requests
	decided                         // the store decided it: counts are its key's after it (the live page's keys)
	refused                         // FGRL refused it: 429 (the live page's recent 429s)
	unavailable                     // answered 503, for a store failure or a fault: its scope's unavailable
	storeFailed                     // the counts' store failed
	forgotten                       // its key's counts were reset since (ResetCounts): not listed
)

// Bounds of the journal: the latest maxCalls, and at most maxCallsBytes in
// all (its slots, and every string and body its calls keep); older calls
// go first. Its counters are one set per rule scope of the limits.
const (
	maxCalls      = 10_000
	maxCallURL    = 1 << 10
	maxCallBody   = 16 << 10
	maxCallsBytes = 32 << 20
	ringBytes     = maxCalls * int(unsafe.Sizeof(Call{}))
)

// journal is the record of every request answered: a ring of maxCalls
// slots, the oldest overwritten first, bounded in bytes too; the counters
// derived from them; and the request log.
type journal struct {
	logger *slog.Logger // Config.Logger; nil logs nothing
	// scopes are the counters of each rule scope of the limits, made by
	// New and read without a lock.
	scopes      map[string]*scopeCounters
	storeErrors atomic.Int64
	seed        maphash.Seed // of the paths' sums (pathSum)

	mu    sync.Mutex
	ring  []Call // allocated on the first call, maxCalls long
	start int    // the oldest call's slot
	n     int    // calls held
	bytes int    // the ring's slots, and what the calls held keep besides
	// dropped counts the calls overwritten since the record was last
	// emptied; latestDropped is the latest time among them, so that a
	// check knows whether its window is whole.
	dropped       int
	latestDropped time.Time
	// emptied is when the record was last emptied of calls (ForgetCalls),
	// on the mock's clock; latestEmptied is the latest time among every
	// call dropped before then, so that a window reaching back past it
	// knows it is not whole.
	emptied, latestEmptied time.Time
}

// scopeCounters are one scope's answers so far.
type scopeCounters struct {
	requests, throttled, unavailable atomic.Int64
	injected                         [len(faultKinds)]atomic.Int64 // service faults met, by kind
}

// newJournal returns a journal with counters for the scopes given.
func newJournal(logger *slog.Logger, scopes []string) *journal {
	j := &journal{logger: logger, scopes: make(map[string]*scopeCounters, len(scopes)), seed: maphash.MakeSeed()}
	for _, s := range scopes {
		j.scopes[s] = new(scopeCounters)
	}
	return j
}

// add counts c, logs it and keeps it. ctx is its request's.
func (j *journal) add(ctx context.Context, c Call) {
	if c.flags&storeFailed != 0 {
		j.storeErrors.Add(1)
	}
	if sc := j.scopes[c.Scope]; sc != nil {
		if c.flags&counted != 0 {
			sc.requests.Add(1)
		}
		if c.flags&counted != 0 && c.Status == http.StatusTooManyRequests { // FGRL's, a service fault's, a counted script rule's
			sc.throttled.Add(1)
		}
		if c.flags&unavailable != 0 {
			sc.unavailable.Add(1)
		}
		if c.fault != 0 {
			sc.injected[c.fault].Add(1)
		}
	}
	if j.logger != nil {
		j.log(ctx, &c)
	}
	j.keep(c)
}

// log writes c as one line at level Info: never a token, the text
// clipped.
func (j *journal) log(ctx context.Context, c *Call) {
	path, _, _ := strings.Cut(c.uri, "?")
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("method", safetext.Clip(c.Method, 16)),
		slog.String("host", safetext.Clip(c.host, 100)),
		slog.String("path", safetext.Clip(path, 200)),
		slog.Int("status", c.Status))
	if c.Aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	if c.Scope != "" {
		attrs = append(attrs, slog.String("scope", c.Scope), slog.String("user", c.userhash), slog.String("title", c.Title))
	}
	if c.flags&decided != 0 {
		attrs = append(attrs,
			slog.Int("burst", c.counts.Burst.Count), slog.Int("burstLimit", c.counts.Burst.Limit),
			slog.Int("sustain", c.counts.Sustain.Count), slog.Int("sustainLimit", c.counts.Sustain.Limit))
	}
	took := time.Duration(c.Duration)
	attrs = append(attrs, slog.Float64("tookMs", float64(took.Microseconds())/1000)) // a unit in the name, in text and JSON
	j.logger.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
}

// callSize is the heap c holds beyond its slot in the ring: its text, one
// allocation of which every string it keeps is a part (newCall), its
// body, and a websocket's messages.
func callSize(c *Call) int {
	return c.textCap + cap(c.body) + c.wsBytes + cap(c.Messages)*int(unsafe.Sizeof(WSMessage{}))
}

// keep puts c in the ring, dropping the oldest calls it has no room for.
func (j *journal) keep(c Call) {
	size := callSize(&c)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ring == nil {
		j.ring = make([]Call, maxCalls)
		j.bytes = ringBytes
	}
	for j.n > 0 && (j.n == maxCalls || j.bytes+size > maxCallsBytes) {
		old := &j.ring[j.start]
		j.bytes -= callSize(old)
		if j.dropped++; old.Time.After(j.latestDropped) {
			j.latestDropped = old.Time
		}
		j.ring[j.start] = Call{}
		j.start = (j.start + 1) % maxCalls
		j.n--
	}
	j.ring[(j.start+j.n)%maxCalls] = c
	j.n++
	j.bytes += size
}

// each calls f with every call held, oldest first; f returns false to
// stop. The caller holds mu.
func (j *journal) each(f func(c *Call) bool) {
	for i := range j.n {
		if !f(&j.ring[(j.start+i)%maxCalls]) {
			return
		}
	}
}

// latest calls f with every call held, newest first; f returns false to
// stop. The caller holds mu.
func (j *journal) latest(f func(c *Call) bool) {
	for i := j.n - 1; i >= 0; i-- {
		if !f(&j.ring[(j.start+i)%maxCalls]) {
			return
		}
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
// counts all it holds; of a path it clips, it keeps the sum (pathSum,
// with seed). status is the one sent, 0 for none.
func newCall(x *exchange, seed maphash.Seed, at time.Time, took time.Duration, status int) Call {
	r := x.r
	uri := r.RequestURI
	if uri == "" || uri[0] != '/' {
		uri = r.URL.RequestURI()
	}
	path, _, _ := strings.Cut(uri, "?")
	host := safetext.Cut(hostOnly(r.Host), 256)
	uri = safetext.Cut(xblauth.RedactParams(host, safetext.Cut(uri, maxCallURL)), maxCallURL)
	var sum uint64
	if !strings.HasPrefix(uri, path) { // the cut fell in the path
		sum = pathSum(seed, unescape(path))
	}
	fields := [...]string{safetext.Cut(r.Method, 16), host, uri,
		safetext.Cut(x.id.xuid, 64), safetext.Cut(x.id.title, 64), safetext.Cut(x.scope, 256), safetext.Cut(x.script, 256),
		safetext.Cut(x.sw.retryAfterSent(), 64), safetext.Cut(x.id.userhash, 64)}
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
		Script: fields[6], RetryAfter: fields[7], userhash: fields[8], pathSum: sum, Status: status, Aborted: !x.answered, Duration: throttle.Duration(took),
		body: bytes.Clone(xblauth.RedactBody(host, x.body.b)), textCap: text.Cap(),
		counts: x.counts, wait: x.wait, fault: x.fault, flags: x.flags,
		Messages: x.ws.msgs, MoreMessages: x.ws.more, wsBytes: x.ws.bytes}
}

// statusWriter notes the status an answer was given.
type statusWriter struct {
	http.ResponseWriter
	status     int
	retryAfter string // the Retry-After sent with the status
}

// sent notes the status and the Retry-After that go with it, once.
func (s *statusWriter) sent(code int) {
	if s.status == 0 {
		s.status, s.retryAfter = code, s.ResponseWriter.Header().Get("Retry-After")
	}
}

// retryAfterSent is the Retry-After the answer carries: the one sent with
// its status, or, when the handler wrote nothing (the server then sends a
// 200 with its headers as they stand), the header's.
func (s *statusWriter) retryAfterSent() string {
	if s.status == 0 {
		return s.ResponseWriter.Header().Get("Retry-After")
	}
	return s.retryAfter
}

func (s *statusWriter) WriteHeader(code int) {
	s.sent(code)
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.sent(http.StatusOK)
	return s.ResponseWriter.Write(b)
}

// Flush passes through, for the truncation fault.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

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
