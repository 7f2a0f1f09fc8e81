package har

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// Writer writes a HAR 1.2 document one entry at a time, so a trace of any
// length takes constant memory. Close ends the document. Secrets are
// written redacted whatever the entry holds: the Authorization header, and
// in URLs and bodies what xblauth redacts. A Writer is safe for concurrent
// use.
type Writer struct {
	mu     sync.Mutex
	w      *bufio.Writer
	n      int
	err    error
	closed bool
}

// NewWriter starts a HAR document on w.
func NewWriter(w io.Writer) *Writer { return NewWriterLimits(w, nil) }

// NewWriterLimits starts a HAR document on w that names the limits data
// its calls ran under (limits.Read's format), as the log's _fgrlLimits
// field before its entries, so xblcall analyze judges them by the same
// rules (HAR 1.2 lets custom fields start with an underscore).
func NewWriterLimits(w io.Writer, limits json.RawMessage) *Writer {
	hw := &Writer{w: bufio.NewWriter(w)}
	_, hw.err = hw.w.WriteString(`{"log":{"version":"1.2","creator":{"name":"fgrl","version":"0.1.0"},`)
	if len(limits) > 0 && hw.err == nil && json.Valid(limits) {
		hw.w.WriteString(`"_fgrlLimits":`)
		hw.w.Write(limits)
		hw.w.WriteByte(',')
	}
	_, hw.err = hw.w.WriteString(`"entries":[`)
	return hw
}

// Entry is one call: its request and answer as recorded.
type Entry struct {
	Time          time.Time
	Duration      time.Duration
	Method, URL   string
	Authorization string // written redacted
	RequestBody   []byte
	Status        int
	RetryAfter    string
	ResponseBody  []byte
	// Messages are a websocket's text messages (an RTA connection's),
	// written as _webSocketMessages, as Chrome's HAR export does; they are
	// written as given (RTA messages carry no secret).
	Messages []Message
}

// Message is one websocket text message of an entry.
type Message struct {
	Sent bool // by the client; else received by it
	Time time.Time
	Data string
}

// Write appends one call as an entry: its request and answer as recorded,
// with every secret redacted (raw).
func (hw *Writer) Write(c *Entry) error {
	b, err := json.Marshal(raw(c))
	hw.mu.Lock()
	defer hw.mu.Unlock()
	switch {
	case hw.closed:
		return errors.New("har: write after Close")
	case hw.err != nil:
		return hw.err
	case err != nil:
		return err
	}
	if hw.n > 0 {
		hw.w.WriteByte(',')
	}
	hw.n++
	hw.w.WriteByte('\n')
	_, hw.err = hw.w.Write(b)
	return hw.err
}

// Close ends the document and flushes it; it does not close the underlying
// writer.
func (hw *Writer) Close() error {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	if hw.closed {
		return hw.err
	}
	hw.closed = true
	if hw.err == nil {
		_, hw.err = hw.w.WriteString("\n]}}\n")
	}
	if hw.err == nil {
		hw.err = hw.w.Flush()
	}
	return hw.err
}

// raw is an entry as written: its URL and bodies redacted (xblauth's
// RedactURL and RedactBody: credentials in the query, and the sign-in
// services' secrets, by the rules of the URL's host), the Authorization
// header too. The bodies and query of an entry whose URL names no host
// (hostOf), or a host not written as a client sends it (plainHost), are
// replaced whole: without the host, whose rules redact them, nothing says
// which of their values are secrets. A negative Duration (a clock stepped
// back) is written as 0: HAR 1.2 has no negative time.
func raw(c *Entry) rawEntry {
	r := rawEntry{StartedDateTime: c.Time.UTC().Format(time.RFC3339Nano), Time: float64(max(c.Duration, 0)) / float64(time.Millisecond)}
	r.Timings.Wait = r.Time
	host := hostOf(c.URL)
	redact := func(b []byte) []byte { return xblauth.RedactBody(host, b) }
	u := xblauth.RedactURL(c.URL)
	if !plainHost(host) {
		// A host a client maps before it dials (IDNA: fullwidth letters, a
		// soft hyphen, an ideographic full stop) or an escaped one may be
		// a sign-in service's: no rule says which of its values are
		// secrets, so its bodies and query go whole.
		redact = redactWhole
		u = cutQuery(u)
	}
	reqBody, respBody := redact(c.RequestBody), redact(c.ResponseBody)
	r.Request = rawRequest{Method: c.Method, URL: u, HTTPVersion: "HTTP/1.1", Headers: []header{},
		QueryString: []header{}, Cookies: []header{}, HeadersSize: -1, BodySize: len(reqBody)}
	if host != "" {
		r.Request.Headers = append(r.Request.Headers, header{"Host", host})
	}
	if c.Authorization != "" {
		r.Request.Headers = append(r.Request.Headers, header{"Authorization", xblauth.Redact(c.Authorization)})
	}
	if len(reqBody) > 0 {
		r.Request.PostData = &postData{MimeType: "application/json", Text: string(reqBody)}
	}
	r.Response = rawResponse{Status: c.Status, HTTPVersion: "HTTP/1.1", Headers: []header{}, Cookies: []header{},
		Content:     content{Size: len(respBody), MimeType: "application/json", Text: string(respBody)},
		HeadersSize: -1, BodySize: len(respBody)}
	if c.RetryAfter != "" {
		r.Response.Headers = append(r.Response.Headers, header{"Retry-After", c.RetryAfter})
	}
	for _, m := range c.Messages {
		typ := "receive"
		if m.Sent {
			typ = "send"
		}
		r.WebSocketMessages = append(r.WebSocketMessages, wsMessage{Type: typ, Time: float64(m.Time.UnixMicro()) / 1e6, Opcode: 1, Data: m.Data})
	}
	return r
}

// plainHost reports whether host (and port) is written as a client sends
// it, so that xblauth's rules of its host apply: ASCII letters, digits,
// '.', '-', '_', and a port or an IPv6 literal's ':', '[' and ']'. Not an
// empty host.
func plainHost(host string) bool {
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".-_:[]", c) >= 0) {
			return false
		}
	}
	return true
}

// cutQuery returns u with its query and fragment, if any, replaced whole
// by xblauth.Redacted.
func cutQuery(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i+1] + xblauth.Redacted
	}
	return u
}

// redactWhole replaces a body that is not empty with xblauth.Redacted.
func redactWhole(b []byte) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return b
	}
	return []byte(xblauth.Redacted)
}

// hostOf returns the host (and port) a URL names: url.Parse's, or, for a URL
// it refuses (an invalid escape, a URL cut short inside one, a port that is
// no number), the authority after "scheme://" up to its path, query or
// fragment, without user info. "" when it names none (a URL without
// "//", one whose authority is empty).
func hostOf(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Host
	}
	_, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#\\"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}
