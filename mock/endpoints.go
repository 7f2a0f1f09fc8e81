package mock

import (
	"net/http"
	"slices"
	"strings"

	"github.com/xblgo/fgrl/limits"
)

// Endpoint is one call the mock answers.
type Endpoint struct {
	Hosts  []string // the hosts it answers at
	Method string
	// Path is the path pattern: {} stands for any segment, {user} for "me"
	// or "xuid(N)", xuid({n}) for "xuid(N)".
	Path string
	// Contract is the x-xbl-contract-version whose shape the answer has;
	// "-" for the sign-in endpoints, whose version the mock does not read.
	Contract string
}

// signInEndpoints are the sign-in calls the mock answers (signInRoutes).
func signInEndpoints() []Endpoint {
	out := make([]Endpoint, len(signInRoutes))
	for i, r := range signInRoutes {
		out[i] = Endpoint{Hosts: []string{r.host}, Method: r.method, Path: r.path, Contract: "-"}
	}
	return out
}

// Endpoints returns every call the mock answers, from its route table and
// its limits (the hosts of each service's rules), sign-in first, then by
// host and path.
func (h *Handler) Endpoints() []Endpoint {
	out := signInEndpoints()
	var services []Endpoint
	for service, routes := range h.routes {
		hosts := serviceHosts(h.cfg.limits, service)
		if len(hosts) == 0 {
			continue
		}
		for _, r := range routes {
			services = append(services, Endpoint{Hosts: hosts, Method: r.method, Path: r.path.String(), Contract: r.contract})
		}
	}
	if len(serviceHosts(h.cfg.limits, "authentication")) == 0 { // NSAL, answered uncounted without a rule (pipeline.go)
		services = append(services, Endpoint{Hosts: []string{titleMgtHost}, Method: http.MethodGet, Path: "/titles/{}/endpoints", Contract: "1"})
	}
	slices.SortFunc(services, func(a, b Endpoint) int {
		return strings.Compare(a.Hosts[0]+" "+a.Path+" "+a.Method, b.Hosts[0]+" "+b.Path+" "+b.Method)
	})
	return append(out, services...)
}

// serviceHosts returns the hosts of the rules of service, sorted.
func serviceHosts(l *limits.Limits, service string) []string {
	var hosts []string
	for _, r := range l.Rules {
		if r.Service == service {
			for _, host := range r.Hosts {
				hosts = append(hosts, strings.ToLower(host))
			}
		}
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// String returns the pattern as written.
func (p pattern) String() string {
	var b strings.Builder
	for _, e := range p {
		b.WriteByte('/')
		switch e.kind {
		case anySeg:
			b.WriteString("{}")
		case userSeg:
			b.WriteString("{user}")
		case xuidSeg:
			b.WriteString("xuid({n})")
		case gtSeg:
			b.WriteString("gt({})")
		default:
			b.WriteString(e.literal)
		}
	}
	return b.String()
}

// Hosts returns every host the mock answers, sorted: the hosts of its
// limits' rules, patterns ("club*.xboxlive.com") included, and the sign-in
// services'. A hosts file can name only the exact ones; a TLS certificate
// names a pattern by its domain ("*.xboxlive.com").
func (h *Handler) Hosts() []string {
	var out []string
	for _, r := range h.cfg.limits.Rules {
		for _, host := range r.Hosts {
			out = append(out, strings.ToLower(host))
		}
	}
	out = append(out, signInHosts...)
	out = append(out, titleMgtHost)
	out = append(out, RTAHost)
	slices.Sort(out)
	return slices.Compact(out)
}

// Serves reports whether the mock answers host (any case, a port
// allowed): a host of one of its limits' rules, or a sign-in service's.
// Hosts without a rule that Config.Fallback counts are not included.
func (h *Handler) Serves(host string) bool {
	host = strings.ToLower(hostOnly(host))
	if isSignInHost(host) || host == titleMgtHost || host == RTAHost {
		return true
	}
	for i := range h.cfg.limits.Rules {
		if h.cfg.limits.Rules[i].CoversHost(host) {
			return true
		}
	}
	return false
}
