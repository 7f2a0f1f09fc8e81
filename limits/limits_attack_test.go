package limits_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/limits"
)

func attackRead(t *testing.T, in string) (*limits.Limits, *datafile.Error) {
	t.Helper()
	l, err := limits.Read(strings.NewReader(in))
	if err == nil {
		return l, nil
	}
	var de *datafile.Error
	if !errors.As(err, &de) {
		t.Fatalf("error %T %v, want a *datafile.Error", err, err)
	}
	return nil, de
}

// limits.Rule.Hosts: "Hosts are exact host names ... Matching ignores case
// and port." A rule whose host was written as a fully qualified name with
// its trailing dot was accepted, yet covered no request at all: not the
// host written exactly so, nor without the dot (Match strips a request's
// trailing dot, never the rule's). The rule was silently dead; now the
// spelling is refused, naming the host and why.
func TestAttackTrailingDotHostRefused(t *testing.T) {
	for _, host := range []string{"a.example.com.", "*.example.com."} {
		l, err := attackRead(t, `{"rules": [{"service": "a", "hosts": ["`+host+`"], "burst": 1, "sustain": 2}]}`)
		if err == nil {
			for _, req := range []string{"a.example.com.", "a.example.com", "A.EXAMPLE.COM.:443"} {
				if _, ok := l.Match("GET", req, "/"); !ok {
					t.Errorf("rule host %q accepted, and Match(GET, %q) found no rule: a dead rule", host, req)
				}
			}
			continue
		}
		if err.Field != "rules[0].hosts[0]" || !strings.Contains(err.Reason, "dot") {
			t.Errorf("rule host %q refused at %q: %v; want rules[0].hosts[0], saying it ends with a dot", host, err.Field, err)
		}
	}
	// Nor a host with an empty label anywhere.
	for _, host := range []string{".a.example.com", "a..example.com", "."} {
		if _, err := attackRead(t, `{"rules": [{"service": "a", "hosts": ["`+host+`"], "burst": 1, "sustain": 2}]}`); err == nil {
			t.Errorf("rule host %q accepted", host)
		}
	}
}

// limits.Read: "an optional "fallback" (a rule without hosts)"; "It is
// read strictly (datafile): a field the data does not have, a misspelt one
// among them, is an error, never ignored"; Limits.Fallback: "Match never
// returns it". A fallback with hosts (and methods, paths) is accepted and
// the hosts are ignored: the file says the rule covers x.example.com, and
// nothing ever counts it there.
func TestAttackFallbackWithHostsRefused(t *testing.T) {
	l, err := attackRead(t, `{"fallback": {"service": "other", "hosts": ["x.example.com"], "methods": ["GET"], "paths": ["/x"], "burst": 10, "sustain": 30},
		"rules": [{"service": "a", "hosts": ["a.example.com"], "burst": 1, "sustain": 2}]}`)
	if err == nil {
		_, ok := l.Match("GET", "x.example.com", "/x")
		t.Errorf("a fallback with hosts accepted, its hosts ignored (Match(x.example.com) found a rule: %v)", ok)
	} else if err.Field != "fallback.hosts" {
		t.Logf("refused at %q: %v", err.Field, err)
	}
}

// limits/load.go, check: "Rules that share a scope share a counter: they
// must agree on their limits" (refused as "scope ... has other limits than
// rules[j]"). The fallback is a rule too, and the mock counts a call at a
// host with no rule against its scope (mock/pipeline.go: rule =
// limits.Fallback): a fallback named "a" of 1 / 1 beside rules of scope
// "a" of 100 / 300 is accepted, two limits for one counter.
func TestAttackFallbackScopeAgreesWithRules(t *testing.T) {
	_, err := attackRead(t, `{"fallback": {"service": "a", "burst": 1, "sustain": 1},
		"rules": [{"service": "a", "hosts": ["a.example.com"], "burst": 100, "sustain": 300}]}`)
	if err == nil {
		t.Error(`a fallback of scope "a", 1 / 1, accepted beside a rule of scope "a", 100 / 300`)
	}
}

// limits.Read: "Every error is a *datafile.Error naming the line and the
// field." A publisherSustain over the bound is reported at "sustain", on
// sustain's line: the wrong field and the wrong line.
func TestAttackPublisherSustainErrorNamesItsField(t *testing.T) {
	in := "rules:\n" +
		"  - service: store\n" +
		"    hosts: [a.example.com]\n" +
		"    burst: 1\n" +
		"    sustain: 2\n" + // line 5
		"    publisherSustain: 100001\n" // line 6
	_, err := attackRead(t, in)
	if err == nil {
		t.Fatal("publisherSustain 100001 accepted")
	}
	if err.Field != "rules[0].publisherSustain" || err.Line != 6 {
		t.Errorf("error at %q, line %d: %v; want rules[0].publisherSustain, line 6", err.Field, err.Line, err)
	}
}

