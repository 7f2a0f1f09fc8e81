package xblauth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Secrets are credentials a request carried, to be taken out of whatever
// text a service sends back (Scrub) before it reaches an error, a log or
// an event: a service, or a hostile one, may echo them.
type Secrets []string

// minSecret is the shortest text taken for a secret: shorter ones would
// take ordinary words out.
const minSecret = 8

// Add returns ss with s, when s is long enough to be a secret, and the
// forms a URL escapes it to (a token's or a signature's base64 '+', '/'
// and '=' become %2B, %2F and %3D) and a JSON answer does (encoding/json
// writes <, > and & as \u003c, \u003e and \u0026).
func (ss Secrets) Add(s string) Secrets {
	if len(s) < minSecret {
		return ss
	}
	ss = append(ss, s)
	forms := []string{url.QueryEscape(s), url.PathEscape(s)}
	if b, err := json.Marshal(s); err == nil {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	for i, f := range forms {
		if f != s && !slices.Contains(forms[:i], f) {
			ss = append(ss, f)
		}
	}
	return ss
}

// HeaderSecrets returns ss with the credentials of each header given (nil
// ones skipped): every value of every header named like a credential
// (Sensitive: Authorization, Signature, Cookie, Proxy-Authorization, ...),
// whatever the case its key is spelt in, and of an XBL3.0 Authorization
// the token alone (what follows its ';').
func (ss Secrets) HeaderSecrets(hs ...http.Header) Secrets {
	for _, h := range hs {
		for k, vs := range h {
			if !Sensitive(k) {
				continue
			}
			for _, v := range vs {
				ss = ss.Add(v)
				if _, tok, ok := strings.Cut(v, ";"); ok {
					ss = ss.Add(tok)
				}
			}
		}
	}
	return ss
}

// PostedSecrets returns ss with the credentials of a posted JSON body:
// the strings under a field named like one (Sensitive: RpsTicket,
// UserTokens, DelegationToken, ...) at any depth, and of a ticket such as
// RpsTicket's "d=<access token>", the token alone too. The other fields
// (RelyingParty, SiteName) are what a refusal names to be understood.
func (ss Secrets) PostedSecrets(body []byte) Secrets {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ss
	}
	var walk func(v any, secret bool)
	walk = func(v any, secret bool) {
		switch v := v.(type) {
		case string:
			if secret {
				ss = ss.Add(v)
				if p, tok, ok := strings.Cut(v, "="); ok && len(p) <= 2 {
					ss = ss.Add(tok)
				}
			}
		case []any:
			for _, e := range v {
				walk(e, secret)
			}
		case map[string]any:
			for k, e := range v {
				walk(e, secret || Sensitive(k))
			}
		}
	}
	walk(v, false)
	return ss
}

// Scrub returns s with each of ss replaced by "[redacted]", in any case
// of its ASCII letters (a service may echo a token upper-cased). Scrub
// before clipping: a clipped text may hold a secret's first part only.
func (ss Secrets) Scrub(s string) string {
	for _, x := range ss {
		s = replaceFold(s, x)
	}
	return s
}

// replaceFold returns s with every occurrence of x, compared without ASCII
// case, replaced by "[redacted]".
func replaceFold(s, x string) string {
	low, lx := asciiLower(s), asciiLower(x)
	if !strings.Contains(low, lx) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(low, lx)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString("[redacted]")
		s, low = s[i+len(x):], low[i+len(x):]
	}
}

// asciiLower lowers s's ASCII letters only, so that its length and byte
// offsets stay s's.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// ScrubError returns err, or, when its text holds one of ss, an error
// whose text is scrubbed and which errors.Is and errors.As see through to
// err.
func (ss Secrets) ScrubError(err error) error {
	if err == nil || len(ss) == 0 {
		return err
	}
	if t := err.Error(); ss.Scrub(t) != t {
		return &scrubbed{err: err, text: ss.Scrub(t)}
	}
	return err
}

type scrubbed struct {
	err  error
	text string
}

func (e *scrubbed) Error() string { return e.text }
func (e *scrubbed) Unwrap() error { return e.err }

// Timeout and Temporary are err's, so that a *url.Error wrapping the
// scrubbed error (http.Client's) still reports a timeout: it asks its
// error directly, not through Unwrap.
func (e *scrubbed) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.err, &t) && t.Timeout()
}

func (e *scrubbed) Temporary() bool {
	var t interface{ Temporary() bool }
	return errors.As(e.err, &t) && t.Temporary()
}
