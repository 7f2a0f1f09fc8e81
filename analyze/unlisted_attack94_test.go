package analyze

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
)

// attack94Counts is what one format says of a report's failures and warnings.
type attack94Counts struct{ fails, warns int }

var attack94MoreRe = regexp.MustCompile(`(\d+) more findings \((\d+) failing\) counted but not listed`)

// attack94More reads "N more findings (F failing)" from s.
func attack94More(t *testing.T, s string) (n, f int, ok bool) {
	t.Helper()
	m := attack94MoreRe.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	n, _ = strconv.Atoi(m[1])
	f, _ = strconv.Atoi(m[2])
	return n, f, true
}

type attack94JUnit struct {
	Failures int `xml:"failures,attr"`
	Tests    int `xml:"tests,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// attack94JUnitCounts parses rep's JUnit: the findings its cases stand for, and
// the failures attribute of the document.
func attack94JUnitCounts(t *testing.T, rep *Report) (attack94Counts, int, int) {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var doc attack94JUnit
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v", err)
	}
	var c attack94Counts
	failCases, sum := 0, 0
	for _, s := range doc.Suites {
		sum += s.Failures
		for _, tc := range s.Cases {
			switch {
			case tc.Failure != nil:
				failCases++
				if n, f, ok := attack94More(t, tc.Failure.Message); ok {
					c.fails += f
					c.warns += n - f
				} else {
					c.fails++
				}
			case tc.Skipped != nil:
				if n, f, ok := attack94More(t, tc.Skipped.Message); ok {
					c.fails += f
					c.warns += n - f
				} else {
					c.warns++
				}
			}
		}
	}
	if sum != doc.Failures || failCases != doc.Failures {
		t.Errorf("JUnit: failures attribute %d, suites' sum %d, failure cases %d: want the same", doc.Failures, sum, failCases)
	}
	return c, doc.Failures, failCases
}

// attack94SARIFCounts parses rep's SARIF: results by level, an unlisted
// result's properties counting its findings.
func attack94SARIFCounts(t *testing.T, rep *Report) attack94Counts {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteSARIF(&b); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID     string         `json:"ruleId"`
				Level      string         `json:"level"`
				Properties map[string]any `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatalf("SARIF does not parse: %v", err)
	}
	var c attack94Counts
	for _, res := range log.Runs[0].Results {
		if n, ok := res.Properties["findings"].(float64); ok {
			f := int(res.Properties["fails"].(float64))
			c.fails += f
			c.warns += int(n) - f
			if (f > 0) != (res.Level == "error") {
				t.Errorf("SARIF unlisted %s: %d failing, level %s", res.RuleID, f, res.Level)
			}
			continue
		}
		if res.Level == "error" {
			c.fails++
		} else {
			c.warns++
		}
	}
	return c
}

// attack94HTMLCounts counts rep's HTML rows by level and its #unlisted line.
func attack94HTMLCounts(t *testing.T, rep *Report) (attack94Counts, string) {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	c := attack94Counts{fails: strings.Count(h, `<tr class="fail" data-level="fail"`), warns: strings.Count(h, `<tr class="warn" data-level="warn"`)}
	if i := strings.Index(h, `id="unlisted"`); i >= 0 {
		if n, f, ok := attack94More(t, h[i:]); ok {
			c.fails += f
			c.warns += n - f
		}
	}
	return c, h
}

