package analyze

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/limits"
)

var t0 = time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)

// trace builds a hand-made trace.
type trace []Call

// at is a time s seconds into the trace.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func auth(user string) string { return "XBL3.0 x=" + user + ";REDACTED" }

func (t *trace) add(s float64, method, url, user string, status int) *Call {
	*t = append(*t, Call{Time: at(s), Method: method, URL: url, Authorization: auth(user), Status: status})
	return &(*t)[len(*t)-1]
}

func (t trace) report(tb testing.TB) *Report {
	tb.Helper()
	rep, err := Analyze(t, limits.Default(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// rules counts the findings per rule and level ("throttled-calls/fail").
func rules(rep *Report) map[string]int {
	out := map[string]int{}
	for _, f := range rep.Findings {
		out[f.Rule+"/"+f.Level]++
	}
	return out
}

const presenceWrite = "https://userpresence.xboxlive.com/users/xuid(2533274791234567)/devices/current/titles/current"

// TestIgnores429s: six back-to-back 429s with Retry-After 60, five of them
// sent before it passed, fail: a CI gate must not pass a title that
// ignores 429s (it passed it green before).
func TestIgnores429s(t *testing.T) {
	var tr trace
	for i := range 6 {
		tr.add(float64(i*5), "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", "1", 429).RetryAfter = "60"
	}
	rep := tr.report(t)
	if rep.Verdict != Red {
		t.Errorf("verdict %s, want red", rep.Verdict)
	}
	var reasons []string
	for _, f := range rep.Findings {
		if f.Rule == RuleThrottledCalls {
			reasons = append(reasons, f.Level+": "+f.Reason)
		}
	}
	want := []string{
		"fail: 6 429s in a row: the title does not back off after a 429",
		"fail: 5 calls sent before the 429's Retry-After of 1m0s passed",
	}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("throttled-calls findings (-want +got):\n%s", diff)
	}
}

// TestOne429Warns: a single 429, then a wait past its Retry-After, warns.
func TestOne429Warns(t *testing.T) {
	var tr trace
	tr.add(0, "GET", "https://social.xboxlive.com/users/me/people", "1", 429).RetryAfter = "5"
	tr.add(6, "GET", "https://social.xboxlive.com/users/me/people", "1", 200)
	rep := tr.report(t)
	if diff := cmp.Diff(map[string]int{"throttled-calls/warn": 1}, rules(rep)); diff != "" || rep.Verdict != Yellow {
		t.Errorf("verdict %s; findings (-want +got):\n%s", rep.Verdict, diff)
	}
}

// TestOtherHostsNotJudged: a browser's HAR with image GETs from a host no
// rule covers lists them apart; they are never given the fallback rule (red
// before).
func TestOtherHostsNotJudged(t *testing.T) {
	var tr trace
	for i := range 320 {
		tr.add(float64(i)*0.05, "GET", fmt.Sprintf("https://assets.xboxservices.com/assets/%d.png", i), "1", 200)
	}
	tr.add(1, "GET", "https://www.xbox.com/", "", 200)
	rep := tr.report(t)
	want := []HostCount{{Host: "assets.xboxservices.com", Calls: 320}, {Host: "www.xbox.com", Calls: 1}}
	if diff := cmp.Diff(want, rep.NotJudged); diff != "" || rep.Verdict != Green || rep.Judged != 0 {
		t.Errorf("verdict %s, judged %d; not judged (-want +got):\n%s", rep.Verdict, rep.Judged, diff)
	}
}

// TestNotJudgedNeverPassesUnsaid: calls to hosts no rule covers are
// listed apart with their 429s, and 429s there are a not-judged warning
// (not green); a host the rules judge is judged when the limits have
// neither a rule nor a fallback for it: under a rule without limits, its
// 429s in a row fail. Before, limits that covered none of a trace's hosts
// made its 429s in a row green.
func TestNotJudgedNeverPassesUnsaid(t *testing.T) {
	bare, err := limits.Read(strings.NewReader(`{"revision": "bare", "rules": [{"service": "none", "hosts": ["nothing.example"], "burst": 1, "sustain": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var tr trace
	for i := range 3 {
		tr.add(float64(i), "GET", "https://www.xbox.com/x", "1", 429).RetryAfter = "60"
	}
	tr.add(4, "GET", "https://assets.xboxservices.com/a.png", "1", 200)
	rep, err := Analyze(tr, bare, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []HostCount{{Host: "www.xbox.com", Calls: 3, Server429s: 3}, {Host: "assets.xboxservices.com", Calls: 1}}
	if diff := cmp.Diff(want, rep.NotJudged); diff != "" || rep.Verdict != Yellow || rules(rep)["not-judged/warn"] != 1 {
		t.Errorf("verdict %s, findings %v; not judged (-want +got):\n%s", rep.Verdict, rules(rep), diff)
	}
	tr = nil
	for i := range 3 {
		tr.add(float64(i), "GET", "https://profile.xboxlive.com/users/me/profile/settings", "1", 429).RetryAfter = "60"
	}
	rep, err = Analyze(tr, bare, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Red || rep.Judged != 3 || len(rep.Groups) != 1 || rep.Groups[0].Burst != 0 || rules(rep)["call-frequency/warn"] != 0 {
		t.Errorf("a judged host without limits: verdict %s, judged %d, groups %+v, findings %v; want red, judged without limits", rep.Verdict, rep.Judged, rep.Groups, rules(rep))
	}
}

// TestNoTokenApart: calls without Authorization are a no-token finding, not
// one merged user whose counts multiply the violations.
func TestNoTokenApart(t *testing.T) {
	var tr trace
	for u := range 10 {
		for i := range 3 { // 3 per user in 15 s: at presence/write's burst limit of 3, not over
			tr.add(float64(u)*0.1+float64(i)*5, "POST", presenceWrite, fmt.Sprint(100+u), 200)
			tr.add(float64(u)*0.1+float64(i)*5+0.01, "POST", presenceWrite, "", 200).Authorization = ""
		}
	}
	rep := tr.report(t)
	if len(rep.Groups) != 10 {
		t.Fatalf("%d groups, want one per user (10)", len(rep.Groups))
	}
	for _, g := range rep.Groups {
		if g.Calls != 3 || g.PeakBurst != 3 {
			t.Errorf("group %s: %d calls, peak %d; want 3 and 3", g.User, g.Calls, g.PeakBurst)
		}
	}
	if diff := cmp.Diff([]HostCount{{Host: "userpresence.xboxlive.com", Calls: 30}}, rep.NoToken); diff != "" || rules(rep)["no-token/warn"] != 1 {
		t.Errorf("no token (-want +got):\n%s\nfindings %v", diff, rules(rep))
	}
}

// TestTokenless429sJudgedPerHost: 429s in a row, and calls before a 429's
// Retry-After passed, on calls without an Authorization header (as
// Chrome's default, "sanitized", HAR export and HAR scrubbers leave every
// call) fail: throttled-calls judges such calls per host. Before, they
// were never judged: yellow (the no-token warning), exit 0.
func TestTokenless429sJudgedPerHost(t *testing.T) {
	var b strings.Builder
	b.WriteString(harHead)
	for i := range 6 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(strings.Replace(har429(i, ""), `{"name": "Authorization", "value": "XBL3.0 x=2;t"}`, `{"name": "Accept", "value": "*/*"}`, 1))
	}
	b.WriteString("]}}")
	a, _ := New(nil, nil)
	in, err := ReadHAR(strings.NewReader(b.String()), a.Add)
	if err != nil {
		t.Fatal(err)
	}
	a.AddInput(in)
	rep := a.Report()
	want := map[string]int{"throttled-calls/fail": 2, "no-token/warn": 1}
	if diff := cmp.Diff(want, rules(rep)); diff != "" || rep.Verdict != Red {
		t.Errorf("verdict %s; findings (-want +got):\n%s", rep.Verdict, diff)
	}
	if diff := cmp.Diff([]HostCount{{Host: "profile.xboxlive.com", Calls: 6, Server429s: 6}}, rep.NoToken); diff != "" {
		t.Errorf("no token (-want +got):\n%s", diff)
	}
}

// TestPollingRepeatsBatchesBursts: the patterns the trace analyzer reports
// and fgrl missed before.
func TestPollingRepeatsBatchesBursts(t *testing.T) {
	tests := []struct {
		name  string
		build func(*trace)
		want  map[string]int
	}{
		{"achievement polling every 10 s", func(tr *trace) {
			for i := range 60 {
				tr.add(float64(i*10), "GET", "https://achievements.xboxlive.com/users/xuid(2533274791234567)/achievements?titleId=1", "1", 200)
			}
		}, map[string]int{"polling/warn": 1}},
		{"profile batches of one XUID, 10 s apart", func(tr *trace) {
			for i := range 4 {
				tr.add(float64(i*10), "POST", "https://profile.xboxlive.com/users/batch/profile/settings", "1", 200).RequestBody =
					[]byte(fmt.Sprintf(`{"userIds":["%d"],"settings":["Gamertag"]}`, 2533274791234560+i))
			}
		}, map[string]int{"small-batch/warn": 1}},
		{"two batches within 2 s", func(tr *trace) {
			tr.add(0, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", "1", 200).RequestBody = []byte(`{"userIds":["1","2"]}`)
			tr.add(1.5, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", "1", 200).RequestBody = []byte(`{"userIds":["3","4"]}`)
		}, map[string]int{"batch-frequency/warn": 1}},
		{"leaderboard GETs 0.4 s apart", func(tr *trace) {
			for i := range 4 {
				tr.add(float64(i)*0.4, "GET", fmt.Sprintf("https://leaderboards.xboxlive.com/scids/x/leaderboards/l%d", i), "1", 200)
			}
		}, map[string]int{"burst/warn": 1}},
		{"the same call again within 5 s", func(tr *trace) {
			tr.add(0, "GET", "https://social.xboxlive.com/users/me/people", "1", 200)
			tr.add(4, "GET", "https://social.xboxlive.com/users/me/people", "1", 200)
		}, map[string]int{"repeated-calls/warn": 1}},
		{"calm traffic", func(tr *trace) {
			for i := range 10 {
				tr.add(float64(i*7), "GET", fmt.Sprintf("https://social.xboxlive.com/users/xuid(%d)/people", i), "1", 200)
			}
		}, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr trace
			tt.build(&tr)
			if diff := cmp.Diff(tt.want, rules(tr.report(t))); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallFrequency: warnings past 90 % and over a limit, and the
// certification figure of the limits data (presence writes: 30, the
// sustain limit itself, in the 2020 data), which fails.
func TestCallFrequency(t *testing.T) {
	tests := []struct {
		name  string
		url   string
		calls int
		every float64
		want  []string
	}{
		{"presence reads near the burst limit", "https://userpresence.xboxlive.com/users/xuid(1)", 28, 0.5,
			[]string{"warn: 28 calls in 15 s, past 90% of the burst limit of 30"}},
		{"profile over the burst limit", "https://profile.xboxlive.com/users/me/profile/settings", 12, 1,
			[]string{"warn: 12 calls in 15 s, at or over the burst limit of 10: the service answers 429"}},
		{"presence writes at the certification figure", presenceWrite, 30, 9,
			[]string{"fail: 30 calls in 300 s reach the certification figure of 30 (sustain limit 30)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr trace
			for i := range tt.calls {
				tr.add(float64(i)*tt.every, "GET", tt.url, "1", 200).Method = map[bool]string{true: "POST", false: "GET"}[tt.url == presenceWrite]
				tr[len(tr)-1].URL += fmt.Sprintf("?n=%d", i) // not repeats
			}
			var got []string
			for _, f := range tr.report(t).Findings {
				if f.Rule == RuleCallFrequency {
					got = append(got, f.Level+": "+f.Reason)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("call-frequency (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUserNames: a user is named by the gamertag and XUID its own profile
// answer shows, else by the userhash; the evidence gives each call's index
// and time.
func TestUserNames(t *testing.T) {
	var tr trace
	tr.add(0, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", "1", 200).ResponseBody =
		[]byte(`{"profileUsers":[{"id":"2533274791234567","settings":[{"id":"Gamertag","value":"Major Nelson"}]}]}`)
	tr.add(0.5, "GET", "https://social.xboxlive.com/users/me/people", "1", 429).RetryAfter = "30"
	tr.add(1, "GET", "https://social.xboxlive.com/users/me/people?x", "2", 429)
	rep := tr.report(t)
	var got []string
	for _, f := range rep.Findings {
		got = append(got, fmt.Sprintf("%s %s #%d %s", f.User, f.Service, f.Evidence[0].Index, f.Time.Format("15:04:05.000")))
	}
	want := []string{
		"Major Nelson (2533274791234567) social #1 20:00:00.500",
		"userhash 2 social #2 20:00:01.000",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestFindingsBounded: a flood of bursts lists at most maxPerGroupRule per
// group and rule, and still counts them all (ByRule too, as Fails and
// Warnings: it counted the listed ones alone).
func TestFindingsBounded(t *testing.T) {
	var tr trace
	for i := range 3000 {
		tr.add(float64(i)*0.3, "GET", fmt.Sprintf("https://social.xboxlive.com/users/xuid(%d)/people", i), "1", 200)
	}
	rep := tr.report(t)
	listed := rules(rep)["burst/warn"]
	if listed != maxPerGroupRule || rep.ByRule[RuleBurst] <= maxPerGroupRule || rep.Groups[0].Warnings <= listed {
		t.Errorf("burst listed %d, by rule %d, group warnings %d; want %d listed and more counted",
			listed, rep.ByRule[RuleBurst], rep.Groups[0].Warnings, maxPerGroupRule)
	}
}

// TestReadRules: fields left out keep the defaults, nested ones too;
// what is wrong is named with its line and field.
func TestReadRules(t *testing.T) {
	r, err := ReadRules(strings.NewReader(`{"burst": {"size": 5}, "services": ["*.xboxlive.com", "*.example.net"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Burst.Size != 5 || r.Burst.Window != DefaultRules().Burst.Window || r.Repeat.Window != DefaultRules().Repeat.Window || len(r.Batches) != 5 {
		t.Errorf("rules %+v: want the burst's size changed, the rest the defaults", r)
	}
	if !r.Judged("a.example.net") || r.Judged("example.net") || r.Judged("a.example.org") {
		t.Error("services patterns")
	}
	if r, err := ReadRules(strings.NewReader("batches:\n  - {host: h, path: /b, field: f, minUsers: 1}\nrepeat: {window: 1.5s}\n")); err != nil ||
		len(r.Batches) != 1 || time.Duration(r.Repeat.Window) != 1500*time.Millisecond {
		t.Errorf("YAML rules, a window of 1.5s: %+v, %v; want one batch and 1.5s", r, err)
	}
	for in, want := range map[string]string{
		`{"burst": {"size": 1}}`: "rules: line 1: burst.size: want at least 2",
		`{"nearLimit": 2}`:       "rules: line 1: nearLimit: 2: want a fraction in (0, 1]",
		"{\"batches\": [{\"host\": \"h\",\n \"path\": \"(\"}]}":      "rules: line 2: batches[0].path: not a regular expression: missing closing )",
		`{"polling": {"minCalls": 2}}`:                               "rules: line 1: polling.minCalls: want at least 3",
		"{\n\"bogus\": 1}":                                           "rules: line 2: bogus: no such field",
		`{"Burst": {"size": 3}}`:                                     "rules: line 1: Burst: no such field",
		`{"repeat": {"window": "soon"}}`:                             "rules: line 1: repeat.window: not a duration such as 1.5s or 2m",
		`{"repeat": {"window": true}}`:                               "rules: line 1: repeat.window: a duration is a string such as 1.5s or 2m",
		`{"repeat": {"window": 1500}}`:                               "rules: line 1: repeat.window: a duration is a string such as 1.5s or 2m",
		`{"services": ["a/b"]}`:                                      `rules: line 1: services[0]: a/b is not a host pattern`,
		`{"sampleTitleIds": ["86E2", "xyz"]}`:                        `rules: line 1: sampleTitleIds[1]: xyz is not a hexadecimal title ID`,
		`[`:                                                          "rules: line 1: the file ends inside the document",
		`{"burst": {"window": "1.5s", "size": 2}} junk`:              "rules: line 1: not JSON: invalid character",
		`{"batches": [` + strings.Repeat(`{},`, MaxBatches) + `{}]}`: "rules: line 1: batches: more than 100 entries",
	} {
		_, err := ReadRules(strings.NewReader(in))
		var de *datafile.Error
		if !errors.As(err, &de) || err.Error() != want {
			t.Errorf("ReadRules(%.60s) = %v, want %q", in, err, want)
		}
	}
}

func TestSplitURL(t *testing.T) {
	for in, want := range map[string][3]string{
		"https://Profile.XboxLive.com:443/users/me?x=1#f": {"https", "profile.xboxlive.com", "/users/me"},
		"wss://rta.xboxlive.com/connect":                  {"wss", "rta.xboxlive.com", "/connect"},
		"https://u:p@a.b/c":                               {"https", "a.b", "/c"},
		"http://[::1]:80":                                 {"http", "[::1]", "/"},
		"no-scheme/path":                                  {"", "no-scheme", "/path"},
	} {
		s, h, p := splitURL(in)
		if got := [3]string{s, h, p}; got != want {
			t.Errorf("splitURL(%q) = %q, want %q", in, got, want)
		}
	}
}

var update = flag.Bool("update", false, "rewrite testdata/report.json")

// TestReportJSON pins the --json schema (fgrl.analyze/v2): a field renamed,
// dropped or changed in meaning must come with a new Schema.
func TestReportJSON(t *testing.T) {
	var tr trace
	tr.add(0, "GET", "https://profile.xboxlive.com/users/me/profile/settings", "1", 429).RetryAfter = "60"
	tr.add(1, "GET", "https://profile.xboxlive.com/users/me/profile/settings", "1", 429).RetryAfter = "60"
	tr.add(2, "GET", "https://assets.xboxservices.com/a.png", "", 200)
	got, err := json.MarshalIndent(tr.report(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.json")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)+"\n"); diff != "" {
		t.Errorf("the JSON report changed (-want +got); if on purpose, run with -update and bump Schema when a field changes meaning:\n%s", diff)
	}
}
