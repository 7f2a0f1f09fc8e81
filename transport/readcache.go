package transport

import (
	"cmp"
	"container/heap"
	"hash/maphash"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
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

// kept is the copy of s the cache keeps under key until then, its size
// counted: a head whose strings are its own (ownHeader: net/http cuts
// Status and Proto out of the whole status line it read, and a base
// RoundTripper may cut a header value out of a larger string, which the
// copy would keep whole), and no TLS state (its answers came on no
// connection of their later callers', and a connection's state holds the
// server's certificates, up to 256 KiB).
func (s *shared) kept(key readKey, until time.Time) *shared {
	head := *s.resp
	head.TLS = nil
	head.Status, head.Proto = strings.Clone(head.Status), strings.Clone(head.Proto)
	if te := head.TransferEncoding; te != nil {
		head.TransferEncoding = make([]string, len(te))
		for i, v := range te {
			head.TransferEncoding[i] = strings.Clone(v)
		}
	}
	head.Header, head.Trailer = ownHeader(head.Header), ownHeader(head.Trailer)
	return &shared{resp: &head, body: s.body, until: until, size: cap(s.body) + headBytes(&head) + key.size()}
}

// ownHeader is h.Clone with names and values that are strings of its own.
func ownHeader(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	values := make([]string, n) // one array for every name's values, as Clone does
	c := make(http.Header, len(h))
	for k, vs := range h {
		if vs == nil { // as Clone keeps it
			c[strings.Clone(k)] = nil
			continue
		}
		own := values[:len(vs):len(vs)]
		values = values[len(vs):]
		for i, v := range vs {
			own[i] = strings.Clone(v)
		}
		c[strings.Clone(k)] = own
	}
	return c
}

// headBytes is at most the memory the head h holds: its status line's
// strings, its transfer codings, its header and its trailer.
func headBytes(h *http.Response) int {
	n := heapBytes(len(h.Status)) + heapBytes(len(h.Proto)) + heapBytes(16*len(h.TransferEncoding)) + headerBytes(h.Header) + headerBytes(h.Trailer)
	for _, v := range h.TransferEncoding {
		n += heapBytes(len(v))
	}
	return n
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

// heapBytes is at most the memory an allocation of n bytes takes (a
// string of n bytes, an array): Go's size classes round one of up to
// 32 KiB up by less than a quarter and 16 bytes, and a larger one up to
// whole 8 KiB pages.
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

// cached returns the entry under key that is still fresh at now. One that
// has expired leaves the cache then, and its bytes are given back.
func (t *Transport) cached(key readKey, now time.Time) *shared {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.cache[key]
	if s != nil && !now.Before(s.until) {
		c.drop(s)
		return nil
	}
	return s
}

// storeLanded is store for the answer s of the flight f, unless a write
// to its URL ended while f was under way (invalidate).
func (t *Transport) storeLanded(f *flight, key readKey, s *shared, now time.Time) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	if !f.written {
		c.put(key, s, now)
	}
}

// store caches s under key, in place of the entries that have expired at
// now and, while the cache has no room for s, of its oldest entries. Every
// byte an entry holds counts (s.size: body, head and key), until it leaves
// the cache.
//
// No store scans the cache. Entries do not end in the order they came (a
// max-age shorter than another's ends first), so those that have expired
// are found on the heap of ends, the first to end on top: each leaves it
// once, at O(log n) for n entries (at most 4,096: 12 levels). Room is then
// made from the oldest, at the front of order (from head): each place is
// passed once, and compaction, when the places of entries dropped are as
// many as the entries, costs O(1) for each of them.
func (t *Transport) store(key readKey, s *shared, now time.Time) {
	c := &t.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(key, s, now)
}

// put is store with c.mu held.
func (c *coalescer) put(key readKey, s *shared, now time.Time) {
	if c.cache == nil {
		c.cache = make(map[readKey]*shared)
	}
	if old := c.cache[key]; old != nil {
		c.drop(old)
	}
	if s.size > maxCachedBytes {
		return
	}
	for len(c.ends) > 0 && !now.Before(c.ends[0].until) {
		c.drop(c.ends[0])
	}
	if c.stale > 0 && c.stale >= len(c.cache) {
		c.compact()
	}
	c.makeRoom(s.size)
	s.key, s.ref = key.owned(), len(c.order)
	c.cache[s.key] = s
	c.bytes += s.size
	c.order = append(c.order, s)
	heap.Push(&c.ends, s)
	c.target(s.key.target())
}

// makeRoom drops the oldest entries while the cache has no room for one
// more of size bytes, at most maxCachedBytes (an empty cache has room: it
// stops before the end of order). Requires c.mu held.
func (c *coalescer) makeRoom(size int) {
	for ; len(c.cache) >= maxCachedEntries || c.bytes+size > maxCachedBytes; c.head++ {
		if s := c.order[c.head]; s != nil {
			c.drop(s)
		}
	}
}

// drop takes the entry s out of the cache, its reference in order too
// (nil in its place, until compaction), and gives its bytes back. Requires
// c.mu held.
func (c *coalescer) drop(s *shared) {
	delete(c.cache, s.key)
	c.untarget(s.key.target())
	heap.Remove(&c.ends, s.end)
	c.order[s.ref] = nil
	c.bytes -= s.size
	c.stale++
}

// target is the URL a read reads, as its key holds it.
type target struct{ scheme, urlHost, host, uri string }

func (k readKey) target() target { return target{k.scheme, k.urlHost, k.host, k.uri} }

// targetOf is the URL req reads or writes, as readKeyOf spells it, and
// false when the transport cannot tell which resource net/http will ask
// for: a host that is not ASCII (net/http dials it through IDNA, which
// case-folds otherwise: lower-cased, "ẞ" would be "ß", another host than
// the "ss" net/http dials), a port that is no port number (dialHost), or a URL
// with Opaque set (net/http sends it as given: "//host/path" as the
// absolute form of "http://host/path"). Such a read is not shared, and such
// a write drops everything (invalidate). The URL's host is taken as
// net/http dials it (dialHost); the Host header as it is sent.
func targetOf(req *http.Request) (target, bool) {
	host := cmp.Or(req.Host, req.URL.Host)
	if req.URL.Opaque != "" || !safetext.IsASCII(host) || !safetext.IsASCII(req.URL.Host) {
		return target{}, false
	}
	scheme := strings.ToLower(req.URL.Scheme)
	urlHost, ok := dialHost(scheme, strings.ToLower(req.URL.Host))
	if !ok {
		return target{}, false
	}
	return target{scheme, urlHost, strings.ToLower(host), req.URL.RequestURI()}, true
}

// dialHost is the URL host h as net/http dials it for scheme: its port
// read as a number (net.Dial reads "080" as 80) and the scheme's default
// port left out, so that every spelling of one address is one text. ok is
// false when h has a port that is empty, not digits, or past 65535, which
// the transport does not read.
func dialHost(scheme, h string) (_ string, ok bool) {
	i := strings.LastIndexByte(h, ':')
	if i < 0 || i < strings.LastIndexByte(h, ']') { // an IPv6 literal's colons are inside its brackets
		return h, true
	}
	port := h[i+1:]
	n, err := strconv.ParseUint(port, 10, 16)
	switch {
	case err != nil:
		return "", false
	case scheme == "http" && n == 80, scheme == "https" && n == 443:
		return h[:i], true
	case port[0] != '0':
		return h, true // as it is read: no copy
	}
	return h[:i+1] + strconv.FormatUint(n, 10), true
}

// target and untarget count one more and one fewer entry or flight that
// reads u, under u's hash (targets): the map keeps no string of the
// requests' (a flight's key is the request's own), and a hash two URLs
// share only makes a write look through the cache for nothing. Require
// c.mu held.
func (c *coalescer) target(u target) {
	if c.targets == nil {
		c.targets = make(map[uint64]int)
		c.seed = maphash.MakeSeed()
	}
	c.targets[c.hash(u)]++
}

func (c *coalescer) untarget(u target) {
	h := c.hash(u)
	if c.targets[h]--; c.targets[h] <= 0 {
		delete(c.targets, h)
	}
}

func (c *coalescer) hash(u target) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, s := range []string{u.scheme, u.urlHost, u.host, u.uri} {
		h.WriteString(s)
		h.WriteByte(0) // no URL holds a NUL: the parts stay apart
	}
	return h.Sum64()
}

