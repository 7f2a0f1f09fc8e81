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
	for _, v := range h.Values("Vary") {
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
// keeping (no-store, no-cache) or keeps for less (max-age). "private" is
// kept: the cache is one user's (a key holds the credentials).
func cacheTTL(resp *http.Response, ttl time.Duration) time.Duration {
	if ttl <= 0 || resp.StatusCode != http.StatusOK || len(resp.Header.Values("Set-Cookie")) > 0 {
		return 0
	}
	for _, v := range resp.Header.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(name) {
			case "no-store", "no-cache":
				return 0
			case "max-age":
				n, err := strconv.ParseInt(strings.Trim(arg, `"`), 10, 64)
				if err != nil || n <= 0 {
					return 0
				}
				ttl = min(ttl, time.Duration(min(n, int64(MaxReadCacheTTL/time.Second)))*time.Second)
			}
		}
	}
	return ttl
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

// store caches s under key; when the cache is full it first drops what has
// expired at now, and if it is still full s is not kept. Every byte an
// entry holds counts (s.size: body, headers and key).
func (t *Transport) store(key readKey, s *shared, now time.Time) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil {
		c.cache = make(map[readKey]*shared)
	}
	if old := c.cache[key]; old != nil {
		delete(c.cache, key)
		c.bytes -= old.size
	}
	full := func() bool { return len(c.cache) >= maxCachedEntries || c.bytes+s.size > maxCachedBytes }
	if full() {
		for k, old := range c.cache {
			if !now.Before(old.until) {
				delete(c.cache, k)
				c.bytes -= old.size
			}
		}
	}
	if !full() {
		c.cache[key] = s
		c.bytes += s.size
	}
}
