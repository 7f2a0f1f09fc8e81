package main

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
)

// Addresses and URLs the flags and arguments name are checked before use:
// what is malformed is a usage error (exit 2) naming the flag and the
// bound, not a failure to listen or connect (exit 1) nor a dial error the
// transport retries. url.Parse takes a port of any digits, and net.Listen a
// port's service name.

// checkAddr checks a HOST:PORT xblcall listens on (--addr, --https: any
// port from 0, which picks a free one, and any host, empty for every
// interface) or connects to (a Redis address: a port from 1 and a host).
func checkAddr(what, addr string, listen bool) error {
	host, port, err := net.SplitHostPort(addr)
	reason := "want HOST:PORT, such as 127.0.0.1:8080"
	if err == nil {
		reason = cmp.Or(checkPort(port, listen), checkHost(host, listen))
	}
	if reason != "" {
		return &exitError{2, fmt.Errorf("%s %s: %s", what, safetext.Quote(addr, 100), reason)}
	}
	return nil
}

// checkURL parses a URL xblcall sends requests to (call's URL, --via,
// check --mock): http or https, with a host, and a port from 1 to 65535
// if it names one. An error shows the URL as shownURL does, and not at all
// when it does not parse (notAURL).
func checkURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, notAURL(what, raw, err)
	}
	reason := ""
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		reason = "the scheme must be http or https"
	case u.Host == "":
		reason = "want a host, such as https://profile.xboxlive.com/users/me"
	case u.Port() != "":
		reason = checkPort(u.Port(), false)
	}
	if reason = cmp.Or(reason, checkHost(u.Hostname(), false)); reason != "" {
		return nil, &exitError{2, fmt.Errorf("%s \"%s\": %s", what, shownURL(raw), reason)}
	}
	return u, nil
}

// maxShownURL bounds a URL as xblcall prints it.
const maxShownURL = 200

// shownURL is a URL as xblcall prints it, anywhere (errors, -v's trace):
// without its user info, the credentials in its query and fragment
// REDACTED (xblauth.RedactURL, the rule of the records of calls), escaped
// and clipped. A URL that does not parse keeps neither what may be user
// info nor its query.
func shownURL(raw string) string { return scrubbedURL(raw, nil) }

// scrubbedURL is shownURL(raw) scrubbed of ss, the credentials a call sent,
// before it is clipped (ScrubCut): a credential the clip cuts is no whole
// one to find.
func scrubbedURL(raw string, ss xblauth.Secrets) string {
	s, cut := ss.ScrubCut(xblauth.RedactURL(raw), maxShownURL)
	if cut {
		s += "..."
	}
	return safetext.Clip(s, maxShownURL)
}

// notAURL is the usage error for a URL that does not parse, in words that
// quote none of it: url.Parse's messages quote parts of the text (the
// "port" they find is a password's end when the password holds '/', '?'
// or '#', which end the authority).
func notAURL(what, raw string, err error) error {
	return &exitError{2, fmt.Errorf("%s: not a URL: %s", what, urlProblem(raw, err))}
}

// urlProblem says what url.Parse found wrong with raw, in xblcall's words
// (read from the start of its message, the part that quotes nothing).
func urlProblem(raw string, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	var reason string
	switch {
	case strings.HasPrefix(msg, "missing protocol scheme"), strings.HasPrefix(msg, "first path segment in URL cannot contain colon"):
		reason = "want a scheme, such as https://"
	case strings.HasPrefix(msg, "invalid port"):
		reason = "the port is not a number"
	case strings.HasPrefix(msg, "invalid URL escape"):
		reason = "a '%' is not followed by two hex digits"
	case strings.HasPrefix(msg, "invalid character"):
		reason = "the host holds a character a host name cannot"
	case strings.HasPrefix(msg, "net/url: invalid control character"):
		reason = "it holds a control character"
	case strings.HasPrefix(msg, "net/url: invalid userinfo"):
		reason = "the user name or password holds a character that must be percent-encoded"
	default:
		reason = "it does not parse"
	}
	if atAfterAuthority(raw) {
		reason += userinfoHint
	}
	return reason
}

// userinfoHint is what a URL with an '@' after its authority may have got
// wrong.
const userinfoHint = " (a '/', '?', '#' or '@' in a user name or password must be percent-encoded)"

// atAfterAuthority reports whether raw holds an '@' after the end of its
// authority (the first '/', '?' or '#' after "//"): the end of a password
// that holds one of those unescaped, which the URL's parsers read as the
// host's port, the path or the query.
func atAfterAuthority(raw string) bool {
	_, rest, ok := strings.Cut(raw, "//")
	end := strings.IndexAny(rest, "/?#")
	return ok && end >= 0 && strings.Contains(rest[end:], "@")
}

// scrubURLs rewrites, in place, every *url.Error in err's chain as xblcall
// prints a URL: its URL as scrubbedURL shows it (shownURL, and without ss,
// the credentials a call sent, if any), and a parse error's words as
// urlProblem says them. net/http's errors quote the request's URL (with
// its user name and its query whole), and url.Parse's quote parts of the
// text. An error wrapping one writes its message when made, so each
// http.Client's error is scrubbed where it is returned, before anything
// wraps it; every error xblcall prints passes here again (oneLine).
func scrubURLs(err error, ss xblauth.Secrets) {
	if ue, ok := err.(*url.Error); ok {
		if ue.Op == "parse" {
			ue.Err = errors.New(urlProblem(ue.URL, ue.Err))
		}
		ue.URL = scrubbedURL(ue.URL, ss)
	}
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		scrubURLs(e.Unwrap(), ss)
	case interface{ Unwrap() []error }:
		for _, e := range e.Unwrap() {
			scrubURLs(e, ss)
		}
	}
}

// checkPort returns what is wrong with a port, or "".
func checkPort(port string, listen bool) string {
	lowest := uint64(1)
	if listen {
		lowest = 0
	}
	// ParseUint in base 10 takes digits only: no sign, space or name.
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n < lowest {
		return fmt.Sprintf("the port must be a number from %d to 65535", lowest)
	}
	return ""
}

// checkHost returns what is wrong with a host, or "". Only a listener's
// may be empty (every interface).
func checkHost(host string, listen bool) string {
	switch {
	case host == "" && listen:
	case host == "":
		return "want a host"
	case !validHost(host):
		return "the host must be an IP address or a host name (letters, digits, '-', '_' and '.')"
	}
	return ""
}

// validHost reports whether h is an IP address (an IPv6 one may name its
// zone) or a host name: at most 253 bytes of letters, digits, '-', '_'
// and '.', no label empty but a trailing one.
func validHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if len(h) > 253 {
		return false
	}
	for i, label := range strings.Split(h, ".") {
		if label == "" && !(i > 0 && i == strings.Count(h, ".")) {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
