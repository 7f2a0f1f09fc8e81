package throttle

import (
	"context"
	"sync"
	"time"
)

// ServerStore applies the server rule to keys, the rule of the Xbox services
// "Fine-Grained Rate Limiting" page: each key has a fixed burst window and a
// fixed sustain window (starting as Align says); a request is refused when
// either count is already at or over its limit, and every request, refused
// or not, increments both counts. Implementations must make each Take atomic
// and pass the conformance suite (package storetest). A store may use its
// own clock instead of now (a Redis store uses the server's TIME, so
// replicas agree); the in-memory MemoryServerStore uses now.
type ServerStore interface {
	// Take counts one request for k and decides it.
	Take(ctx context.Context, k Key, l Limit, now time.Time) (Decision, error)
	// Peek reports k's counts without counting a request.
	Peek(ctx context.Context, k Key, l Limit, now time.Time) (Decision, error)
}

// DefaultMaxKeys is the key cap of a MemoryServerStore or MemoryBudgetStore
// whose MaxKeys is 0.
const DefaultMaxKeys = 1 << 20

// MemoryServerStore is the in-memory ServerStore: the server rule for many keys, as the
// mock service applies it. The zero value is ready to use, with windows that
// start at the first request and DefaultMaxKeys keys. MemoryServerStore is safe for
// concurrent use; its fields must not change after the first call.
//
// Memory is bounded: a key whose windows have both ended is dropped lazily,
// and at MaxKeys a new key evicts idle keys or, failing that, the least recently active one of a random
// sample, whose counts restart. A key is judged idle at the time of the
// decision that sweeps it, whatever key that decision is for: decisions
// timed far ahead of the others (a second clock, a day ahead) find their
// keys ended. One store, one clock; MemoryBudgetStore likewise.
type MemoryServerStore struct {
	// Align chooses where new windows start; the zero value is FirstRequest.
	Align Align
	// MaxKeys caps the keys held; 0 means DefaultMaxKeys.
	MaxKeys int

	once sync.Once
	t    table[fixedWindows, *fixedWindows]
}

func (s *MemoryServerStore) init() {
	s.once.Do(func() { s.t.init(positiveOr(s.MaxKeys, DefaultMaxKeys)) })
}

// Take counts one request for k at now and decides it. It never returns an
// error.
func (s *MemoryServerStore) Take(_ context.Context, k Key, l Limit, now time.Time) (Decision, error) {
	return s.take(k, l, now), nil
}

func (s *MemoryServerStore) take(k Key, l Limit, now time.Time) Decision {
	s.init()
	h := s.t.lock(k)
	now = s.t.shift(now)
	d := s.t.get(h, instant(now)).Take(now, l, s.Align)
	s.t.mu.Unlock()
	return d
}

// Peek reports k's counts at now without counting a request. It never
// returns an error.
func (s *MemoryServerStore) Peek(_ context.Context, k Key, l Limit, now time.Time) (Decision, error) {
	s.init()
	var w fixedWindows
	h := s.t.lock(k)
	if p := s.t.m[h]; p != nil {
		w = *p
	}
	now = s.t.look(now)
	s.t.mu.Unlock()
	return w.Peek(now, l, s.Align), nil
}

// Len returns the number of keys held, idle ones not yet dropped included.
func (s *MemoryServerStore) Len() int {
	s.init()
	return s.t.len()
}

// positiveOr returns v when positive, else def (cmp.Or takes only zero as
// unset).
func positiveOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// A Resetter forgets counts: one key's, or every key's. The mock's admin
// API resets through it; MemoryServerStore and redisstore.Store implement it.
type Resetter interface {
	Reset(ctx context.Context, k Key) error
	ResetAll(ctx context.Context) error
}

// Reset forgets k's counts: its next request starts new windows.
func (s *MemoryServerStore) Reset(_ context.Context, k Key) error {
	s.init()
	h := s.t.lock(k)
	delete(s.t.m, h)
	s.t.mu.Unlock()
	return nil
}

// ResetAll forgets every key's counts.
func (s *MemoryServerStore) ResetAll(context.Context) error {
	s.init()
	s.t.mu.Lock()
	clear(s.t.m)
	s.t.mu.Unlock()
	return nil
}
