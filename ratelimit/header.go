package ratelimit

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// SetHeaders writes d's windows as RateLimit-Policy and RateLimit headers,
// an extension in the style of the IETF RateLimit header fields draft:
//
//	RateLimit-Policy: "burst";q=10;w=15, "sustain";q=30;w=300
//	RateLimit: "burst";r=7;t=12, "sustain";r=27;t=290
//
// where q is the limit, w the period, r the requests remaining and t the
// seconds until the window ends (rounded up). A window without a limit is
// left out; with neither, no header is written.
func SetHeaders(h http.Header, d throttle.Decision) {
	var pbuf, sbuf [96]byte
	policy, state := pbuf[:0], sbuf[:0]
	for _, w := range [2]struct {
		p throttle.Period
		s throttle.WindowState
	}{{throttle.Burst, d.Burst}, {throttle.Sustain, d.Sustain}} {
		if w.s.Limit <= 0 {
			continue
		}
		if len(policy) > 0 {
			policy, state = append(policy, ", "...), append(state, ", "...)
		}
		policy = appendName(policy, w.p)
		policy = strconv.AppendInt(append(policy, ";q="...), int64(w.s.Limit), 10)
		policy = strconv.AppendInt(append(policy, ";w="...), int64(w.p.Duration()/time.Second), 10)
		state = appendName(state, w.p)
		state = strconv.AppendInt(append(state, ";r="...), int64(max(0, w.s.Limit-w.s.Count)), 10)
		state = strconv.AppendInt(append(state, ";t="...), CeilSeconds(w.s.Reset), 10)
	}
	if len(policy) > 0 {
		// One string and one slice hold both values (this runs on every
		// answer the mock gives); canonical keys set directly, as Set
		// would canonicalize them again.
		both := string(append(policy, state...))
		vals := []string{both[:len(policy)], both[len(policy):]}
		h["Ratelimit-Policy"], h["Ratelimit"] = vals[:1:1], vals[1:]
	}
}

func appendName(b []byte, p throttle.Period) []byte {
	b = append(b, '"')
	b = append(b, p.String()...)
	return append(b, '"')
}

// maxHeaderValue is the longest RateLimit or RateLimit-Policy value
// ParseHeaders reads.
const maxHeaderValue = 1024

// ParseHeaders reads RateLimit and RateLimit-Policy headers as SetHeaders
// writes them, as a key's counts: for each window reported, its limit
// (RateLimit-Policy's q, or l's when the policy names none, or names 0),
// what is used of it (the limit less the requests remaining, at least 0)
// and when it ends. A window not reported is the zero WindowState; ok says
// whether any was. Unknown names and malformed items are skipped; a value
// over 1 KiB is ignored.
func ParseHeaders(h http.Header, l throttle.Limit) (c throttle.Counts, ok bool) {
	// Canonical keys, read directly: Get would allocate to canonicalize them.
	state := first(h["Ratelimit"])
	if state == "" || len(state) > maxHeaderValue {
		return throttle.Counts{}, false
	}
	var limits throttle.Counts // the policy's q, as Limit
	policy := first(h["Ratelimit-Policy"])
	if len(policy) > maxHeaderValue { // ignored as the RateLimit value is: the caller's limits count
		policy = ""
	}
	for s := range strings.SplitSeq(policy, ",") {
		if it, good := rateItem(s); good && it.hasQ {
			window(&limits, it.p).Limit = it.q
		}
	}
	for s := range strings.SplitSeq(state, ",") {
		it, good := rateItem(s)
		if !good || !it.hasR || !it.hasT {
			continue
		}
		limit := window(&limits, it.p).Limit
		if limit <= 0 { // no limit reported (or a limit of none): the caller's
			limit = l.Burst
			if it.p == throttle.Sustain {
				limit = l.Sustain
			}
		}
		*window(&c, it.p) = throttle.WindowState{Count: max(limit-it.r, 0), Limit: limit, Reset: time.Duration(it.t) * time.Second}
		ok = true
	}
	return c, ok
}

// window returns c's window of period p (Burst or Sustain).
func window(c *throttle.Counts, p throttle.Period) *throttle.WindowState {
	if p == throttle.Burst {
		return &c.Burst
	}
	return &c.Sustain
}

// item is one `"name";k=v;k=v` item of a RateLimit or RateLimit-Policy
// value: its window and the parameters ParseHeaders reads.
type item struct {
	p                throttle.Period
	q, r, t          int
	hasQ, hasR, hasT bool
}

// rateItem parses one item, the parameters in turn and a later one of a
// name over an earlier. It is false for a name other than burst or sustain
// (quoted or not), and for any parameter that is not k=n with n a whole
// number from 0 to 2^30. It allocates only to say why a number is
// malformed (strconv's error): this runs on every answer that carries the
// headers.
func rateItem(s string) (it item, ok bool) {
	name, rest, more := strings.Cut(strings.TrimSpace(s), ";")
	switch strings.Trim(name, `"`) {
	case "burst":
		it.p = throttle.Burst
	case "sustain":
		it.p = throttle.Sustain
	default:
		return item{}, false
	}
	if !more { // the name alone
		return it, true
	}
	for kv := range strings.SplitSeq(rest, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > 1<<30 {
			return item{}, false
		}
		switch k {
		case "q":
			it.q, it.hasQ = n, true
		case "r":
			it.r, it.hasR = n, true
		case "t":
			it.t, it.hasT = n, true
		}
	}
	return it, true
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
