package analyze

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/ratelimit"
)

// MaxBody bounds the bytes of a request or response body a Call keeps: the
// rules read request bodies (batch sizes, repeated calls) and the bodies of
// 429s and of the calls that name a user; nothing needs more.
const MaxBody = 64 << 10

// Call is one recorded call, as a trace holds it. Readers fill it, each
// string cut to its bound (MaxURL, MaxUserAgent, MaxBody, maxCallText),
// and Analyzer.Add keeps only what the rules need, so a Call may be reused
// once Add returns.
type Call struct {
	Index    int           // position in its trace, from 0
	Offset   int64         // the byte of its trace where its entry starts (0 when not read from one)
	Time     time.Time     // when the request started
	Duration time.Duration // until the answer ended; 0 when unknown
	Method   string        // at most 256 bytes
	URL      string        // at most MaxURL bytes
	// Authorization is the request's Authorization value. Only its userhash
	// is read; the token is never kept or printed, nor is a userhash that
	// is not 1 to 20 digits: a digest of it names the user.
	Authorization string
	// UserAgent is the request's User-Agent (at most MaxUserAgent bytes):
	// Social Manager's calls, PlayFab's and a title's own (Rules.UserAgent)
	// are told by it.
	UserAgent string
	// InGameEvent names an in-game event a data file recorded as a row
	// (ReadData): the call is that event, at Time, not a service call.
	InGameEvent string // at most 256 bytes
	// ShoulderTap is a real-time activity shoulder tap a data file
	// recorded (IsShoulderTap): a message the service pushed, not a call,
	// which the trace analyzer leaves out of its rules, as Add does.
	ShoulderTap bool
	// WebSocketMessages counts the messages of a websocket a HAR recorded
	// (_webSocketMessages, as Chrome's export writes them): an RTA
	// connection's subscribes and events, not calls.
	WebSocketMessages int
	Status            int    // 0 when no answer was recorded
	RetryAfter        string // the answer's Retry-After, as sent (at most 256 bytes)
	RequestBody       []byte // at most MaxBody bytes
	ResponseBody      []byte // at most MaxBody bytes
}

// parseStatus reads an answer's status as a trace writes it, a JSON number
// or its text: 0 (no answer recorded) or an integer from 100 to 999. Any
// other value (a fraction, a number out of range, hexadecimal, not a
// number) is none: false, never wrapped or rounded into a status.
func parseStatus[T string | []byte](s T) (int, bool) {
	if n, ok := threeDigits(s); ok { // the common case, without allocating
		return n, n == 0 || n >= 100
	}
	if v := jsontext.Value(s); !v.IsValid() || v.Kind() != '0' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil || f != math.Trunc(f) || f != 0 && (f < 100 || f > 999) {
		return 0, false
	}
	return int(f), true
}

// threeDigits reads s as an integer of one to three decimal digits.
func threeDigits[T string | []byte](s T) (int, bool) {
	if len(s) == 0 || len(s) > 3 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = 10*n + int(s[i]-'0')
	}
	return n, true
}

// urlProblem says why a call's URL is not one every reader sends to the
// same host (splitURL's, net/url's, a browser's), or "": an absolute http,
// https, ws or wss URL whose authority net/url reads, whose host is a
// plain DNS name (letters, digits and '-' in labels joined by '.'), an
// IPv4 address in dotted decimal or an IPv6 address in brackets, with an
// optional port, and with no backslash before its query (a browser reads
// it as '/') nor a tab or line break (a browser drops them). Any other
// host ("https:/host/path" has none for net/url; "%70rofile.xboxlive.com"
// is profile.xboxlive.com to a browser, and 127.1, 2130706433 and
// 0x7f.0.0.1 are 127.0.0.1) would be judged as a host of its own.
func urlProblem(u string) string {
	const bad = "the url is not an absolute http(s) URL naming a host (a DNS name or an IP address): readers differ on where it goes"
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || !webScheme(scheme) || strings.ContainsAny(u, "\t\n\r") {
		return bad
	}
	path := rest
	if q := strings.IndexAny(rest, "?#"); q >= 0 {
		path = rest[:q]
	}
	authority := path
	if end := strings.IndexByte(path, '/'); end >= 0 {
		authority = path[:end]
	}
	host := authority
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	if _, err := url.Parse(u[:len(scheme)+3+len(authority)]); err != nil || strings.IndexByte(path, '\\') >= 0 || !plainHost(host) {
		return bad
	}
	return ""
}

