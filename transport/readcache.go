package transport

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// shareable reports whether an answer may go to other callers with the
// same key: it does not vary on a request header the key does not hold.
func shareable(h http.Header) bool {
	for _, v := range headerValues(h, "Vary") {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			known := false
			for _, s := range sharedHeaders {
				known = known || strings.EqualFold(name, s)
			}
			if !known {
				return false // "*" too
			}
		}
	}
	return true
}

// cacheTTL returns how long the read cache may keep resp, at most ttl:
// only a 200 without Set-Cookie, and never what its Cache-Control forbids
// keeping (no-store, no-cache) or what is fresh for less: its max-age, or
// without one its Expires less its Date, either less its Age (RFC 9111
// §4.2.1, §4.2.3), less delay, the time from when its request was sent
// (RFC 9111 §4.2.3's response_delay is age too): ttl itself runs from when
// the answer is kept. An Age or Expires that cannot be read, or an Expires
// without a Date, is taken as stale (RFC 9111 §5.3). "private" is kept:
// the cache is one user's (a key holds the credentials).
func cacheTTL(resp *http.Response, ttl, delay time.Duration) time.Duration {
	if ttl <= 0 || resp.StatusCode != http.StatusOK || len(headerValues(resp.Header, "Set-Cookie")) > 0 {
		return 0
	}
	maxAge := time.Duration(-1) // none given
	for _, v := range headerValues(resp.Header, "Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(name) {
			case "no-store", "no-cache":
				return 0
			case "max-age":
				n, ok := deltaSeconds(strings.Trim(arg, `"`))
				if !ok || n <= 0 {
					return 0
				}
				if maxAge < 0 { // the first, when it is given again (RFC 9111 §4.2.1)
					maxAge = time.Duration(n) * time.Second
				}
			}
		}
	}
	fresh, ok := freshFor(resp.Header, maxAge, delay)
	if !ok {
		return 0
	}
	return min(ttl, fresh)
}

// freshFor returns how long an answer with header h is still fresh, given
// its max-age (negative: none): its lifetime less its Age and less delay,
// the time since its request was sent. An answer that states no lifetime
// is fresh for MaxReadCacheTTL less its Age, from when it is kept (the
// cache's own bound decides). ok is false when it is stale or h cannot
// tell.
func freshFor(h http.Header, maxAge, delay time.Duration) (time.Duration, bool) {
	life, stated, ok := lifetime(h, maxAge)
	if !ok {
		return 0, false
	}
	if !stated {
		life, delay = MaxReadCacheTTL, 0
	}
	if ages := headerValues(h, "Age"); len(ages) > 0 {
		n, ok := deltaSeconds(strings.TrimSpace(ages[0]))
		if !ok {
			return 0, false
		}
		age := time.Duration(n) * time.Second
		if age >= life {
			return 0, false
		}
		life -= age
	}
	life -= delay // the freshness the answer states runs from when it was asked for
	return life, life > 0
}

// lifetime returns the freshness lifetime h states, given its max-age
// (negative: none): max-age, else Expires less Date. stated is false when
// h states neither; ok is false when its Expires cannot be read or comes
// without a readable Date.
func lifetime(h http.Header, maxAge time.Duration) (life time.Duration, stated, ok bool) {
	if maxAge >= 0 {
		return maxAge, true, true
	}
	exp := headerValues(h, "Expires")
	if len(exp) == 0 {
		return 0, false, true
	}
	e, err1 := http.ParseTime(exp[0])
	date := headerValues(h, "Date")
	if err1 != nil || len(date) == 0 {
		return 0, true, false
	}
	d, err2 := http.ParseTime(date[0])
	if err2 != nil {
		return 0, true, false
	}
	return e.Sub(d), true, true
}

// maxDeltaSeconds is what a delta-seconds greater than it is taken as
// (RFC 9111 §1.2.2: 2^31), which a time.Duration holds.
const maxDeltaSeconds = 1 << 31

// deltaSeconds reads a delta-seconds (RFC 9111 §1.2.2: digits alone), at
// most maxDeltaSeconds.
func deltaSeconds(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxDeltaSeconds { // all digits: only a range error
		return maxDeltaSeconds, true
	}
	return n, true
}

// headerValues returns the values of the header name in h, whatever the
// case its key is spelt in (a base RoundTripper may build a map by hand).
func headerValues(h http.Header, name string) []string {
	var vs []string
	for k, v := range h {
		if strings.EqualFold(k, name) {
			vs = append(vs, v...)
		}
	}
	return vs
}

