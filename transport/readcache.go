package transport

import (
	"net/http"
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
// its max-age (negative: none): its lifetime (max-age, else Expires less
// Date) less its Age and less delay, the time since its request was sent.
// An answer that states neither is fresh for MaxReadCacheTTL (the cache's
// own bound decides). ok is false when it is stale or h cannot tell.
func freshFor(h http.Header, maxAge, delay time.Duration) (time.Duration, bool) {
	life := maxAge
	if life < 0 {
		exp := headerValues(h, "Expires")
		if len(exp) == 0 {
			return MaxReadCacheTTL, true // nothing says how long: ttl decides
		}
		e, err1 := http.ParseTime(exp[0])
		date := headerValues(h, "Date")
		if err1 != nil || len(date) == 0 {
			return 0, false
		}
		d, err2 := http.ParseTime(date[0])
		if err2 != nil {
			return 0, false
		}
		life = e.Sub(d)
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

// headerBytes is what h holds, names and values, with a slice's overhead
// for each.
func headerBytes(h http.Header) int {
	n := 0
	for k, vs := range h {
		n += len(k) + 48
		for _, v := range vs {
			n += len(v) + 16
		}
	}
	return n
}

// cacheRef is one entry of the cache's order: its key and its end when
// stored (an entry replaced since has another end).
type cacheRef struct {
	key   readKey
	until time.Time
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

// store caches s under key, unless the cache is still full once the
// entries that have expired at now are gone. Every byte an entry holds
// counts (s.size: body, headers and key), and so does the key of a
// reference order keeps to an entry replaced since, until it goes. Entries leave in the order they
// came (every TTL is at most MaxReadCacheTTL, so the oldest end first, or
// within MaxReadCacheTTL of it): each store costs O(1) amortized, never a
// scan of the cache.
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
	c.expire(now)
	if c.bytes+s.size > maxCachedBytes && c.staleKeys > 0 {
		c.compact()
	}
	if len(c.cache) >= maxCachedEntries || c.bytes+s.size > maxCachedBytes {
		return
	}
	key = key.owned()
	c.cache[key] = s
	c.bytes += s.size
	c.order = append(c.order, cacheRef{key, s.until})
}

// expire drops the entries that have expired at now, oldest first, and the
// order's references to entries replaced or dropped. Requires c.mu held.
func (c *coalescer) expire(now time.Time) {
	i := 0
	for ; i < len(c.order); i++ {
		ref := c.order[i]
		s := c.cache[ref.key]
		if s != nil && s.until.Equal(ref.until) {
			if now.Before(ref.until) {
				break
			}
			delete(c.cache, ref.key)
			c.bytes -= s.size
		} else {
			c.forget(ref)
		}
	}
	clear(c.order[:i]) // the array stays: its gone references must not keep their keys
	c.order = c.order[i:]
	if len(c.order) > 2*maxCachedEntries { // references to replaced entries: keep the live ones
		c.compact()
	}
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
// their keys' bytes. Requires c.mu held.
func (c *coalescer) compact() {
	live := c.order[:0]
	for _, ref := range c.order {
		if s := c.cache[ref.key]; s != nil && s.until.Equal(ref.until) {
			live = append(live, ref)
		} else {
			c.forget(ref)
		}
	}
	c.order = append([]cacheRef(nil), live...)
}
