// Package limits holds the published Fine-Grained Rate Limiting limits of
// Xbox services as data: which requests each rule covers (host, method,
// path) and its burst, sustain and certification figures. The limits are
// announced as subject to change, so they are data a user can replace
// (Read, Load), with the published tables built in (Revision, Default).
//
// Sources: the "Fine-Grained Rate Limiting" page of the Xbox services
// documentation (the 2020 table and the 2022 GDK revision) and, for hosts
// with no published rule, the general rule of the public Xbox Live Trace
// Analyzer (microsoft/xbox-live-trace-analyzer,
// Source/XboxLiveTraceAnalyzer.Rules.json).
package limits

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// Rule is one row of the limits data: which requests it covers and the
// limits that apply to them. A request matches a rule when its host matches
// one of Hosts and, when set, its method is in Methods and its path matches one
// of Paths.
type Rule struct {
	// Service names the service, such as "profile" or "presence".
	Service string `json:"service"`
	// Class splits a service into separately counted classes, such as "read"
	// and "write"; empty when the service has one counter.
	Class string `json:"class,omitempty"`
	// Hosts are exact host names or patterns where '*' matches any run of
	// characters, such as "club*.xboxlive.com". Matching ignores case and port.
	Hosts []string `json:"hosts,omitempty"`
	// Methods restricts the rule to these HTTP methods; empty means any.
	Methods []string `json:"methods,omitempty"`
	// Paths restricts the rule to these URL paths, where '*' matches any run of
	// characters other than '/'; empty means any. Matching ignores case.
	Paths []string `json:"paths,omitempty"`
	// Burst and Sustain are the requests allowed per BurstPeriod and
	// SustainPeriod for one user + title pair.
	Burst   int `json:"burst"`
	Sustain int `json:"sustain"`
	// PublisherSustain, when non-zero, is a second sustain limit counted per
	// user + publisher (the Store services).
	PublisherSustain int `json:"publisherSustain,omitempty"`
	// Certification is the number of calls per SustainPeriod at which a title
	// fails certification; zero means 10 × Sustain.
	Certification int `json:"certification,omitempty"`
	// Store marks the Store services, whose 429 carries a text body.
	Store bool `json:"store,omitempty"`
	// Named marks a rule that path matching never picks, because its
	// requests share method, host and path with another call's (creating a
	// search handle and sending an invite are both POST /handles). A request
	// counts against it only when it names it (transport.Policy.Rule).
	Named bool `json:"named,omitempty"`
	// Note says where a figure comes from when it is not the published table,
	// such as a host with no published rule.
	Note string `json:"note,omitempty"`

	scope string // Service or Service/Class, computed once when loaded
}

// Scope returns the counter name for the rule: Service, or Service/Class when
// Class is set. It is the Scope of the rule's Keys.
func (r *Rule) Scope() string {
	if r.scope == "" {
		return scopeOf(r.Service, r.Class)
	}
	return r.scope
}

// PublisherScope returns the Scope of the per-publisher counter: Scope()
// followed by "#publisher".
func (r *Rule) PublisherScope() string { return r.Scope() + "#publisher" }

// Limit returns the rule's per user + title limits.
func (r *Rule) Limit() throttle.Limit { return throttle.Limit{Burst: r.Burst, Sustain: r.Sustain} }

// ClientLimit returns what one user of one title may send: Limit, its
// sustain cut to PublisherSustain when that is lower, since the
// publisher's counter counts every call the title's does (and the calls of
// the publisher's other titles, which a client of one title cannot see).
// The transport's budget and the planner use it; the mock, as the
// service, counts the two limits apart.
func (r *Rule) ClientLimit() throttle.Limit {
	l := r.Limit()
	if p := r.PublisherSustain; p > 0 {
		l.Sustain = min(cmp.Or(l.Sustain, p), p) // a sustain of 0 is none
	}
	return l
}

// CertificationLimit returns Certification, or 10 × Sustain when it is zero.
func (r *Rule) CertificationLimit() int {
	if r.Certification > 0 {
		return r.Certification
	}
	return 10 * r.Sustain
}

