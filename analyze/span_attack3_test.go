package analyze_test

import (
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// TestAttack3CertificationSpanAnywhere: analyze/doc.go:33-36 "call-frequency:
// ... a 300 s span holding the rule's certification figure (limits data:
// Certification, else 10 x sustain) fails." The 2020 table's profile rule
// (limits/data/2020.json: burst 10, sustain 30, certification 300). One
// user makes 28 calls in the first 3 s, then 300 calls between 290 s and
// 310 s: the 300 s span from 290 s holds 300 calls, the certification
// figure. The analyzer's spans start at a call and the next one only after
// a span past 90 % of the limit ends (judge.go windows): [0 s, 300 s)
// holds 178 calls, [300 s, 600 s) 150, and the 300 in one span are never
// counted together: yellow. Without the 28 early calls it is red.
func TestAttack3CertificationSpanAnywhere(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	var late []string
	for i := range 300 {
		late = append(late, attack3Entry(t0.Add(290*time.Second+time.Duration(i)*20*time.Second/300), "1", 200))
	}
	if rep := attack3AnalyzeHAR(t, attack3HAR(late...)); rep.Verdict != analyze.Red {
		t.Fatalf("control: 300 profile calls within 20 s: verdict %s, want red", rep.Verdict)
	}
	var early []string
	for i := range 28 {
		early = append(early, attack3Entry(t0.Add(time.Duration(i)*100*time.Millisecond), "1", 200))
	}
	rep := attack3AnalyzeHAR(t, attack3HAR(append(early, late...)...))
	if rep.Verdict != analyze.Red {
		for _, f := range rep.Findings {
			if f.Rule == analyze.RuleCallFrequency {
				t.Logf("%s %s: %s", f.Rule, f.Level, f.Reason)
			}
		}
		t.Errorf("28 calls at 0-3 s, then 300 calls at 290-310 s (a 300 s span from 290 s holds 300): verdict %s, want red", rep.Verdict)
	}
}
