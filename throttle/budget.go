package throttle

import (
	"context"
	"sync"
	"time"
)

// DefaultMargin is the margin a budget's zero Margin means: it lengthens both
// periods by a second, to absorb the delay between a client sending a
// request and the service counting it.
const DefaultMargin = time.Second

// MarginOr returns the margin a configured value means: m when positive
// (at most a SustainPeriod: a longer one is read as that, the periods'
// ends never overflowing), DefaultMargin for zero, none for a negative m.
func MarginOr(m time.Duration) time.Duration {
	if m == 0 {
		return DefaultMargin
	}
	return min(max(m, 0), SustainPeriod)
}

// BudgetStore holds client budgets for many keys. A budget admits a call at
// t only if fewer than Burst admissions lie in (t-BurstPeriod-margin, t] and
// fewer than Sustain in (t-SustainPeriod-margin, t], so no span of a period
// ever holds more than its limit, whatever alignment the server's fixed
// windows use; the margin absorbs the difference between when a client sends
// and when the server counts. Several transports share one store on purpose,
// so that together they stay within one budget. Implementations must make
// each Reserve atomic and pass the conformance suite (package storetest).
// Every method must return once ctx is done: a caller asks on its own
// goroutine and waits for the answer (package transport starts none of its
// own), so a store that ignores ctx holds the caller past its deadline
// (transport's TestSlowStore tests: a store 3 s late holds the call 3 s).
type BudgetStore interface {
	// Reserve books the earliest slot for a call for k if it comes within
	// maxWait of now: the call must be sent no earlier than now+Wait, so
	// callers that book in turn are served in turn; maxWait 0 admits now or
	// never. It is counted at now+Wait, or at the key's newest booking
	// when that is later (a booking ahead that a Release left alone,
	// another caller's clock a little ahead): counted later than it is
	// sent, which only makes the budget stricter, and Admission.Slot says
	// when. Such a call may go before that booking.
	Reserve(ctx context.Context, k Key, l Limit, now time.Time, maxWait time.Duration) (Admission, error)
	// Release gives back a slot Reserve booked (Admission.Slot) for a call
	// that was then not sent, so it no longer counts. Each slot goes back
	// once: two calls booked at one instant may hold equal slots (a
	// MemoryBudgetStore's are the instant), and a second Release of one
	// gives back the other's.
	Release(ctx context.Context, k Key, l Limit, slot int64) error
	// Block refuses calls for k from now until until (a server Retry-After).
	Block(ctx context.Context, k Key, now, until time.Time) error
	// Sync absorbs a server's report of one window: used requests in a
	// window of period p that ends in reset. When the server has counted
	// more than the budget holds for that window, the missing requests are
	// recorded at the window's start; a report of fewer changes nothing, so
	// the budget only ever becomes stricter.
	Sync(ctx context.Context, k Key, l Limit, now time.Time, p Period, used int, reset time.Duration) error
	// Snapshot reports k's budget.
	Snapshot(ctx context.Context, k Key, l Limit, now time.Time) (Snapshot, error)
}

// MemoryBudgetStore is the in-memory BudgetStore. The zero value is ready to use, with
// DefaultMargin and DefaultMaxKeys keys. MemoryBudgetStore is safe for concurrent use; its
// fields must not change after the first call. Keys are bounded as in MemoryServerStore.
type MemoryBudgetStore struct {
	// Margin lengthens both periods, to absorb the delay between a client
	// sending a request and the server counting it. Zero means DefaultMargin;
	// negative means none. (The same zero means the same in
	// transport.Transport and redisstore.Store.)
	Margin time.Duration
	// MaxKeys caps the keys held; 0 means DefaultMaxKeys.
	MaxKeys int

	once    sync.Once
	t       table[slidingLog, *slidingLog]
	learned learnedLimits
}

func (b *MemoryBudgetStore) init() {
	b.once.Do(func() { b.t.init(positiveOr(b.MaxKeys, DefaultMaxKeys)) })
}

// lock locks the table and returns k's budget, created when missing, and
// now as it takes it (table.shift).
func (b *MemoryBudgetStore) lock(k Key, now time.Time) (*slidingLog, time.Time) {
	b.init()
	h := b.t.lock(k)
	now = b.t.shift(now)
	return b.t.get(h, instant(now)), now
}

// Reserve books the earliest slot for a call for k within maxWait of now. It
// never returns an error.
func (b *MemoryBudgetStore) Reserve(_ context.Context, k Key, l Limit, now time.Time, maxWait time.Duration) (Admission, error) {
	s, now := b.lock(k, now)
	defer b.t.mu.Unlock()
	return s.Reserve(now, l, MarginOr(b.Margin), maxWait), nil
}

// Release gives back a slot Reserve booked for k. It never returns an error.
func (b *MemoryBudgetStore) Release(_ context.Context, k Key, _ Limit, slot int64) error {
	b.init()
	h := b.t.lock(k)
	defer b.t.mu.Unlock()
	if s := b.t.m[h]; s != nil {
		s.Release(slot)
	}
	return nil
}

// Block refuses calls for k from now until until. It never returns an error.
func (b *MemoryBudgetStore) Block(_ context.Context, k Key, now, until time.Time) error {
	s, _ := b.lock(k, now)
	defer b.t.mu.Unlock()
	s.Block(b.t.shift(until))
	return nil
}

// Sync absorbs a server report of one window for k. It never returns an error.
func (b *MemoryBudgetStore) Sync(_ context.Context, k Key, l Limit, now time.Time, p Period, used int, reset time.Duration) error {
	s, now := b.lock(k, now)
	defer b.t.mu.Unlock()
	s.Sync(now, l, p, used, reset)
	return nil
}

// Snapshot reports k's budget at now, without creating it. It never returns
// an error.
func (b *MemoryBudgetStore) Snapshot(_ context.Context, k Key, l Limit, now time.Time) (Snapshot, error) {
	b.init()
	h := b.t.lock(k)
	defer b.t.mu.Unlock()
	s := b.t.m[h]
	if s == nil {
		s = new(slidingLog)
	}
	snap := s.Snapshot(b.t.look(now), l, MarginOr(b.Margin))
	if !snap.BlockedUntil.IsZero() {
		snap.BlockedUntil = b.t.unshift(snap.BlockedUntil)
	}
	return snap, nil
}

// Len returns the number of keys held, idle ones not yet dropped included.
func (b *MemoryBudgetStore) Len() int {
	b.init()
	return b.t.len()
}
