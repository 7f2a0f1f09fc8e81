package xblauth

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Secrets are credentials a request carried, to be taken out of whatever
// text a service sends back (Scrub) before it reaches an error, a log or
// an event: a service, or a hostile one, may echo them.
type Secrets []string

// minSecret is the shortest text taken for a secret: shorter ones would
// take ordinary words out.
const minSecret = 8

// Add returns ss with s, when s is long enough to be a secret, and the
// forms a service may echo it in: the forms a URL escapes it to (a
// token's or a signature's base64 '+', '/' and '=' become %2B, %2F and
// %3D, in each mix of them escaped and kept, as URL escapers differ on
// them) and those JSON encoders write it in: encoding/json's (<, > and &
// as \u003c, \u003e and \u0026), "\/" for '/' (PHP, many JS and Java
// ones), "\u002B" for '+' (System.Text.Json's default, as .NET services
// write it), and every character but an ASCII letter or digit as \uXXXX
// (an encoder that escapes all punctuation; Scrub compares without ASCII
// case, so one form serves both cases of hex digits). That is at most 14
// forms. Not covered: other mixes of escaped and kept characters, other
// encodings (base64, every byte percent-encoded), and a secret split in
// parts.
func (ss Secrets) Add(s string) Secrets {
	if len(s) < minSecret {
		return ss
	}
	ss = append(ss, s)
	forms := []string{url.QueryEscape(s), url.PathEscape(s)}
	if b, err := json.Marshal(s); err == nil {
		j := string(b[1 : len(b)-1])
		forms = append(forms, j, strings.ReplaceAll(j, "/", `\/`), strings.ReplaceAll(j, "+", `\u002B`))
	}
	forms = append(forms, jsonEscapeAll(s))
	forms = append(forms, partialEscapes(s)...)
	for i, f := range forms {
		if f != s && !slices.Contains(forms[:i], f) {
			ss = append(ss, f)
		}
	}
	return ss
}

// jsonEscapeAll returns s as JSON's string escapes write it when every
// character but an ASCII letter or digit is escaped (\u002e for '.').
func jsonEscapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
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
// before clipping (ScrubCut does both): a clipped text may hold a secret's
// first part only. Every secret is found in s as given, and each run of
// bytes that one or more of them cover, overlapping or side by side,
// becomes one "[redacted]": replacing them one after another let one
// credential that overlaps another's start (a URL's, ending with a token's
// first byte) break that token up, and the rest of it was printed. Time
// linear in s for each secret; memory a bit for each byte of s, when one
// is found.
func (ss Secrets) Scrub(s string) string {
	if len(ss) == 0 {
		return s
	}
	low := asciiLower(s)
	var covered []uint64 // a bit for each byte of s that a secret covers
	for _, x := range ss {
		lx := asciiLower(x)
		if lx == "" {
			continue
		}
		for from := 0; ; {
			i := strings.Index(low[from:], lx)
			if i < 0 {
				break
			}
			if covered == nil {
				covered = make([]uint64, (len(s)+63)/64)
			}
			for j := from + i; j < from+i+len(lx); j++ {
				covered[j/64] |= 1 << (j % 64)
			}
			from += i + len(lx)
		}
	}
	if covered == nil {
		return s
	}
	isCovered := func(j int) bool { return covered[j/64]&(1<<(j%64)) != 0 }
	var b strings.Builder
	for j := 0; j < len(s); {
		k := j
		for k < len(s) && isCovered(k) == isCovered(j) {
			k++
		}
		if isCovered(j) {
			b.WriteString("[redacted]")
		} else {
			b.WriteString(s[j:k])
		}
		j = k
	}
	return b.String()
}

// ScrubCut returns s scrubbed and cut to at most n bytes, and whether it
// was cut. Only s's first n bytes and Longest more are read: a secret
// that starts in the first n is whole in them, and replaced. A cut text
// is cut back before any first part of a secret left at its end, which
// the text may go on with.
func (ss Secrets) ScrubCut(s string, n int) (string, bool) {
	cut := len(s) > n
	if len(s) > n+ss.Longest() {
		s = s[:n+ss.Longest()]
	}
	s = ss.Scrub(s)
	if len(s) > n {
		s, cut = s[:n], true
	}
	if !cut {
		return s, false
	}
	low, k := asciiLower(s), 0
	for _, x := range ss {
		k = max(k, overlap(low, asciiLower(x)))
	}
	return s[:len(s)-k], true
}

