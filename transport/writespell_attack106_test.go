package transport

// Outside attack (helper attack106) on the read cache's invalidation by writes,
// second round. The promise, Transport.ReadCacheTTL's godoc:
//
//	"A write through the Transport (any method but GET, HEAD, OPTIONS and
//	TRACE), however it is answered, drops what the cache holds of its URL
//	(scheme, host without the scheme's default port, path and query; ...),
//	for every user, and the answers of the reads of that URL under way when
//	it ends are neither kept nor shared with the reads that start after it
//	(RFC 9111 §4.4)."
//
// Here a spelling is judged by what the service receives: a loopback
// net/http server behind a dialer that takes every address there, which
// keeps one version per resource as net/http's server parses the request
// (its Host, its URL's escaped path and query: an absolute-form
// request-target names the same resource as the origin form, RFC 9112
// §3.2.2), and records the port each request dialled as a number.

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

type attack106Wire struct {
	srv     *httptest.Server
	base    *http.Transport
	mu      sync.Mutex
	version map[string]int
	seen    []string // "METHOD resource (request-target as sent) dialled host:port-number"
	dial    []string
}

func newAtk235Wire(t *testing.T) *attack106Wire {
	w := &attack106Wire{version: map[string]int{}}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		// The resource as the server parses it: Host (for an absolute-form
		// target net/http's server takes the target's authority) and the
		// target's path and query.
		res := strings.ToLower(r.Host) + " " + r.URL.EscapedPath()
		if r.URL.RawQuery != "" || r.URL.ForceQuery {
			res += "?" + r.URL.RawQuery
		}
		w.mu.Lock()
		w.seen = append(w.seen, r.Method+" "+res+" (sent "+r.RequestURI+")")
		if r.Method != http.MethodGet {
			w.version[res]++
			w.mu.Unlock()
			rw.WriteHeader(200)
			return
		}
		v := w.version[res]
		w.mu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, strconv.Itoa(v))
	}))
	addr := w.srv.Listener.Addr().String()
	w.base = &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			h, p, _ := net.SplitHostPort(a)
			n, _ := strconv.Atoi(p) // "080" is port 80, as net.Dial reads it
			w.mu.Lock()
			w.dial = append(w.dial, strings.ToLower(h)+":"+strconv.Itoa(n))
			w.mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr) // loopback only
		},
	}
	t.Cleanup(func() { w.base.CloseIdleConnections(); w.srv.Close() })
	return w
}

func (w *attack106Wire) lastOne() (seen, dial string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[len(w.seen)-1], w.dial[len(w.dial)-1]
}

// attack106Req is a request as user: u is parsed by url.Parse unless opaque is
// set, which then replaces the URL's path (net/http's documented way to
// send a request-target exactly as given); host, when set, is req.Host.
func attack106Req(ctx context.Context, method, u, opaque, host, user string) *http.Request {
	var body io.Reader
	if method != http.MethodGet {
		body = strings.NewReader(`{"a":1}`)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		panic(err)
	}
	if opaque != "" {
		req.URL = &url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Opaque: opaque, RawQuery: req.URL.RawQuery}
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Authorization", "XBL3.0 x="+user+";token-"+user)
	return req
}

