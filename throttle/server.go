package throttle

import (
	"context"
	"sync"
	"time"
)

// ServerStore applies the server rule (see Windows) to keys. Implementations
// must make each Take atomic. A store may use its own clock instead of now (a
// Redis store uses the server's TIME, so replicas agree); the in-memory Server
// uses now.
type ServerStore interface {
	// Take counts one request for k and decides it.
	Take(ctx context.Context, k Key, l Limit, now time.Time) (Decision, error)
	// Peek reports k's counts without counting a request.
	Peek(ctx context.Context, k Key, l Limit, now time.Time) (Decision, error)
}

// DefaultMaxKeys is the key cap of a Server or Budget whose MaxKeys is 0.
const DefaultMaxKeys = 1 << 20

// Server is the in-memory ServerStore: the server rule for many keys, as the
// mock service applies it. The zero value is ready to use, with windows that
// start at the first request and DefaultMaxKeys keys. Server is safe for
// concurrent use; its fields must not change after the first call.
//
// Memory is bounded: a key whose windows have both ended is dropped lazily,
// and at MaxKeys (enforced per shard: a shard holds MaxKeys/64, so a
// skewed key set can be evicted before the total reaches MaxKeys) a new key
// evicts idle keys or, failing that, the least recently active one of a random
// sample, whose counts restart.
type Server struct {
	// Align chooses where new windows start; the zero value is FirstRequest.
	Align Align
	// MaxKeys caps the keys held; 0 means DefaultMaxKeys.
	MaxKeys int

	once sync.Once
	t    table[Windows, *Windows]
}

func (s *Server) init() {
	s.once.Do(func() { s.t.init(cmpOr(s.MaxKeys, DefaultMaxKeys)) })
}

// Take counts one request for k at now and decides it. It never returns an
// error.
func (s *Server) Take(_ context.Context, k Key, l Limit, now time.Time) (Decision, error) {
	return s.take(k, l, now), nil
}

func (s *Server) take(k Key, l Limit, now time.Time) Decision {
	s.init()
	sh, h := s.t.lock(k)
	d := s.t.get(sh, h, now.UnixNano()).Take(now, l, s.Align)
	sh.mu.Unlock()
	return d
}

// Peek reports k's counts at now without counting a request. It never
// returns an error.
func (s *Server) Peek(_ context.Context, k Key, l Limit, now time.Time) (Decision, error) {
	s.init()
	var w Windows
	sh, h := s.t.lock(k)
	if p := sh.m[h]; p != nil {
		w = *p
	}
	sh.mu.Unlock()
	return w.Peek(now, l, s.Align), nil
}

// Len returns the number of keys held, idle ones not yet dropped included.
func (s *Server) Len() int {
	s.init()
	return s.t.len()
}

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// A Resetter forgets counts: one key's, or every key's. The mock's admin
// API resets through it; Server and redisstore.Store implement it.
type Resetter interface {
	Reset(ctx context.Context, k Key) error
	ResetAll(ctx context.Context) error
}

// Reset forgets k's counts: its next request starts new windows.
func (s *Server) Reset(_ context.Context, k Key) error {
	s.init()
	sh, h := s.t.lock(k)
	delete(sh.m, h)
	sh.mu.Unlock()
	return nil
}

// ResetAll forgets every key's counts.
func (s *Server) ResetAll(context.Context) error {
	s.init()
	for i := range s.t.shards {
		sh := &s.t.shards[i]
		sh.mu.Lock()
		clear(sh.m)
		sh.mu.Unlock()
	}
	return nil
}
