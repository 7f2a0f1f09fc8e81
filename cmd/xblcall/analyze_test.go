package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/replay"
)

// recordHAR replays the worked example with client through 'xblcall
// simulate --har' and returns the trace: the project's own fixture.
func recordHAR(t *testing.T, client string, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), client+".har")
	if code, _, errs := xblcall(t, append([]string{"simulate", "--client", client, "--har", path}, args...)...); code != 0 {
		t.Fatalf("simulate --har: exit %d: %s", code, errs)
	}
	return path
}

// exampleLimits writes the worked example's limits to a file for --limits.
func exampleLimits(t *testing.T) string {
	t.Helper()
	_, l, err := replay.WorkedExample(limits.Default())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(struct {
		Revision string        `json:"revision"`
		Fallback *limits.Rule  `json:"fallback,omitempty"`
		Rules    []limits.Rule `json:"rules"`
	}{l.Revision, l.Fallback, l.Rules})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "limits.json")
	os.WriteFile(name, b, 0o644)
	return name
}

// TestAnalyzeRecordedTrace: the worked example through a plain client is
// red (it keeps calling through 429s), with the example's known figures;
// through the fgrl transport it is not red and holds no 429.
func TestAnalyzeRecordedTrace(t *testing.T) {
	t.Parallel()
	limitsFile := exampleLimits(t)
	trace := recordHAR(t, "naive")
	b, _ := os.ReadFile(trace)
	if tok := mock.Token(replay.ExampleUser, "1234567890"); bytes.Contains(b, []byte(tok[strings.Index(tok, ";")+1:])) {
		t.Fatal("the HAR holds a token")
	}
	code, out, errs := xblcall(t, "analyze", "--json", "--limits", limitsFile, trace)
	var rep analyze.Report
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || !strings.Contains(errs, "verdict red") {
		t.Fatalf("exit %d: %.300s %s", code, out, errs)
	}
	g := rep.Groups[0]
	// The worked example: 148 calls, 53 answered 429, the busiest 15 s
	// holds 36 calls, the 300 s all 148.
	got := fmt.Sprint(g.Service, g.Calls, g.Server429s, g.PeakBurst, g.PeakSustain, g.Burst, g.Sustain, g.Certification, rep.Schema)
	if want := fmt.Sprint("example", 148, 53, 36, 148, 30, 100, 1000, analyze.Schema); got != want || rep.Verdict != analyze.Red {
		t.Errorf("group %s, verdict %s; want %s, red", got, rep.Verdict, want)
	}
	if rep.ByRule[analyze.RuleThrottledCalls] == 0 {
		t.Errorf("no throttled-calls finding: %v", rep.ByRule)
	}
	clean := recordHAR(t, "fgrl")
	code, out, _ = xblcall(t, "analyze", "--json", "--limits", limitsFile, clean)
	if json.Unmarshal([]byte(out), &rep) != nil || code != 0 || rep.Verdict == analyze.Red || rep.Groups[0].Server429s != 0 {
		t.Errorf("fgrl trace: exit %d, verdict %s", code, rep.Verdict)
	}
}

// harOf writes calls as a HAR file.
func harOf(t *testing.T, calls []map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "entries": calls}})
	name := filepath.Join(t.TempDir(), "t.har")
	os.WriteFile(name, b, 0o644)
	return name
}

func entry(at float64, url, user string, status int, retryAfter string) map[string]any {
	hdr := []map[string]string{}
	if user != "" {
		hdr = append(hdr, map[string]string{"name": "Authorization", "value": "XBL3.0 x=" + user + ";t"})
	}
	return map[string]any{
		"startedDateTime": fmt.Sprintf("2026-03-01T20:%02d:%06.3fZ", int(at)/60, float64(int(at)%60)+at-float64(int(at))),
		"request":         map[string]any{"method": "GET", "url": url, "headers": hdr},
		"response":        map[string]any{"status": status, "headers": []map[string]string{{"name": "Retry-After", "value": retryAfter}}},
	}
}