// Longest returns the length of the longest of ss, 0 for none.
func (ss Secrets) Longest() int {
	n := 0
	for _, x := range ss {
		n = max(n, len(x))
	}
	return n
}

// Lowered returns ss with each secret's ASCII letters lowered: Scrub and
// ScrubError find the same with it (they compare without ASCII case) and
// copy none of its secrets to lower them again: the form to keep for many
// scrubs (a call's record of what it sent).
func (ss Secrets) Lowered() Secrets {
	out := make(Secrets, len(ss))
	for i, x := range ss {
		out[i] = asciiLower(x)
	}
	return out
}

// asciiLower lowers s's ASCII letters only, so that its length and byte
// offsets stay s's. A lowered s is returned as it is, with no copy.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
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
// telling one, and so is an error that holds a secret where its text does
// not show it (a field such as a kept *http.Request's header, what it
// prints under %+v or %#v) or whose Error panics. A cause that tells part
// of a secret its wrapper's text runs across is scrubbed of that part.
func (ss Secrets) ScrubError(err error) error {
	if err == nil || len(ss) == 0 || !ss.tells(err) {
		return err
	}
	text, ok := errText(err)
	if !ok {
		text = "(error text unavailable: its Error method panicked)"
	}
	text = ss.Scrub(text)
	if _, ok := err.(interface{ Unwrap() []error }); ok {
		return &scrubbedJoin{scrubbed{err: err, text: text, ss: ss}}
	}
	return &scrubbed{err: err, text: text, ss: ss}
}

// maxErrors bounds how many errors a walk of a tree reads (errors.Join
// trees that share branches grow exponentially in what a walk reads, and
// a tree may be a cycle).
const maxErrors = 256

// walkErrors calls visit on err and the errors under it, in errors.As's order,
// until visit returns true (found), reading at most maxErrors of them
// (over: the tree holds more).
func walkErrors(err error, visit func(error) bool) (found, over bool) {
	left := maxErrors
	var step func(err error) bool
	step = func(err error) bool {
		if err == nil {
			return false
		}
		if left--; left < 0 {
			over = true
			return true
		}
		if visit(err) {
			found = true
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			return step(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				if step(c) {
					return true
				}
			}
		}
		return false
	}
	step(err)
	return found, over
}

// tells reports whether err or an error under it tells one of ss; a tree
// of more than maxErrors errors is taken as telling one.
func (ss Secrets) tells(err error) bool {
	fields := newBudget() // shared by the whole tree
	found, over := walkErrors(err, func(e error) bool {
		t, ok := errText(e)
		return !ok || ss.containsFold(t) || foreignAs(e) || ss.fieldsTell(e, t, fields)
	})
	return found || over
}

// foreignAs reports whether err has an As method of a type from outside
// the standard library: what it gives a target cannot be judged before a
// caller asks, so err is seen only through a scrubbed, whose As judges it.
func foreignAs(err error) bool {
	if _, ok := err.(interface{ As(any) bool }); !ok {
		return false
	}
	switch err.(type) {
	case *scrubbed, *scrubbedJoin:
		return false
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	first, _, _ := strings.Cut(t.PkgPath(), "/")
	return t.PkgPath() == "" || strings.Contains(first, ".")
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
		c := u.Unwrap()
		return e.ss.causeSecrets(e.err, c).ScrubError(c)
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
	found := v.Interface() // an error, or a value an As method gave
	if found == nil || !e.ss.valueTells(found) {
		return true
	}
	if err, ok := found.(error); ok {
		if c := e.ss.copyOf(err); c != nil && reflect.TypeOf(c).AssignableTo(v.Type()) {
			v.Set(reflect.ValueOf(c))
			return true
		}
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
		return &url.Error{Op: ss.Scrub(x.Op), URL: ss.Scrub(x.URL), Err: ss.ScrubError(x.Err)}
	case *net.DNSError:
		c := *x
		c.Err, c.Name, c.Server, c.UnwrapErr = ss.Scrub(x.Err), ss.Scrub(x.Name), ss.Scrub(x.Server), ss.ScrubError(x.UnwrapErr)
		return &c
	case *net.OpError:
		c := *x
		c.Op, c.Net, c.Err = ss.Scrub(x.Op), ss.Scrub(x.Net), ss.ScrubError(x.Err)
		c.Source, c.Addr = ss.scrubAddr(x.Source), ss.scrubAddr(x.Addr)
		return &c
	case x509.HostnameError:
		return x509.HostnameError{Certificate: ss.scrubCert(x.Certificate), Host: ss.Scrub(x.Host)}
	case x509.CertificateInvalidError:
		return x509.CertificateInvalidError{Cert: ss.scrubCert(x.Cert), Reason: x.Reason, Detail: ss.Scrub(x.Detail)}
	case *tls.CertificateVerificationError:
		certs := slices.Clone(x.UnverifiedCertificates)
		for i, c := range certs {
			certs[i] = ss.scrubCert(c)
		}
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: ss.ScrubError(x.Err)}
	}
	return nil
}