// safeMethod reports whether a request of method m changes nothing on the
// server (RFC 9110 §9.2.1): every other invalidates what the cache holds of
// its URL.
func safeMethod(m string) bool {
	switch m {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// invalidate drops every cached answer of the URL u, whatever the
// credentials it was read with (a write by one user changes what others
// read of that URL too), and keeps the answers of the reads of u under way
// out of the cache (their answers may predate the write): RFC 9111 §4.4,
// for every write, whatever it was answered (a write answered with an
// error, or none, may still have been applied).
//
// A write whose URL targetOf cannot spell (known false: a host that is not
// ASCII, whose IDNA form the cache does not compute, a port that is no
// port number, an Opaque URL) may reach any resource the cache holds: it drops
// everything, and marks every flight.
func (c *coalescer) invalidate(u target, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.targets) == 0 {
		return
	}
	all := !known
	if !all && c.targets[c.hash(u)] == 0 {
		return
	}
	for k, s := range c.cache {
		if all || k.target() == u {
			c.drop(s)
		}
	}
	for k, f := range c.flights {
		if all || k.target() == u {
			f.written = true
		}
	}
	for f, fu := range c.replaced {
		if all || fu == u {
			f.written = true
		}
	}
}

// compact takes out of order the places of the entries dropped. Requires
// c.mu held.
func (c *coalescer) compact() {
	live := make([]*shared, 0, len(c.cache))
	for _, s := range c.order[c.head:] {
		if s != nil {
			s.ref = len(live)
			live = append(live, s)
		}
	}
	c.order, c.head, c.stale = live, 0, 0
}

// endHeap is the cache's entries as a heap (container/heap) by their end,
// the first to end on top; each entry holds its index in it (shared.end).
type endHeap []*shared

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }

func (h endHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].end, h[j].end = i, j
}

func (h *endHeap) Push(x any) {
	s := x.(*shared)
	s.end = len(*h)
	*h = append(*h, s)
}

func (h *endHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil // the array must not keep the entry
	*h = old[:len(old)-1]
	return s
}
