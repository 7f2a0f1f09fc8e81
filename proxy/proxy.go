// Package proxy is fgrl's transport for programs in any language: a
// forward proxy (HTTPS_PROXY) that ends TLS for the Xbox hosts of the
// limits data with its own CA and sends every request inside through a
// transport.Transport, so that an application written in C#, Node, Python,
// Java or C++ gets the local budget, XSAPI's retry rules, a fleet budget
// and metrics without a change to its code (xblcall proxy).
//
// # What an application sees
//
// A call the budget lets through waits as the transport waits, and ends
// when the application gives up (it closes its connection or stream: the
// call's context ends, and a budget slot it was waiting for is given
// back). Over HTTP/1, net/http notices a closed connection only once the
// request's body has been read, so the proxy reads a body of up to 64 KiB
// as the call begins (one whose length is not given alongside the call, so
// that the service may have the call before its body, and only when the
// call may wait). An HTTP/1 call whose body it does not hold (a longer
// one, or one that comes while it holds 64 MiB of others) never waits when
// the body's length is given: it is sent at once or refused, as with
// HeaderFailFast; when the body is chunked, its rest is read only as the
// call is sent, so a call that waits with one is sent when its turn comes,
// even when the application has gone meanwhile. A call the transport
// refuses locally is answered as the service would answer it: 429 with
// Retry-After, the RateLimit headers and FGRL's JSON body
// (ratelimit.Body), plus HeaderRefused, so the application's own 429
// handling works and the service's budget is not spent. A per-call Policy
// is chosen with request headers (HeaderMaxWait...), which the proxy
// strips before sending. The trailer fields a request's body announces
// (its Trailer header) reach the service as sent (the body then goes
// chunked, its length not given), but for those the proxy strips: its
// own, named with PolicyPrefix; the hop-by-hop ones, Proxy-Authorization
// among them, and those the request's Connection header names; and those
// that cannot be trailers (RFC 9110 §6.5.1): Authorization, Cookie, Host,
// the framing and content fields (Content-Length, Content-Type...), the
// request modifiers (Expect, Range, the If- conditionals...),
// X-Xbl-Contract-Version and Signature. A trailer section is what
// net/http's server makes of it: over HTTP/1.1 one past its 4 KiB read
// buffer is refused, 400; over HTTP/2 one past the header-list bound (64
// KiB and 320 bytes) keeps the fields before the first that passes it,
// each whole, and loses that one and the rest without a word, which the
// proxy cannot tell from fields announced and not sent (RFC 9110 §6.6.2:
// the Trailer header names fields that might come), so the call goes on
// without them.
//
// # What it refuses
//
// CONNECT to a host that is not one of the limits data's, or to a port
// other than 443, is refused with 403 unless Config.TunnelOthers is set,
// in which case it is tunnelled untouched: never decrypted. Inside a
// tunnel, a TLS handshake that names another host (SNI), or a request
// whose Host is another, is refused (the handshake fails; 421). A plain
// HTTP request in absolute form (GET https://profile.xboxlive.com/... ,
// what some clients send a proxy) is served the same way, to loopback
// peers only, since its token travels in clear. Peers off loopback need
// Config.Token. The proxy keeps no request or answer body after a call,
// and no token reaches its log, status or errors.
package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/tunnel"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/transport"
)

// DefaultMaxCallTime is a zero Config.MaxCallTime: the longest wait a
// Policy allows and the longest attempt, one after the other.
const DefaultMaxCallTime = transport.MaxPolicyWait + transport.LongCallTimeout

// Bounds of the proxy's servers.
const (
	maxHeaderBytes = 64 << 10 // of a request's header, as the mock's
	// The connections' timeouts when Config.ConfigureServer is nil: the
	// mock's defaults (mock.DefaultHeaderTimeout, DefaultIdleTimeout).
	defaultHeaderTimeout = 10 * time.Second
	defaultIdleTimeout   = 2 * time.Minute
)

