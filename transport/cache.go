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
type raCache struct {
	n  atomic.Int32 // entries, read without the lock on the hot path
	mu sync.Mutex
	m  map[throttle.Key]*raEntry
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

// store records a deadline; the later deadline wins. pending marks the entry
// "call pending" for the storing call, which must release it.
func (c *raCache) store(k throttle.Key, deadline time.Time, status int, pending bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweep(deadline)
	e := c.m[k]
	if e == nil {
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
func (c *raCache) sweep(now time.Time) {
	if len(c.m) < 1024 {
		return
	}
	for k, e := range c.m {
		if !e.deadline.After(now) && !e.waiting {
			delete(c.m, k)
		}
	}
	c.n.Store(int32(len(c.m)))
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
