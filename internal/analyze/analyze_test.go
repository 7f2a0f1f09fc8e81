package analyze

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/internal/har"
	"github.com/xblgo/fgrl/limits"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func calls(offsets ...float64) []call {
	var out []call
	for _, o := range offsets {
		out = append(out, call{at: t0.Add(time.Duration(o * float64(time.Second)))})
	}
	return out
}

func TestScan(t *testing.T) {
	tests := []struct {
		name       string
		calls      []call
		limit      int
		peak, viol int
	}{
		{"under", calls(0, 1, 2), 3, 3, 0},
		{"one over", calls(0, 1, 2, 3), 3, 4, 1},
		{"span edge", calls(0, 1, 2, 15), 3, 3, 0}, // the call at 15 s is outside (0, 15]
		{"inside edge", calls(0, 1, 2, 14.9), 3, 4, 1},
		{"no limit", calls(0, 0, 0), 0, 3, 0},
	}
	for _, tt := range tests {
		peak, viol := scan(tt.calls, 15*time.Second, tt.limit)
		if peak != tt.peak || viol != tt.viol {
			t.Errorf("%s: scan = %d, %d; want %d, %d", tt.name, peak, viol, tt.peak, tt.viol)
		}
	}
}

func TestThrottled(t *testing.T) {
	c := calls(0, 1, 2, 10, 11)
	c[0].status, c[0].retryAfter = 429, "5"
	c[1].status, c[1].retryAfter = 429, "1" // a shorter deadline does not shorten the first
	c[3].status = 200
	n, soon, run := throttled(c)
	if n != 2 || soon != 2 || run != 2 {
		t.Errorf("throttled = %d, %d, %d; want 2, 2, 2", n, soon, run)
	}
}

func TestRetryAfterForms(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"12": 12 * time.Second, "Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second, " 3 ": 3 * time.Second,
	} {
		if got, ok := retryAfter(in, t0); !ok || got != want {
			t.Errorf("retryAfter(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "soon", "-1", "99999999999999999999"} {
		if _, ok := retryAfter(in, t0); ok && in != "99999999999999999999" {
			t.Errorf("retryAfter(%q) accepted", in)
		}
	}
}

func TestAnalyzeGrouping(t *testing.T) {
	var entries []har.Entry
	add := func(at float64, url, auth string, status int) {
		entries = append(entries, har.Entry{Started: t0.Add(time.Duration(at * float64(time.Second))), Method: "GET",
			URL: url, Authorization: auth, Status: status})
	}
	for i := 0; i < 12; i++ {
		add(float64(i), "https://profile.xboxlive.com/users/me", "XBL3.0 x=1;REDACTED", 200)
	}
	add(0, "https://profile.xboxlive.com/users/me", "XBL3.0 x=2;REDACTED", 200)
	add(0, "https://titlehub.xboxlive.com/x", "XBL3.0 x=1;REDACTED", 200)
	add(0, "wss://rta.xboxlive.com/connect", "", 101)
	add(0, "::not a url", "", 0)
	rep := Analyze(entries, limits.Default())
	type row struct {
		user, scope string
		calls       int
		verdict     string
	}
	var got []row
	for _, g := range rep.Groups {
		got = append(got, row{g.User, g.Scope, g.Calls, g.Verdict})
	}
	want := []row{{"1", "host:titlehub.xboxlive.com", 1, Green}, {"1", "profile", 12, Yellow}, {"2", "profile", 1, Green}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("groups mismatch (-want +got):\n%s", diff)
	}
	if rep.Skipped != 2 || rep.Verdict != Yellow {
		t.Errorf("skipped %d, verdict %s", rep.Skipped, rep.Verdict)
	}
}
