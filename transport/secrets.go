package transport

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/xblgo/fgrl/internal/xblauth"
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
// it follows a redirect (req.Response is set) to another host, or to a host
// it cannot tell (the response that redirected names no request: a base
// RoundTripper such as a stub, recorder or cache may leave Response.Request
// empty); dropped says it did. Otherwise it returns req itself.
func dropCredentialsOnRedirect(req *http.Request) (_ *http.Request, dropped bool) {
	if req.Response == nil {
		return req, false
	}
	if from := req.Response.Request; from != nil && from.URL != nil && strings.EqualFold(from.URL.Host, req.URL.Host) {
		return req, false
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
		return req, true
	}
	return r, true
}

// querySecrets returns ss with the credentials of u that xblauth.RedactURL
// takes out (its user info, the values of its query such as access_token),
// for an error that quotes the URL as text rather than as a *url.Error.
func querySecrets(ss xblauth.Secrets, u *url.URL) xblauth.Secrets {
	if u == nil {
		return ss
	}
	raw := u.String()
	red := xblauth.RedactURL(raw)
	if red == raw {
		return ss
	}
	if u.User != nil {
		ss = ss.Add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			ss = ss.Add(p)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			if !strings.Contains(red, v) && !strings.Contains(red, url.QueryEscape(v)) {
				ss = ss.Add(v)
			}
		}
	}
	return ss
}