// sanOID is the subjectAltName extension's: a scrubbed certificate keeps
// it (with no value) so that a HostnameError's text reads its DNSNames.
var sanOID = asn1.ObjectIdentifier{2, 5, 29, 17}

// scrubCert returns c, or when one of its fields tells a secret (a
// hostile server's names quoting a token it was sent before), a
// certificate with only its names, scrubbed, and its addresses.
func (ss Secrets) scrubCert(c *x509.Certificate) *x509.Certificate {
	if c == nil || !ss.valueHolds(reflect.ValueOf(c), "", newBudget()) {
		return c
	}
	d := &x509.Certificate{IPAddresses: c.IPAddresses}
	d.Subject.CommonName = ss.Scrub(c.Subject.CommonName)
	for _, n := range c.DNSNames {
		d.DNSNames = append(d.DNSNames, ss.Scrub(n))
	}
	for _, e := range c.Extensions {
		if e.Id.Equal(sanOID) {
			d.Extensions = []pkix.Extension{{Id: sanOID, Critical: e.Critical}}
		}
	}
	return d
}

// Timeout and Temporary are err's, so that a *url.Error wrapping the
// scrubbed error (http.Client's) still reports a timeout: it asks its
// error directly, not through Unwrap.
// Both read at most maxErrors errors of err's tree, which may be a cycle.
func (e *scrubbed) Timeout() bool {
	var t interface{ Timeout() bool }
	return firstOf(e.err, &t) && t.Timeout()
}

func (e *scrubbed) Temporary() bool {
	var t interface{ Temporary() bool }
	return firstOf(e.err, &t) && t.Temporary()
}

// firstOf sets *t to the first error of err's tree, in errors.As's order,
// that is a T, reading at most maxErrors errors.
func firstOf[T any](err error, t *T) bool {
	found, _ := walkErrors(err, func(e error) bool {
		x, ok := e.(T)
		if ok {
			*t = x
		}
		return ok
	})
	return found
}

// scrubbedJoin is scrubbed for an err that wraps several errors
// (errors.Join's).
type scrubbedJoin struct{ scrubbed }

// Unwrap returns err's causes, each scrubbed.
func (e *scrubbedJoin) Unwrap() []error {
	var out []error
	for _, c := range e.err.(interface{ Unwrap() []error }).Unwrap() {
		out = append(out, e.ss.causeSecrets(e.err, c).ScrubError(c))
	}
	return out
}

// errText returns err.Error(), and false when it panics (a typed nil, a
// hostile error).
func errText(err error) (text string, ok bool) {
	defer func() {
		if recover() != nil {
			text, ok = "", false
		}
	}()
	return err.Error(), true
}

// minFragment is the shortest part of a secret causeSecrets takes.
const minFragment = 4

// causeSecrets returns ss with the parts of a secret that err's text holds
// where it quotes cause's text and the secret runs across its edge (a
// wrapper's "...%s%w" with a secret's start and a cause with its rest):
// the cause tells a part only, which is no secret of ss.
func (ss Secrets) causeSecrets(err, cause error) Secrets {
	if cause == nil {
		return ss
	}
	pt, ok := errText(err)
	ct, ok2 := errText(cause)
	if !ok || !ok2 || ct == "" {
		return ss
	}
	// However the wrapper quotes its cause (escaped, in another case), a
	// cause whose text starts with a secret's end or ends with its start,
	// or lies inside a secret, tells that part, when the wrapper tells a
	// secret (in any form).
	if !ss.containsFold(pt) {
		return ss
	}
	lct, out := asciiLower(ct), ss
	for _, x := range ss {
		lx := asciiLower(x)
		if n := overlap(lx, lct); n >= minFragment {
			out = append(out[:len(out):len(out)], ct[:n])
		}
		if n := overlap(lct, lx); n >= minFragment {
			out = append(out[:len(out):len(out)], ct[len(ct)-n:])
		}
		if len(ct) >= minFragment && strings.Contains(lx, lct) {
			out = append(out[:len(out):len(out)], ct)
		}
	}
	return out
}

