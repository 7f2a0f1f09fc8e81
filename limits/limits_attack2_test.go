package limits_test

import (
	"strings"
	"testing"

	"github.com/xblgo/fgrl/limits"
)

// TestAttack2CertificationSpelledTwoWaysAgrees: e287eef makes rules of one
// scope (and a fallback beside rules of its scope) agree on the
// certification figure by comparing the Certification fields as written.
// Rule.Certification: "zero means 10 × Sustain", so a rule that leaves it
// out and one that writes 10 × Sustain have the same figure
// (CertificationLimit: 300 for both); the file is refused, "scope a has
// other limits than rules[0]", though the limits are one.
//
// Promised (limits.Rule, Certification): "Certification is the number of
// calls per SustainPeriod at which a title fails certification; zero
// means 10 × Sustain." RELIABILITY.md (e287eef's table): "refused, as two
// rules of one scope that differ are; the certification figure must agree
// too" and sameLimits' comment: "rules of one scope agree on what their
// shared counter allows, the certification figure the analyzer reads for
// it included" — the figure (CertificationLimit), not its spelling.
func TestAttack2CertificationSpelledTwoWaysAgrees(t *testing.T) {
	for _, in := range []string{
		`{"revision": "t", "rules": [
			{"service": "a", "hosts": ["a.example.com"], "burst": 10, "sustain": 30},
			{"service": "a", "hosts": ["b.example.com"], "burst": 10, "sustain": 30, "certification": 300}]}`,
		`{"revision": "t", "fallback": {"service": "a", "burst": 10, "sustain": 30, "certification": 300},
		  "rules": [{"service": "a", "hosts": ["a.example.com"], "burst": 10, "sustain": 30}]}`,
	} {
		l, err := limits.Read(strings.NewReader(in))
		if err != nil {
			t.Errorf("refused: %v\n%s", err, in)
			continue
		}
		for i := range l.Rules {
			if c := l.Rules[i].CertificationLimit(); c != 300 {
				t.Errorf("rules[%d] certification %d", i, c)
			}
		}
	}
}

// held: e287eef's refusals keep every limits file the repository has
// loading: the built-in revisions (2020 and 2022), examples/limits.json
// and examples/drift.json (xblcall limits --file, simulate
// --service-limits, the commands' examples). Hosts "*", "a-b.c",
// "club*.xboxlive.com", "127.0.0.1" and "localhost" are accepted; ".",
// "a.", "*.", "a..b", ".a", "a.b.." refused; a fallback with an empty list
// of hosts, methods or paths is accepted (len 0), with one member refused.
func TestAttack2RepositoryLimitsStillLoad(t *testing.T) {
	for _, r := range limits.Revisions() {
		if _, err := limits.Revision(r); err != nil {
			t.Errorf("revision %s: %v", r, err)
		}
	}
	for _, f := range []string{"../examples/limits.json", "../examples/drift.json"} {
		if _, err := limits.Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	rule := func(host string) string {
		return `{"revision": "t", "rules": [{"service": "a", "hosts": ["` + host + `"], "burst": 1, "sustain": 1}]}`
	}
	for _, h := range []string{"*", "a-b.c", "club*.xboxlive.com", "127.0.0.1", "localhost", "A.Example.COM"} {
		if _, err := limits.Read(strings.NewReader(rule(h))); err != nil {
			t.Errorf("host %q refused: %v", h, err)
		}
	}
	for _, h := range []string{".", "a.", "*.", "a..b", ".a", "a.b..", ""} {
		if _, err := limits.Read(strings.NewReader(rule(h))); err == nil {
			t.Errorf("host %q accepted", h)
		}
	}
	for _, f := range []string{`"hosts": []`, `"methods": []`, `"paths": []`, `"hosts": null`} {
		in := `{"revision": "t", "fallback": {"service": "u", "burst": 1, "sustain": 1, ` + f + `}, "rules": []}`
		if _, err := limits.Read(strings.NewReader(in)); err != nil {
			t.Errorf("fallback with %s refused: %v", f, err)
		}
	}
	for _, f := range []string{`"hosts": ["a.b"]`, `"methods": ["GET"]`, `"paths": ["/x"]`} {
		in := `{"revision": "t", "fallback": {"service": "u", "burst": 1, "sustain": 1, ` + f + `}, "rules": []}`
		if _, err := limits.Read(strings.NewReader(in)); err == nil {
			t.Errorf("fallback with %s accepted", f)
		}
	}
}
