package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/transport"
)

// TestParsePolicy: each policy header sets the transport.Policy field it
// is named after; a value out of bounds, a header given twice, an unknown
// Fgrl- header or a rule the limits lack is refused, naming the header.
func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hdr     http.Header
		want    transport.Policy
		wantErr string // the header named, when refused
	}{
		{"none", http.Header{"Accept": {"*/*"}}, transport.Policy{}, ""},
		{"max wait", http.Header{HeaderMaxWait: {"30s"}}, transport.Policy{MaxWait: 30 * time.Second}, ""},
		{"max wait at its bound", http.Header{HeaderMaxWait: {"5m"}}, transport.Policy{MaxWait: transport.MaxPolicyWait}, ""},
		{"fail fast", http.Header{HeaderFailFast: {"TRUE"}}, transport.Policy{FailFast: true}, ""},
		{"no retry", http.Header{HeaderNoRetry: {"true"}}, transport.Policy{NoRetry: true}, ""},
		{"false sets nothing", http.Header{HeaderNoRetry: {"false"}}, transport.Policy{}, ""},
		{"attempt timeout", http.Header{HeaderAttemptTimeout: {"1m30s"}}, transport.Policy{AttemptTimeout: 90 * time.Second}, ""},
		{"background", http.Header{HeaderPriority: {"Background"}}, transport.Policy{Priority: transport.Background}, ""},
		{"interactive", http.Header{HeaderPriority: {"interactive"}}, transport.Policy{Priority: transport.Interactive}, ""},
		{"rule", http.Header{HeaderRule: {"mpsd-search-handle/write"}}, transport.Policy{Rule: "mpsd-search-handle/write"}, ""},
		{"bound body", http.Header{HeaderBoundBody: {"true"}}, transport.Policy{BoundBody: true}, ""},
		{"all at once", http.Header{HeaderMaxWait: {" 2m "}, HeaderPriority: {"background"}, HeaderNoRetry: {"true"}},
			transport.Policy{MaxWait: 2 * time.Minute, Priority: transport.Background, NoRetry: true}, ""},
		{"a name in another case", http.Header{"fgrl-max-wait": {"1s"}}, transport.Policy{MaxWait: time.Second}, ""},
		{"max wait too long", http.Header{HeaderMaxWait: {"6m"}}, transport.Policy{}, HeaderMaxWait},
		{"negative", http.Header{HeaderMaxWait: {"-1s"}}, transport.Policy{}, HeaderMaxWait},
		{"no unit", http.Header{HeaderAttemptTimeout: {"30"}}, transport.Policy{}, HeaderAttemptTimeout},
		{"attempt timeout too long", http.Header{HeaderAttemptTimeout: {"1h"}}, transport.Policy{}, HeaderAttemptTimeout},
		{"not a flag", http.Header{HeaderFailFast: {"yes"}}, transport.Policy{}, HeaderFailFast},
		{"not a priority", http.Header{HeaderPriority: {"urgent"}}, transport.Policy{}, HeaderPriority},
		{"a rule the limits lack", http.Header{HeaderRule: {"nosuch"}}, transport.Policy{}, HeaderRule},
		{"an empty rule", http.Header{HeaderRule: {""}}, transport.Policy{}, HeaderRule},
		{"twice", http.Header{HeaderMaxWait: {"1s", "2s"}}, transport.Policy{}, HeaderMaxWait},
		{"unknown", http.Header{"Fgrl-Maxwait": {"1s"}}, transport.Policy{}, "Fgrl-Maxwait"},
		{"too long a value", http.Header{HeaderRule: {strings.Repeat("a", 129)}}, transport.Policy{}, HeaderRule},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePolicy(tc.hdr, limits.Default())
			var pe *PolicyError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("ParsePolicy: %v", err)
			case tc.wantErr != "" && (!errors.As(err, &pe) || pe.Header != tc.wantErr):
				t.Fatalf("ParsePolicy: %v, want a *PolicyError naming %s", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParsePolicy mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStripPolicy: every Fgrl- header goes, whatever its case; the rest
// stays.
func TestStripPolicy(t *testing.T) {
	h := http.Header{HeaderMaxWait: {"1s"}, "fgrl-x": {"y"}, "Fgrl": {"kept"}, "Authorization": {"XBL3.0 x=1;t"}}
	stripPolicy(h)
	want := http.Header{"Fgrl": {"kept"}, "Authorization": {"XBL3.0 x=1;t"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("stripPolicy mismatch (-want +got):\n%s", diff)
	}
}

// FuzzParsePolicy: any header and value parse to a Policy within the
// transport's bounds (WithPolicy keeps it as it is) or to a *PolicyError
// of bounded, printable text.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range [][2]string{{HeaderMaxWait, "30s"}, {HeaderFailFast, "true"}, {HeaderPriority, "background"},
		{HeaderRule, "profile"}, {HeaderAttemptTimeout, "5m"}, {"Fgrl-X", "\x00"}, {HeaderMaxWait, "9223372036854775807ns"}} {
		f.Add(s[0], s[1])
	}
	lim := limits.Default()
	f.Fuzz(func(t *testing.T, name, value string) {
		p, err := ParsePolicy(http.Header{name: {value}}, lim)
		if err != nil {
			var pe *PolicyError
			msg := err.Error()
			if !errors.As(err, &pe) || len(msg) > 800 || !utf8.ValidString(msg) || strings.ContainsAny(msg, "\x00\n\r") {
				t.Fatalf("error %T %q: want a *PolicyError of printable text", err, msg)
			}
			return
		}
		if got := transport.PolicyOf(transport.WithPolicy(context.Background(), p)); got != p {
			t.Fatalf("ParsePolicy(%q: %q) = %+v, out of the transport's bounds (%+v)", name, value, p, got)
		}
	})
}
