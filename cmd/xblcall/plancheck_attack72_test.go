package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// held: xblcall help limits plan: "For each scope the planner counts the
// calls in those windows at their busiest (windows start at a request, as
// the service's do)", the windows "each --margin longer"; "Exit status 1
// when a scope's calls are more than the transport sends at once".
// Counted by hand for social (10 / 15 s, 30 / 300 s), margin 1 s, two
// calls every 10 s beside one every 7 s (every timer ticks at 0): a 16 s
// window from 0 holds 2x2 + 3 = 7, a 301 s one 2x31 + 43 = 105; a tick's 3
// calls fit 10 / 3 = 3 ticks a 16 s window (5.334 s) and 30 / 3 = 10 a
// 301 s one (30.1 s); a plain client 5 s and 30 s. The busiest windows
// are also found by brute force over the ticks of 20 minutes.
func TestAttack72PlanMixedIntervalsByHand(t *testing.T) {
	code, out, errs := xblcall(t, "limits", "plan", "--json", "social:10s:2", "social:7s")
	if code != 1 {
		t.Fatalf("exit %d %q %q; want 1 (over)", code, out, errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("--json: %v %q", err, out)
	}
	r := rows[0]
	want := map[string]any{"scope": "social", "perTick": 3.0, "burstPeak": 7.0, "sustainPeak": 105.0, "burst": 10.0, "sustain": 30.0,
		"burstLeft": 3.0, "sustainLeft": -75.0, "fastest": "30.1s", "plainFastest": "30s", "batch": false, "safe": false}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("%s: %v; want %v (row %v)", k, r[k], v, r)
		}
	}
	if _, ok := r["every"]; ok {
		t.Errorf("every %v for a scope of two intervals; want it absent", r["every"])
	}
	// brute force: every tick of both timers over 20 minutes
	var ts []time.Duration
	for at := time.Duration(0); at < 20*time.Minute; at += 10 * time.Second {
		ts = append(ts, at, at)
	}
	for at := time.Duration(0); at < 20*time.Minute; at += 7 * time.Second {
		ts = append(ts, at)
	}
	busiest := func(w time.Duration) int {
		best := 0
		for _, s := range ts {
			n := 0
			for _, u := range ts {
				if u >= s && u < s+w {
					n++
				}
			}
			best = max(best, n)
		}
		return best
	}
	if b, s := busiest(16*time.Second), busiest(301*time.Second); float64(b) != r["burstPeak"] || float64(s) != r["sustainPeak"] {
		t.Errorf("brute force: busiest 16 s %d, 301 s %d; the plan says %v, %v", b, s, r["burstPeak"], r["sustainPeak"])
	}
}

// held: xblcall help check: "An --expect's HOST matches without regard to
// case or a trailing dot (a scheme or port is refused: the mock records
// neither), and its PATH prefix the path as served, percent-decoded and
// without regard to case"; README.md: "exit 1 on failure". After one GET
// of a user's presence, every spelling of an expectation of none of them
// fails (exit 1): the method in lower case, the host in upper case with a
// trailing dot, the prefix percent-encoded; one that cannot name a host
// (a tab, a port) is a usage error (2), never a pass.
func TestAttack72CheckExpectZeroSpellings(t *testing.T) {
	t.Parallel()
	base, _ := startMock(t, "--log-format", "off")
	req, err := http.NewRequest("GET", base+"/users/xuid%282533274791234567%29", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "userpresence.xboxlive.com"
	req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
	req.Header.Set("x-xbl-contract-version", "3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, x := range []string{
		"get userpresence.xboxlive.com=0",
		"GET USERPRESENCE.XBOXLIVE.COM.=0",
		"GET userpresence.xboxlive.com/users/xuid(2533274791234567)=0",
		"GET userpresence.xboxlive.com/USERS/%78uid%28=0",
		"GET  userpresence.xboxlive.com/users=0",
	} {
		if code, out, errs := xblcall(t, "check", "--mock", base, "--expect", x); code != 1 {
			t.Errorf("check --expect %q after such a call: exit %d %q %q; want 1", x, code, out, clip(errs))
		}
	}
	for _, x := range []string{"GET\tuserpresence.xboxlive.com=0", "userpresence.xboxlive.com:443=0", "GET userpresence.xboxlive.com=-1", "GET userpresence.xboxlive.com=1e0"} {
		if code, out, errs := xblcall(t, "check", "--mock", base, "--expect", x); code != 2 {
			t.Errorf("check --expect %q: exit %d %q %q; want 2", x, code, out, clip(errs))
		}
	}
	// --json says the same, and names the hostile expectation escaped
	code, out, _ := xblcall(t, "check", "--mock", base, "--json", "--expect", "GET a\x1b[2Jb\xff=1")
	var v struct {
		OK       bool     `json:"ok"`
		Failures []string `json:"failures"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &v) != nil || v.OK || len(v.Failures) != 1 || strings.ContainsRune(out, 0x1b) {
		t.Errorf("check --json of a hostile host: exit %d %q; want 1 and JSON naming one failure, no raw escape", code, out)
	}
}