// scrubAddr returns a, or when its text tells a secret, an address with
// that text scrubbed.
func (ss Secrets) scrubAddr(a net.Addr) net.Addr {
	if a == nil {
		return nil
	}
	s := a.String()
	if t := ss.Scrub(s); t != s {
		return scrubbedAddr{network: ss.Scrub(a.Network()), text: t}
	}
	return a
}

type scrubbedAddr struct{ network, text string }

func (a scrubbedAddr) Network() string { return a.network }
func (a scrubbedAddr) String() string  { return a.text }

// containsFold reports whether s holds one of ss, compared without ASCII
// case.
func (ss Secrets) containsFold(s string) bool {
	if len(s) < minFragment {
		return false
	}
	low := asciiLower(s)
	for _, x := range ss {
		if strings.Contains(low, asciiLower(x)) {
			return true
		}
	}
	return false
}

// maxFields bounds the values fieldsTell reads in one tree of errors, and
// maxFieldBytes the bytes of its strings and byte slices: past either a
// tree is taken as telling one (a secret may lie past what was read;
// reading more would copy a kept body whole). Arrays and slices of numbers
// count as one value.
const (
	maxFields     = 4096
	maxFieldBytes = 1 << 20
)

// budget is what a read of one tree's fields has left.
type budget struct{ values, bytes int }

func newBudget() *budget { return &budget{maxFields, maxFieldBytes} }

// holds reports whether s tells one of ss, or is longer than what b has
// left to read (taken as telling one).
func (ss Secrets) holds(s string, b *budget) bool {
	if len(s) > b.bytes {
		return true
	}
	b.bytes -= len(s)
	return ss.containsFold(s)
}

// fieldsTell reports whether err tells a secret other than by its text:
// by what it prints under %+v or %#v when it formats itself, or in a
// string or a []byte it holds (a field, a request's header, a body), read
// by reflection up to maxFields values. Scrubbed errors are not read: what
// they give is scrubbed.
func (ss Secrets) fieldsTell(err error, text string, b *budget) bool {
	switch err.(type) {
	case *scrubbed, *scrubbedJoin:
		return false
	case fmt.Formatter, fmt.GoStringer:
		if ss.holds(safeSprintf("%+v", err), b) || ss.holds(safeSprintf("%#v", err), b) {
			return true
		}
	}
	return ss.valueHolds(reflect.ValueOf(err), text, b)
}

// valueTells reports whether v, a value an As method gave, tells a secret.
func (ss Secrets) valueTells(v any) bool {
	if e, ok := v.(error); ok {
		return ss.tells(e)
	}
	b := newBudget()
	return ss.holds(safeSprintf("%+v", v), b) || ss.holds(safeSprintf("%#v", v), b) || ss.valueHolds(reflect.ValueOf(v), "", b)
}

func safeSprintf(format string, v any) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return fmt.Sprintf(format, v)
}

var (
	scrubbedType     = reflect.TypeFor[*scrubbed]()
	scrubbedJoinType = reflect.TypeFor[*scrubbedJoin]()
)

// keyMaterial reports whether t is a public key's or a curve's type (a
// certificate's PublicKey): numbers and the curve's functions, no text,
// which the rule that a func tells a secret must not take for one.
func keyMaterial(t reflect.Type) bool {
	switch p := t.PkgPath(); p {
	case "crypto/ecdsa", "crypto/elliptic", "crypto/rsa", "crypto/ed25519", "crypto/ecdh", "crypto/mlkem", "math/big":
		return true
	default:
		return strings.HasPrefix(p, "crypto/internal/")
	}
}