// Config configures a Server; New checks it.
type Config struct {
	// Transport sends every call (required). Its Base says where calls
	// go: the network, or a mock standing in for it. With Raw429 set, the
	// service's own 429s reach the application as the service sent them;
	// without it, the proxy writes them from the *transport.ThrottleError.
	// Its CoalesceReads shares answers only between calls with the same
	// credentials; leave it off unless the proxy's applications want it.
	Transport *transport.Transport
	// TLS ends the tunnels to the Xbox hosts (required): a server
	// configuration whose certificates name them, such as
	// tlsca.CA.TLSConfig(Hosts(limits)) makes. Its GetConfigForClient is
	// not used: a tunnel's handshake must name the tunnel's host.
	TLS *tls.Config
	// Limits say which hosts are Xbox hosts: the hosts of its rules. Nil
	// means the Transport's (its Limits, or limits.Default()).
	Limits *limits.Limits
	// TunnelOthers tunnels CONNECT to port 443 of any other host
	// untouched, never decrypted; without it such a CONNECT gets 403.
	TunnelOthers bool
	// Dial opens those tunnels. Nil means a net.Dialer that refuses
	// loopback, private, link-local, multicast and unspecified addresses,
	// and the special-purpose ranges that reach a network's own services
	// or other addresses by translation (carrier-grade NAT's shared space,
	// the benchmarking range, NAT64, ...), so that the proxy is no way
	// into its machine's or network's own services.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Token admits peers that are not on loopback: to the proxy in
	// Proxy-Authorization (Basic with any user name and the token as the
	// password, which HTTPS_PROXY=http://user:TOKEN@host:port makes clients
	// send; or Bearer), to the admin endpoints in Authorization (Bearer) or
	// the query's token, as mock.AdminAccess admits them. Empty: only
	// loopback peers are served.
	Token string
	// AdminHosts are names the admin endpoints' Host header may carry
	// besides IP addresses and localhost (a guard against DNS rebinding,
	// as mock.AdminAccess.Hosts).
	AdminHosts []string
	// Metrics is served at /metrics when not nil
	// (transportprom.Collector's, through promhttp).
	Metrics http.Handler
	// Logger logs each call once it ends (method, host, path, status, how
	// it ended, its key's scope and userhash, its duration; never a token
	// nor the query), each refused CONNECT, and the servers' own errors
	// (TLS handshakes refused). Nil logs nothing.
	Logger *slog.Logger
	// ConfigureServer is called on each http.Server the proxy runs (its
	// port's, and the one that serves the decrypted tunnels) once its
	// Handler is set: mock.ConnLimits.Apply bounds their connections as
	// the mock's. Nil sets a 10 s header timeout and a 2-minute idle
	// timeout on both. A tunnel to another host closes after the port's
	// IdleTimeout with no byte either way.
	ConfigureServer func(*http.Server)
	// MaxCallTime bounds a call from its arrival to the end of its answer,
	// waits included, whatever the application's own timeout: its body's
	// reads end then, and a call still under way is answered 504 (within a
	// second more). A call that ends before its streamed body does
	// (refused, or answered without the service reading it all) is
	// answered once the rest has come, within 200 ms; a body still coming
	// then closes the connection after the answer. Zero means
	// DefaultMaxCallTime.
	MaxCallTime time.Duration
}

// Server is a running proxy: New makes one from a Config, Serve serves it
// on a listener until Shutdown or Close. It is safe for concurrent use.
type Server struct {
	cfg     Config
	tr      *transport.Transport
	lim     *limits.Limits
	tlsConf *tls.Config // cfg.TLS with the tunnel's host checked against SNI
	fwd     *httputil.ReverseProxy
	admin   http.Handler
	errLog  *log.Logger
	tunnels *tunnel.Listener // decrypted tunnels, to the inner server
	keys    keyTracker
	stats   counters
	held    heldBytes
	status  statusCache

	mu           sync.Mutex
	outer, inner *http.Server
	raw          map[net.Conn]struct{} // tunnels to other hosts, open
	closed       bool
	idle         time.Duration // a raw tunnel's, the outer server's IdleTimeout
}

// ErrServerClosed is Serve's error after Shutdown or Close.
var ErrServerClosed = http.ErrServerClosed

// New checks c and returns a Server ready to Serve.
func New(c Config) (*Server, error) {
	switch {
	case c.Transport == nil:
		return nil, errors.New("proxy: Config.Transport is required")
	case c.TLS == nil || c.TLS.GetCertificate == nil && len(c.TLS.Certificates) == 0:
		return nil, errors.New("proxy: Config.TLS is required, with a certificate for the Xbox hosts")
	case c.MaxCallTime < 0:
		return nil, errors.New("proxy: Config.MaxCallTime is negative")
	}
	s := &Server{cfg: c, tr: c.Transport, lim: c.Limits, raw: map[net.Conn]struct{}{}, tunnels: tunnel.NewListener(tunnelAddr{})}
	if s.lim == nil {
		s.lim = c.Transport.Limits
	}
	if s.lim == nil {
		s.lim = limits.Default()
	}
	if s.cfg.MaxCallTime == 0 {
		s.cfg.MaxCallTime = DefaultMaxCallTime
	}
	if s.cfg.Dial == nil {
		s.cfg.Dial = dialPublic
	}
	s.errLog = log.New(io.Discard, "", 0)
	if c.Logger != nil {
		s.errLog = slog.NewLogLogger(c.Logger.Handler(), slog.LevelWarn)
	}
	s.tlsConf = s.tunnelTLS(c.TLS)
	s.fwd = &httputil.ReverseProxy{Rewrite: s.rewrite, Transport: roundTripper{s}, ErrorHandler: s.failed, ErrorLog: s.errLog,
		BufferPool: &copyBuffers{}}
	s.admin = s.adminHandler()
	return s, nil
}