// attack94Agree checks every form of rep counts the same failures and warnings.
func attack94Agree(t *testing.T, rep *Report) {
	t.Helper()
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	want := attack94Counts{rep.Fails, rep.Warnings}
	if back.Fails != rep.Fails || back.Warnings != rep.Warnings || back.Verdict != rep.Verdict {
		t.Errorf("JSON: %d/%d %s; want %d/%d %s", back.Fails, back.Warnings, back.Verdict, rep.Fails, rep.Warnings, rep.Verdict)
	}
	sum, fsum := 0, 0
	for r, n := range rep.ByRule {
		sum += n
		fsum += rep.FailsByRule[r]
	}
	if sum != rep.Fails+rep.Warnings || fsum != rep.Fails {
		t.Errorf("ByRule sums %d (FailsByRule %d); want %d (%d)", sum, fsum, rep.Fails+rep.Warnings, rep.Fails)
	}
	ju, _, _ := attack94JUnitCounts(t, rep)
	if ju != want {
		t.Errorf("JUnit counts %+v; want %+v", ju, want)
	}
	if sa := attack94SARIFCounts(t, rep); sa != want {
		t.Errorf("SARIF counts %+v; want %+v", sa, want)
	}
	if ht, _ := attack94HTMLCounts(t, rep); ht != want {
		t.Errorf("HTML counts %+v; want %+v", ht, want)
	}
	if rep.Fails > 0 && rep.Verdict != Red {
		t.Errorf("verdict %s with %d failures", rep.Verdict, rep.Fails)
	}
	t.Logf("%d fails, %d warnings, %d listed, by rule %v, fails by rule %v", rep.Fails, rep.Warnings, len(rep.Findings), rep.ByRule, rep.FailsByRule)
}

