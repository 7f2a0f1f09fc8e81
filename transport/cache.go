package transport

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// raCache is the Retry-After cache, keyed like the service counts: user,
// title, and service scope. XSAPI keys it per API for the whole process; this
// key means one user's 429 never blocks another user.
//
// Entries expire by real time only: once the cache holds sweepAt entries,
// storing one first drops those whose deadline has passed. If it still holds
// maxEntries (that many keys blocked at once), the live entry whose deadline
// comes soonest and that no call is waiting on goes: it is the one whose
// loss lets the fewest calls through early, and only for the shortest time.
type raCache struct {
	n         atomic.Int32 // entries, read without the lock on the hot path
	mu        sync.Mutex
	m         map[throttle.Key]*raEntry
	nextSweep int // sweep when the cache reaches this many entries
}

type raEntry struct {
	deadline time.Time
	status   int
	// waiting is libHttpClient's "call pending": one call will send at the
	// deadline (the call that got the Retry-After and retries, or one that
	// holds for it), so every other call fails fast instead of firing at the
	// same instant (libHttpClient PR #511).
	waiting bool
}

// Bounds of the cache: when it sweeps, and the most entries it holds.
const (
	sweepAt    = 1024
	maxEntries = 1 << 16
)

// store records a deadline at now; the later deadline wins. pending marks
// the entry "call pending" for the storing call, which must release it.
func (c *raCache) store(k throttle.Key, now, deadline time.Time, status int, pending bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil {
		c.sweep(now)
		c.makeRoom()
		e = &raEntry{}
		c.m[k] = e
		c.n.Store(int32(len(c.m)))
	}
	if deadline.After(e.deadline) {
		e.deadline, e.status = deadline, status
	}
	e.waiting = e.waiting || pending
}

// sweep drops expired entries when the cache grows, so it stays bounded by
// the keys throttled at once. Requires c.mu held.
// The sweep runs again only when the cache has doubled, so its cost is
// amortized over the entries stored.
func (c *raCache) sweep(now time.Time) {
	if len(c.m) < max(c.nextSweep, sweepAt) {
		return
	}
	for k, e := range c.m {
		if !e.deadline.After(now) && !e.waiting {
			delete(c.m, k)
		}
	}
	c.nextSweep = 2 * len(c.m)
	c.n.Store(int32(len(c.m)))
}

// makeRoom evicts, when the cache is full, the live entry that ends soonest
// and has no waiter (the type's doc says why). Requires c.mu held.
func (c *raCache) makeRoom() {
	if len(c.m) < maxEntries {
		return
	}
	var victim throttle.Key
	var soonest time.Time
	for k, e := range c.m {
		if !e.waiting && (soonest.IsZero() || e.deadline.Before(soonest)) {
			victim, soonest = k, e.deadline
		}
	}
	if !soonest.IsZero() {
		delete(c.m, victim)
	}
}

// pending returns the time left before k's deadline and the cached status,
// or false when k is not blocked.
func (c *raCache) pending(k throttle.Key, now time.Time) (time.Duration, int, bool) {
	if c.n.Load() == 0 {
		return 0, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil || !e.deadline.After(now) {
		return 0, 0, false
	}
	return e.deadline.Sub(now), e.status, true
}

// claim makes the caller k's one waiter; false when another call waits.
func (c *raCache) claim(k throttle.Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil || e.waiting {
		return false
	}
	e.waiting = true
	return true
}

func (c *raCache) release(k throttle.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[k]; e != nil {
		e.waiting = false
	}
}