func attack106Do(t *testing.T, rt http.RoundTripper, req *http.Request) string {
	t.Helper()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type attack106Spelling struct {
	name                   string
	readURL, readOpaque    string
	readHost               string
	writeURL, writeOpaque  string
	writeHost, writeMethod string
}

// attack106Stale reads (twice: the second from the cache), writes, reads again
// through the cache, and returns that read's answer, what the service
// holds for the read (sent without the cache), and whether the service
// took the write and the read for one resource on one address.
func attack106Stale(t *testing.T, c attack106Spelling) (got, want string, same bool, wire []string) {
	t.Helper()
	w := newAtk235Wire(t)
	tr := attack100Transport(w.base)
	tr.AllowInsecure = true
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
	read := func() *http.Request {
		return attack106Req(ctx, http.MethodGet, c.readURL, c.readOpaque, c.readHost, "1")
	}
	for range 2 {
		attack106Do(t, tr, read())
	}
	w.mu.Lock()
	n := len(w.seen)
	w.mu.Unlock()
	if n != 1 {
		t.Fatalf("%s: the second read reached the service: the cache kept nothing", c.name)
	}
	m := attack106Or(c.writeMethod, http.MethodPost)
	attack106Do(t, tr, attack106Req(ctx, m, c.writeURL, c.writeOpaque, c.writeHost, "2")) // another user writes
	seenW, dialW := w.lastOne()
	got = attack106Do(t, tr, read())
	plain := &Transport{Base: w.base, TitleID: "1234567890", DisableBudget: true, AllowInsecure: true}
	want = attack106Do(t, plain, read())
	seenR, dialR := w.lastOne()
	resW := strings.Fields(strings.TrimPrefix(seenW, m+" "))
	resR := strings.Fields(strings.TrimPrefix(seenR, "GET "))
	same = resW[0] == resR[0] && resW[1] == resR[1] && dialW == dialR
	return got, want, same, []string{seenW + " dialled " + dialW, seenR + " dialled " + dialR}
}

func attack106Or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// BREAK. A write whose URL has Opaque set to "//host/path" (net/http's
// documented way to send a request-target as given: it sends the
// absolute form "http://host/path") reaches the same resource as a read
// of "http://host/path" (RFC 9112 §3.2.2: a server takes the absolute
// form's authority and path; net/http's server does), on the same
// address. The cache compares req.URL.RequestURI() as text,
// "http://a.example/users/me/settings" against "/users/me/settings", and
// drops nothing: the read after the write is answered from the cache.
func TestAttack106WriteOpaqueAbsoluteFormLeavesRead(t *testing.T) {
	got, want, same, wire := attack106Stale(t, attack106Spelling{name: "opaque write",
		readURL:  "http://a.example/users/me/settings?s=1",
		writeURL: "http://a.example/users/me/settings?s=1", writeOpaque: "//a.example/users/me/settings"})
	t.Logf("wire: %q", wire)
	if !same {
		t.Fatalf("the service took the write and the read for different resources: %q", wire)
	}
	if got != want {
		t.Errorf("transport/transport.go ReadCacheTTL godoc: \"A write through the Transport ..., however it is answered, drops what the cache holds of its URL (scheme, host without the scheme's default port, path and query ...), for every user\": "+
			"a POST with URL.Opaque %q (sent as the absolute form, same resource, same address: %q) left the cached read of http://a.example/users/me/settings?s=1: the read after it answered %q from the cache, the service holds %q",
			"//a.example/users/me/settings", wire, got, want)
	}
}

// held: the same, read side. A read whose URL has Opaque "//host/path"
// (sent as the absolute form) is neither shared nor kept (CoalesceReads:
// such a call sends its own), so a plain write of "http://host/path"
// (same resource, same address) leaves nothing stale: each read reaches
// the service, the one after the write gets what the write made.
func TestAttack106ReadOpaqueAbsoluteFormKeptAfterWrite(t *testing.T) {
	w := newAtk235Wire(t)
	tr := attack100Transport(w.base)
	tr.AllowInsecure = true
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
	const u, opaque = "http://a.example/users/me/settings", "//a.example/users/me/settings"
	read := func() *http.Request { return attack106Req(ctx, http.MethodGet, u, opaque, "", "1") }
	for range 2 {
		if got := attack106Do(t, tr, read()); got != "0" {
			t.Fatalf("read before the write: %q, want 0", got)
		}
	}
	attack106Do(t, tr, attack106Req(ctx, http.MethodPost, u, "", "", "2")) // another user writes
	seenW, _ := w.lastOne()
	got := attack106Do(t, tr, read())
	seenR, _ := w.lastOne()
	w.mu.Lock()
	n := len(w.seen)
	w.mu.Unlock()
	if got != "1" || n != 4 || tr.Stats().Coalesced != 0 {
		t.Errorf("CoalesceReads godoc (\"whose URL has Opaque set ... always sends its own\"): reads with URL.Opaque %q: the read after a POST of %s answered %q (want 1), %d requests reached the service (want 4: every read), %d answered without one (want 0); wire %q",
			opaque, u, got, n, tr.Stats().Coalesced, []string{seenW, seenR})
	}
}

// BREAK. A default port written with a leading zero, "http://a.example:080/x"
// with Host "a.example" (the construction RELIABILITY.md's fixed
// default-port break used: "the URL's host is taken without its scheme's
// default port ... both reach one address with one Host"): net/http dials
// port 80 (net.Dial reads "080" as 80) and sends "Host: a.example" and
// "/x", exactly what the read of "http://a.example/x" sends. The cache
// trims only the literal ":80" and keeps the two apart.
func TestAttack106WriteDefaultPortLeadingZeroLeavesRead(t *testing.T) {
	got, want, same, wire := attack106Stale(t, attack106Spelling{name: "port 080",
		readURL:  "http://a.example/users/me/settings",
		writeURL: "http://a.example:080/users/me/settings", writeHost: "a.example"})
	t.Logf("wire: %q", wire)
	if !same {
		t.Fatalf("the service took the write and the read for different resources: %q", wire)
	}
	if got != want {
		t.Errorf("transport/transport.go ReadCacheTTL godoc: \"drops what the cache holds of its URL (scheme, host without the scheme's default port, path and query ...)\" and RELIABILITY.md \"the URL's host is taken without its scheme's default port (for reads' keys too: both reach one address with one Host)\": "+
			"a POST of http://a.example:080/... with Host a.example (port 80 dialled, same Host and target: %q) left the cached read of http://a.example/...: the read after it answered %q from the cache, the service holds %q",
			wire, got, want)
	}
}

// held: writes spelt with methods in lower case ("post", "patch"), unusual
// methods (PURGE, a custom one, "get" in lower case), an Opaque equal to the path
// (origin form, sent alike), an empty path against "/", and a Host header
// equal to what net/http sends for an IPv6 literal: each drops the cached
// read of its resource.
func TestAttack106WriteMethodsAndSpellingsHeld(t *testing.T) {
	const u = "http://a.example/users/me/settings?s=1"
	for _, c := range []attack106Spelling{
		{name: "post lower", readURL: u, writeURL: u, writeMethod: "post"},
		{name: "patch lower", readURL: u, writeURL: u, writeMethod: "patch"},
		{name: "PURGE", readURL: u, writeURL: u, writeMethod: "PURGE"},
		{name: "custom", readURL: u, writeURL: u, writeMethod: "X-SETTINGS-UPDATE"},
		{name: "get lower", readURL: u, writeURL: u, writeMethod: "get"},
		{name: "opaque origin form", readURL: u, writeURL: u, writeOpaque: "/users/me/settings"},
		{name: "empty path", readURL: "http://a.example", writeURL: "http://a.example/"},
		{name: "ipv6 default port", readURL: "http://[::1]:80/x", readHost: "[::1]", writeURL: "http://[::1]/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, want, same, wire := attack106Stale(t, c)
			if !same {
				t.Fatalf("%s: the service took them apart: %q", c.name, wire)
			}
			if got != want {
				t.Errorf("ReadCacheTTL godoc (\"A write ... drops what the cache holds of its URL\"): %s: read after the write %q, service holds %q (%q)", c.name, got, want, wire)
			}
		})
	}
}