// headerBytes is at most the memory h holds: each name's and value's
// string, the array of the values' string headers, and the map. A map of n
// names has at most about 2×8/7 n slots (its tables are powers of two of
// slots, each at most 7/8 full) and at least 8; a slot is a name's string
// header, a []string and a control byte, 41 bytes, in tables the
// allocator rounds up by at most 17%: 48 bytes a slot.
func headerBytes(h http.Header) int {
	if len(h) == 0 {
		return 0
	}
	n, values := 48*max(8, 2*((8*len(h)+6)/7)), 0
	for k, vs := range h {
		n += heapBytes(len(k))
		values += len(vs)
		for _, v := range vs {
			n += heapBytes(len(v))
		}
	}
	return n + heapBytes(16*values)
}

// heapBytes is at most the memory an allocation of n bytes takes: Go's
// size classes round one of up to 32 KiB up by less than a quarter and 16
// bytes, and a larger one up to whole 8 KiB pages.
func heapBytes(n int) int {
	const page = 8 << 10
	switch {
	case n == 0:
		return 0
	case n > 32<<10:
		return (n + page - 1) &^ (page - 1)
	}
	return n + n/4 + 16
}

// cacheRef is one entry of the cache's order: its key and its end when
// stored (an entry replaced since has another end).
type cacheRef struct {
	key   readKey
	until time.Time
}

// cached returns the entry under key that is still fresh at now. One that
// has expired leaves the cache then: its bytes are given back (all but its
// key's, until its reference leaves order).
func (t *Transport) cached(key readKey, now time.Time) *shared {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.cache[key]
	if s != nil && !now.Before(s.until) {
		delete(c.cache, key)
		c.drop(s, key)
		return nil
	}
	return s
}

// store caches s under key, in place of the entries that have expired at
// now and, while the cache has no room for s, of its oldest entries. Every
// byte an entry holds counts (s.size: body, headers and key), and so does
// the key of a reference order keeps to an entry replaced or dropped
// since, until it goes. Entries leave in the order they came (every TTL is
// at most MaxReadCacheTTL, so the oldest end first, or within
// MaxReadCacheTTL of it): each store costs O(1) amortized, never a scan of
// the cache.
func (t *Transport) store(key readKey, s *shared, now time.Time) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil {
		c.cache = make(map[readKey]*shared)
	}
	if old := c.cache[key]; old != nil {
		delete(c.cache, key)
		c.drop(old, key)
	}
	if s.size > maxCachedBytes {
		return
	}
	if c.staleKeys > 0 && c.staleKeys >= len(c.cache) {
		c.compact() // costs O(1) for each reference it drops
	}
	c.expire(now, s.size)
	key = key.owned()
	c.cache[key] = s
	c.bytes += s.size
	c.order = append(c.order, cacheRef{key, s.until})
}

// expire drops, oldest first, the entries that have expired at now and
// the order's references to entries replaced or dropped, and then the
// oldest entries while the cache has no room for one more of size bytes.
// Requires c.mu held.
func (c *coalescer) expire(now time.Time, size int) {
	i := 0
	for ; i < len(c.order); i++ {
		ref := c.order[i]
		s := c.cache[ref.key]
		if s == nil || !s.until.Equal(ref.until) {
			c.forget(ref)
			continue
		}
		full := len(c.cache) >= maxCachedEntries || c.bytes+size > maxCachedBytes
		if now.Before(ref.until) && !full {
			break
		}
		delete(c.cache, ref.key)
		c.bytes -= s.size
	}
	clear(c.order[:i]) // the array stays: its gone references must not keep their keys
	c.order = c.order[i:]
}

// drop counts out an entry taken from the cache under key whose reference
// order still holds: all but its key, which the reference keeps until it
// goes (forget). Requires c.mu held.
func (c *coalescer) drop(s *shared, key readKey) {
	c.bytes -= s.size - key.size()
	c.staleKeys++
}

// forget counts out the key of a reference to an entry replaced or
// dropped, as it leaves order. Requires c.mu held.
func (c *coalescer) forget(ref cacheRef) {
	c.bytes -= ref.key.size()
	c.staleKeys--
}

// compact drops order's references to entries replaced or dropped, and
// their keys' bytes. Of two references to one entry (it replaced an entry
// that ended at the same instant), it keeps the later, whose key the map
// holds. Requires c.mu held.
func (c *coalescer) compact() {
	kept := make(map[readKey]bool, len(c.cache))
	live := make([]cacheRef, 0, len(c.cache))
	for i := len(c.order) - 1; i >= 0; i-- {
		ref := c.order[i]
		if s := c.cache[ref.key]; s != nil && s.until.Equal(ref.until) && !kept[ref.key] {
			kept[ref.key] = true
			live = append(live, ref)
		} else {
			c.forget(ref)
		}
	}
	slices.Reverse(live)
	c.order = live
}