func scopeOf(service, class string) string {
	if class == "" {
		return service
	}
	return service + "/" + class
}

// CoversHost reports whether host (with any port and case) is one of the
// rule's Hosts.
func (r *Rule) CoversHost(host string) bool {
	host = normalizeHost(host)
	for _, h := range r.Hosts {
		if hostMatch(strings.ToLower(h), host) {
			return true
		}
	}
	return false
}

func (r *Rule) matchRequest(method, path string) bool {
	if r.Named {
		return false
	}
	if len(r.Methods) > 0 && !containsFold(r.Methods, method) {
		return false
	}
	if len(r.Paths) == 0 {
		return true
	}
	for _, p := range r.Paths {
		if globMatch(p, path) {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// Limits is a compiled set of rules. Match returns the first rule, in file
// order, that covers a request. A Limits is immutable after loading and safe
// for concurrent use.
type Limits struct {
	// Revision names the table, such as "2020".
	Revision string
	// Source says where the figures come from.
	Source string
	// Rules are the rules in match order. Do not modify them.
	Rules []Rule
	// Fallback, when not nil, is the rule the trace analyzer assumes for hosts
	// with no published rule (10 / 30). Match never returns it.
	Fallback *Rule

	exact map[string][]int // lower-case host -> rule indexes, ascending
	globs []hostGlob       // host patterns, ascending by rule index
}

type hostGlob struct {
	pattern string
	rule    int
}

// Match returns the rule that covers a request, or nil and false when no rule
// does. host may carry a port and any case; path is matched without its "."
// and ".." segments (RemoveDotSegments). Match does not allocate when host is
// already lower case and path holds no such segment.
func (l *Limits) Match(method, host, path string) (*Rule, bool) {
	host, path = normalizeHost(host), RemoveDotSegments(path)
	best := len(l.Rules)
	for _, i := range l.exact[host] {
		if l.Rules[i].matchRequest(method, path) {
			best = i
			break
		}
	}
	for _, g := range l.globs {
		if g.rule >= best {
			break
		}
		if hostMatch(g.pattern, host) && l.Rules[g.rule].matchRequest(method, path) {
			best = g.rule
			break
		}
	}
	if best == len(l.Rules) {
		return nil, false
	}
	return &l.Rules[best], true
}

// ByScope returns the first rule whose Scope is scope.
func (l *Limits) ByScope(scope string) (*Rule, bool) {
	for i := range l.Rules {
		if l.Rules[i].Scope() == scope {
			return &l.Rules[i], true
		}
	}
	return nil, false
}

// Scopes returns the rules' scopes, each once, in the table's order: what
// a scope given by name (limits plan, a pattern's service) may be.
func (l *Limits) Scopes() []string {
	var scopes []string
	for i := range l.Rules {
		if sc := l.Rules[i].Scope(); !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	return scopes
}

// normalizeHost strips a port and a trailing dot and lowers the case, without
// allocating when nothing needs lowering (strings.ToLower returns ASCII
// text without capitals as it is).

func normalizeHost(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

//go:embed data/*.json
var builtin embed.FS

// Revisions lists the names of the built-in tables, oldest first.
func Revisions() []string { return []string{"2020", "2022"} }

// ErrUnknownRevision is Revision's error for a name it has no table of.
var ErrUnknownRevision = errors.New("limits: unknown limits revision")

// Revision returns a fresh copy of the built-in table of that name: "2020"
// (the newest verified table, the default) or "2022" (the GDK revision).
func Revision(name string) (*Limits, error) {
	b, err := builtin.ReadFile("data/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("%w %s (have %s)", ErrUnknownRevision, safetext.Quote(name, 40), strings.Join(Revisions(), ", "))
	}
	l, err := Read(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("limits: built-in revision %s: %w", name, err)
	}
	return l, nil
}

// Default returns the built-in 2020 table.
func Default() *Limits {
	l, err := Revision("2020")
	if err != nil {
		panic(err) // the embedded data is tested; this cannot happen in a release
	}
	return l
}
