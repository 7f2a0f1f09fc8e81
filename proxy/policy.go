package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/transport"
)

// The request headers that choose a call's transport.Policy, one per
// field, named after it. Durations are Go duration strings ("1.5s"), flags
// "true" or "false". The proxy reads every header whose name starts with
// PolicyPrefix and strips it: none reaches the service. A call without
// them follows the Transport's own Policy; with them, each sets its field
// over that Policy as transport.WithPolicy layers policies, so a header can
// add to the proxy's defaults but not take one away: "false" and "0s" leave
// the Transport's FailFast or MaxWait (xblcall proxy --fail-fast,
// --max-wait) as they are.
const (
	// HeaderMaxWait is Policy.MaxWait: how long the call may wait for its
	// budget or a Retry-After, 0s to 5m (transport.MaxPolicyWait).
	HeaderMaxWait = "Fgrl-Max-Wait"
	// HeaderFailFast is Policy.FailFast: never wait, a refusal at once.
	HeaderFailFast = "Fgrl-Fail-Fast"
	// HeaderNoRetry is Policy.NoRetry: sent once.
	HeaderNoRetry = "Fgrl-No-Retry"
	// HeaderAttemptTimeout is Policy.AttemptTimeout, 0s to 5m
	// (transport.LongCallTimeout).
	HeaderAttemptTimeout = "Fgrl-Attempt-Timeout"
	// HeaderPriority is Policy.Priority: "interactive" or "background".
	HeaderPriority = "Fgrl-Priority"
	// HeaderRule is Policy.Rule: the scope of a rule of the limits data
	// ("mpsd-search-handle/write").
	HeaderRule = "Fgrl-Rule"
	// HeaderBoundBody is Policy.BoundBody: the attempt timeout covers the
	// whole answer.
	HeaderBoundBody = "Fgrl-Bound-Body"
)

// PolicyPrefix starts the name of every header the proxy reads and strips.
// It strips the service's answers of such headers too (and of such
// trailers): one on an answer is the proxy's own.
const PolicyPrefix = "Fgrl-"

// HeaderRefused is set, to "local", on an answer the proxy wrote itself for
// a call the transport refused without sending it (a *transport.ThrottleError
// with Local): the service's budget was not spent. An answer the service
// gave never carries it, whatever the service sent.
const HeaderRefused = "Fgrl-Refused"

// maxPolicyValue bounds a policy header's value: the longest valid one is a
// rule's scope.
const maxPolicyValue = 128

// PolicyError reports a policy header the proxy cannot read; the proxy
// answers it 400 with the error's text, sending nothing.
type PolicyError struct {
	Header string // the header's name, canonical
	Reason string // what is wrong with it
}

func (e *PolicyError) Error() string {
	return "proxy: " + safetext.Clip(e.Header, 64) + ": " + e.Reason
}

// ParsePolicy returns the Policy the PolicyPrefix headers of h ask for:
// each header sets the field it is named after (HeaderMaxWait...). A header
// given twice, a value out of its bounds, a rule l has no scope of (l nil:
// any rule), or a name starting with PolicyPrefix that is none of these is
// a *PolicyError.
func ParsePolicy(h http.Header, l *limits.Limits) (transport.Policy, error) {
	var p transport.Policy
	for name, vs := range h {
		if len(name) < len(PolicyPrefix) || !strings.EqualFold(name[:len(PolicyPrefix)], PolicyPrefix) {
			continue
		}
		name = http.CanonicalHeaderKey(name)
		if len(vs) != 1 {
			return transport.Policy{}, &PolicyError{name, "given more than once"}
		}
		if err := setPolicy(&p, name, strings.TrimSpace(vs[0]), l); err != nil {
			return transport.Policy{}, err
		}
	}
	return p, nil
}

