package limits

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// Bounds on limits data, so a hostile or corrupt file cannot exhaust memory.
const (
	MaxSize  = 1 << 20 // bytes
	MaxRules = 4096
)

// file is the kind of a limits file.
var file = datafile.Kind{Name: "limits", MaxBytes: MaxSize, Lists: map[string]int{"/rules": MaxRules}}

// document is a limits file as written.
type document struct {
	Revision string `json:"revision"`
	Source   string `json:"source"`
	Fallback *Rule  `json:"fallback"`
	Rules    []Rule `json:"rules"`
}

// Read reads limits data of at most MaxSize bytes from r: an object with
// "revision", "source", an optional "fallback" (a rule without hosts,
// methods or paths, whose limits the rules of its scope share) and
// "rules" (Rule objects, in match order), in JSON or YAML. It is read
// strictly (datafile): a field the data does not have, a misspelt one
// among them, is an error, never ignored. Every error is a
// *datafile.Error naming the line and the field.
func Read(r io.Reader) (*Limits, error) {
	var d document
	if err := file.Read(r, &d, d.check); err != nil {
		return nil, err
	}
	return d.limits(), nil
}

// Load reads the named limits file as Read reads limits data; its errors
// name the file.
func Load(name string) (*Limits, error) {
	var d document
	if err := file.Load(name, &d, d.check); err != nil {
		return nil, err
	}
	return d.limits(), nil
}

// limits compiles a checked document.
func (d *document) limits() *Limits {
	l := &Limits{Revision: d.Revision, Source: d.Source, Fallback: d.Fallback, Rules: d.Rules}
	l.compile()
	return l
}

// check reports the first thing wrong with d, as a *datafile.Error.
func (d *document) check() error {
	if d.Rules == nil {
		return limitsError("rules", "missing")
	}
	if d.Fallback != nil {
		if f, reason := d.Fallback.validate(true); reason != "" {
			return limitsError("fallback"+f, reason)
		}
	}
	scopes := make(map[string]int, len(d.Rules))
	fallback := ""
	if d.Fallback != nil {
		fallback = scopeOf(d.Fallback.Service, d.Fallback.Class)
	}
	for i := range d.Rules {
		r := &d.Rules[i]
		if f, reason := r.validate(false); reason != "" {
			return limitsError(fmt.Sprintf("rules[%d]%s", i, f), reason)
		}
		// Rules that share a scope share a counter: they must agree on
		// their limits.
		scope := scopeOf(r.Service, r.Class)
		if j, ok := scopes[scope]; ok && !sameLimits(&d.Rules[j], r) {
			return limitsError(fmt.Sprintf("rules[%d]", i),
				fmt.Sprintf("scope %s has other limits than rules[%d]", safetext.Quote(scope, 64), j))
		}
		if scope == fallback && !sameLimits(d.Fallback, r) { // the mock counts hosts without a rule under it
			return limitsError(fmt.Sprintf("rules[%d]", i),
				fmt.Sprintf("scope %s has other limits than the fallback", safetext.Quote(scope, 64)))
		}
		scopes[scope] = i
	}
	return nil
}

// limitsError is what is wrong with limits data, at field.
func limitsError(field, reason string) error {
	return &datafile.Error{File: "limits", Field: field, Reason: reason}
}

