package mock

import (
	"hash/maphash"
	"io"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/har"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
)

// CallFilter picks calls; an empty field matches any.
type CallFilter struct {
	Method string `json:"method,omitempty"`
	Host   string `json:"host,omitempty"`
	// Host matches the host without regard to ASCII case or a trailing
	// dot. PathPrefix matches the start of the path, both percent-decoded
	// and without regard to ASCII case (as the services' paths match).
	// Of a call whose URL the record clipped (to 1 KiB) inside its path, a
	// PathPrefix longer than the part kept matches only the whole path:
	// for another one that the part kept begins, the call cannot be told
	// apart, and a check counting the calls it matches fails closed
	// (Check's Expect, mocktest.Called); Calls leaves the call out.
	PathPrefix string `json:"pathPrefix,omitempty"`
	// Scope is a limits rule's scope ("presence/read") or service
	// ("presence").
	Scope  string    `json:"scope,omitempty"`
	XUID   string    `json:"xuid,omitempty"`
	Status int       `json:"status,omitempty"`
	Script string    `json:"script,omitempty"` // "*": any scripted answer
	Since  time.Time `json:"since,omitzero"`
}

// hasPathPrefix reports whether the path served starts with prefix (the
// filter's, decoded once: prepared), both percent-decoded and without
// regard to ASCII case, as the mock's routes and the limits' paths match.
func hasPathPrefix(path, prefix string) bool {
	if len(path) < len(prefix) { // decoding only shortens a path
		return false
	}
	path = unescape(path)
	return len(path) >= len(prefix) && safetext.EqualFoldASCII(path[:len(prefix)], prefix)
}

// prepared is f with its path prefix percent-decoded, and that prefix's
// pathSum, once for all the calls it is matched against (match takes a
// prepared filter and its sum).
func (f CallFilter) prepared(seed maphash.Seed) (CallFilter, uint64) {
	if f.PathPrefix == "" {
		return f, 0
	}
	f.PathPrefix = unescape(f.PathPrefix)
	return f, pathSum(seed, f.PathPrefix)
}

// pathSum is the sum of a path, percent-decoded, its ASCII letters folded:
// a path the record clipped is matched by a filter naming it whole by it.
// It is never 0, which marks a path the record holds whole.
func pathSum(seed maphash.Seed, path string) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	for i := range len(path) {
		c := path[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h.WriteByte(c)
	}
	return h.Sum64() | 1
}

// matchPath reports whether c's path starts with prefix (prepared, sum
// its pathSum), or that it cannot tell: the record clipped c's path
// before prefix ended, the part kept begins prefix, and prefix is not
// the whole path.
func matchPath(c *Call, prefix string, sum uint64) (ok, unsure bool) {
	path, _, _ := strings.Cut(c.uri, "?")
	if c.pathSum == 0 {
		return hasPathPrefix(path, prefix), false
	}
	kept := strings.TrimSuffix(path, "...") // safetext.Cut's mark
	if i := strings.LastIndexByte(kept, '%'); i >= 0 && i >= len(kept)-2 {
		kept = kept[:i] // an escape cut short
	}
	if hasPathPrefix(kept, prefix) {
		return true, false
	}
	if kept = unescape(kept); len(kept) >= len(prefix) || !safetext.EqualFoldASCII(kept, prefix[:len(kept)]) {
		return false, false
	}
	return sum == c.pathSum, sum != c.pathSum
}