// webScheme reports whether scheme is http, https, ws or wss, in any case.
func webScheme(scheme string) bool {
	for _, s := range []string{"http", "https", "ws", "wss"} {
		if strings.EqualFold(scheme, s) {
			return true
		}
	}
	return false
}

// plainHost reports whether h is a DNS name, an IPv4 address in dotted
// decimal or a bracketed IPv6 address, with an optional port (urlProblem).
func plainHost(h string) bool {
	if rest, ok := strings.CutPrefix(h, "["); ok {
		ip, port, ok := strings.Cut(rest, "]")
		a, err := netip.ParseAddr(ip)
		return ok && err == nil && a.Is6() && a.Zone() == "" && validPort(port)
	}
	name, port := h, ""
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		name, port = h[:i], h[i:]
	}
	if endsInNumber(name) { // an IPv4 address, in some spelling
		a, err := netip.ParseAddr(name)
		return err == nil && a.Is4() && validPort(port)
	}
	return dnsName(name) && validPort(port)
}

// endsInNumber reports whether the last label of name is digits alone or
// "0x" and hex digits: a name a browser reads as an IPv4 address (the URL
// Standard's ends-in-a-number checker), in any of its spellings (127.1,
// 2130706433, 0x7f.1, 0177.0.0.1), which netip reads only in dotted
// decimal (four parts of at most 255, no leading zero).
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if hex, ok := strings.CutPrefix(strings.ToLower(last), "0x"); ok {
		return !strings.ContainsFunc(hex, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') })
	}
	return last != "" && !strings.ContainsFunc(last, func(r rune) bool { return r < '0' || r > '9' })
}

// validPort reports whether p is a host's port as a URL writes it: none,
// or ':' and at most a number up to 65535.
func validPort(p string) bool {
	n, ok := strings.CutPrefix(p, ":")
	_, err := strconv.ParseUint(n, 10, 16)
	return p == "" || ok && (n == "" || err == nil)
}

// dnsName reports whether name is labels of letters, digits and '-'
// joined by '.', none empty.
func dnsName(name string) bool {
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || strings.ContainsFunc(label, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-')
		}) {
			return false
		}
	}
	return true
}

// retryAfterProblem says why the Retry-After of an answer of status, when
// it holds one (present), leaves readers to differ on the wait it asks, or
// "": a 429's (the one Retry-After the rules read) must be one value
// ratelimit.ParseRetryAfter reads, delay seconds (digits alone) or an
// HTTP-date, of at most maxCallText bytes (what a Call keeps of it).
// "60, 120" (two headers combined, RFC 9110 §5.3), "+60", "60.0" and ""
// are not.
func retryAfterProblem(status int, present bool, v string) string {
	if status != 429 || !present {
		return ""
	}
	if _, ok := ratelimit.ParseRetryAfter(v, time.Time{}, time.Second); ok && len(v) <= maxCallText {
		return ""
	}
	return fmt.Sprintf("a 429's Retry-After %s is not one delay-seconds or HTTP-date value: readers differ on the wait it asks", shownValue(v))
}

// MaxUserAgent bounds the User-Agent a Call keeps.
const MaxUserAgent = 512

// MaxURL bounds the URL a Call keeps: servers take shorter request
// targets (8 KiB is nginx's bound, and most front ends'), and what a rule
// reads of a URL is its host and path, their first bytes.
const MaxURL = 8 << 10

// maxCallText bounds a Call's method, Retry-After and event name.
const maxCallText = 256

