package analyze_test

import (
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
)

// analyze (doc.go): "call-frequency: spans of 15 s and 300 s past 90 % of
// the burst or sustain limit warn; at or over the limit warn that the
// service answers 429". limits.Rule: "PublisherSustain, when non-zero, is
// a second sustain limit counted per user + publisher"; ClientLimit: "what
// one user of one title may send" (the commit made the transport and the
// planner use it; the analyzer, which xblcall analyze and --what-if's
// verdicts are, still reads Sustain alone). 30 calls of one user in 300 s
// to a Store rule of sustain 100 and publisher sustain 20: the service
// answers 10 of them 429 (the mock does), and the analyzer finds nothing.
func TestAttack9AnalyzerSeesPublisherSustain(t *testing.T) {
	l, err := limits.Read(strings.NewReader(`{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 50, "sustain": 100, "publisherSustain": 20, "store": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze.New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for i := range 30 {
		a.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 9 * time.Second), Method: "POST",
			URL:           "https://collections.mp.microsoft.com/v9.0/collections/query",
			Authorization: mock.Token("2533274791234567", "1234567890"), Status: 200})
	}
	r := a.Report()
	var freq int
	for _, f := range r.Findings {
		if f.Rule == analyze.RuleCallFrequency {
			freq++
		}
	}
	if freq == 0 {
		t.Errorf("30 calls in 261 s against a publisher sustain of 20: no call-frequency finding (verdict %s)", r.Verdict)
	}
}
