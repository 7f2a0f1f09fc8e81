package mock

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/xblgo/fgrl/mock/tlsca"
)

// Server is a Handler listening on a loopback port, in the style of
// httptest.Server. Its connections are bounded (Conns): by default an idle
// one closes after DefaultIdleTimeout (2 minutes) and at most
// DefaultMaxConns (1024) are open at once.
type Server struct {
	// URL is the base URL of the server, "http://127.0.0.1:port" (https://
	// for StartTLS), set by Start or StartTLS.
	URL string
	// Handler is the mock the server serves; use it for Counts.
	Handler *Handler
	// CA signs the TLS server's certificate (StartTLS); nil for plain
	// HTTP.
	CA *tlsca.CA
	// Conns bounds the server's connections; set it between
	// NewUnstartedServer and Start (a short IdleTimeout, in a test of how a
	// client reconnects).
	Conns ConnLimits

	srv *httptest.Server
}

// NewServer starts and returns a mock server serving h, or the default
// mock (NewHandler()) when h is nil. The caller must Close it.
func NewServer(h *Handler) *Server {
	s := NewUnstartedServer(h)
	s.Start()
	return s
}

// NewTLSServer starts and returns a mock server serving h (nil: the
// default mock) over HTTPS, with a certificate naming every host h answers,
// signed by a fresh CA. Its Client reaches each service at its real name
// (https://profile.xboxlive.com/...), verifying the certificate against the
// CA, as a client configured with the CA's PEM would. The caller must Close
// it.
func NewTLSServer(h *Handler) *Server {
	s := NewUnstartedServer(h)
	s.StartTLS()
	return s
}

// NewUnstartedServer returns a mock server serving h (nil: the default
// mock), listening but not serving until Start or StartTLS, so that its
// Conns can be set. The caller must Close it.
func NewUnstartedServer(h *Handler) *Server {
	if h == nil {
		h = NewHandler()
	}
	return &Server{Handler: h, srv: httptest.NewUnstartedServer(h)}
}

// Start serves plain HTTP.
func (s *Server) Start() {
	s.Conns.Apply(s.srv.Config)
	s.srv.Listener = s.Conns.Listener(s.srv.Listener)
	s.srv.Start()
	s.URL = s.srv.URL
}

// StartTLS serves HTTPS with a certificate naming every host the Handler
// answers, signed by a fresh CA (CA).
func (s *Server) StartTLS() {
	ca, err := tlsca.New()
	if err != nil {
		panic("mock: StartTLS: " + err.Error())
	}
	cfg, err := ca.TLSConfig(s.Handler.Hosts())
	if err != nil {
		panic("mock: StartTLS: " + err.Error())
	}
	s.srv.TLS, s.CA = cfg, ca
	s.Conns.Apply(s.srv.Config)
	s.srv.Listener = s.Conns.Listener(s.srv.Listener)
	s.srv.StartTLS()
	s.URL = s.srv.URL
}

// Close shuts the server down and blocks until its requests have finished.
func (s *Server) Close() {
	s.Handler.rta.dropAll() // its websockets, which the server no longer tracks
	s.srv.Close()
	w := s.Handler.world
	w.lapses.mu.Lock() // no lapse is pushed to no one, and no timer keeps the Handler
	w.stopLapses()
	w.lapses.mu.Unlock()
}

// Transport returns a RoundTripper that sends every request, whatever its
// URL, to the server over loopback, keeping the URL's host as the Host header:
// https://profile.xboxlive.com/users/me/profile/settings reaches the mock as
// the profile service.
func (s *Server) Transport() http.RoundTripper {
	u, _ := url.Parse(s.URL)
	if s.CA != nil {
		// Every connection goes to the server; the URL's host stays the
		// TLS server name, checked against the certificate.
		d := &net.Dialer{}
		return &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, u.Host)
			},
			TLSClientConfig:   &tls.Config{RootCAs: s.CA.Pool()},
			ForceAttemptHTTP2: true,
		}
	}
	return &redirect{base: s.srv.Client().Transport, host: u.Host}
}

// Client returns an *http.Client whose transport is Transport().
func (s *Server) Client() *http.Client {
	return &http.Client{Transport: s.Transport()}
}

type redirect struct {
	base http.RoundTripper
	host string
}

func (r *redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	if out.Host == "" {
		out.Host = req.URL.Host
	}
	out.URL.Scheme = "http"
	out.URL.Host = r.host
	resp, err := r.base.RoundTrip(out)
	if resp != nil {
		resp.Request = req
	}
	return resp, err
}