// sameHost reports whether two hosts are one without regard to ASCII case
// or a trailing dot (as the limits match hosts: no Unicode folding, which
// would take "ſocial" for "social").
func sameHost(a, b string) bool {
	return safetext.EqualFoldASCII(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// unescape decodes each valid %XX of s and keeps the rest as it is: a
// record's path cut inside an escape is still decoded up to the cut.
func unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, lo := unhex(s[i+1]), unhex(s[i+2]); hi >= 0 && lo >= 0 {
				b.WriteByte(byte(hi<<4 | lo))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// match reports whether f (prepared, sum its path prefix's) matches c, or
// that it cannot tell (matchPath).
func (f *CallFilter) match(c *Call, sum uint64) (ok, unsure bool) {
	service, _, _ := strings.Cut(c.Scope, "/")
	switch {
	case f.Method != "" && !strings.EqualFold(f.Method, c.Method),
		f.Host != "" && !sameHost(f.Host, c.host),
		f.Scope != "" && f.Scope != c.Scope && f.Scope != service,
		f.XUID != "" && f.XUID != c.XUID,
		f.Status != 0 && f.Status != c.Status,
		f.Script == "*" && c.Script == "",
		f.Script != "" && f.Script != "*" && f.Script != c.Script,
		!f.Since.IsZero() && c.Time.Before(f.Since):
		return false, false
	}
	if f.PathPrefix == "" {
		return true, false
	}
	return matchPath(c, f.PathPrefix, sum)
}

// Calls returns the calls received that f matches, oldest first (at most
// the latest 10,000, within 32 MiB of heap in all). A call enters the
// record when it ends: answered, cut short, or given up by its client; a
// call in progress is not in it yet.
func (h *Handler) Calls(f CallFilter) []Call {
	out := []Call{}
	f, sum := f.prepared(h.journal.seed)
	h.journal.mu.Lock()
	h.journal.each(func(c *Call) bool {
		if ok, _ := f.match(c, sum); ok {
			out = append(out, *c)
		}
		return true
	})
	h.journal.mu.Unlock()
	for i := range out { // outside the lock, which every request takes
		out[i].URL = safetext.Cut("https://"+out[i].host+out[i].uri, maxCallURL)
	}
	return out
}

// count is len(h.Calls(f)) of the Handler whose record j is, without
// copying the calls or building their URLs: a check of many expectations
// reads the record once each. unsure counts the calls f cannot tell
// apart (matchPath).
func (j *journal) count(f CallFilter) (n, unsure int) {
	f, sum := f.prepared(j.seed)
	j.mu.Lock()
	j.each(func(c *Call) bool {
		switch ok, maybe := f.match(c, sum); {
		case ok:
			n++
		case maybe:
			unsure++
		}
		return true
	})
	j.mu.Unlock()
	return n, unsure
}

// ForgetCalls empties the record of calls, as a test does between cases;
// the live page's keys and recent 429s, which are read from it, go too.
// The counters (Metrics) and FGRL's counts stay. A check of a window
// that began before the calls it dropped were made fails as incomplete
// (CheckOptions).
func (h *Handler) ForgetCalls() {
	now := h.cfg.now()
	j := h.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.n > 0 {
		j.emptied = now
		latest := j.latestDropped
		j.each(func(c *Call) bool {
			if c.Time.After(latest) {
				latest = c.Time
			}
			return true
		})
		if latest.After(j.latestEmptied) {
			j.latestEmptied = latest
		}
	}
	j.ring, j.start, j.n, j.bytes = nil, 0, 0, 0
	j.dropped, j.latestDropped = 0, time.Time{}
}

// WriteHAR writes the calls f matches as a HAR 1.2 document, which
// xblcall analyze and analyze.ReadHAR read. No secret is written: the
// Authorization header holds the userhash only, and URLs and bodies are
// redacted as the record keeps them.
func (h *Handler) WriteHAR(w io.Writer, f CallFilter) error {
	hw := har.NewWriter(w)
	for _, c := range h.Calls(f) {
		e := har.Entry{Time: c.Time, Duration: time.Duration(c.Duration), Method: c.Method, URL: c.URL, Status: c.Status,
			RetryAfter: c.RetryAfter, RequestBody: c.body, Authorization: c.authorization()}
		for _, m := range c.Messages {
			e.Messages = append(e.Messages, har.Message{Sent: m.Type == "send", Time: m.Time, Data: m.Data})
		}
		if err := hw.Write(&e); err != nil {
			return err
		}
	}
	return hw.Close()
}

// authorization is the call's Authorization as a trace may hold it: the
// userhash the analyzer groups by, never the token (the mock keeps none).
func (c *Call) authorization() string {
	if c.userhash == "" {
		return ""
	}
	return xblauth.Redact("XBL3.0 x=" + c.userhash + ";-")
}