// TestAnalyzeExitCodes: 0 green or yellow, 1 red, 2 usage or input error.
func TestAnalyzeExitCodes(t *testing.T) {
	t.Parallel()
	green := harOf(t, []map[string]any{entry(0, "https://social.xboxlive.com/users/me/people", "1", 200, "")})
	yellow := harOf(t, []map[string]any{entry(0, "https://social.xboxlive.com/users/me/people", "1", 429, "5"),
		entry(10, "https://social.xboxlive.com/users/me/people", "1", 200, "")})
	var calls []map[string]any
	for i := range 6 {
		calls = append(calls, entry(float64(i*5), "https://profile.xboxlive.com/users/me/profile/settings", "1", 429, "60"))
	}
	red := harOf(t, calls)
	empty := harOf(t, []map[string]any{})
	notTrace := filepath.Join(t.TempDir(), "x.har")
	os.WriteFile(notTrace, []byte("hello"), 0o644)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{green}, 0, "verdict GREEN"},
		{[]string{yellow}, 0, "verdict YELLOW: 0 failures, 1 warnings"},
		{[]string{red}, 1, "verdict RED: 2 failures"},
		{nil, 2, "need a trace"},
		{[]string{empty}, 2, "the traces hold no calls"},
		{[]string{notTrace}, 2, "not a trace: HAR"},
		{[]string{filepath.Join(t.TempDir(), "none.har")}, 2, "no such file"},
		{[]string{"--rules", notTrace, green}, 2, "rules"},
		{[]string{"--html", filepath.Join(t.TempDir(), "no", "dir", "r.html"), green}, 2, "--html"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errs := xblcall(t, append([]string{"analyze"}, tt.args...)...)
			if code != tt.code || !strings.Contains(out+errs, tt.want) {
				t.Errorf("exit %d; want %d and %q in\n%s%s", code, tt.code, tt.want, out, errs)
			}
		})
	}
}

// TestAnalyzeInputs: a directory of a HAR and a SAZ, and standard input,
// are read; a bad entry and a file cut short make the verdict incomplete
// (exit 2), naming the entry and the byte.
func TestAnalyzeInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := entry(0, "https://social.xboxlive.com/users/me/people", "1", 200, "")
	clean, _ := json.Marshal(map[string]any{"log": map[string]any{"entries": []any{good}}})
	b, _ := json.Marshal(map[string]any{"log": map[string]any{"entries": []any{good, map[string]any{"startedDateTime": "never"}}}})
	bad := bytes.LastIndex(b, []byte(`{"startedDateTime":"never"}`))
	os.WriteFile(filepath.Join(dir, "a.har"), b, 0o644)
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	for name, content := range map[string]string{
		"raw/1_c.txt": "GET https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: XBL3.0 x=2;t\r\n\r\n",
		"raw/1_s.txt": "HTTP/1.1 200 OK\r\n\r\n",
		"raw/1_m.xml": `<Session><SessionTimers ClientBeginRequest="2026-03-01T20:00:01Z"/></Session>`,
	} {
		w, _ := zw.Create(name)
		w.Write([]byte(content))
	}
	zw.Close()
	os.WriteFile(filepath.Join(dir, "b.saz"), z.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	code, out, errs := xblcall(t, "analyze", dir)
	for _, want := range []string{fmt.Sprintf("a.har: 1 calls, 1 entries skipped (the first: entry 1 at byte %d: startedDateTime", bad), "b.saz: 1 calls",
		"judged 2 calls in 2", "verdict INCOMPLETE", fmt.Sprintf("a.har: entry 1 at byte %d: startedDateTime (5 bytes, not shown) is not an ISO 8601 time", bad)} {
		if code != 2 || !strings.Contains(out+errs, want) {
			t.Errorf("exit %d, want 2 and %q in:\n%s%s", code, want, out, errs)
		}
	}
	cut := filepath.Join(dir, "cut.har")
	os.WriteFile(cut, b[:len(b)-30], 0o644)
	if code, out, _ := xblcall(t, "analyze", cut); code != 2 ||
		!strings.Contains(out, fmt.Sprintf("INCOMPLETE: read in part: entry 1 at byte %d: the file ends inside entry 1", len(b)-30)) {
		t.Errorf("cut file: exit %d, want 2\n%s", code, out)
	}
	for name, tc := range map[string]struct {
		data []byte
		code int
	}{"HAR": {clean, 0}, "SAZ": {z.Bytes(), 0}, "HAR with a bad entry": {b, 2}} {
		stdin := filepath.Join(t.TempDir(), "in")
		os.WriteFile(stdin, tc.data, 0o644)
		f, _ := os.Open(stdin)
		var o, e bytes.Buffer
		code := run(t.Context(), []string{"analyze", "-"}, &o, &e, withTestEnv(t), withStdin(f))
		f.Close()
		if code != tc.code || !strings.Contains(o.String(), "standard input: 1 calls") {
			t.Errorf("%s on stdin: exit %d, want %d\n%s%s", name, code, tc.code, o.String(), e.String())
		}
	}
}

