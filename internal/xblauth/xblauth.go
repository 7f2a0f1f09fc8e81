// Package xblauth reads and redacts Xbox Live Authorization headers of the
// form "XBL3.0 x=<userhash>;<token>", and says what of a recorded or
// printed call is a secret: a URL's user info, the credentials in URLs and
// bodies at any host, and every value the sign-in services are sent but
// the public ones (RedactURL, RedactParams, RedactBody, Sensitive).
package xblauth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"unicode"
)

// MaxHeader bounds the Authorization values Parse accepts; real XSTS tokens
// are a few kilobytes.
const MaxHeader = 16 << 10

// Errors returned by Parse.
var (
	ErrMissing   = errors.New("xblauth: no Authorization header")
	ErrMalformed = errors.New(`xblauth: Authorization is not "XBL3.0 x=<userhash>;<token>"`)
	ErrTooLarge  = errors.New("xblauth: Authorization header too large")
)

// Parse splits an Authorization value into its userhash and token. The
// scheme is matched case-insensitively; the userhash and the token must both
// be non-empty and the userhash may not contain spaces or ';'. White space
// around the value is not part of either.
func Parse(h string) (userhash, token string, err error) {
	userhash, token, err = split(h)
	return userhash, strings.TrimRightFunc(token, unicode.IsSpace), err
}

// UserHashOf returns the userhash Parse returns for h, or "" when Parse
// fails. It reads no further into the token than its first character
// that is not white space: a caller that wants only whose call it is (the
// transport, once a call) does not read a token of a kilobyte or two
// to its end.
func UserHashOf(h string) string {
	uhs, _, _ := split(h)
	return uhs
}

// split is Parse but for the white space after the token, which it keeps:
// a token whose first character that is not white space exists is not
// empty once trimmed, so split decides as Parse does without reading the
// token's end.
func split(h string) (userhash, token string, err error) {
	switch {
	case h == "":
		return "", "", ErrMissing
	case len(h) > MaxHeader:
		return "", "", ErrTooLarge
	}
	userhash, token, ok := cut(h, false)
	if !ok || userhash == "" || strings.ContainsAny(userhash, " \t") {
		return "", "", ErrMalformed
	}
	return userhash, token, nil
}

// UserText returns what an XBL3.0 value h sends in the userhash's place
// (between "x=" and the ';'), whether or not Parse takes it (empty, with
// white space, past MaxHeader, a tab after the scheme, "X=" for "x="),
// and false when h is no XBL3.0 value that
// carries a token: a reader that must not take a call that sends a token
// for one without groups its calls by it.
func UserText(h string) (string, bool) {
	userhash, _, ok := cut(h, true)
	return userhash, ok
}

// cut splits h, without bounding its length, into what it sends as the
// userhash and as the token (white space after it kept), and reports
// whether it is an XBL3.0 value whose token holds a character that is not
// white space. Lenient (UserText's reading), any white space may follow
// the scheme, and the parameter may be spelt "X=": a value a service may
// refuse, but one that sends a token all the same.
func cut(h string, lenient bool) (userhash, token string, ok bool) {
	h = strings.TrimLeftFunc(h, unicode.IsSpace)
	space := func(r rune) bool { return r == ' ' }
	if lenient {
		space = unicode.IsSpace
	}
	i := strings.IndexFunc(h, space)
	if i < 0 || !strings.EqualFold(h[:i], "XBL3.0") {
		return "", "", false
	}
	rest := strings.TrimLeftFunc(h[i:], space)
	if len(rest) < 2 || rest[1] != '=' || rest[0] != 'x' && !(lenient && rest[0] == 'X') {
		return "", "", false
	}
	userhash, token, ok = strings.Cut(rest[2:], ";")
	if !ok || strings.TrimLeftFunc(token, unicode.IsSpace) == "" {
		return "", "", false
	}
	return userhash, token, true
}

// Redact returns h with the token replaced, keeping the scheme and userhash
// so logs still say whose call it was: "XBL3.0 x=<userhash>;REDACTED". A
// value that does not parse, or whose userhash is not one (UserHash), is
// replaced whole: what precedes the ';' may be a token sent in the
// userhash's place.
func Redact(h string) string {
	if h == "" {
		return ""
	}
	uhs, _, err := Parse(h)
	if err != nil || !UserHash(uhs) {
		return Redacted
	}
	return "XBL3.0 x=" + uhs + ";" + Redacted
}

// MaxUserHash bounds a userhash Redact keeps: the decimal digits of a
// 64-bit number.
const MaxUserHash = 20

// UserHash reports whether s looks like a userhash: 1 to MaxUserHash
// decimal digits, as the user token and XSTS services claim them ("uhs":
// "1674471606081042789" in the sign-in recorded in OpenXbox/xbox-webapi-python,
// tests/data/cassettes/full_auth.json) and as mock.UserHash makes them. Parse takes any userhash without a
// space or ';', so that a call is keyed by whatever its client sends;
// what a record or a log keeps is this one only.
func UserHash(s string) bool {
	if s == "" || len(s) > MaxUserHash {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// UserDigest tells users apart without naming them: the first 8 bytes of
// the SHA-256 of user, in hex. What a client sends where the userhash goes
// may be a token, and a limit store's keys are seen by every process that
// shares it.
func UserDigest(user string) string {
	d := sha256.Sum256([]byte(user))
	return hex.EncodeToString(d[:8])
}

// Sensitive reports whether a header's value must never be logged:
// Authorization, Signature, Cookie, Proxy-Authorization, and any header
// named like a credential (X-Api-Key, X-Auth-Token: the rule of the
// records of calls, for a query's parameters and a body's fields).
func Sensitive(name string) bool { return credentialName(strings.ToLower(name)) }

// ServiceDomain is the domain whose hosts take tokens for the Xbox relying
// party (http://xboxlive.com).
const ServiceDomain = "xboxlive.com"

// ServiceHost reports whether host (a URL's host, with or without a port)
// is an Xbox service host: ServiceDomain itself or a true subdomain of it,
// compared without case and a trailing dot. Look-alikes such as
// "xboxlive.com.evil.example" and "evilxboxlive.com" are not.
func ServiceHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	sub, ok := strings.CutSuffix(host, "."+ServiceDomain)
	return host == ServiceDomain || ok && sub != "" && !strings.HasSuffix(sub, ".")
}
