package transport

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
	"github.com/xblgo/fgrl/internal/xblauth"
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
)

// coalescer shares identical GETs of one user and keeps their 200 answers
// for ReadCacheTTL. (golang.org/x/sync/singleflight would share them, but
// its followers block where the simulator's virtual clock cannot see them;
// here they wait through the call's clock.)
type coalescer struct {
	mu      sync.Mutex
	flights map[readKey]*flight // requests under way, by readKey
	cache   map[readKey]*shared
	bytes   int
}

// flight is one request under way that identical reads wait for.
type flight struct {
	done chan struct{} // closed when s or err is set
	s    *shared
	err  error
}

// shared is an answer read in full, for every caller that shares it.
type shared struct {
	resp  *http.Response // status, proto and header; no body
	body  []byte
	until time.Time // in the cache until then
}

// coalescable reports whether req may share its answer: a GET with no body
// and no Range.
func coalescable(req *http.Request) bool {
	return req.Method == http.MethodGet && (req.Body == nil || req.Body == http.NoBody) && req.Header.Get("Range") == ""
}

// readKey names what an answer depends on: the user (the userhash of the
// Authorization, never shared across users), the title, the URL and the
// headers that choose a representation; and the call's policy (Background,
// FailFast, WithMaxWait), so that no call waits on one that may wait
// longer than it would: an interactive read never joins a background one.
type readKey struct {
	user, title, host, uri, contract, accept, language string
	background, failFast                               bool
	maxWait                                            time.Duration
}

func (t *Transport) readKeyOf(req *http.Request) readKey {
	uhs, _, _ := xblauth.Parse(headerFold(req.Header, "Authorization"))
	p := PolicyOf(req.Context())
	return readKey{user: uhs, title: t.TitleID, host: strings.ToLower(cmp.Or(req.Host, req.URL.Host)), uri: req.URL.RequestURI(),
		contract: req.Header.Get("X-Xbl-Contract-Version"), accept: req.Header.Get("Accept"), language: req.Header.Get("Accept-Language"),
		background: p.background, failFast: p.failFast, maxWait: p.maxWait}
}

// size is the bytes k holds, for the cache's bound.
func (k readKey) size() int {
	return 64 + len(k.user) + len(k.title) + len(k.host) + len(k.uri) + len(k.contract) + len(k.accept) + len(k.language)
}

// coalesce answers req from the cache, from a request already under way for
// the same user and URL, or by sending it and sharing the answer.
func (t *Transport) coalesce(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	clk := clock.From(ctx)
	key := t.readKeyOf(req)
	for {
		if s := t.cached(key, clk.Now()); s != nil {
			t.emit(ctx, Event{Kind: EventCoalesced, Reason: "cache"}, nil)
			return s.response(req), nil
		}
		f, lead := t.join(key)
		if lead {
			f.s, f.err = t.fetch(req, key)
			t.land(key, f)
		} else if err := clock.Wait(ctx, clk, f.done); err != nil {
			return nil, err // a coalescable request has no body to close
		}
		if f.err != nil && !lead && ctx.Err() == nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
			continue // the call that sent it was cancelled; this one was not
		}
		if f.err != nil {
			return nil, f.err
		}
		if !lead {
			t.emit(ctx, Event{Kind: EventCoalesced, Reason: "shared"}, nil)
		}
		return f.s.response(req), nil
	}
}

// join returns the flight under way for key, or a new one this call leads.
func (t *Transport) join(key readKey) (*flight, bool) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flights[key]; f != nil {
		return f, false
	}
	if c.flights == nil {
		c.flights = make(map[readKey]*flight)
	}
	f := &flight{done: make(chan struct{})}
	c.flights[key] = f
	return f, true
}

// land ends a flight: later reads send again (or find the cache).
func (t *Transport) land(key readKey, f *flight) {
	c := &t.reads
	c.mu.Lock()
	delete(c.flights, key)
	c.mu.Unlock()
	close(f.done)
}

// fetch sends req and reads its answer in full, caching a 200.
func (t *Transport) fetch(req *http.Request, key readKey) (*shared, error) {
	resp, err := t.roundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxCoalescedBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxCoalescedBody {
		return nil, fmt.Errorf("transport: a coalesced answer is over %d bytes", MaxCoalescedBody)
	}
	head := *resp
	head.Body, head.Header = nil, resp.Header.Clone()
	s := &shared{resp: &head, body: body}
	if ttl := min(t.ReadCacheTTL, MaxReadCacheTTL); ttl > 0 && resp.StatusCode == http.StatusOK {
		now := clock.From(req.Context()).Now()
		s.until = now.Add(ttl)
		t.store(key, s, now)
	}
	return s, nil
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

func (t *Transport) cached(key readKey, now time.Time) *shared {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.cache[key]
	if s == nil || !now.Before(s.until) {
		return nil
	}
	return s
}

// store caches s; when the cache is full it first drops what has expired
// at now, and if it is still full s is not kept.
func (t *Transport) store(key readKey, s *shared, now time.Time) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil {
		c.cache = make(map[readKey]*shared)
	}
	if old := c.cache[key]; old != nil {
		delete(c.cache, key)
		c.bytes -= key.size() + len(old.body)
	}
	size := key.size() + len(s.body)
	full := func() bool { return len(c.cache) >= maxCachedEntries || c.bytes+size > maxCachedBytes }
	if full() {
		for k, old := range c.cache {
			if !now.Before(old.until) {
				delete(c.cache, k)
				c.bytes -= k.size() + len(old.body)
			}
		}
	}
	if !full() {
		c.cache[key] = s
		c.bytes += size
	}
}
