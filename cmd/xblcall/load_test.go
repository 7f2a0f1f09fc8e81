package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

const loadURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

// TestLoad: -n calls through one transport against the mock (profile: 10
// per 15 s, 30 per 300 s), in a synctest bubble so the budget's waits take
// no real time. Every call is accounted for, the budget keeps the service's
// 429s at zero, and the summary's fields agree with each other.
func TestLoad(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		code, out, errs := xblcall(t, "call", "--mock", "-n", "60", "-c", "4", "--json", loadURL)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var r loadReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if sum := r.Served + r.Refused + r.Throttled + r.Failed; sum != 60 || r.Calls != 60 {
			t.Errorf("served %d + refused %d + throttled %d + failed %d = %d, want 60", r.Served, r.Refused, r.Throttled, r.Failed, sum)
		}
		if r.Served < 10 || r.Served > 30 || r.Refused == 0 || r.Server429s != 0 || r.OK != r.Statuses["200"] || r.OK != r.Served {
			t.Errorf("report %+v: want 10..30 served with 200, the rest refused, no 429", r)
		}
		if r.Waited == 0 || r.Latency.Min > r.Latency.P50 || r.Latency.P50 > r.Latency.P99 || r.Latency.P99 > r.Latency.Max {
			t.Errorf("waits %d, latency %+v", r.Waited, r.Latency)
		}
		// Standard error is not a terminal: a progress line a second, with
		// the wait running if any, and nothing else (retries and waits are
		// counted, not printed one by one).
		progress := regexp.MustCompile(`^calls \d+/60: \d+ served, \d+ refused locally, \d+ throttled, \d+ failed(; waiting \d+ s for profile's (burst|sustain) window)?$`)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		for _, l := range lines {
			if !progress.MatchString(l) {
				t.Errorf("stderr line %q is not a progress line", l)
			}
		}
		if len(lines) < 2 {
			t.Errorf("%d progress lines over a run of minutes, want one a second", len(lines))
		}
	})
}

// TestLoadInterrupted: an interrupt ends a load run with the summary of the
// calls that ended (calls cut short are not counted) and exit 130. Real
// time: 60 calls at 20 a second, interrupted after half a second.
func TestLoadInterrupted(t *testing.T) {
	t.Parallel()
	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", asJSON), func(t *testing.T) {
			ctx, interrupt := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer interrupt()
			args := []string{"call", "--mock", "-n", "60", "-c", "4", "--rate", "20", loadURL}
			if asJSON {
				args = append(args, "--json")
			}
			var out, errs bytes.Buffer
			code := run(ctx, args, &out, &errs, withTestEnv(t))
			if code != 130 || !strings.Contains(errs.String(), "interrupted") {
				t.Fatalf("exit %d: %s%s", code, out.String(), errs.String())
			}
			var r loadReport
			if asJSON {
				if err := json.Unmarshal(out.Bytes(), &r); err != nil || !r.Interrupted || r.Calls != 60 ||
					r.Completed == 0 || r.Completed >= 60 || r.Served+r.Refused+r.Throttled+r.Failed != r.Completed || r.Failed != 0 {
					t.Errorf("%v: %+v", err, r)
				}
			} else if !regexp.MustCompile(`interrupted: [1-9]\d* of 60 calls ended\n`).MatchString(out.String()) ||
				!strings.Contains(out.String(), "status codes: 200 x") {
				t.Errorf("summary:\n%s", out.String())
			}
		})
	}
}

// TestLoadRate: --rate spaces the calls' starts.
func TestLoadRate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		code, out, errs := xblcall(t, "call", "--mock", "-n", "5", "-c", "3", "--rate", "2", loadURL)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if d := time.Since(start); d < 2*time.Second || d > 3*time.Second {
			t.Errorf("5 calls at 2/s took %v, want 2s", d)
		}
		for _, want := range []string{"5 calls in 2s (2.5/s), 3 at a time, at most 2/s", "served           5", "status codes: 200 x5"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--mock", "-n", "0", loadURL}, 2, "-n must be between 1 and 1000000"},
		{[]string{"--mock", "-n", "2000000", loadURL}, 2, "-n must be"},
		{[]string{"--mock", "-n", "2", "-c", "0", loadURL}, 2, "-c must be"},
		{[]string{"--mock", "--rate", "-1", loadURL}, 2, "--rate must be a finite number, not negative"},
		{[]string{"--mock", "--rate", "NaN", "--json", "-n", "2", loadURL}, 2, "--rate must be a finite number"},
		{[]string{"--mock", "--rate", "+Inf", "-n", "2", loadURL}, 2, "--rate must be a finite number"},
		{[]string{"--mock", "-d", "@" + filepath.Join(os.TempDir(), "no-such-fgrl-body.json"), loadURL}, 2, "-d: open"},
		{[]string{"--mock", "-n", "2", "-i", loadURL}, 2, "-i prints one answer"},
		{[]string{"--mock", "--json", loadURL}, 2, "--json prints a load summary"},
		{[]string{"--token", "XBL3.0 x=1;t", "--no-retry", "-n", "3", "http://127.0.0.1:1/"}, 1, "3 of 3 calls failed; the first:"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errs := xblcall(t, append([]string{"call"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, tt.code, tt.want)
			}
		})
	}
}

// TestBarClears: the progress bar draws on a terminal and is wiped when the
// work ends; off a terminal it writes nothing.
func TestBarClears(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	b := newBar(&buf, true, 3, "calls", "calls")
	for range 3 {
		b.add()
	}
	b.finish()
	out := buf.String()
	last := out[strings.LastIndex(strings.TrimRight(out, "\r"), "\r")+1:]
	if !strings.Contains(out, "calls") || strings.TrimSpace(last) != "" {
		t.Errorf("bar output %q: want it drawn, then its line blanked", out)
	}
	var off strings.Builder
	nb := newBar(&off, false, 3, "calls", "calls")
	nb.add()
	nb.finish()
	if off.Len() != 0 {
		t.Errorf("off a terminal the bar wrote %q", off.String())
	}
}