// Hosts returns the hosts of l's rules, lower case, sorted, each once:
// the names (and patterns, such as "club*.xboxlive.com") the proxy's TLS
// certificate must name (tlsca.CA.TLSConfig takes them).
func Hosts(l *limits.Limits) []string {
	var out []string
	for _, r := range l.Rules {
		for _, h := range r.Hosts {
			out = append(out, strings.ToLower(h))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// xbox reports whether host (lower case, no port) is a host of the limits.
func (s *Server) xbox(host string) bool {
	for i := range s.lim.Rules {
		if s.lim.Rules[i].CoversHost(host) {
			return true
		}
	}
	return false
}

// Serve accepts connections on ln and serves them until Shutdown or Close,
// which close ln; it returns ErrServerClosed then. A Server serves one
// listener: a second Serve returns an error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrServerClosed
	case s.outer != nil:
		s.mu.Unlock()
		return errors.New("proxy: Serve called twice")
	}
	s.outer = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), MaxHeaderBytes: maxHeaderBytes, ErrorLog: s.errLog}
	s.inner = &http.Server{Handler: http.HandlerFunc(s.serveTunnelled), MaxHeaderBytes: maxHeaderBytes, ErrorLog: s.errLog,
		ConnContext: tunnelContext}
	for _, srv := range []*http.Server{s.outer, s.inner} {
		if s.cfg.ConfigureServer != nil {
			s.cfg.ConfigureServer(srv)
		} else {
			srv.ReadHeaderTimeout, srv.IdleTimeout = defaultHeaderTimeout, defaultIdleTimeout
		}
	}
	s.idle = s.outer.IdleTimeout
	if s.idle <= 0 {
		s.idle = defaultIdleTimeout
	}
	outer, inner := s.outer, s.inner
	s.mu.Unlock()
	go inner.Serve(tls.NewListener(s.tunnels, s.tlsConf))
	return outer.Serve(ln)
}

// Shutdown stops the proxy gracefully: it closes the listener and the
// tunnels to other hosts, and waits for the calls in flight and the
// decrypted tunnels to end, or for ctx to (http.Server.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error {
	outer, inner := s.stop()
	if outer == nil {
		return nil
	}
	return errors.Join(outer.Shutdown(ctx), inner.Shutdown(ctx))
}

// Close stops the proxy at once, closing every connection.
func (s *Server) Close() error {
	outer, inner := s.stop()
	if outer == nil {
		return nil
	}
	return errors.Join(outer.Close(), inner.Close())
}

// stop marks s closed, closes its tunnels and returns its servers.
func (s *Server) stop() (outer, inner *http.Server) {
	s.mu.Lock()
	s.closed = true
	for c := range s.raw {
		c.Close()
	}
	outer, inner = s.outer, s.inner
	s.mu.Unlock()
	s.tunnels.Close()
	return outer, inner
}

// serveHTTP is the proxy's port: CONNECT, requests in absolute form, the
// admin endpoints.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		s.connect(w, r)
	case r.URL.IsAbs():
		s.absolute(w, r)
	case isAdmin(r):
		bodyReadsUntil(w, r, time.Now().Add(s.cfg.MaxCallTime)) // by the page, or unread by net/http before the answer
		s.admin.ServeHTTP(w, r)
	default: // the request's Host is the peer's to choose: the answer names the address it came to
		plain(w, r, http.StatusBadRequest, "proxy: this is a forward proxy for the Xbox services: send it HTTPS through CONNECT "+
			"(HTTPS_PROXY=http://"+localAddr(r)+"); its own pages are at "+AdminPrefix)
	}
}

// localAddr is the address a request came to, or a placeholder.
func localAddr(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return "<this address>"
}

// bodyReadsUntil ends the reads of r's body, if it has one, at deadline,
// and over HTTP/1 closes the connection after the answer: net/http reads a
// small unread body before an answer's header with no deadline of its own,
// and the deadline stays on the connection, which no other request then
// uses. An HTTP/2 stream's deadline is its own, and its unread body holds
// no other stream: the connection stays (a Connection: close would end it
// for every stream, GOAWAY). A request without a body keeps its
// connection. An error of the deadline's setting means a writer that
// cannot (a recorder).
func bodyReadsUntil(w http.ResponseWriter, r *http.Request, deadline time.Time) {
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		http.NewResponseController(w).SetReadDeadline(deadline)
		if r.ProtoMajor < 2 {
			w.Header().Set("Connection", "close")
		}
	}
}

// plain writes a text answer to r, the proxy's own, which waits for no
// body r announced (bodyReadsUntil now); r is nil where its body was read
// (a refusal after the call).
func plain(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if r != nil {
		bodyReadsUntil(w, r, time.Now()) // the proxy's own answer reads no body
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}
