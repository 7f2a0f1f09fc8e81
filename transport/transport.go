package transport

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// MaxRetryAfter caps the Retry-After the transport honours. FGRL windows last
// at most 300 s, so a longer wait is a fault; it is treated as this cap rather
// than trusted (a huge value would otherwise block a key for days).
const MaxRetryAfter = 10 * time.Minute

// DefaultInteractiveShare is the share of each limit a zero
// Transport.InteractiveShare keeps for interactive calls.
const DefaultInteractiveShare = 0.25

// Defaults, from XSAPI.
const (
	DefaultRetryWindow = 20 * time.Second // from the first attempt
	minRemaining       = 5 * time.Second  // retry only with more than this left
	minAttemptTimeout  = 5 * time.Second
	maxAttemptTimeout  = 30 * time.Second
	maxBackoff         = 60 * time.Second
	serverErrorWait    = 10 * time.Second // a 500 waits at least this long
	maxDrain           = 64 << 10         // bytes read from a discarded body
)

// Transport is an http.RoundTripper for Xbox services. The zero value is
// ready to use and behaves like XSAPI plus a local budget (the package doc
// lists every difference from XSAPI); a Transport is
// safe for concurrent use, and its fields must not change after the first
// request. It starts no goroutines, so it works inside a testing/synctest
// bubble.
//
// Beyond the RoundTripper contract, which asks a RoundTripper not to retry or
// interpret responses, Transport deliberately:
//
//   - retries 408, 429, 500, 502, 503, 504 and transport errors within
//     RetryWindow, rewinding bodies with Request.GetBody (a body that cannot
//     be rewound is sent once);
//   - may wait before sending (the budget, a cached Retry-After), never past
//     the request's context deadline;
//   - refuses a call without sending it, returning a *ThrottleError, when
//     waiting cannot help;
//   - returns a final 429 as a *ThrottleError rather than a response, unless
//     Raw429 is set;
//   - keeps its budget in sync with what the service reports: a 429's
//     Retry-After blocks the key, and RateLimit / RateLimit-Policy headers
//     (ratelimit.ParseHeaders; the mock sends them) resync the counts;
//   - on a 401, when RefreshToken is set, retries once with a new token;
//   - signs each attempt afresh with the request context's Signer
//     (WithSigner), after its body is rewound and its token set, since a
//     signature covers its instant, its Authorization and its body;
//   - drops the Authorization and Signature headers from a request that
//     follows a redirect to another host (http.Client drops Authorization
//     itself, but not Signature, and not for a header key spelt in another
//     case).
//
// Every other status is returned as a response with a nil error, as the
// contract requires.
//
// Configuration follows one rule: a zero field means the documented
// default, a negative duration means none (RetryWindow: no retries; Margin:
// no margin), and a Disable field turns a feature off (DisableBudget).
type Transport struct {
	// Base sends each attempt. If nil, http.DefaultTransport is used.
	Base http.RoundTripper
	// Limits maps requests to services and their limits. If nil,
	// limits.Default() (the 2020 table) is used.
	Limits *limits.Limits
	// TitleID is the title the calls are made for; it is part of every key
	// (user + title + service), as on the server.
	TitleID string
	// RetryWindow is how long after the first attempt retries may start.
	// Zero means DefaultRetryWindow (XSAPI's 20 s); a negative value is
	// XSAPI's window of 0: no retries and no budget waits, and each attempt
	// times out after 5 s.
	RetryWindow time.Duration
	// Policy is how calls are treated unless their context says otherwise
	// (WithPolicy, field by field): how long they may wait for their
	// budget, whether they are retried, each attempt's timeout, their
	// priority. The zero Policy is XSAPI's.
	Policy Policy
	// Budget holds the budgets. Share one store between Transports on
	// purpose (a throttle.MemoryBudgetStore in one process, a redisstore.Store across a
	// fleet) to give them one budget per key. While it fails, the transport
	// uses a local budget, logs the outage once, and tries the store again
	// every second until it recovers. A call gives the store every
	// operation within its own context. One it cannot give, because the
	// store is down or fails it or the call's context ends first (a 429's block or
	// RateLimit counts the service reported; a slot given back by a call
	// cancelled while it waited), is kept by the local store and owed to
	// the shared one: the next call of this Transport to reach it sends
	// it, a key's reports before that key's next booking, measured from
	// when they are sent (a block that has ended, or counts of a window
	// that has reset, are dropped). A key owes at most one block and one
	// count of each window, merged never looser than what the service said
	// (the later end; of one window the most used); at most 256 are owed
	// (releases dropped first), four sent a call, none after one the store
	// fails; until a key's reports have reached the store, its calls are
	// booked in both stores and hold the stricter (the shared store counts
	// them for the fleet, the local one has the reports; a call the local
	// store would make wait waits that long, if it may, and books again),
	// and BudgetLeft
	// reads the local store. A store may so
	// get a Release, Block or Sync twice, when a first one its caller could
	// not see answered did arrive: a Block or Sync twice must be one (as
	// throttle.MemoryBudgetStore's and redisstore's are), and a slot
	// released twice must free one booking only (redisstore's slots are
	// random ids; a MemoryBudgetStore never fails, so it gets none
	// twice). A shared store's slots must not be negative (the transport
	// marks its local bookings by their sign): a booking with one is given
	// back to the store at once, reported as its failure, and the call
	// booked locally. If nil, a private in-memory
	// throttle.MemoryBudgetStore is used.
	Budget throttle.BudgetStore
	// Margin lengthens both periods of the private and fallback budgets, to
	// absorb the delay between sending and the service counting. Zero means
	// throttle.DefaultMargin (1 s); negative means none, as in
	// throttle.MemoryBudgetStore and redisstore.Store.
	Margin time.Duration
	// LimitShare is the share of each limit (burst and sustain, after any
	// learned from the service) the budget lets calls use, rounded down and
	// at least one call: zero means all of it. The Xbox Live Trace Analyzer
	// warns when a window holds more than 90 % of a limit, so 0.9 keeps a
	// title clear of its warnings (xblcall analyze --what-if replays so).
	LimitShare float64
	// InteractiveShare is the share of each key's burst and sustain limits
	// kept for interactive calls: background calls (Background) stop short
	// of it. Each kept part is rounded up and leaves background calls at
	// least one call per window. Zero means DefaultInteractiveShare (a
	// quarter: social's 10 / 30 keeps 3 / 8); negative means none.
	InteractiveShare float64
	// MaxLearnedLimit caps the limits learned from 429 bodies: a service's
	// 429 reports the limit it applied (maxRequests in periodInSeconds), and
	// when that differs from the limits data, or the data has no rule for
	// the host, later calls of that key count against the reported limit;
	// once another user's 429, or one from a later window, reports the same
	// limit, every key of the scope does (Transport.LearnedLimits,
	// Stats.LimitsLearned, an EventLimitLearned per change). A learned limit
	// is never below a tenth of the data's, and lasts throttle.LearnedFor
	// (two sustain windows) after the last 429 that reported it. Reports
	// and confirmed limits are kept in Budget when it is a
	// throttle.LimitStore, shared with every transport on it; its limit of
	// a window holds where it has one, and one read from it ends when it
	// ends there. While it fails they are kept in the transport, and a
	// limit confirmed meanwhile stays until its end where the store has
	// none; its reports are owed to the store, and sent unless it has a
	// limit of that window by then (which came last cannot be told across
	// two clocks; the fleet's next 429 reporting the limit replaces it),
	// or, of a report the store failed (it may have taken it already),
	// unless the limit was confirmed. Zero means
	// DefaultMaxLearnedLimit; negative turns learning off.
	MaxLearnedLimit int
	// CoalesceReads makes identical GETs share one request: a GET (no
	// body, no Range, no If-* condition, no Cache-Control or Pragma of its
	// own) to the same URL (scheme; host as net/http dials it, the port
	// read as a number, "080" as 80, and the scheme's default port left
	// out; Host header; path and query), with the same credentials (the
	// whole Authorization, Signature and Cookie values, compared as a
	// SHA-256 digest: never across users, nor across two tokens of one
	// user), title, contract version, Accept, Accept-Encoding and
	// Accept-Language (every value, under every spelling of the name), and
	// the same policy (Policy: waits, retries,
	// attempt timeout, priority, rule), as one that started
	// less than 5 s ago waits for that one's answer, read in full (at most
	// MaxCoalescedBody, and 64 MiB over all answers being read at once,
	// counting the memory that holds them)
	// under its attempt timeout and copied to each. A call whose
	// credentials the transport cannot read (no XBL3.0 Authorization, or one
	// given twice), whose context carries a Signer (WithSigner: its
	// Signature is made as it is sent), whose host is not ASCII (net/http
	// dials it through IDNA, which case-folds otherwise), whose URL's port
	// is no port number (digits, at most 65535), whose URL has Opaque set (net/http sends it as given:
	// "//host/path" as the absolute form of http://host/path), or that may be
	// cancelled through the deprecated Request.Cancel, always sends its
	// own. A caller
	// waits for another's answer no longer than its own call could take
	// (ErrSharedReadTimeout), and never past its context; a caller whose
	// deadline is later than the one it waited for sends its own when that
	// one ended in an error or a status XSAPI retries. One whose wait
	// ended with the other call's caller giving up has a whole call's time
	// of its own from then, in which it leads a new request or waits for
	// one under way (the callers that caller left share one), so a caller
	// that waited takes at most twice its own call's time; left so again,
	// it sends its own (three times at most). An answer too large to read
	// in full, one that varies on another header (Vary), or one that came
	// to a token renewed by RefreshToken stays its caller's. A write
	// through the Transport (any method but GET, HEAD, OPTIONS and TRACE),
	// however it is answered, ends the sharing of the reads of its URL
	// under way when it ends (their answers may predate it, RFC 9111
	// §4.4): they answer the callers already waiting, and a read that
	// starts after the write sends its own, for every user; a write to a
	// URL whose read would always send its own (a host that is not ASCII,
	// a port that is no port number, Opaque set) does so for every URL.
	// The XLTA's repeated-call rule is what it saves: titles issue the
	// same read many times at once.
	// Stats.Coalesced counts the calls it answers without a request.
	CoalesceReads bool
	// ReadCacheTTL, with CoalesceReads, also keeps each 200 answer for this
	// long (at most MaxReadCacheTTL, 10 s, and at most as long as it is
	// still fresh: its Cache-Control max-age, else its Expires less its
	// Date, less its Age, that freshness counted from when its request
	// was sent; with neither, MaxReadCacheTTL less its Age): the same read
	// with the same credentials made again within it is answered from
	// memory. An answer with Set-Cookie, Cache-Control no-store or
	// no-cache, or an Age or Expires that cannot be read, is not kept. The
	// cache holds at most 4,096 answers and 64 MiB, counting the memory of
	// bodies, headers, status lines and keys; an answer replaced or
	// dropped gives all of it back at once. A new answer takes the room of
	// the answers that have expired and, if it still finds the cache full,
	// of the oldest. It keeps no TLS state, so an answer from it has a nil
	// TLS. A write through the Transport (any method but GET, HEAD, OPTIONS
	// and TRACE), however it is answered, drops what the cache holds of its
	// URL (scheme, host without the scheme's default port, path and query,
	// as CoalesceReads compares them; a URL whose read would always send
	// its own drops everything), for every user, and the answers of the
	// reads of that URL under way when it ends are not kept (nor shared
	// with the reads that start after it: CoalesceReads). A call whose
	// context has already ended is not answered from it. Zero keeps
	// nothing.
	ReadCacheTTL time.Duration
	// DisableBudget turns the local budget off: the transport then only
	// reacts to 429s, exactly like XSAPI.
	DisableBudget bool
	// Shadow sends calls the budget would refuse anyway, logging and
	// counting them (Stats.ShadowRefusals), to try the budget safely.
	Shadow bool
	// Raw429 returns a final 429 as a response instead of a *ThrottleError.
	Raw429 bool
	// RefreshToken, when set, is called after a 401 to get a new
	// Authorization value; the call is then retried exactly once.
	RefreshToken func(req *http.Request) (string, error)
	// AllowInsecure permits sending an XBL token over plain http:// to a host
	// other than loopback.
	AllowInsecure bool
	// Logger receives one record per Event, its message "fgrl: " and the
	// event's kind ("fgrl: retry", "fgrl: server_429"): attempts and store
	// fallbacks at Debug, the rest at Info; and one record when a shared
	// budget store's outage starts (Warn) and ends. If nil, nothing is
	// logged. Tokens are never logged.
	Logger *slog.Logger
	// Observe, when set, hears every Event (attempts, retries, waits,
	// refusals, 429s, budget store failures), the same events Stats counts
	// and Logger logs, on the call's goroutine with the request's context:
	// package fgrlotel makes OpenTelemetry metrics and span events of them.
	// It must not block. Nil costs nothing.
	Observe func(context.Context, Event)

	once    sync.Once
	budget  throttle.BudgetStore
	limits  *limits.Limits
	cache   raCache
	stats   counters
	learned learner
	reads   coalescer
	timers  attemptTimers
}