func attack94New(t testing.TB) *Analyzer {
	a, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// attack94Throttled adds n calls of user to url, 2 s apart, 429s in the pattern
// 429 429 200 429 200 (a failing pair and a lone warning every five).
func attack94Throttled(a *Analyzer, user, url string, n, index int) {
	pattern := []int{429, 429, 200, 429, 200}
	for i := range n {
		a.Add(&Call{Index: index + i, Time: t0.Add(time.Duration(i) * 2 * time.Second), Method: "GET", URL: url,
			Authorization: "XBL3.0 x=" + user + ";t", Status: pattern[i%len(pattern)]})
	}
}

// attack94Poll adds n calls of user to url, every step.
func attack94Poll(a *Analyzer, user, url string, n int, step time.Duration, index int) {
	for i := range n {
		a.Add(&Call{Index: index + i, Time: t0.Add(time.Duration(i) * step), Method: "GET", URL: url,
			Authorization: "XBL3.0 x=" + user + ";t", Status: 200})
	}
}

// held: "Fails and Warnings count the findings of each level, listed or
// not" (Report); "both forms add, per rule, one case or result for the
// findings counted but not listed, failing when one of them fails" (doc):
// many users each over 50 failures and 50 warnings of throttled-calls and
// over MaxFindings in all: JSON, JUnit, SARIF and HTML count the same.
func TestAttack94UnlistedManyUsersAgree(t *testing.T) {
	a := attack94New(t)
	idx := 0
	for u := range 80 {
		attack94Throttled(a, "u"+strconv.Itoa(u), "https://profile.xboxlive.com/users/me/profile/settings", 400, idx)
		idx += 400
	}
	rep := a.Report()
	if rep.Fails != 80*80 || rep.ByRule[RuleThrottledCalls] != 2*80*80 {
		t.Errorf("%d fails, %d throttled-calls; want %d, %d", rep.Fails, rep.ByRule[RuleThrottledCalls], 80*80, 2*80*80)
	}
	if len(rep.Findings) != MaxFindings {
		t.Errorf("%d listed; want MaxFindings", len(rep.Findings))
	}
	attack94Agree(t, rep)
}

// held: "A report lists at most 50 findings per user, service, rule and
// level, and 5000 in all, failures first; its verdict and counts are of
// every finding" (xblcall help analyze): one user polling 120 fallback
// hosts and four services at the certification figure, and 6000 hosts
// outside the limits answering 429 (not-judged, no group bound).
func TestAttack94UnlistedOneUserOverMaxFindingsAgree(t *testing.T) {
	a := attack94New(t)
	idx := 0
	for _, u := range []string{
		"https://profile.xboxlive.com/users/me/profile/settings",
		"https://social.xboxlive.com/users/me/people",
		"https://userpresence.xboxlive.com/users/xuid(1)",
		"https://achievements.xboxlive.com/users/xuid(1)/achievements",
	} {
		attack94Poll(a, "one", u, 900, time.Second, idx)
		idx += 900
	}
	for h := range 120 {
		attack94Throttled(a, "one", fmt.Sprintf("https://svc%d.xboxlive.com/x", h), 300, idx)
		idx += 300
	}
	for h := range 6000 {
		a.Add(&Call{Index: idx, Time: t0.Add(time.Duration(h) * time.Millisecond), Method: "GET", URL: fmt.Sprintf("https://h%d.example.com/x", h), Status: 429})
		idx++
	}
	rep := a.Report()
	attack94Agree(t, rep)
	if rep.Verdict != Red {
		t.Errorf("verdict %s", rep.Verdict)
	}
	fails := 0
	for _, f := range rep.Findings {
		if f.Level == Fail {
			fails++
		}
	}
	if fails != min(rep.Fails, MaxFindings) {
		t.Errorf("listed %d failures of %d: failures first should fill the list", fails, rep.Fails)
	}
}

// held: "It lists maxPerGroupRule of them per user and counts the rest,
// unlisted" (eventFindings) with "Fails and Warnings count the findings of
// each level, listed or not": in-game events of many users.
func TestAttack94UnlistedEventsAgree(t *testing.T) {
	a := attack94New(t)
	idx := 0
	for u := range 30 {
		for i := range 3000 {
			a.Add(&Call{Index: idx, Time: t0.Add(time.Duration(i) * 200 * time.Millisecond), InGameEvent: "Pub_1234.Ev", Authorization: "XBL3.0 x=e" + strconv.Itoa(u) + ";t"})
			idx++
		}
	}
	rep := a.Report()
	if rep.ByRule[RuleEventsBurst] <= 30*maxPerGroupRule {
		t.Errorf("events-burst %d: not past the bound", rep.ByRule[RuleEventsBurst])
	}
	attack94Agree(t, rep)
}

// attack94Overflow is a trace of n calls that overflows every bound: users
// polling a service every 100 ms (call-frequency, burst, repeated-calls,
// polling) with 429s (throttled-calls), in groups of 5000 calls.
func attack94Overflow(a *Analyzer, n int) {
	pattern := []int{429, 429, 200, 429, 200}
	per := 5000
	for i := range n {
		u, k := i/per, i%per
		a.Add(&Call{Index: i, Time: t0.Add(time.Duration(k) * 100 * time.Millisecond), Method: "GET",
			URL: "https://profile.xboxlive.com/users/me/profile/settings", Authorization: "XBL3.0 x=u" + strconv.Itoa(u) + ";t", Status: pattern[k%len(pattern)]})
	}
}

// held: "so that those past them, and their evidence, go as the judging
// goes on: a long trace's findings ... are not all held at once" (listed):
// 500k calls overflowing every bound: the report holds at most MaxFindings
// findings, each with at most maxEvidence calls, and the heap after
// Report is bounded; 50k vs 500k grows linearly.
func TestAttack94UnlistedHugeTraceBoundedAndLinear(t *testing.T) {
	racebuild.Skip(t, "heap and time figures of 500,000 calls")
	a := attack94New(t)
	attack94Overflow(a, 500_000)
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	rep := a.Report()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	if len(rep.Findings) > MaxFindings {
		t.Errorf("%d findings listed", len(rep.Findings))
	}
	ev := 0
	for _, f := range rep.Findings {
		ev += len(f.Evidence)
		if len(f.Evidence) > maxEvidence {
			t.Errorf("finding with %d evidence", len(f.Evidence))
		}
	}
	if rep.Fails+rep.Warnings <= MaxFindings || rep.Verdict != Red {
		t.Errorf("%d findings %s; want past MaxFindings, red", rep.Fails+rep.Warnings, rep.Verdict)
	}
	t.Logf("findings %d (%d fails), listed %d, evidence %d, peak-ish heap in use %d MiB -> %d MiB, total alloc in Report %d MiB",
		rep.Fails+rep.Warnings, rep.Fails, len(rep.Findings), ev, m0.HeapInuse>>20, m1.HeapInuse>>20, (m1.TotalAlloc-m0.TotalAlloc)>>20)
	runtime.KeepAlive(a)
	if grow := int64(m1.HeapInuse) - int64(m0.HeapInuse); grow > 256<<20 {
		t.Errorf("heap grew %d MiB over Report", grow>>20)
	}
	attack94Agree(t, rep)

	g := scaletest.Measure(2, func() {
		a := attack94New(t)
		attack94Overflow(a, 50_000)
		a.Report()
	}, func() {
		a := attack94New(t)
		attack94Overflow(a, 500_000)
		a.Report()
	})
	t.Logf("growth %+v ratio %.1f", g, g.Ratio())
	if g.Ratio() > 25 {
		t.Errorf("10x the calls took %.1fx the time", g.Ratio())
	}
}

// "Verdict ... red when any finding fails, listed or not" (doc): a
// failure that is past MaxFindings of failures must still make every
// form red; JUnit has a failure, SARIF an error, HTML the unlisted line
// naming failures.
func TestAttack94UnlistedFailFailsClosedEveryForm(t *testing.T) {
	a := attack94New(t)
	idx := 0
	for u := range 120 {
		attack94Throttled(a, "v"+strconv.Itoa(u), "https://profile.xboxlive.com/users/me/profile/settings", 400, idx)
		idx += 400
	}
	rep := a.Report()
	_, failuresAttr, _ := attack94JUnitCounts(t, rep)
	if rep.Verdict != Red || failuresAttr == 0 {
		t.Errorf("verdict %s, JUnit failures %d", rep.Verdict, failuresAttr)
	}
	if sa := attack94SARIFCounts(t, rep); sa.fails != rep.Fails {
		t.Errorf("SARIF fails %d, want %d", sa.fails, rep.Fails)
	}
	_, h := attack94HTMLCounts(t, rep)
	if !strings.Contains(h, "red") {
		t.Errorf("HTML does not say red")
	}
}

// held: "Text from the traces in a report (hosts, services, users, URLs, a
// trace's name) is escaped and clipped once ... every output, JSON, text,
// HTML, JUnit and SARIF, carries it as it is" (report.go) and "Text from
// the traces is escaped" (WriteHTML): a hostile user and hosts past every
// bound: the counted-but-not-listed entries carry no trace text, and no
// output carries a raw control character, U+202E, or an unescaped <.
func TestAttack94UnlistedHostileNamesEscaped(t *testing.T) {
	evil := "a<b\"]]>\x01\x1b[31m\u202eZ"
	a := attack94New(t)
	idx := 0
	for u := range 3 {
		attack94Throttled(a, evil+strconv.Itoa(u), "https://profile.xboxlive.com/users/me/profile/settings", 400, idx)
		idx += 400
	}
	for h := range 60 {
		a.Add(&Call{Index: idx, Time: t0.Add(time.Duration(h) * time.Second), Method: "GET",
			URL: fmt.Sprintf("https://h%d\u202e<x>.example.com/%s]]>", h, evil), Authorization: "XBL3.0 x=" + evil + ";t", Status: 429})
		idx++
	}
	a.AddInput(Input{Name: "trace" + evil + ".har"})
	rep := a.Report()
	if rep.Fails+rep.Warnings <= len(rep.Findings) {
		t.Fatalf("nothing unlisted")
	}
	var ju, sa, ht bytes.Buffer
	if err := rep.WriteJUnit(&ju); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteSARIF(&sa); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&ht); err != nil {
		t.Fatal(err)
	}
	var doc attack94JUnit
	if err := xml.Unmarshal(ju.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v", err)
	}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if strings.Contains(c.Name, "more findings") && (strings.Contains(c.Name, "<") || strings.Contains(c.Name, "\u202e")) {
				t.Errorf("unlisted case carries trace text: %q", c.Name)
			}
		}
	}
	var sl struct {
		Runs []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sa.Bytes(), &sl); err != nil {
		t.Fatalf("SARIF does not parse: %v", err)
	}
	for _, r := range sl.Runs[0].Results {
		if bytes.Contains(r, []byte("/unlisted")) && (bytes.Contains(r, []byte("a<b")) || bytes.Contains(r, []byte("\\u003cb"))) {
			t.Errorf("unlisted result carries trace text: %s", r)
		}
	}
	for name, out := range map[string]string{"JUnit": ju.String(), "SARIF": sa.String(), "HTML": ht.String()} {
		for _, bad := range []string{"\x01", "\x1b", "\u202e", "a<b", "<x>"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s carries %q raw", name, bad)
			}
		}
	}
	if i := strings.Index(ht.String(), `id="unlisted"`); i < 0 {
		t.Errorf("HTML has no #unlisted line")
	} else {
		t.Logf("HTML: %s", ht.String()[i:i+strings.Index(ht.String()[i:], "</p>")])
	}
}

