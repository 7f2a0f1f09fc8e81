package mock

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
)

// Server is a Handler listening on a loopback port, in the style of
// httptest.Server.
type Server struct {
	// URL is the base URL of the server, "http://127.0.0.1:port" (https://
	// for NewTLSServer).
	URL string
	// Handler is the mock the server serves; use it for Counts.
	Handler *Handler
	// CA signs the TLS server's certificate (NewTLSServer); nil for plain
	// HTTP.
	CA *CA

	srv *httptest.Server
}

// NewServer starts and returns a mock server serving h, or the default
// mock (NewHandler()) when h is nil. The caller must Close it.
func NewServer(h *Handler) *Server {
	if h == nil {
		h = NewHandler()
	}
	srv := httptest.NewServer(h)
	return &Server{URL: srv.URL, Handler: h, srv: srv}
}

// NewTLSServer starts and returns a mock server serving h (nil: the
// default mock) over HTTPS, with a certificate naming every host h answers,
// signed by a fresh CA. Its Client reaches each service at its real name
// (https://profile.xboxlive.com/...), verifying the certificate against the
// CA, as a client configured with the CA's PEM would. The caller must Close
// it.
func NewTLSServer(h *Handler) *Server {
	if h == nil {
		h = NewHandler()
	}
	ca, err := NewCA()
	if err != nil {
		panic("mock: NewTLSServer: " + err.Error())
	}
	cfg, err := ca.TLSConfig(h.Hosts())
	if err != nil {
		panic("mock: NewTLSServer: " + err.Error())
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = cfg
	srv.StartTLS()
	return &Server{URL: srv.URL, Handler: h, CA: ca, srv: srv}
}

// Close shuts the server down and blocks until its requests have finished.
func (s *Server) Close() { s.srv.Close() }

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