// cut cuts each of c's strings and bodies to its bound, at a character
// boundary (safetext.Cut): every reader's one cut, and the Recorder's.
func (c *Call) cut() {
	c.Method, c.URL = safetext.Cut(c.Method, maxCallText), safetext.Cut(c.URL, MaxURL)
	c.UserAgent, c.RetryAfter = safetext.Cut(c.UserAgent, MaxUserAgent), safetext.Cut(c.RetryAfter, maxCallText)
	c.InGameEvent = safetext.Cut(c.InGameEvent, maxCallText)
	c.RequestBody, c.ResponseBody = clipBody(c.RequestBody), clipBody(c.ResponseBody)
}

// clipBody returns b cut to MaxBody bytes.
func clipBody(b []byte) []byte {
	if len(b) > MaxBody {
		return b[:MaxBody]
	}
	return b
}

// Recorder is an http.RoundTripper that records each call it passes to Base,
// for a Go test that asserts its traffic passes the analysis, or for a
// trace file (Add writing each call). It keeps no secret: the token of the
// Authorization header, a URL's user info, credentials in URLs and bodies,
// and the sign-in services' codes, tokens and tickets are redacted
// (xblauth), as a HAR file the module writes holds them. It is safe for
// concurrent use.
type Recorder struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Now is the clock stamped on calls; nil means time.Now.
	Now func() time.Time
	// Add receives each call once its answer's headers are in (the body is
	// read as the caller reads it, up to MaxBody bytes, and the call is
	// added when the body is closed). Nil keeps the calls for Calls.
	Add func(*Call)

	mu    sync.Mutex
	calls []Call
	n     int
}

// Calls returns the calls recorded so far when Add is nil.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// RoundTrip sends req through Base and records it.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	host := cmp.Or(req.Host, req.URL.Host)
	u := *req.URL
	u.Host = host
	c := &Call{Time: now(), Method: req.Method, URL: xblauth.RedactURL(u.String()),
		Authorization: redactAuth(req.Header.Get("Authorization")), UserAgent: req.Header.Get("User-Agent")}
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(body, MaxBody))
			c.RequestBody = xblauth.RedactBody(host, b)
			body.Close()
		}
	}
	base := r.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		c.Duration = now().Sub(c.Time)
		r.add(c)
		return nil, err
	}
	c.Status = resp.StatusCode
	c.RetryAfter = resp.Header.Get("Retry-After")
	resp.Body = &tee{ReadCloser: resp.Body, c: c, r: r, now: now, host: host}
	return resp, nil
}

func (r *Recorder) add(c *Call) {
	c.cut()
	r.mu.Lock()
	c.Index = r.n
	r.n++
	if r.Add == nil {
		r.calls = append(r.calls, *c)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.Add(c)
}

// tee keeps the first MaxBody bytes of a response body and adds the call
// when the body is closed.
type tee struct {
	io.ReadCloser
	c    *Call
	r    *Recorder
	now  func() time.Time
	host string
	buf  bytes.Buffer
	once sync.Once
}

func (t *tee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if room := MaxBody - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(n, room)])
	}
	return n, err
}

func (t *tee) Close() error {
	err := t.ReadCloser.Close()
	t.once.Do(func() {
		t.c.ResponseBody = xblauth.RedactBody(t.host, t.buf.Bytes())
		t.c.Duration = t.now().Sub(t.c.Time)
		t.r.add(t.c)
	})
	return err
}

// maxCallMs bounds a call's duration as a trace gives it (about 11.6
// days): past it, or below 0, the duration is unknown (0), not a time
// that overflows a Duration, whose sign then depends on the processor.
const maxCallMs = 1e9

// elapsed returns the duration of ms milliseconds, as a HAR entry's time
// or a data file's ElapsedCallTimeMs gives it, or 0 (unknown) outside 0 to
// maxCallMs.
func elapsed(ms float64) time.Duration {
	if !(ms >= 0 && ms < maxCallMs) {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}
