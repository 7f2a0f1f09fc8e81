package analyze_test

import (
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
)

func attack9bReport(t *testing.T, rules string, n int, every time.Duration) *analyze.Report {
	t.Helper()
	l, err := limits.Read(strings.NewReader(rules))
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze.New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for i := range n {
		a.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * every), Method: "POST",
			URL:           "https://collections.mp.microsoft.com/v9.0/collections/query",
			Authorization: mock.Token("2533274791234567", "1234567890"), Status: 200})
	}
	return a.Report()
}

// analyze (go doc): "call-frequency: spans of 15 s and 300 s past 90 % of
// the burst or sustain limit warn; at or over the limit warn that the
// service answers 429; a 300 s span holding the rule's certification
// figure (limits data: Certification, else 10 x sustain) fails".
// limits.Rule: "Certification is the number of calls per SustainPeriod at
// which a title fails certification; zero means 10 × Sustain", and a
// sustain of 0 is none (ClientLimit: "a sustain of 0 is none"; a rule of
// burst only loads, and the analyzer never judged its sustain).
//
// Commit 48e1870 judges ClientLimit's sustain: for a Store rule with no
// title sustain and a publisher sustain of 20, ClientLimit's sustain is
// 20 while CertificationLimit is 10 × 0 = 0. 19 calls in 270 s, all under
// every limit (the service serves them all), now fail certification:
// "19 calls in 300 s reach the certification figure of 0 (sustain limit
// 20)", a red verdict; the same rule without its publisher sustain passes
// any number of calls.
func TestAttack9bAnalyzerPublisherOnlySustainCertificationZero(t *testing.T) {
	r := attack9bReport(t, `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 10, "sustain": 0, "publisherSustain": 20, "store": true}]}`, 19, 15*time.Second)
	for _, f := range r.Findings {
		if f.Level == analyze.Fail {
			t.Errorf("19 calls in 270 s under a publisher sustain of 20: %s finding %q (verdict %s)", f.Rule, f.Reason, r.Verdict)
		}
	}
	if r.Verdict == analyze.Red {
		t.Errorf("verdict red for 19 calls in 270 s, below every limit of the rule")
	}
}

// held: the Store rule of the commit's own test (sustain 100, publisher
// 20): the group's Sustain is 20 in the report (its JSON "sustainLimit"),
// its certification figure the title's 10 × 100; 18 calls in 300 s (90 %)
// give no call-frequency finding while 19 warn, and none fails.
func TestAttack9bAnalyzerPublisherSustainFigures(t *testing.T) {
	const rules = `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 50, "sustain": 100, "publisherSustain": 20, "store": true}]}`
	freq := func(r *analyze.Report) (warn, fail int) {
		for _, f := range r.Findings {
			if f.Rule == analyze.RuleCallFrequency {
				if f.Level == analyze.Fail {
					fail++
				} else {
					warn++
				}
			}
		}
		return
	}
	r := attack9bReport(t, rules, 18, 16*time.Second)
	if len(r.Groups) != 1 || r.Groups[0].Sustain != 20 || r.Groups[0].Certification != 1000 {
		t.Fatalf("groups %+v", r.Groups)
	}
	if w, f := freq(r); w != 0 || f != 0 {
		t.Errorf("18 calls in 272 s: %d call-frequency warnings, %d failures", w, f)
	}
	r = attack9bReport(t, rules, 19, 15*time.Second)
	if w, f := freq(r); w == 0 || f != 0 {
		t.Errorf("19 calls in 270 s: %d call-frequency warnings, %d failures; want warnings only", w, f)
	}
}
