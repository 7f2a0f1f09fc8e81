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
// if it names one. An error quotes the URL without its password, and
// not at all when it does not parse (its text may hold one).
func checkURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &exitError{2, fmt.Errorf("%s: not a URL: %s", what, parseError(err))}
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
		return nil, &exitError{2, fmt.Errorf("%s %s: %s", what, safetext.Quote(u.Redacted(), 100), reason)}
	}
	return u, nil
}

// parseError is what url.Parse found wrong, without the URL it quotes.
func parseError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return safetext.Clip(err.Error(), 100)
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
