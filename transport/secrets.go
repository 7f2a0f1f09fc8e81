package transport

import (
	"fmt"
	"net/http"
	"net/url"
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

// maxQuerySecrets bounds the credentials querySecrets takes from a URL's
// query and fragment one by one: past it, the whole text after the first
// '?' or '#' is one secret, so that scrubbing an error stays linear in it.
const maxQuerySecrets = 64

// querySecrets returns ss with the credentials of u that xblauth.RedactURL
// takes out (its user info, the values of its query and fragment such as
// access_token, however they are separated or escaped), for an error that
// quotes the URL as text rather than as a *url.Error. Each pair of the
// query and fragment is judged alone, as RedactURL judges it (url.Values
// holds no fragment, no pair after a ';', none with a bad escape, and none
// past net/url's 10,000 pairs), in time linear in the URL.
func querySecrets(ss xblauth.Secrets, u *url.URL) xblauth.Secrets {
	if u == nil {
		return ss
	}
	raw := u.String()
	if xblauth.RedactURL(raw) == raw {
		return ss
	}
	if u.User != nil {
		ss = ss.Add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			ss = ss.Add(p)
		}
	}
	i := strings.IndexAny(raw, "?#")
	if i < 0 {
		return ss
	}
	form, n := raw[i+1:], 0
	for start := 0; start < len(form); {
		end := strings.IndexAny(form[start:], "&;#?")
		if end < 0 {
			end = len(form)
		} else {
			end += start
		}
		pair := form[start:end]
		start = end + 1
		if pair == "" || xblauth.RedactParams(u.Host, "?"+pair) == "?"+pair {
			continue
		}
		if n++; n > maxQuerySecrets {
			return append(xblauth.Secrets{}.Add(form), ss...) // first, before its parts are replaced
		}
		_, v, ok := strings.Cut(pair, "=")
		if !ok {
			v = pair
		}
		ss = ss.Add(v)
		if x, err := url.QueryUnescape(v); err == nil && x != v {
			ss = ss.Add(x)
		}
		if x, err := url.PathUnescape(v); err == nil && x != v {
			ss = ss.Add(x)
		}
	}
	return ss
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