func (t *Transport) init() {
	t.once.Do(func() {
		t.limits = t.Limits
		if t.limits == nil {
			t.limits = limits.Default()
		}
		m := t.Margin // throttle.MemoryBudgetStore reads it as the Transport does
		if t.Budget != nil {
			t.budget = newFailover(t, t.Budget, m)
		} else {
			t.budget = &throttle.MemoryBudgetStore{Margin: m}
		}
		t.cache.m = make(map[throttle.Key]*raEntry)
	})
}

func (t *Transport) base() http.RoundTripper {
	if t.Base == nil {
		return http.DefaultTransport
	}
	return t.Base
}

func (t *Transport) window() time.Duration {
	switch {
	case t.RetryWindow == 0:
		return DefaultRetryWindow
	case t.RetryWindow < 0:
		return 0
	}
	return t.RetryWindow
}

// share is l cut to LimitShare.
func (t *Transport) share(l throttle.Limit) throttle.Limit {
	if t.LimitShare <= 0 || t.LimitShare >= 1 {
		return l
	}
	return perWindow(l, func(n int) int { return max(1, int(float64(n)*t.LimitShare)) })
}

// perWindow applies f to each limit of l that is set (a zero is no limit).
func perWindow(l throttle.Limit, f func(int) int) throttle.Limit {
	for _, n := range []*int{&l.Burst, &l.Sustain} {
		if *n > 0 {
			*n = f(*n)
		}
	}
	return l
}