// "Fails and Warnings count the findings of each level, listed or not"
// and "ByRule counts the findings of each rule, and FailsByRule the
// failing ones among them, listed or not" (Report); "Calls to a judged
// service carried no XBL token ... only their 429s are judged (per host,
// by throttled-calls)" (RuleInfos): 600 tokenless calls to profile,
// 429 429 200 repeated, are 200 failing throttled-calls findings: the
// report must count 200, not the 50 it lists.
func TestAttack94UnlistedTokenlessThrottledCounted(t *testing.T) {
	a := attack94New(t)
	pattern := []int{429, 429, 200}
	for i := range 600 {
		a.Add(&Call{Index: i, Time: t0.Add(time.Duration(i) * 2 * time.Second), Method: "GET",
			URL: "https://profile.xboxlive.com/users/me/profile/settings", Status: pattern[i%3], RetryAfter: "1"})
	}
	rep := a.Report()
	listedFails := 0
	for _, f := range rep.Findings {
		if f.Rule == RuleThrottledCalls && f.Level == Fail {
			listedFails++
		}
	}
	if rep.Fails != 200 || rep.FailsByRule[RuleThrottledCalls] != 200 || rep.ByRule[RuleThrottledCalls] != 200 {
		t.Errorf("%d failing throttled-calls findings (listed %d); report counts Fails %d, FailsByRule %d, ByRule %d; want 200 each",
			200, listedFails, rep.Fails, rep.FailsByRule[RuleThrottledCalls], rep.ByRule[RuleThrottledCalls])
	}
	if n, _ := rep.unlisted(RuleThrottledCalls); n == 0 {
		t.Errorf("JUnit/SARIF/HTML say nothing of the %d failures not listed", 200-listedFails)
	}
}

// Same promises, warnings: 300 tokenless lone 429s to one host are 300
// throttled-calls warnings; the report must count them all.
func TestAttack94UnlistedTokenlessWarningsCounted(t *testing.T) {
	a := attack94New(t)
	for i := range 600 {
		st := 200
		if i%2 == 0 {
			st = 429
		}
		a.Add(&Call{Index: i, Time: t0.Add(time.Duration(i) * 2 * time.Second), Method: "GET",
			URL: "https://social.xboxlive.com/users/me/people", Status: st, RetryAfter: "1"})
	}
	rep := a.Report()
	if rep.ByRule[RuleThrottledCalls] != 300 {
		t.Errorf("300 lone 429s without a token; throttled-calls counted %d (warnings %d in all, %d listed)", rep.ByRule[RuleThrottledCalls], rep.Warnings, len(rep.Findings))
	}
}
