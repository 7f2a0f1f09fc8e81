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
// and user info) and the users its URL names (urlUsers): an Event names
// the service, never the user, and a service may quote the request it
// refused.
func sentSecrets(r *http.Request) xblauth.Secrets {
	ss := xblauth.Secrets{}.HeaderSecrets(r.Header).URLSecrets(r.URL)
	if r.URL != nil {
		ss = urlUsers(ss, r.URL)
	}
	return ss
}

// maxURLUsers bounds the users of one URL taken one by one: past it, its
// path is taken whole (a path naming thousands would make every scrub
// read the text once a user).
const maxURLUsers = 32

// urlUsers returns ss with the users u names, as the services' URLs name
// them: a path segment's selector (xuid(…), xuids(…,…), gt(…),
// gamertag(…), in any case and however percent-encoded), a segment of
// digits alone as long as an XUID, and the query's xuid, xuids, gt and
// gamertag values. Each is taken as its value and as the segment or pair
// whole, in the spelling sent and decoded: a short gamertag is taken by
// its selector whole.
func urlUsers(ss xblauth.Secrets, u *url.URL) xblauth.Secrets {
	n := 0
	raw := u.EscapedPath()
	for seg := range strings.SplitSeq(raw, "/") {
		dec := seg
		if strings.IndexByte(seg, '%') >= 0 {
			if d, err := url.PathUnescape(seg); err == nil {
				dec = d
			}
		}
		users := segmentUsers(dec)
		if len(users) == 0 {
			continue
		}
		if n += len(users); n > maxURLUsers {
			return append(ss, raw, u.Path)
		}
		for _, v := range users {
			ss = ss.Add(v)
		}
		ss = append(ss, seg)
		if dec != seg {
			ss = append(ss, dec)
		}
	}
	if u.RawQuery == "" {
		return ss
	}
	for pair := range strings.SplitSeq(u.RawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if !userParam(k) || v == "" {
			continue
		}
		dv := v
		if d, err := url.QueryUnescape(v); err == nil {
			dv = d
		}
		for x := range strings.SplitSeq(dv, ",") {
			if x = strings.TrimSpace(x); x != "" {
				if n++; n > maxURLUsers {
					return append(ss, u.RawQuery)
				}
				ss = ss.Add(x)
			}
		}
		ss = append(ss, pair, k+"="+dv)
	}
	return ss
}

// userParam reports whether a query parameter names users.
func userParam(k string) bool {
	for _, p := range [...]string{"xuid", "xuids", "gt", "gamertag", "gamertags"} {
		if strings.EqualFold(k, p) {
			return true
		}
	}
	return false
}

// segmentUsers returns the users a path segment (decoded) names: each
// selector's values, a list's split at commas, or the segment itself when
// it is digits alone as long as an XUID.
func segmentUsers(seg string) []string {
	if isXUIDLike(seg) {
		return []string{seg}
	}
	var users []string
	for rest := seg; ; {
		open := strings.IndexByte(rest, '(')
		if open < 0 {
			return users
		}
		end := strings.IndexByte(rest[open:], ')')
		if end < 0 {
			return users
		}
		end += open
		sel := rest[:open]
		if i := strings.LastIndexAny(sel, ",;/"); i >= 0 {
			sel = sel[i+1:]
		}
		if userSelector(sel) {
			for v := range strings.SplitSeq(rest[open+1:end], ",") {
				if v = strings.TrimSpace(v); v != "" {
					users = append(users, v)
				}
			}
		}
		rest = rest[end+1:]
	}
}

// userSelector reports whether a path selector names users.
func userSelector(sel string) bool {
	for _, p := range [...]string{"xuid", "xuids", "gt", "gamertag", "gamertags"} {
		if strings.EqualFold(sel, p) {
			return true
		}
	}
	return false
}

// minXUIDDigits is the fewest digits taken for an XUID where nothing else
// names one: XUIDs are 16 digits (2533274790395904); title ids 10 or
// fewer.
const minXUIDDigits = 15

// isXUIDLike reports whether s is digits alone, at least minXUIDDigits.
func isXUIDLike(s string) bool {
	if len(s) < minXUIDDigits {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// hideXUIDs returns s with each run of at least minXUIDDigits digits
// replaced by "[redacted]": a service's text may name a user the request
// named only in its body (a batch's userIds), which the transport does not
// read. s itself when it holds none.
func hideXUIDs(s string) string {
	var b strings.Builder
	run, last := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && '0' <= s[i] && s[i] <= '9' {
			run++
			continue
		}
		if run >= minXUIDDigits {
			b.WriteString(s[last : i-run])
			b.WriteString("[redacted]")
			last = i
		}
		run = 0
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
