package transport

import (
	"cmp"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// KeyOf returns the key RoundTrip counts req against, read as RoundTrip
// reads it: the userhash of its Authorization ("" without a token), the
// Transport's TitleID, and the scope of the rule its context's Policy
// names or its method, host and path match. For a host no rule covers, ok
// is false and the scope is "host:" and the host: the transport keeps no
// budget for it. A program that serves many callers through one Transport
// (package proxy) reads a call's budget with it (Snapshot).
func (t *Transport) KeyOf(req *http.Request) (k throttle.Key, ok bool) {
	t.init()
	uhs := xblauth.UserHashOf(headerFold(req.Header, "Authorization"))
	k, rule := t.keyFor(req, uhs, t.policyFor(req.Context()).Rule)
	return k, rule != nil
}

// keyFor returns the key of a request of user uhs whose policy names the
// rule of scope (or none), and that rule; nil for a host without one.
func (t *Transport) keyFor(req *http.Request, uhs, scope string) (throttle.Key, *limits.Rule) {
	host := cmp.Or(req.Host, req.URL.Host)
	if rule, ok := t.ruleFor(req, host, scope); ok {
		return throttle.Key{User: uhs, Title: t.TitleID, Scope: rule.Scope()}, rule
	}
	return throttle.Key{User: uhs, Title: t.TitleID, Scope: "host:" + hostOf(host, req.URL.Scheme)}, nil
}

// hostOf is a request's host as a "host:" scope names it: in lower case,
// without a trailing dot or the scheme's default port, so that the
// spellings of one origin are one scope; another port is another origin,
// and another scope.
func hostOf(host, scheme string) string {
	u := &url.URL{Host: host}
	h, port := strings.TrimSuffix(u.Hostname(), "."), u.Port()
	if port != "" && !(port == "443" && scheme == "https" || port == "80" && scheme == "http") {
		h = net.JoinHostPort(h, port)
	} else if strings.Contains(h, ":") {
		h = "[" + h + "]" // an IPv6 address, as a host names it
	}
	return strings.ToLower(h)
}