// RoundTrip sends req, waiting, retrying or refusing as the type's
// documentation describes.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	if t.CoalesceReads {
		if resp, ok, err := t.coalesceRead(req); ok {
			return resp, err
		}
		if !safeMethod(req.Method) {
			return t.write(req)
		}
	}
	return t.roundTrip(req)
}

// write is roundTrip for a write, which then drops what the read cache
// holds of its URL and marks the flights that read it (invalidate). Its
// own function, as coalesceRead is: the deferred call's target stays off
// the stack of every other call.
func (t *Transport) write(req *http.Request) (*http.Response, error) {
	defer t.reads.invalidate(targetOf(req))
	return t.roundTrip(req)
}

// coalesceRead coalesces req when it is a read of its kind (readKeyOf),
// and reports whether it was. Its own function, so that the read's key is
// off the stack of every call that is not one: a call waiting for its
// budget holds its stack while it waits.
func (t *Transport) coalesceRead(req *http.Request) (*http.Response, bool, error) {
	if req.Context().Err() != nil { // it fails as it would alone, not from the cache
		return nil, false, nil
	}
	key, ok := t.readKeyOf(req)
	if !ok {
		return nil, false, nil
	}
	resp, err := t.coalesce(req, key)
	return resp, true, err
}

// roundTrip is RoundTrip without coalescing.
func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	resp, _, _, err := t.do(req, false)
	return resp, err
}

// do is roundTrip that also reports whether the answer came to a renewed
// token (RefreshToken) rather than to the request's own, and, when stamp
// asks (a coalesced read, whose cache counts an answer's freshness from
// then), when the attempt that got it was sent.
func (t *Transport) do(req *http.Request, stamp bool) (_ *http.Response, renewed bool, sent time.Time, _ error) {
	req, dropped := dropCredentialsOnRedirect(req)
	var c call
	if err := c.init(t, req); err != nil {
		closeBody(req)
		return nil, false, time.Time{}, err
	}
	c.refreshed, c.dropped = dropped, dropped // a 401 from another host gets no token
	c.stamp = stamp
	resp, err := c.run()
	return resp, c.auth != "", c.sentAt, err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