// TestAnalyzeTextFits: the table and findings fit 100 columns whatever the
// trace's names, and text from the trace is escaped; a userhash that is not
// one (escape codes in its place) is not kept at all.
func TestAnalyzeTextFits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	var calls []map[string]any
	for i := range 30 {
		calls = append(calls, entry(float64(i)*0.2, "https://"+long[:60]+".xboxlive.com/"+long, "2533274791234567", 429, "9"),
			entry(float64(i)*0.2, "https://"+long[:60]+".xboxlive.com/\x1b[2J"+long, "\x1b[2J\x1b]0;pwned\x07"+long, 200, ""))
	}
	code, out, errs := xblcall(t, "analyze", harOf(t, calls))
	if code != 1 || strings.ContainsAny(out+errs, "\x1b\x07") {
		t.Errorf("exit %d or raw control characters:\n%q", code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 100 {
			t.Errorf("a line of %d columns: %q", len(line), line)
		}
	}
}

// endlessInput is standard input that never ends: head, then fill forever.
type endlessInput struct {
	head []byte
	fill byte
}

func (e *endlessInput) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	return len(p), nil
}

// TestAnalyzeEndlessStdin: an endless .saz on standard input stops at the
// byte limit with a clear error (exit 2) instead of filling the disk (an
// endless HAR: analyze.TestReadTooLarge).
func TestAnalyzeEndlessStdin(t *testing.T) {
	defer maxStdinSAZ.Store(maxStdinSAZ.Load())
	maxStdinSAZ.Store(1 << 20)
	var o, e bytes.Buffer
	code := run(t.Context(), []string{"analyze", "-"}, &o, &e, withTestEnv(t), withStdin(&endlessInput{head: []byte("PK\x03\x04")}))
	if code != 2 || !strings.Contains(e.String(), "a .saz on standard input over 1 MiB") {
		t.Errorf("endless .saz: exit %d\n%s%s", code, o.String(), e.String())
	}
}

// TestSimulateAnalyzeAgree: the README's demo as written, simulate --har
// then analyze --trace-limits, judges the worked example by its own rule
// (burst 30, sustain 100, the limits the HAR names), and every call the
// mock served is a 200.
func TestSimulateAnalyzeAgree(t *testing.T) {
	t.Parallel()
	trace := recordHAR(t, "naive")
	code, out, errs := xblcall(t, "analyze", "--json", "--trace-limits", trace)
	var rep analyze.Report
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || !strings.Contains(errs, "judging by the limits the traces name (2020+example)") {
		t.Fatalf("exit %d: %.300s %s", code, out, errs)
	}
	g := rep.Groups[0]
	if got := fmt.Sprint(g.Service, g.Calls, g.Server429s, g.Burst, g.Sustain); got != fmt.Sprint("example", 148, 53, 30, 100) {
		t.Errorf("group %s, want the worked example's rule and figures", got)
	}
	f, _ := os.Open(trace)
	defer f.Close()
	statuses := map[int]int{}
	analyze.ReadHAR(f, func(c *analyze.Call) { statuses[c.Status]++ })
	if d := cmp.Diff(map[int]int{200: 95, 429: 53}, statuses); d != "" {
		t.Errorf("statuses in the HAR (-want +got)\n%s", d)
	}
}

