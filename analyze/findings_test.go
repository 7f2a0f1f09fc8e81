package analyze

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReportKeepsOnlyTheFindingsItLists: a trace with more findings than
// a report lists (MaxFindings) gives a report holding those it lists and
// no more, in their order (failures first, then by time), while it counts
// every one (before: the listed ones were the head of a slice of all of
// them, which the report kept, each with its evidence: the bulk of a long
// trace's report).
func TestReportKeepsOnlyTheFindingsItLists(t *testing.T) {
	a, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for u := range 150 { // 150 users, each 60 bursts of 15 profile reads (burst limit 10) 20 s apart
		auth := "XBL3.0 x=" + strconv.Itoa(u) + ";t"
		for b := range 60 {
			for i := range 15 {
				a.Add(&Call{Time: t0.Add(time.Duration(b)*20*time.Second + time.Duration(u)*time.Millisecond + time.Duration(i)*10*time.Millisecond),
					Method: "GET", URL: "https://profile.xboxlive.com/users/xuid(" + strconv.Itoa(u) + ")/profile/settings", Authorization: auth, Status: 200})
			}
		}
	}
	rep := a.Report()
	if rep.Fails+rep.Warnings <= MaxFindings {
		t.Fatalf("%d findings; the test needs more than %d", rep.Fails+rep.Warnings, MaxFindings)
	}
	if len(rep.Findings) != MaxFindings || cap(rep.Findings) != MaxFindings {
		t.Errorf("the report lists %d findings and holds room for %d; want %d and %d", len(rep.Findings), cap(rep.Findings), MaxFindings, MaxFindings)
	}
	for i := 1; i < len(rep.Findings); i++ {
		p, f := rep.Findings[i-1], rep.Findings[i]
		if (p.Level != Fail && f.Level == Fail) || (p.Level == f.Level && f.Time.Before(p.Time)) {
			t.Fatalf("finding %d (%s at %v) listed after %d (%s at %v)", i, f.Level, f.Time, i-1, p.Level, p.Time)
		}
	}
	n := 0
	for _, c := range rep.ByRule {
		n += c
	}
	if n != rep.Fails+rep.Warnings {
		t.Errorf("ByRule counts %d findings, Fails and Warnings %d", n, rep.Fails+rep.Warnings)
	}
	t.Logf("%d findings (%d failing), %d listed", rep.Fails+rep.Warnings, rep.Fails, len(rep.Findings))
}

// TestFailureNeverLostPastListedWarnings: a title polling profile once a
// second for 800 s reaches the certification figure (300 calls in 300 s)
// after more than maxPerGroupRule near-limit windows of the same rule.
// The failures are listed (the bound is per level) and counted, and the
// report is red in every form (before: the 50 listed were warnings, the
// failures only counted in the group, and the report was yellow, 0
// failures).
func TestFailureNeverLostPastListedWarnings(t *testing.T) {
	a, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 800 {
		a.Add(&Call{Index: i, Time: t0.Add(time.Duration(i) * time.Second), Method: "GET",
			URL: "https://profile.xboxlive.com/users/xuid(2533274791234567)/profile/settings", Authorization: "XBL3.0 x=1;t", Status: 200})
	}
	rep := a.Report()
	if rep.Verdict != Red || rep.Fails == 0 || rep.Fails != rep.Groups[0].Fails || rep.FailsByRule[RuleCallFrequency] != rep.Fails {
		t.Fatalf("verdict %s, %d fails (group %d, by rule %d); want red, the group's fails, all call-frequency",
			rep.Verdict, rep.Fails, rep.Groups[0].Fails, rep.FailsByRule[RuleCallFrequency])
	}
	byLevel := map[string]int{}
	for _, f := range rep.Findings {
		if f.Rule == RuleCallFrequency {
			byLevel[f.Level]++
		}
	}
	if byLevel[Fail] != rep.Fails || byLevel[Warn] != maxPerGroupRule || rep.Findings[0].Level != Fail {
		t.Errorf("call-frequency listed %v, the first %s; want every failure, %d warnings, a failure first", byLevel, rep.Findings[0].Level, maxPerGroupRule)
	}
	n := 0
	for _, c := range rep.ByRule {
		n += c
	}
	if n != rep.Fails+rep.Warnings || n <= len(rep.Findings) {
		t.Errorf("ByRule counts %d findings, Fails and Warnings %d, %d listed; want the same, more than listed", n, rep.Fails+rep.Warnings, len(rep.Findings))
	}
	var junit, sarif, html bytes.Buffer
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteSARIF(&sarif); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(junit.String(), "<failure "); got != rep.Fails {
		t.Errorf("JUnit: %d failures, want %d", got, rep.Fails)
	}
	if !strings.Contains(junit.String(), "counted but not listed") || !strings.Contains(sarif.String(), "counted but not listed") ||
		!strings.Contains(html.String(), `id="unlisted"`) {
		t.Errorf("JUnit, SARIF or HTML does not say that findings were counted but not listed")
	}
}
