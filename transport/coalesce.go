package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

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

// coalescer shares identical GETs of one user (singleflight) and keeps
// their 200 answers for ReadCacheTTL.
type coalescer struct {
	group singleflight.Group
	mu    sync.Mutex
	cache map[string]*shared
	bytes int
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
// headers that choose a representation.
func (t *Transport) readKey(req *http.Request) string {
	uhs, _, _ := xblauth.Parse(headerFold(req.Header, "Authorization"))
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	return strings.Join([]string{uhs, t.TitleID, strings.ToLower(host), req.URL.RequestURI(),
		req.Header.Get("X-Xbl-Contract-Version"), req.Header.Get("Accept"), req.Header.Get("Accept-Language")}, "\x00")
}

// coalesce answers req from the cache, from a request already under way for
// the same user and URL, or by sending it and sharing the answer.
func (t *Transport) coalesce(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	key := t.readKey(req)
	for {
		if s := t.cached(key, clock.From(ctx).Now()); s != nil {
			t.emit(ctx, Event{Kind: EventCoalesced, Reason: "cache"}, nil)
			return s.response(req), nil
		}
		v, err, joined := t.reads.group.Do(key, func() (any, error) { return t.fetch(req, key) })
		if err != nil && joined && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue // the call that sent it was cancelled; this one was not
		}
		if err != nil {
			return nil, err
		}
		if joined {
			t.emit(ctx, Event{Kind: EventCoalesced, Reason: "shared"}, nil)
		}
		return v.(*shared).response(req), nil
	}
}

// fetch sends req and reads its answer in full, caching a 200.
func (t *Transport) fetch(req *http.Request, key string) (*shared, error) {
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

func (t *Transport) cached(key string, now time.Time) *shared {
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
func (t *Transport) store(key string, s *shared, now time.Time) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil {
		c.cache = make(map[string]*shared)
	}
	if old := c.cache[key]; old != nil {
		delete(c.cache, key)
		c.bytes -= len(key) + len(old.body)
	}
	size := len(key) + len(s.body)
	full := func() bool { return len(c.cache) >= maxCachedEntries || c.bytes+size > maxCachedBytes }
	if full() {
		for k, old := range c.cache {
			if !now.Before(old.until) {
				delete(c.cache, k)
				c.bytes -= len(k) + len(old.body)
			}
		}
	}
	if !full() {
		c.cache[key] = s
		c.bytes += size
	}
}