// TestAnalyzeWhatIf: the naive client's trace of the worked example,
// replayed through fgrl: its 53 429s become none, the verdict goes from red
// to yellow (its bursts stay), the exit status stays the trace's (1), and a
// note says that the replay does not explain those 429s (its host has no
// rule, so neither fgrl nor the mock limits it);
// JSON carries the same; examples/ignored429s.har goes from red to green,
// and the what-if says that it does so only by refusing 85 % of the calls
// (before, no line said so); a CI format is refused with --what-if.
func TestAnalyzeWhatIf(t *testing.T) {
	t.Parallel()
	code, out, errs := xblcall(t, "analyze", "--what-if", "../../examples/naive.har")
	for _, want := range []string{"429s: 53 in the traces, 0 with fgrl (53 avoided)", "verdict: red in the traces (4 failing", "yellow with fgrl (0 failing"} {
		if !strings.Contains(out, want) {
			t.Errorf("--what-if printed no %q:\n%s", want, out)
		}
	}
	// Its host has no rule in the 2020 table: the mock throttles none of
	// its calls and fgrl holds none, so the note says that the replay does
	// not explain the trace's 429s.
	if !strings.Contains(out, "calls with fgrl: 148 served (100 %), 0 of them delayed (0 %); 0 refused locally (0 %)") ||
		strings.Count(out, "note:") != 1 || !strings.Contains(out, "note: host:example.xboxlive.com: the traces' 429s came below the limits 2020") {
		t.Errorf("--what-if examples/naive.har: want every call served and the one note of unreproduced 429s:\n%s", out)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (the trace is red): %s", code, errs)
	}
	code, out, _ = xblcall(t, "analyze", "--what-if", "--format", "json", "../../examples/naive.har")
	var res struct {
		Before, After struct{ Verdict string }
		Services      []struct {
			Service             string
			Trace429s, Fgrl429s int
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Before.Verdict != "red" || res.After.Verdict != "yellow" ||
		len(res.Services) != 1 || res.Services[0].Trace429s != 53 || res.Services[0].Fgrl429s != 0 {
		t.Errorf("--what-if --format json: exit %d, %v, %+v", code, err, res)
	}
	code, out, _ = xblcall(t, "analyze", "--what-if", "../../examples/ignored429s.har")
	for _, want := range []string{"429s: 369 in the traces, 0 with fgrl (369 avoided)", "green with fgrl (0 failing, 0 warnings)",
		"calls with fgrl: 65 served (15 %), 56 of them delayed (13 %); 365 refused locally (85 %)",
		"note: green with fgrl only by refusing 85 % of the calls locally"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("--what-if examples/ignored429s.har: exit %d, no %q\n%s", code, want, out)
		}
	}
	if code, _, errs := xblcall(t, "analyze", "--what-if", "--format", "junit", "../../examples/naive.har"); code != 2 || !strings.Contains(errs, "--what-if writes text or json") {
		t.Errorf("--what-if --format junit: exit %d, %q; want 2", code, errs)
	}
}

// TestAnalyzeUserAgent: a trace of a title's own service (40 calls in 4 s
// with the title's User-Agent) is not judged by default, and is with
// --user-agent naming it: the fallback rule's call-frequency finding.
func TestAnalyzeUserAgent(t *testing.T) {
	t.Parallel()
	var entries []string
	for i := range 40 {
		entries = append(entries, fmt.Sprintf(`{"startedDateTime":"2026-03-01T20:00:%02d.%dZ","request":{"method":"GET","url":"https://api.mygame.example.com/matches",
		"headers":[{"name":"User-Agent","value":"MyGame/1.0"},{"name":"Authorization","value":"XBL3.0 x=1;t"}]},"response":{"status":200}}`, i/10, i%10))
	}
	file := filepath.Join(t.TempDir(), "own.har")
	os.WriteFile(file, []byte(`{"log":{"entries":[`+strings.Join(entries, ",")+`]}}`), 0o600)
	_, out, _ := xblcall(t, "analyze", "--format", "json", file)
	var plain, own struct{ Judged int }
	json.Unmarshal([]byte(out), &plain)
	_, out, _ = xblcall(t, "analyze", "--format", "json", "--user-agent", "MyGame/1.0", file)
	json.Unmarshal([]byte(out), &own)
	if plain.Judged != 0 || own.Judged != 40 {
		t.Errorf("judged %d calls without --user-agent and %d with it; want 0 and 40", plain.Judged, own.Judged)
	}
}

// TestTraceLimitsOnlyWhenAsked: a HAR naming its own limits (log._fgrlLimits,
// as xblcall simulate writes them), limits with no rule for its hosts and
// no fallback, is judged by the 2020 table all the same: its five 429s in
// a row fail (exit 1) in every format, alone and beside a plain red trace.
// Only --trace-limits judges by the limits a trace names, and then every
// trace must name the same (exit 2 otherwise); the hosts the rules judge
// stay judged under them without limits, so the 429s in a row still fail.
// Before, any HAR chose the limits it (and every trace beside it) was
// judged by: every call "not judged", green, exit 0.
func TestTraceLimitsOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	named := `"_fgrlLimits": {"revision": "2020", "source": "x", "rules": [{"service": "none", "hosts": ["nothing.example"], "burst": 1, "sustain": 1}]}, `
	red := redHAR("")
	evil := filepath.Join(dir, "evil.har")
	os.WriteFile(evil, []byte(strings.Replace(red, `{"log": {`, `{"log": {`+named, 1)), 0o644)
	plain := filepath.Join(dir, "plain.har")
	os.WriteFile(plain, []byte(red), 0o644)
	tests := []struct {
		name    string
		args    []string
		code    int
		message string // in standard error
	}{
		{"plain", []string{plain}, 1, ""},
		{"text", []string{evil}, 1, ""},
		{"junit", []string{"--format", "junit", evil}, 1, ""},
		{"sarif", []string{"--format", "sarif", evil}, 1, ""},
		{"beside a plain red trace", []string{plain, evil}, 1, ""},
		{"--trace-limits", []string{"--trace-limits", evil}, 1, "judging by the limits the traces name (2020)"},
		{"--trace-limits, a trace naming none", []string{"--trace-limits", evil, plain}, 2, "plain.har names no limits"},
		{"--trace-limits with --revision", []string{"--trace-limits", "--revision", "2022", evil}, 2, "without --limits and --revision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := xblcall(t, append([]string{"analyze"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errs, tt.message) || tt.message == "" && strings.Contains(errs, "judging by") {
				t.Errorf("exit %d, want %d, standard error holding %q\n%.300s\n%s", code, tt.code, tt.message, out, errs)
			}
		})
	}
}

