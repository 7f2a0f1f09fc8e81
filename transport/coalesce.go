package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

// Bounds of read coalescing: an answer shared between callers is read in
// full first, so it is bounded, and so is the short cache.
const (
	MaxCoalescedBody = 16 << 20 // bytes of one shared answer
	maxCachedEntries = 4096
	maxCachedBytes   = 64 << 20
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
	bytes   int
}

// flight is one request under way that identical reads wait for.
type flight struct {
	start time.Time
	done  chan struct{} // closed when s or err is set
	s     *shared       // nil when the answer is not for the followers
	err   error
	// cancelled: the leader's own context ended, so its err is not the
	// followers' answer.
	cancelled bool
}

// shared is an answer read in full, for every caller that shares it.
type shared struct {
	resp  *http.Response // status, proto and header; no body
	body  []byte
	until time.Time // in the cache until then
	size  int       // bytes held, headers included
}

// coalesce answers req (whose key is key) from the cache, from a request
// already under way with the same key, or by sending it and sharing the
// answer.
func (t *Transport) coalesce(req *http.Request, key readKey) (*http.Response, error) {
	ctx := req.Context()
	clk := clock.From(ctx)
	var bound time.Time // the longest this call waits for others (followBound)
	for {
		now := clk.Now()
		if bound.IsZero() {
			bound = now.Add(t.followBound(key.pol))
		}
		if s := t.cached(key.cacheKey(), now); s != nil {
			t.emit(ctx, Event{Kind: EventCoalesced, Reason: "cache"}, nil)
			return s.response(req), nil
		}
		f, lead := t.join(key, now)
		if lead {
			resp, err := t.lead(req, key, f)
			t.land(key, f)
			return resp, err
		}
		if err := follow(ctx, clk, bound.Sub(now), f); err != nil {
			return nil, err
		}
		switch {
		case f.cancelled && ctx.Err() == nil:
			continue // the call that sent it was cancelled; this one was not
		case f.err != nil:
			return nil, f.err
		case f.s == nil: // an answer for the leader alone: send this call's own
			return t.roundTrip(req)
		}
		t.emit(ctx, Event{Kind: EventCoalesced, Reason: "shared"}, nil)
		return f.s.response(req), nil
	}
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
// itself: its waits (the retry window, or WithMaxWait's longer bound) and
// then one attempt.
func (t *Transport) followBound(p Policy) time.Duration {
	wait := t.window()
	if p.failFast || p.noRetry {
		wait = 0
	}
	wait = max(wait, p.maxWait)
	timeout := attemptTimeout(t.window(), 0)
	if p.longCall {
		timeout = LongCallTimeout
	}
	return wait + timeout
}

// join returns the flight under way for key, or a new one this call leads.
// A flight older than maxJoinAge takes no one: the new call leads its own.
func (t *Transport) join(key readKey, now time.Time) (*flight, bool) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flights[key]; f != nil && now.Sub(f.start) < maxJoinAge {
		return f, false
	}
	if c.flights == nil {
		c.flights = make(map[readKey]*flight)
	}
	f := &flight{start: now, done: make(chan struct{})}
	c.flights[key] = f // replaces a stale one, whose followers keep waiting for it
	return f, true
}

// land ends a flight: later reads send again (or find the cache).
func (t *Transport) land(key readKey, f *flight) {
	c := &t.reads
	c.mu.Lock()
	if c.flights[key] == f {
		delete(c.flights, key)
	}
	c.mu.Unlock()
	close(f.done)
}

// lead sends req for the flight f and returns the leader's own answer; it
// gives the followers a copy of it (f.s) when it may be shared, and caches
// it when it may be kept. The body is read in full under the attempt
// timeout (BoundBody) and the leader's context.
func (t *Transport) lead(req *http.Request, key readKey, f *flight) (*http.Response, error) {
	resp, renewed, err := t.do(req.WithContext(withPolicy(req.Context(), func(p *Policy) { p.boundBody = true })))
	if err != nil {
		f.err, f.cancelled = err, req.Context().Err() != nil
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxCoalescedBody+1))
	if err == nil && len(body) > MaxCoalescedBody {
		err = fmt.Errorf("transport: a coalesced answer is over %d bytes", MaxCoalescedBody)
	}
	if err != nil {
		f.err, f.cancelled = err, req.Context().Err() != nil
		return nil, err
	}
	head := *resp
	head.Body, head.Header = nil, resp.Header.Clone()
	s := &shared{resp: &head, body: body, size: len(body) + headerBytes(head.Header) + key.size()}
	// An answer to a renewed token is not the answer to the token the
	// followers and the cache's later callers hold: it stays the leader's.
	if !renewed && shareable(resp.Header) {
		f.s = s
		if ttl := cacheTTL(resp, min(t.ReadCacheTTL, MaxReadCacheTTL)); ttl > 0 {
			now := clock.From(req.Context()).Now()
			s.until = now.Add(ttl)
			t.store(key.cacheKey(), s, now)
		}
	}
	return s.response(req), nil
}

// response is a caller's own copy of the shared answer.
func (s *shared) response(req *http.Request) *http.Response {
	r := *s.resp
	r.Header = s.resp.Header.Clone()
	r.Body = io.NopCloser(bytes.NewReader(s.body))
	r.ContentLength = int64(len(s.body))
	r.Request = req
	return &r
}
