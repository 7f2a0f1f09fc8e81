// Package xblauth reads and redacts Xbox Live Authorization headers of the
// form "XBL3.0 x=<userhash>;<token>", and says what of a recorded call is a
// secret: credentials in URLs, and the sign-in services' codes, tokens and
// tickets (RedactParams, RedactBody).
package xblauth

import (
	"errors"
	"net"
	"strings"
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
// be non-empty and the userhash may not contain spaces or ';'.
func Parse(h string) (userhash, token string, err error) {
	switch {
	case h == "":
		return "", "", ErrMissing
	case len(h) > MaxHeader:
		return "", "", ErrTooLarge
	}
	scheme, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "XBL3.0") {
		return "", "", ErrMalformed
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " "), "x=")
	if !ok {
		return "", "", ErrMalformed
	}
	userhash, token, ok = strings.Cut(rest, ";")
	if !ok || userhash == "" || token == "" || strings.ContainsAny(userhash, " \t") {
		return "", "", ErrMalformed
	}
	return userhash, token, nil
}

// Redact returns h with the token replaced, keeping the scheme and userhash
// so logs still say whose call it was: "XBL3.0 x=<userhash>;REDACTED". Any
// value that does not parse is replaced whole.
func Redact(h string) string {
	if h == "" {
		return ""
	}
	uhs, _, err := Parse(h)
	if err != nil {
		return "REDACTED"
	}
	return "XBL3.0 x=" + uhs + ";REDACTED"
}

// Sensitive reports whether a header's value must never be logged.
func Sensitive(name string) bool {
	return strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Signature") ||
		strings.EqualFold(name, "Proxy-Authorization") || strings.EqualFold(name, "Cookie")
}

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