// TestAnalyzeOutput: -o writes the report to a file and the exit status
// stays the verdict's (1 for a red trace), where a pipe to tee gives tee's
// 0; a path that cannot be written is exit 2 before any trace is read.
func TestAnalyzeOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, format, file string
		code               int
		want               string // the file begins so
	}{
		{"sarif", "sarif", "analyze.sarif", 1, "{\n  \"$schema\": \"https://docs.oasis-open.org/sarif/"},
		{"junit", "junit", "analyze.xml", 1, "<?xml"},
		{"text", "text", "analyze.txt", 1, "examples/naive.har: 148 calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			code, out, errs := xblcall(t, "analyze", "--format", tc.format, "-o", path, "../../examples/naive.har")
			b, err := os.ReadFile(path)
			if code != tc.code || out != "" || err != nil || !strings.HasPrefix(strings.ReplaceAll(string(b), "../../", ""), tc.want) {
				t.Errorf("exit %d (want %d), stdout %q, %v; the file begins %q, want %q\n%s", code, tc.code, clip(out), err, clip(string(b)), tc.want, errs)
			}
		})
	}
	if code, _, errs := xblcall(t, "analyze", "-o", filepath.Join(dir, "no", "such", "dir"), "../../examples/naive.har"); code != 2 || !strings.Contains(errs, "--output: ") {
		t.Errorf("an unwritable -o: exit %d, %q; want 2", code, errs)
	}
}

// TestAnalyzeWhatIfUnreproduced429s: ten presence reads 23 s apart, each
// answered 429 (an outside attack's trace): under the table's limits fgrl
// holds none of them and the mock throttles none, so the what-if came out
// "green with fgrl" with no word that the replay does not explain the
// trace's 429s. It now names the service in a note and in JSON; the
// ignored429s example's, which fgrl's pacing explains, get no such note.
func TestAnalyzeWhatIfUnreproduced429s(t *testing.T) {
	t.Parallel()
	var entries []string
	for i := range 10 {
		at := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC).Add(time.Duration(i) * 23 * time.Second)
		entries = append(entries, fmt.Sprintf(`{"startedDateTime":%q,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/xuid(2533274791234567)",
		"headers":[{"name":"Authorization","value":"XBL3.0 x=111;t"}]},"response":{"status":429,"headers":[{"name":"Retry-After","value":"300"}]}}`, at.Format(time.RFC3339)))
	}
	file := filepath.Join(t.TempDir(), "below.har")
	if err := os.WriteFile(file, []byte(`{"log":{"entries":[`+strings.Join(entries, ",")+`]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, errs := xblcall(t, "analyze", "--what-if", file)
	if !strings.Contains(out, "note: presence/read: the traces' 429s came below the limits") {
		t.Errorf("--what-if of 429s below the limits: no note naming presence/read:\n%s%s", out, errs)
	}
	_, out, _ = xblcall(t, "analyze", "--what-if", "--format", "json", file)
	var res struct {
		Unreproduced []string `json:"unreproduced429s"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Unreproduced) != 1 || res.Unreproduced[0] != "presence/read" {
		t.Errorf("--what-if --format json: %v, unreproduced429s %q; want [presence/read]", err, res.Unreproduced)
	}
	if _, out, _ = xblcall(t, "analyze", "--what-if", "--format", "json", "../../examples/ignored429s.har"); strings.Contains(out, "unreproduced429s") {
		t.Errorf("examples/ignored429s.har, whose 429s fgrl's pacing explains, is said unreproduced:\n%.500s", out)
	}
}
