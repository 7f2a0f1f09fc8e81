package transport

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/xblgo/fgrl/hresult"
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

// keepCode returns scrubbed, the error raw seen without its secrets, so
// that hresult.Of (and so permanent) finds in it raw's code: a Reporter
// under raw whose text tells a secret is not given through scrubbed, and a
// secret in a text must not change what the transport decides.
func keepCode(raw, scrubbed error) error {
	if scrubbed == nil || scrubbed == raw {
		return scrubbed
	}
	if c := hresult.Of(raw); c != hresult.Of(scrubbed) {
		return &codedError{err: scrubbed, code: c}
	}
	return scrubbed
}

// codedError is a scrubbed error with the HRESULT of the error it hides.
type codedError struct {
	err  error
	code hresult.HRESULT
}

func (e *codedError) Error() string            { return e.err.Error() }
func (e *codedError) Unwrap() error            { return e.err }
func (e *codedError) HRESULT() hresult.HRESULT { return e.code }

// GoString is the scrubbed error's, not codedError's fields.
func (e *codedError) GoString() string { return fmt.Sprintf("%#v", e.err) }

// Timeout and Temporary are the scrubbed error's: a *url.Error around
// codedError (http.Client's) asks its error directly.
func (e *codedError) Timeout() bool {
	t, ok := e.err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}

func (e *codedError) Temporary() bool {
	t, ok := e.err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// sentSecrets returns what an attempt sent that no error, event or log may
// tell: its credentials (credential headers, the URL's query credentials
// and user info) and the users its path names (xuid(…), gt(…),
// gamertag(…), as the services' paths name them): an Event names the
// service, never the user, and a service may quote the path it refused.
func sentSecrets(r *http.Request) xblauth.Secrets {
	ss := xblauth.Secrets{}.HeaderSecrets(r.Header).URLSecrets(r.URL)
	if r.URL != nil && strings.IndexByte(r.URL.Path, '(') >= 0 {
		ss = pathUsers(ss, r.URL.Path)
	}
	return ss
}

// pathUsers returns ss with each user a path names by a selector
// (xuid(2533274791234567), gt(Gamertag), gamertag(Gamertag)): the value,
// and the selector whole, which a short gamertag needs.
func pathUsers(ss xblauth.Secrets, p string) xblauth.Secrets {
	for {
		open := strings.IndexByte(p, '(')
		if open < 0 {
			return ss
		}
		end := strings.IndexByte(p[open:], ')')
		if end < 0 {
			return ss
		}
		end += open
		sel := p[strings.LastIndexByte(p[:open], '/')+1 : open]
		if v := p[open+1 : end]; v != "" && (strings.EqualFold(sel, "xuid") || strings.EqualFold(sel, "gt") || strings.EqualFold(sel, "gamertag")) {
			ss = append(ss.Add(v), p[open-len(sel):end+1])
		}
		p = p[end+1:]
	}
}