// setPolicy sets the field of p header name names to v.
func setPolicy(p *transport.Policy, name, v string, l *limits.Limits) error {
	if len(v) > maxPolicyValue {
		return &PolicyError{name, fmt.Sprintf("a value of more than %d bytes", maxPolicyValue)}
	}
	var err error
	switch name {
	case HeaderMaxWait:
		p.MaxWait, err = duration(v, transport.MaxPolicyWait)
	case HeaderAttemptTimeout:
		p.AttemptTimeout, err = duration(v, transport.LongCallTimeout)
	case HeaderFailFast:
		p.FailFast, err = flag(v)
	case HeaderNoRetry:
		p.NoRetry, err = flag(v)
	case HeaderBoundBody:
		p.BoundBody, err = flag(v)
	case HeaderPriority:
		switch {
		case strings.EqualFold(v, "interactive"):
			p.Priority = transport.Interactive
		case strings.EqualFold(v, "background"):
			p.Priority = transport.Background
		default:
			err = errors.New("want interactive or background, not " + safetext.Quote(v, 40))
		}
	case HeaderRule:
		err = checkRule(v, l)
		p.Rule = v
	default:
		return &PolicyError{name, "not a header the proxy reads (it reads " + strings.Join(policyHeaders, ", ") + ")"}
	}
	if err != nil {
		return &PolicyError{name, err.Error()}
	}
	return nil
}

// policyHeaders are the names ParsePolicy reads, for its errors.
var policyHeaders = []string{HeaderMaxWait, HeaderFailFast, HeaderNoRetry, HeaderAttemptTimeout, HeaderPriority, HeaderRule, HeaderBoundBody}

// duration reads a Go duration from 0 to most.
func duration(v string, most time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > most {
		return 0, fmt.Errorf("want a Go duration from 0s to %v, such as 30s, not %s", most, safetext.Quote(v, 40))
	}
	return d, nil
}

// flag reads true or false, in any case.
func flag(v string) (bool, error) {
	switch {
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	return false, errors.New("want true or false, not " + safetext.Quote(v, 40))
}

// checkRule reports what is wrong with a rule's scope: none, or one l has
// no rule of.
func checkRule(scope string, l *limits.Limits) error {
	if scope == "" {
		return errors.New("want the scope of a rule of the limits data")
	}
	if l != nil {
		if _, ok := l.ByScope(scope); !ok {
			return errors.New("no rule of the limits data has the scope " + safetext.Quote(scope, 64) + " (xblcall limits lists them)")
		}
	}
	return nil
}

// stripPolicy deletes every header of h whose name starts with
// PolicyPrefix.
func stripPolicy(h http.Header) {
	for name := range h {
		if len(name) >= len(PolicyPrefix) && strings.EqualFold(name[:len(PolicyPrefix)], PolicyPrefix) {
			delete(h, name)
		}
	}
}

// notTrailers are the fields a request's trailer never carries to the
// service. The hop-by-hop ones are the connection's, not the request's,
// and the ReverseProxy strips them from the header (RFC 9110 §7.6.1);
// Proxy-Authorization holds the proxy's access token. The others cannot
// be trailers: a sender must not generate a trailer field whose
// definition does not permit it (RFC 9110 §6.5.1), and these are read
// before the body, for its framing, routing, authentication, request
// modifiers and content processing; X-Xbl-Contract-Version and Signature
// are Xbox's own request controls (a Signature covers the request as it
// was signed). The conditionals, named with If- (RFC 9110 §13.1), are
// request modifiers too.
var notTrailers = map[string]bool{
	// hop-by-hop
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Proxy-Connection": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	// framing, routing, authentication
	"Content-Length": true, "Host": true, "Authorization": true, "Cookie": true,
	// request modifiers
	"Cache-Control": true, "Expect": true, "Max-Forwards": true, "Pragma": true, "Range": true,
	// content processing
	"Content-Encoding": true, "Content-Range": true, "Content-Type": true,
	// Xbox's request controls
	"X-Xbl-Contract-Version": true, "Signature": true,
}

// stripTrailer strips a request's trailer of the fields that never reach
// the service as trailers: the proxy's own (stripPolicy), notTrailers, and
// those the request's Connection header (in header, the request's header
// as it came) names, hop-by-hop too (RFC 9110 §7.6.1), which the
// ReverseProxy strips from the header.
func stripTrailer(trailer, header http.Header) {
	stripPolicy(trailer)
	for name := range trailer {
		key := http.CanonicalHeaderKey(name)
		if notTrailers[key] || strings.HasPrefix(key, "If-") || connectionNames(header, key) {
			delete(trailer, name)
		}
	}
}

// connectionNames reports whether header's Connection names the field
// key (canonical).
func connectionNames(header http.Header, key string) bool {
	for _, v := range header["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if http.CanonicalHeaderKey(textproto.TrimString(f)) == key {
				return true
			}
		}
	}
	return false
}
