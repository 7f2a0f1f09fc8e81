package mock

import (
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
	return len(path) >= len(prefix) && equalFoldASCII(path[:len(prefix)], prefix)
}

// prepared is f with its path prefix percent-decoded, once for all the
// calls it is matched against (match takes a prepared filter).
func (f CallFilter) prepared() CallFilter {
	f.PathPrefix = unescape(f.PathPrefix)
	return f
}

// sameHost reports whether two hosts are one without regard to ASCII case
// or a trailing dot (as the limits match hosts: no Unicode folding, which
// would take "ſocial" for "social").
func sameHost(a, b string) bool {
	return equalFoldASCII(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// equalFoldASCII compares a and b byte by byte, folding ASCII letters only.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
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

func (f *CallFilter) match(c *Call) bool {
	path, _, _ := strings.Cut(c.uri, "?")
	service, _, _ := strings.Cut(c.Scope, "/")
	switch {
	case f.Method != "" && !strings.EqualFold(f.Method, c.Method),
		f.Host != "" && !sameHost(f.Host, c.host),
		f.PathPrefix != "" && !hasPathPrefix(path, f.PathPrefix),
		f.Scope != "" && f.Scope != c.Scope && f.Scope != service,
		f.XUID != "" && f.XUID != c.XUID,
		f.Status != 0 && f.Status != c.Status,
		f.Script == "*" && c.Script == "",
		f.Script != "" && f.Script != "*" && f.Script != c.Script,
		!f.Since.IsZero() && c.Time.Before(f.Since):
		return false
	}
	return true
}

// Calls returns the calls received that f matches, oldest first (at most
// the latest 10,000, within 32 MiB of heap in all).
func (h *Handler) Calls(f CallFilter) []Call {
	out := []Call{}
	f = f.prepared()
	h.journal.mu.Lock()
	h.journal.each(func(c *Call) bool {
		if f.match(c) {
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
// reads the record once each.
func (j *journal) count(f CallFilter) int {
	n := 0
	f = f.prepared()
	j.mu.Lock()
	j.each(func(c *Call) bool {
		if f.match(c) {
			n++
		}
		return true
	})
	j.mu.Unlock()
	return n
}

// ForgetCalls empties the record of calls, as a test does between cases;
// the live page's keys and recent 429s, which are read from it, go too.
// The counters (Metrics) and FGRL's counts stay.
func (h *Handler) ForgetCalls() {
	j := h.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	j.ring, j.start, j.n, j.bytes = nil, 0, 0, 0
	j.dropped, j.latestDropped = 0, time.Time{}
}

// droppedSince returns how many calls the record dropped, when one of
// them was made at or after since (any, for a zero since): the record of
// the calls since then is not whole.
func (j *journal) droppedSince(since time.Time) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.dropped == 0 || !since.IsZero() && j.latestDropped.Before(since) {
		return 0
	}
	return j.dropped
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