// held: a host that is a suffix, a prefix, or carries another name around
// the rule's host matches nothing; port, case and the request's trailing
// dot are ignored; a host with a colon that is not a port matches no glob.
func TestAttackHostLookalikesDoNotMatch(t *testing.T) {
	l := limits.Default()
	want, ok := l.Match("GET", "profile.xboxlive.com", "/users/me/profile/settings")
	if !ok {
		t.Fatal("the default table has no profile rule")
	}
	for _, host := range []string{"PROFILE.XboxLive.com:443", "profile.xboxlive.com.", "profile.xboxlive.com.:8443"} {
		if got, ok := l.Match("GET", host, "/users/me/profile/settings"); !ok || got != want {
			t.Errorf("Match(%q) = %v, %v; want %s", host, got, ok, want.Scope())
		}
	}
	for _, host := range []string{"evilprofile.xboxlive.com", "profile.xboxlive.com.evil.example", "profile.xboxlive.com..",
		"profile.xboxlive.com%2e", "profile.xboxlive.co", "clubhub.xboxlive.com:8080.xboxlive.com:22", "pro\u0192ile.xboxlive.com"} {
		if got, ok := l.Match("GET", host, "/users/me/profile/settings"); ok && got == want {
			t.Errorf("Match(%q) = %s", host, got.Scope())
		}
	}
}

// held: limits whose figures overflow or are not whole numbers are
// refused, in JSON and YAML.
func TestAttackOverflowingLimitsRefused(t *testing.T) {
	for _, v := range []string{"-1", "100001", "9223372036854775808", "1.5", `"5"`, "1e400", "null"} {
		for _, in := range []string{
			`{"rules": [{"service": "a", "hosts": ["a.example.com"], "burst": ` + v + `, "sustain": 0}]}`,
			"rules:\n  - {service: a, hosts: [a.example.com], burst: " + v + ", sustain: 0}\n",
		} {
			if l, err := attackRead(t, in); err == nil {
				t.Errorf("burst %s accepted: %+v", v, l.Rules[0])
			}
		}
	}
}

// held: Plan's Fastest ("the shortest interval at which PerTick calls a
// tick stay within both of the client's windows"), checked by counting
// the ticks in a window that starts at a tick: at Fastest no window
// passes a limit; a millisecond faster one does.
func TestAttackPlanFastestHoldsTheLimits(t *testing.T) {
	l := limits.Default()
	for _, sc := range l.Scopes() {
		r, _ := l.ByScope(sc)
		for _, k := range []int{1, 2, 3, 7} {
			rows, err := l.Plan([]limits.PeriodicCall{{Scope: sc, Every: time.Second, Count: k}})
			if err != nil {
				t.Fatal(err)
			}
			f := rows[0].Fastest
			if f == 0 {
				continue
			}
			fits := func(every time.Duration) bool {
				for _, w := range []struct {
					d time.Duration
					n int
				}{{15 * time.Second, r.Burst}, {300 * time.Second, r.Sustain}} {
					if w.n > 0 && int((w.d+every-1)/every)*k > w.n {
						return false
					}
				}
				return true
			}
			if !fits(f) {
				t.Errorf("%s x%d: Fastest %v passes a limit", sc, k, f)
			}
			if f > time.Millisecond && fits(f-time.Millisecond) {
				t.Errorf("%s x%d: %v, faster than Fastest %v, keeps both limits", sc, k, f-time.Millisecond, f)
			}
		}
	}
}

// Rules of one scope share its counter and the certification figure the
// analyzer reads for it (Rule.CertificationLimit): two that differ in it
// are refused as two that differ in their limits are.
func TestAttackScopeAgreesOnCertification(t *testing.T) {
	_, err := attackRead(t, `{"rules": [{"service": "a", "hosts": ["a.example.com"], "burst": 10, "sustain": 30, "certification": 100},
		{"service": "a", "hosts": ["b.example.com"], "burst": 10, "sustain": 30, "certification": 300}]}`)
	if err == nil || err.Field != "rules[1]" {
		t.Errorf("two rules of scope a with certification 100 and 300: %v, want refused at rules[1]", err)
	}
}

// A rule's service and class are printable ASCII: every character from
// '!' to '~' but those the scope's spelling reserves ('/', '#'), and none
// outside (a control character, DEL, another script).
func TestAttackServiceNamesPrintableASCII(t *testing.T) {
	rule := func(service string) string {
		return `{"rules": [{"service": "` + service + `", "hosts": ["a.example.com"], "burst": 1, "sustain": 2}]}`
	}
	for _, ok := range []string{"a!b", "a~b", "presence-v2", "x.y_z"} {
		if _, err := attackRead(t, rule(ok)); err != nil {
			t.Errorf("service %q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{`a\u001bb`, `a\u007fb`, `a\u0080b`, `pr\u00e9sence`, `a b`} {
		if _, err := attackRead(t, rule(bad)); err == nil || err.Field != "rules[0].service" {
			t.Errorf("service %s: %v, want refused at rules[0].service", bad, err)
		}
	}
}
