package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLimitsPlan: the poll planner on the command line plans for the fgrl
// transport the flags describe, the plain client's figure beside it.
// Social every 10 s is exactly a plain client's sustain limit and one call
// over for the transport, whose budget keeps a 1 s margin (before, the
// planner called 10 s the fastest safe interval, exit 0, and the what-if
// of that poller through fgrl delayed calls). A scope no rule has is
// refused naming the scopes rules have.
func TestLimitsPlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"social every 10 s", []string{"social:10s"}, 1, "social  1       10s    2/10   31/30    10.034s  10s    over: 1 call waits or is refused"},
		{"social at the plan's interval", []string{"social:10.034s"}, 0, "social  1       10.034s  2/10   30/30    10.034s  10s    at a limit: one more call waits"},
		{"no margin: a plain client", []string{"social:10s", "--margin", "0"}, 0, "social  1       10s    2/10   30/30    10s   10s    at a limit"},
		{"at 90 %", []string{"social:11.149s", "--limit-share", "0.9"}, 0, "social  1       11.149s  2/9    27/27    11.149s  10s    at a limit"},
		{"background", []string{"profile:15s", "--background"}, 0, "profile  1       15s    2/7    21/22    13.682s  10s    ok: every call at once"},
		{"social every 9 s", []string{"social:9s"}, 1, "over: 4 calls wait or are refused"},
		{"batch", []string{"presence/read:5s:3", "profile:1m"}, 1, "batch the calls of a tick"},
		{"no interval", []string{"social"}, 2, "want SCOPE:EVERY[:COUNT]"},
		{"an unknown scope", []string{"nope:1s"}, 2, `no rule has scope "nope" (have stats-read, profile, `},
		{"a share past 1", []string{"social:10s", "--limit-share", "1.5"}, 2, "--limit-share 1.5: want 0 (all) to 1"},
		{"a negative margin", []string{"social:10s", "--margin", "-1s"}, 2, "--margin -1s: want 0 to 5m0s"},
		{"nothing", nil, 2, "name the periodic calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := xblcall(t, append([]string{"limits", "plan"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Errorf("limits plan %v: exit %d\n%s%s\nwant %d and %q", tc.args, code, out, errs, tc.code, tc.want)
			}
		})
	}
}

// TestLimitsPlanJSON: --json prints the rows, durations as Go duration
// strings, the mixed interval left out.
func TestLimitsPlanJSON(t *testing.T) {
	t.Parallel()
	code, out, errs := xblcall(t, "limits", "plan", "--json", "social:11s", "profile:1m", "profile:30s:2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []map[string]any{
		{"scope": "profile", "perTick": 3.0, "burstPeak": 3.0, "sustainPeak": 28.0, "burst": 10.0, "sustain": 30.0, "burstLeft": 7.0,
			"sustainLeft": 2.0, "fastest": "30.1s", "plainFastest": "30s", "batch": true, "safe": true},
		{"scope": "social", "perTick": 1.0, "every": "11s", "burstPeak": 2.0, "sustainPeak": 28.0, "burst": 10.0, "sustain": 30.0, "burstLeft": 8.0,
			"sustainLeft": 2.0, "fastest": "10.034s", "plainFastest": "10s", "batch": false, "safe": true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("limits plan --json (-want +got)\n%s", d)
	}
}
