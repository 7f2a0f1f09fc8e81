package transport

import (
	"net/http"
	"strings"
)

// credentialHeaders are the headers that carry a user's credentials.
var credentialHeaders = []string{"Authorization", "Signature"}

// headerFold returns the first value of the header name (given in its
// canonical form) in h, whatever the case its key is spelt in: a map key set directly (h["authorization"])
// bypasses canonicalization, and net/http sends it as it is.
func headerFold(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 { // name is canonical: no need for Get's canonicalization
		return v[0]
	}
	for k, vs := range h {
		if len(vs) > 0 && strings.EqualFold(k, name) {
			return vs[0]
		}
	}
	return ""
}

// dropCredentialsOnRedirect returns req without its credential headers when
// it follows a redirect (req.Response is set) to another host, and req
// itself otherwise.
func dropCredentialsOnRedirect(req *http.Request) *http.Request {
	if req.Response == nil || req.Response.Request == nil || req.Response.Request.URL == nil ||
		strings.EqualFold(req.Response.Request.URL.Host, req.URL.Host) {
		return req
	}
	var r *http.Request
	for k := range req.Header {
		for _, name := range credentialHeaders {
			if strings.EqualFold(k, name) {
				if r == nil {
					r = req.Clone(req.Context())
				}
				delete(r.Header, k)
			}
		}
	}
	if r == nil {
		return req
	}
	return r
}