// valueHolds reports whether v holds, at any depth, a string or bytes that
// tell one of ss, reading at most what b has left.
func (ss Secrets) valueHolds(v reflect.Value, text string, b *budget) (found bool) {
	defer func() {
		if recover() != nil {
			found = false
		}
	}()
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value) bool
	walk = func(v reflect.Value) bool {
		if !v.IsValid() {
			return false
		}
		if b.values--; b.values < 0 {
			return true // past the budget: taken as telling one
		}
		if t := v.Type(); t == scrubbedType || t == scrubbedJoinType || keyMaterial(t) {
			return false
		}
		switch v.Kind() {
		case reflect.String:
			s := v.String()
			return s != text && ss.holds(s, b) // text: Error's, read already
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return false
			}
			seen[v.Pointer()] = true
			return walk(v.Elem())
		case reflect.Interface:
			return walk(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				if walk(v.Field(i)) {
					return true
				}
			}
		case reflect.Func, reflect.UnsafePointer:
			// What a closure or an unsafe pointer holds cannot be read:
			// taken as telling a secret.
			return !v.IsNil()
		case reflect.Chan:
			// A value waiting in a channel cannot be read without taking it.
			return !v.IsNil() && v.Len() > 0
		case reflect.Slice, reflect.Array:
			switch k := v.Type().Elem().Kind(); {
			case k == reflect.Uint8 && v.Kind() == reflect.Slice:
				return v.Len() > b.bytes || ss.holds(string(v.Bytes()), b)
			case k == reflect.Uint8 || k == reflect.Int32:
				// [N]byte (a key, a raw signature, a copied token), and
				// runes: read as text.
				if v.Len() > b.bytes {
					return true
				}
				var t strings.Builder
				for i := range v.Len() {
					if k == reflect.Uint8 {
						t.WriteByte(byte(v.Index(i).Uint()))
					} else {
						t.WriteRune(rune(v.Index(i).Int()))
					}
				}
				return ss.holds(t.String(), b)
			case k >= reflect.Bool && k <= reflect.Complex128:
				return false // numbers hold no text
			}
			if v.Kind() == reflect.Slice {
				if v.IsNil() || seen[v.Pointer()] {
					return false
				}
				seen[v.Pointer()] = true
			}
			for i := range v.Len() {
				if walk(v.Index(i)) {
					return true
				}
			}
		case reflect.Map:
			if v.IsNil() || seen[v.Pointer()] {
				return false
			}
			seen[v.Pointer()] = true
			for it := v.MapRange(); it.Next(); {
				if walk(it.Key()) || walk(it.Value()) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// overlap returns the length of the longest end of a that is a start of b
// (prefix function over b's start, a separator and a's end): linear time.
func overlap(a, b string) int {
	m := min(len(a), len(b))
	t := b[:m] + "\x00" + a[len(a)-m:]
	pi := make([]int, len(t))
	for i := 1; i < len(t); i++ {
		k := pi[i-1]
		for k > 0 && t[i] != t[k] {
			k = pi[k-1]
		}
		if t[i] == t[k] {
			k++
		}
		pi[i] = k
	}
	return pi[len(t)-1]
}

// maxEscaped bounds the distinct characters partialEscapes mixes.
const maxEscaped = 3

// partialEscapes returns s with each mix of base64's '+', '/' and '='
// escaped or kept, as URL escapers differ on them (Python's
// urllib.parse.quote keeps '/' and escapes '+' and '=').
func partialEscapes(s string) []string {
	var cs []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte("+/=", c) >= 0 && !slices.Contains(cs, c) { // base64's
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 || len(cs) > maxEscaped {
		return nil
	}
	var out []string
	for mask := 1; mask < 1<<len(cs); mask++ {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if k := slices.Index(cs, s[i]); k >= 0 && mask&(1<<k) != 0 {
				fmt.Fprintf(&b, "%%%02X", s[i])
			} else {
				b.WriteByte(s[i])
			}
		}
		out = append(out, b.String())
	}
	return out
}

// maxQuerySecrets bounds the credentials URLSecrets takes from a URL's
// query and fragment one by one: past it, the whole text after the first
// '?' or '#' is one secret, so that scrubbing an error stays linear in it.
const maxQuerySecrets = 64

// URLSecrets returns ss with the credentials of u that RedactURL
// takes out (its user info, the values of its query and fragment such as
// access_token, however they are separated or escaped), for an error that
// quotes the URL as text rather than as a *url.Error. Each pair of the
// query and fragment is judged alone, as RedactURL judges it (url.Values
// holds no fragment, no pair after a ';', none with a bad escape, and none
// past net/url's 10,000 pairs), in time linear in the URL.
func (ss Secrets) URLSecrets(u *url.URL) Secrets {
	if u == nil {
		return ss
	}
	raw := u.String()
	if RedactURL(raw) == raw {
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
		if pair == "" || RedactParams(u.Host, "?"+pair) == "?"+pair {
			continue
		}
		if n++; n > maxQuerySecrets {
			return append(Secrets{}.Add(form), ss...) // first, before its parts are replaced
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
