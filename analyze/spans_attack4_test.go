package analyze_test

// A fourth outside attack on the trace analyzer (atk-analyze4): the spans of
// call-frequency and burst (judge.go windows, two pointers since 6dce909).

import (
	"slices"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// held: TestAttack4SpansHeldProbes: analyze/doc.go:33-39 "call-frequency: ...
// a 300 s span holding the rule's certification figure ... fails ... of
// overlapping spans the one holding the most calls is reported", and the
// service's windows run "from a start, up to but not including
// start+period" (judge.go peak). The 2020 table's profile rule: sustain
// 30, certification 300. (a) 300 calls at one instant, listed in the
// trace in reverse time order with others: red. (b) 299 calls at t0 and
// the 300th at exactly t0+300 s: the 300th is outside the span, not red
// (yellow); 1 ms earlier, red. (c) Ten bursts of 200 calls, each 100 s
// from the last, overlapping pairwise (each 300 s span holds 600): the
// densest kept is at the figure: red.
func TestAttack4SpansHeldProbes(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	var a []string
	for i := range 300 {
		a = append(a, attack4Entry4(t0.Add(time.Hour), 10, 200))
		a = append(a, attack4Entry4(t0.Add(time.Duration(i)*time.Minute), 10, 200))
	}
	slices.Reverse(a)
	if rep := attack4Report4(t, a...); rep.Verdict != analyze.Red {
		t.Errorf("(a) 300 calls at one instant, unsorted: verdict %s, want red", rep.Verdict)
	}
	for _, c := range []struct {
		last time.Duration
		want string
	}{{300 * time.Second, analyze.Yellow}, {300*time.Second - time.Millisecond, analyze.Red}} {
		var b []string
		for range 299 {
			b = append(b, attack4Entry4(t0, 10, 200))
		}
		b = append(b, attack4Entry4(t0.Add(c.last), 10, 200))
		if rep := attack4Report4(t, b...); rep.Verdict != c.want {
			t.Errorf("(b) 299 calls at t0, one at +%v: verdict %s, want %s", c.last, rep.Verdict, c.want)
		}
	}
	var d []string
	for k := range 10 {
		for i := range 200 {
			d = append(d, attack4Entry4(t0.Add(time.Duration(k)*100*time.Second+time.Duration(i)*10*time.Millisecond), 10, 200))
		}
	}
	rep := attack4Report4(t, d...)
	if rep.Verdict != analyze.Red {
		t.Errorf("(c) overlapping bursts, 600 calls in a 300 s span: verdict %s, want red", rep.Verdict)
	}
}
