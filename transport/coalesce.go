package transport

import (
	"bytes"
	"context"
	"errors"
	"hash/maphash"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

// Bounds of read coalescing: an answer shared between callers is read in
// full first, so it is bounded, and so is the short cache.
const (
	MaxCoalescedBody = 16 << 20 // bytes of one shared answer
	maxCachedEntries = 4096
	maxCachedBytes   = 64 << 20
	// maxBufferedBytes bounds the answers being read to be shared, over
	// all flights at once; past it an answer is not shared.
	maxBufferedBytes = 64 << 20
	// MaxReadCacheTTL caps ReadCacheTTL: the cache is for calls made
	// together, not for data that changes (presence, sessions).
	MaxReadCacheTTL = 10 * time.Second
	// maxJoinAge is how long after it started a request under way takes
	// new callers (the shortest attempt timeout): a later identical read
	// sends its own, so a stalled request never holds the reads after it.
	maxJoinAge = minAttemptTimeout
)

// ErrSharedReadTimeout is returned to a caller that waited for another
// call's identical read (CoalesceReads) as long as its own call could have
// taken (its wait bound plus one attempt timeout) without an answer.
var ErrSharedReadTimeout = errors.New("transport: the shared read did not end within the call's own bound")

// coalescer shares identical GETs and keeps their 200 answers for
// ReadCacheTTL. (golang.org/x/sync/singleflight would share them, but its
// followers block where the simulator's virtual clock cannot see them;
// here they wait through the call's clock.)
type coalescer struct {
	mu      sync.Mutex
	flights map[readKey]*flight // requests under way, by readKey
	cache   map[readKey]*shared // by readKey.cacheKey
	ends    endHeap             // the cache's entries, the first to end on top
	// order is the cache's entries in the order stored, from head on: an
	// entry dropped leaves nil in its place (stale of them, those before
	// head included), which compaction takes out.
	order []*shared
	head  int
	stale int
	bytes int // what the cache holds: its entries' sizes
	// replaced holds the flights a newer one replaced in flights that are
	// still under way, with the URL they read, for invalidate.
	replaced map[*flight]target
	// targets counts the cache's entries and the flights under way
	// (replaced ones too) by the URL they read, so that a write to a URL
	// no read holds (the usual one) looks no further (invalidate).
	targets map[uint64]int
	seed    maphash.Seed

	buffered atomic.Int64 // bytes being read by leaders (maxBufferedBytes)
}

// flight is one request under way that identical reads wait for.
type flight struct {
	start    time.Time
	deadline time.Time     // the leader's context's; zero for none
	done     chan struct{} // closed when the leader's call ends
	s        *shared       // nil when the answer is not for the followers
	err      error
	// cancelled: the leader's own context ended, so its err is not the
	// followers' answer.
	cancelled bool
	// written: a write to its URL ended while it was under way (guarded by
	// the coalescer's mu): its answer may predate the write, and is not
	// kept.
	written bool
}

// shared is an answer read in full, for every caller that shares it.
type shared struct {
	resp  *http.Response // status, proto, header and trailer; no body, no request
	body  []byte
	until time.Time // in the cache until then
	size  int       // bytes held, head and key included
	// In the cache: its key there and its indexes in the cache's ends and
	// order.
	key      readKey
	end, ref int
}

// coalesce answers req (whose key is key) from the cache, from a request
// already under way with the same key, or by sending it and sharing the
// answer.
func (t *Transport) coalesce(req *http.Request, key readKey) (*http.Response, error) {
	ctx := req.Context()
	clk := clock.From(ctx)
	var bound time.Time // the longest this call waits for others (followBound)
	orphaned := false
	for {
		f, resp, err := t.cachedOrLead(req, key)
		if f == nil {
			return resp, err
		}
		now := clk.Now()
		if bound.IsZero() {
			bound = now.Add(t.followBound(key.pol))
		}
		if err := follow(ctx, clk, bound.Sub(now), f); err != nil {
			return nil, err
		}
		if !f.cancelled || ctx.Err() != nil {
			return t.followed(req, f)
		}
		// The call that sent it was cancelled; this one was not: it makes
		// a whole call of its own (Transport.CoalesceReads), with a bound
		// of its own from now, as the leader of a new request or waiting
		// for one under way (the other callers left by the same call
		// share it); left so a second time, it sends its own.
		if orphaned {
			return t.roundTrip(req)
		}
		orphaned, bound = true, time.Time{}
	}
}

// followed is the answer of a caller that waited for the flight f, which
// has landed and was not cancelled.
func (t *Transport) followed(req *http.Request, f *flight) (*http.Response, error) {
	ctx := req.Context()
	switch {
	case !f.final() && outlasts(ctx, f.deadline):
		return t.roundTrip(req) // the leader ran out of time this call has: it tries itself
	case f.err != nil:
		return nil, f.err
	case f.s == nil: // an answer for the leader alone: send this call's own
		return t.roundTrip(req)
	}
	t.emit(ctx, Event{Kind: EventCoalesced, Reason: "shared"}, nil)
	return f.s.response(req), nil
}

// cachedOrLead answers req from the cache, or as the leader of a new
// request for key when none is under way; otherwise it returns the flight
// under way (f), which req may follow.
func (t *Transport) cachedOrLead(req *http.Request, key readKey) (f *flight, _ *http.Response, _ error) {
	ctx := req.Context()
	now := clock.From(ctx).Now()
	if s := t.cached(key.cacheKey(), now); s != nil {
		t.emit(ctx, Event{Kind: EventCoalesced, Reason: "cache"}, nil)
		return nil, s.response(req), nil
	}
	f, lead := t.join(key, now, req)
	if lead {
		resp, err := t.lead(req, key, f)
		return nil, resp, err
	}
	return f, nil, nil
}

// final reports whether the flight ended in an answer that more time
// would not have changed: a status XSAPI does not retry.
func (f *flight) final() bool {
	return f.err == nil && (f.s == nil || !retryable(f.s.resp.StatusCode))
}

// outlasts reports whether ctx allows more time than a deadline (zero for
// none).
func outlasts(ctx context.Context, deadline time.Time) bool {
	if deadline.IsZero() {
		return false
	}
	own, ok := ctx.Deadline()
	return !ok || own.After(deadline)
}

// follow waits for f to land, at most d, and never past ctx.
func follow(ctx context.Context, clk clock.Clock, d time.Duration, f *flight) error {
	if d <= 0 {
		return ErrSharedReadTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := clk.AfterFunc(d, func() { cancel(ErrSharedReadTimeout) })
	defer timer.Stop()
	if err := clock.Wait(ctx, clk, f.done); err != nil {
		return context.Cause(ctx) // a coalescable request has no body to close
	}
	return nil
}

// followBound is the longest a call of policy p takes when it sends
// itself: its waits (the retry window, or Policy.MaxWait's longer bound;
// a NoRetry call may still wait for its budget), then one attempt, and one
// more after a token refresh.
func (t *Transport) followBound(p Policy) time.Duration {
	wait := t.window()
	if p.FailFast {
		wait = 0
	}
	wait = max(wait, p.MaxWait)
	timeout := attemptTimeout(t.window(), 0)
	if p.AttemptTimeout > 0 {
		timeout = p.AttemptTimeout
	}
	if t.RefreshToken != nil {
		timeout *= 2
	}
	return wait + timeout
}

// join returns the flight under way for key, or a new one this call leads.
// A flight older than maxJoinAge, or under way when a write to its URL
// ended (its answer may predate the write), takes no one: the new call
// leads its own, and the one it replaces stays among the replaced until
// it lands.
func (t *Transport) join(key readKey, now time.Time, req *http.Request) (*flight, bool) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flights[key]; f != nil && now.Sub(f.start) < maxJoinAge && !f.written {
		return f, false
	}
	if c.flights == nil {
		c.flights = make(map[readKey]*flight)
	}
	f := &flight{start: now, done: make(chan struct{})}
	f.deadline, _ = req.Context().Deadline()
	if old := c.flights[key]; old != nil {
		// Still under way: a write to its URL must still find it.
		if c.replaced == nil {
			c.replaced = make(map[*flight]target)
		}
		c.replaced[old] = key.target()
	}
	c.flights[key] = f // replaces a stale one, whose followers keep waiting for it
	c.target(key.target())
	return f, true
}

// land ends a flight: later reads send again (or find the cache).
func (t *Transport) land(key readKey, f *flight) {
	c := &t.reads
	c.mu.Lock()
	if c.flights[key] == f {
		delete(c.flights, key)
	} else {
		delete(c.replaced, f)
	}
	c.untarget(key.target())
	c.mu.Unlock()
	close(f.done)
}

// lead sends req for the flight f and returns the leader's own answer; it
// gives the followers a copy of it (f.s) when it may be shared, and caches
// it when it may be kept. The body is read in full under the attempt
// timeout (BoundBody) and the leader's context; the rest of an answer too
// large to share then comes at the caller's pace, as without coalescing,
// unless the caller's own policy asks for BoundBody. The flight lands
// however the call ends, a panic included.
func (t *Transport) lead(req *http.Request, key readKey, f *flight) (_ *http.Response, err error) {
	defer t.land(key, f)
	defer func() {
		if err != nil {
			f.err, f.cancelled = err, req.Context().Err() != nil
		}
	}()
	resp, renewed, sentAt, err := t.do(req.WithContext(WithPolicy(req.Context(), Policy{BoundBody: true})), true)
	if err != nil {
		return nil, err
	}
	body, release, err := t.reads.buffer(resp.Body)
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	if release != nil { // too large to share: the leader reads the rest as it comes
		if a := attemptOf(resp.Body); a != nil && !t.policyFor(req.Context()).BoundBody {
			a.stopTimer() // as handOver would: the rest streams at the caller's pace
		}
		resp.Body = &tooLarge{head: body, release: sync.OnceFunc(release), rest: resp.Body}
		return resp, nil
	}
	resp.Body.Close()
	head := *resp
	head.Body, head.Request, head.Header, head.Trailer = nil, nil, resp.Header.Clone(), resp.Trailer.Clone()
	s := &shared{resp: &head, body: body}
	// An answer to a renewed token is not the answer to the token the
	// followers and the cache's later callers hold: it stays the leader's.
	if !renewed && shareable(resp.Header) {
		f.s = s
		// The freshness the answer states counts from when its request
		// was sent (the last attempt's, after any wait for the budget or
		// retry): the time the answer and its body took to come is age it
		// has too (RFC 9111 §4.2.3's response_delay).
		now := clock.From(req.Context()).Now()
		if ttl := cacheTTL(resp, min(t.ReadCacheTTL, MaxReadCacheTTL), now.Sub(sentAt)); ttl > 0 {
			ck := key.cacheKey()
			t.storeLanded(f, ck, s.kept(ck, now.Add(ttl)), now)
		}
	}
	return s.response(req), nil
}

// buffer reads body into memory, at most MaxCoalescedBody bytes and within
// maxBufferedBytes over every flight reading at once, counting the memory
// it holds (its buffer's capacity, which never passes MaxCoalescedBody+1).
// A whole body is returned in a slice of about its own size, so that the
// cache, which counts what its answers hold, keeps no spare room, and
// release nil. A body too large to read whole is returned as far as it was
// read, still counted: release stops counting it, once its reader no
// longer holds it (tooLarge). A body that answers 100 reads in a row with
// no byte and no error fails with io.ErrNoProgress, as bufio's readers do.
func (c *coalescer) buffer(body io.Reader) (_ []byte, release func(), _ error) {
	const first = 512 // as bytes.Buffer starts: most answers are small
	var buf []byte
	var held int64
	defer func() {
		if release == nil {
			c.buffered.Add(-held)
		}
	}()
	for empty := 0; len(buf) <= MaxCoalescedBody; { // one byte past it says the body is larger
		if len(buf) == cap(buf) {
			n := min(max(2*cap(buf), first), MaxCoalescedBody+1)
			if c.buffered.Add(int64(n)-held) > maxBufferedBytes {
				c.buffered.Add(held - int64(n))
				break
			}
			held = int64(n)
			buf = append(make([]byte, 0, n), buf...)
		}
		m, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		switch {
		case err == io.EOF:
			if cap(buf)-len(buf) > len(buf)/4 {
				buf = bytes.Clone(buf)
			}
			return buf, nil, nil
		case err != nil:
			return nil, nil, err
		case m > 0:
			empty = 0
		default:
			if empty++; empty == 100 {
				return nil, nil, io.ErrNoProgress
			}
		}
	}
	return buf, func() { c.buffered.Add(-held) }, nil
}

// tooLarge is the body of an answer too large to share: the part the
// coalescer read (head), counted against maxBufferedBytes until it has
// been read or the body closed, then the rest as it comes.
type tooLarge struct {
	head    []byte
	release func() // once
	rest    io.ReadCloser
}

func (b *tooLarge) Read(p []byte) (int, error) {
	if b.head == nil {
		return b.rest.Read(p)
	}
	n := copy(p, b.head)
	if b.head = b.head[n:]; len(b.head) == 0 {
		b.head = nil // the memory is no longer held
		b.release()
	}
	return n, nil
}

func (b *tooLarge) Close() error {
	b.release()
	return b.rest.Close()
}

// response is a caller's own copy of the shared answer.
func (s *shared) response(req *http.Request) *http.Response {
	r := *s.resp
	r.Header, r.Trailer = s.resp.Header.Clone(), s.resp.Trailer.Clone()
	r.TransferEncoding = append([]string(nil), s.resp.TransferEncoding...)
	r.Body = io.NopCloser(bytes.NewReader(s.body))
	r.ContentLength = int64(len(s.body))
	r.Request = req
	return &r
}
