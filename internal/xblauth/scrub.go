package xblauth

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
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

// ScrubError returns err when no error in its tree (err and every error
// it wraps, by either form of Unwrap) tells one of ss in its text, and
// otherwise an error whose text is err's, scrubbed, and whose causes are
// seen only through ScrubError too: a cause that tells no secret is itself,
// one that does is scrubbed in turn. So errors.Is still finds a sentinel
// such as context.DeadlineExceeded, errors.As still finds every cause that
// tells no secret and a *url.Error (with its URL and cause scrubbed), and
// a reporter that walks the causes (a logger's, an error tracker's) prints
// no secret. A cause that tells a secret and is of another type is not
// found by errors.As. A tree of more than maxErrors errors is taken as
// telling one.
func (ss Secrets) ScrubError(err error) error {
	if err == nil || len(ss) == 0 || !ss.tells(err) {
		return err
	}
	text := ss.Scrub(err.Error())
	if _, ok := err.(interface{ Unwrap() []error }); ok {
		return &scrubbedJoin{scrubbed{err: err, text: text, ss: ss}}
	}
	return &scrubbed{err: err, text: text, ss: ss}
}

// maxErrors bounds how many errors tells reads in one tree (errors.Join
// trees that share branches grow exponentially in what a walk reads).
const maxErrors = 256

// tells reports whether err or an error under it tells one of ss; a tree
// of more than maxErrors errors is taken as telling one.
func (ss Secrets) tells(err error) bool {
	left := maxErrors
	var walk func(err error) bool
	walk = func(err error) bool {
		if err == nil {
			return false
		}
		if left--; left < 0 {
			return true
		}
		if t := err.Error(); ss.Scrub(t) != t {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			return walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(err)
}

// scrubbed is an error, err, seen without the secrets ss: its text
// scrubbed, its cause seen through ss.ScrubError.
type scrubbed struct {
	err  error
	text string
	ss   Secrets
}

func (e *scrubbed) Error() string { return e.text }

// GoString is what %#v prints: the scrubbed text, not err's fields.
func (e *scrubbed) GoString() string { return "xblauth.scrubbed(" + strconv.Quote(e.text) + ")" }

// Unwrap returns err's cause, scrubbed.
func (e *scrubbed) Unwrap() error {
	if u, ok := e.err.(interface{ Unwrap() error }); ok {
		return e.ss.ScrubError(u.Unwrap())
	}
	return nil
}

// Is reports whether err is target, as errors.Is finds it in err's tree:
// an answer that shows nothing of err.
func (e *scrubbed) Is(target error) bool { return errors.Is(e.err, target) }

// As finds target in err's tree as errors.As does, and gives it as it is
// when its text tells no secret; one that does is given as a copy with its
// texts scrubbed when it is of a type copy knows (*url.Error, *net.DNSError,
// *net.OpError, the certificate errors), and not given otherwise.
func (e *scrubbed) As(target any) bool {
	if !errors.As(e.err, target) {
		return false
	}
	v := reflect.ValueOf(target).Elem()
	found, _ := v.Interface().(error)
	if !e.ss.tells(found) {
		return true
	}
	if c := e.ss.copyOf(found); c != nil && reflect.TypeOf(c).AssignableTo(v.Type()) {
		v.Set(reflect.ValueOf(c))
		return true
	}
	v.SetZero()
	return false
}

// copyOf returns a copy of err with its texts scrubbed and its cause seen
// through ScrubError, for the error types whose fields a caller reads:
// the ones transport and client decide on, and *url.Error. nil for any
// other type.
func (ss Secrets) copyOf(err error) error {
	switch x := err.(type) {
	case *url.Error:
		return &url.Error{Op: x.Op, URL: ss.Scrub(x.URL), Err: ss.ScrubError(x.Err)}
	case *net.DNSError:
		c := *x
		c.Err, c.Name, c.Server, c.UnwrapErr = ss.Scrub(x.Err), ss.Scrub(x.Name), ss.Scrub(x.Server), ss.ScrubError(x.UnwrapErr)
		return &c
	case *net.OpError:
		c := *x
		c.Err = ss.ScrubError(x.Err)
		return &c
	case x509.HostnameError:
		return x509.HostnameError{Certificate: x.Certificate, Host: ss.Scrub(x.Host)}
	case x509.CertificateInvalidError:
		return x509.CertificateInvalidError{Cert: x.Cert, Reason: x.Reason, Detail: ss.Scrub(x.Detail)}
	case *tls.CertificateVerificationError:
		return &tls.CertificateVerificationError{UnverifiedCertificates: x.UnverifiedCertificates, Err: ss.ScrubError(x.Err)}
	}
	return nil
}

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

// scrubbedJoin is scrubbed for an err that wraps several errors
// (errors.Join's).
type scrubbedJoin struct{ scrubbed }

// Unwrap returns err's causes, each scrubbed.
func (e *scrubbedJoin) Unwrap() []error {
	var out []error
	for _, c := range e.err.(interface{ Unwrap() []error }).Unwrap() {
		out = append(out, e.ss.ScrubError(c))
	}
	return out
}
