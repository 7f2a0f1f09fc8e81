package mock

import (
	"io"
	"net/url"
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
	// Host matches the host without regard to case or a trailing dot.
	// PathPrefix matches the start of the path, both percent-decoded and
	// without regard to case (as the services' paths match).
	PathPrefix string `json:"pathPrefix,omitempty"`
	// Scope is a limits rule's scope ("presence/read") or service
	// ("presence").
	Scope  string    `json:"scope,omitempty"`
	XUID   string    `json:"xuid,omitempty"`
	Status int       `json:"status,omitempty"`
	Script string    `json:"script,omitempty"` // "*": any scripted answer
	Since  time.Time `json:"since,omitzero"`
}

// hasPathPrefix reports whether the path served starts with prefix, both
// percent-decoded and without regard to case, as the mock's routes and the
// limits' paths match.
func hasPathPrefix(path, prefix string) bool {
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	if p, err := url.PathUnescape(prefix); err == nil {
		prefix = p
	}
	return len(path) >= len(prefix) && strings.EqualFold(path[:len(prefix)], prefix)
}

func (f *CallFilter) match(c *Call) bool {
	path, _, _ := strings.Cut(c.uri, "?")
	service, _, _ := strings.Cut(c.Scope, "/")
	switch {
	case f.Method != "" && !strings.EqualFold(f.Method, c.Method),
		f.Host != "" && !strings.EqualFold(strings.TrimSuffix(f.Host, "."), strings.TrimSuffix(c.host, ".")),
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