// validate returns the offending sub-field and a reason, or "" when r is
// well formed.
func (r *Rule) validate(fallback bool) (field, reason string) {
	switch {
	case r.Service == "":
		return ".service", "missing"
	case strings.ContainsAny(r.Service+r.Class, "/#: \t"):
		// ':' too: a scope is written SCOPE:EVERY in a plan, and the
		// transport's key for a host no rule has is "host:" + the host.
		return ".service", "service and class may not contain '/', '#', ':' or spaces"
	case strings.ContainsFunc(r.Service+r.Class, func(c rune) bool { return c < 0x21 || c > 0x7e }):
		// They name metrics' labels and log fields: no control character
		// or other script reaches a terminal that reads them.
		return ".service", "service and class are printable ASCII"
	case !fallback && len(r.Hosts) == 0:
		return ".hosts", "missing"
	case fallback && len(r.Hosts) > 0:
		return ".hosts", "a fallback covers every host no rule covers: it names none"
	case fallback && len(r.Methods) > 0:
		return ".methods", "a fallback covers every method: it names none"
	case fallback && len(r.Paths) > 0:
		return ".paths", "a fallback covers every path: it names none"
	case r.Burst < 0:
		return ".burst", "must not be negative"
	case r.Sustain < 0:
		return ".sustain", "must not be negative"
	case r.Burst > throttle.MaxLimit:
		return ".burst", fmt.Sprintf("must be at most %d", throttle.MaxLimit)
	case r.Sustain > throttle.MaxLimit:
		return ".sustain", fmt.Sprintf("must be at most %d", throttle.MaxLimit)
	case r.PublisherSustain > throttle.MaxLimit:
		return ".publisherSustain", fmt.Sprintf("must be at most %d", throttle.MaxLimit)
	case r.Burst == 0 && r.Sustain == 0:
		return ".sustain", "burst and sustain are both zero"
	case r.PublisherSustain < 0:
		return ".publisherSustain", "must not be negative"
	case r.Certification < 0:
		return ".certification", "must not be negative"
	}
	for i, h := range r.Hosts {
		if strings.HasSuffix(h, ".") && validHost(strings.TrimSuffix(h, ".")) { // validHost("") is false: "." is no host
			return fmt.Sprintf(".hosts[%d]", i), safetext.Quote(h, 64) + " ends with a dot: write the host without it (Match ignores a request's)"
		}
		if !validHost(h) {
			return fmt.Sprintf(".hosts[%d]", i), safetext.Quote(h, 64) + " is not a host name or pattern"
		}
	}
	for i, m := range r.Methods {
		if !slices.Contains(httpMethods, strings.ToUpper(m)) {
			return fmt.Sprintf(".methods[%d]", i), safetext.Quote(m, 64) + " is not an HTTP method"
		}
	}
	for i, path := range r.Paths {
		if !strings.HasPrefix(path, "/") {
			return fmt.Sprintf(".paths[%d]", i), safetext.Quote(path, 64) + " does not start with '/'"
		}
	}
	return "", ""
}

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// validHost reports whether h is a host name or pattern as rules write
// them: labels of letters, digits, '-' and '*', none empty (no leading or
// trailing dot: a rule's host is written without the root's dot, which
// Match ignores in a request's).
func validHost(h string) bool {
	if h == "" || len(h) > 253 || h[0] == '.' || h[len(h)-1] == '.' || strings.Contains(h, "..") {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := lower(h[i])
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '*') {
			return false
		}
	}
	return true
}

// compile fills the derived fields and the host index of checked rules.
func (l *Limits) compile() {
	l.exact = make(map[string][]int)
	for i := range l.Rules {
		r := &l.Rules[i]
		r.scope = scopeOf(r.Service, r.Class)
		for _, h := range r.Hosts {
			h = strings.ToLower(h)
			if strings.Contains(h, "*") {
				l.globs = append(l.globs, hostGlob{pattern: h, rule: i})
				continue
			}
			if !slices.Contains(l.exact[h], i) {
				l.exact[h] = append(l.exact[h], i)
			}
		}
	}
	if l.Fallback != nil {
		l.Fallback.scope = scopeOf(l.Fallback.Service, l.Fallback.Class)
	}
}

// sameLimits reports whether rules of one scope agree on what their shared
// counter allows, the certification figure the analyzer reads for it
// included.
func sameLimits(a, b *Rule) bool {
	return a.Burst == b.Burst && a.Sustain == b.Sustain &&
		a.PublisherSustain == b.PublisherSustain && a.Store == b.Store && a.CertificationLimit() == b.CertificationLimit()
}
