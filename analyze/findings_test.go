package analyze

import (
	"strconv"
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
