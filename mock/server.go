package mock

import (
	"net/http"
	"net/http/httptest"
	"net/url"
)

// Server is a Handler listening on a loopback port, in the style of
// httptest.Server.
type Server struct {
	// URL is the base URL of the server, "http://127.0.0.1:port".
	URL string
	// Handler is the mock the server serves; use it for Counts.
	Handler *Handler

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

// Close shuts the server down and blocks until its requests have finished.
func (s *Server) Close() { s.srv.Close() }

// Transport returns a RoundTripper that sends every request, whatever its
// URL, to the server over loopback, keeping the URL's host as the Host header:
// https://profile.xboxlive.com/users/me/profile/settings reaches the mock as
// the profile service.
func (s *Server) Transport() http.RoundTripper {
	u, _ := url.Parse(s.URL)
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
