package analyze_test

// An outside attack on the trace analyzer: HAR traces whose 429s in a row
// (red: "two or more 429s in a row fail") the analyzer does not judge red,
// though it reads them whole.

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// anAtkEntry is one HAR entry: a GET of the user's profile settings by user
// uh, at started, answered status.
func anAtkEntry(started, host, uh string, status int) string {
	return anAtkEntryAuth(started, host, []string{"XBL3.0 x=" + uh + ";tok"}, status)
}

func anAtkEntryAuth(started, host string, auths []string, status int) string {
	var hs []string
	for _, a := range auths {
		hs = append(hs, fmt.Sprintf(`{"name": "Authorization", "value": %q}`, a))
	}
	return fmt.Sprintf(`{"startedDateTime": %q, "time": 80, "request": {"method": "GET", "url": "https://%s/users/me/profile/settings",
		"headers": [%s]}, "response": {"status": %d, "headers": []}}`, started, host, strings.Join(hs, ", "), status)
}

func anAtkHAR(entries ...string) string {
	return `{"log": {"version": "1.2", "creator": {"name": "atk", "version": "1"}, "entries": [` + strings.Join(entries, ",\n") + `]}}`
}

// anAtkAnalyze reads har and reports on it.
func anAtkAnalyze(t *testing.T, har string) (*analyze.Report, analyze.Input) {
	t.Helper()
	a, err := analyze.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := analyze.ReadHAR(strings.NewReader(har), a.Add)
	if err != nil {
		t.Fatalf("ReadHAR: %v", err)
	}
	in.Name = "atk.har"
	a.AddInput(in)
	return a.Report(), in
}

func anAtkPasses(v string) bool { return v == analyze.Green || v == analyze.Yellow }

// TestAttackFarFutureTimeHidesRedAmong429s: a call's time is kept as Unix
// nanoseconds (time.Time.UnixNano), which "is undefined if the Unix time in
// nanoseconds cannot be represented by an int64 (a date before the year 1678
// or after 2262)". A 200 recorded 2^64 ns (about 584 years) plus half a
// second after the first of two 429s wraps around to fall between them:
// sorted by time, the 429s are no longer "in a row". The trace is read
// whole; its two 429s in a row (in trace order and in time order: the 200
// is centuries later) are red, and the analyzer says yellow.
func TestAttackFarFutureTimeHidesRedAmong429s(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	wrap := t0.Add(500 * time.Millisecond)
	for range 4 { // 2^64 ns = 4 * 2^62 ns (time.Duration holds at most 2^63-1)
		wrap = wrap.Add(time.Duration(1 << 62))
	}
	const host = "profile.xboxlive.com"
	control := anAtkHAR(
		anAtkEntry(t0.Format(time.RFC3339Nano), host, "1", 429),
		anAtkEntry(t0.Add(time.Second).Format(time.RFC3339Nano), host, "1", 429),
		anAtkEntry(t0.Add(5*time.Second).Format(time.RFC3339Nano), host, "1", 200),
	)
	if rep, _ := anAtkAnalyze(t, control); rep.Verdict != analyze.Red {
		t.Fatalf("control: two 429s in a row then a 200: verdict %s, want red", rep.Verdict)
	}
	hostile := anAtkHAR(
		anAtkEntry(t0.Format(time.RFC3339Nano), host, "1", 429),
		anAtkEntry(t0.Add(time.Second).Format(time.RFC3339Nano), host, "1", 429),
		anAtkEntry(wrap.Format(time.RFC3339Nano), host, "1", 200), // year 2610
	)
	rep, in := anAtkAnalyze(t, hostile)
	t.Logf("200 at %s; verdict %s, complete %v, fails %d, warnings %d", wrap.Format(time.RFC3339Nano), rep.Verdict, in.Complete(), rep.Fails, rep.Warnings)
	if anAtkPasses(rep.Verdict) {
		t.Errorf("two 429s in a row, then a 200 in the year %d: verdict %s (a passing one), want red or incomplete: the time wrapped around int64 nanoseconds and sorted the 200 between the 429s",
			wrap.Year(), rep.Verdict)
	}
}

// TestAttackCaseFoldedEntriesAfterTheEntries: ReadHAR's doc: a trace "holding
// anything after the entries that could hold calls other readers read (a
// second "entries" in the log or a second "log", which JSON.parse and
// encoding/json take in place of the first ...) yields the calls before and
// Input.Stop". encoding/json matches object keys to struct fields without
// regard to case and keeps the last: "Entries" after "entries" (or "LOG"
// after "log") is what encoding/json reads in place of the first. The
// analyzer skips it: the trace is green and whole, while a Go program
// reading the HAR with encoding/json sees two 429s in a row.
func TestAttackCaseFoldedEntriesAfterTheEntries(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	ok := anAtkEntry(t0.Format(time.RFC3339), "profile.xboxlive.com", "1", 200)
	red := anAtkEntry(t0.Add(time.Second).Format(time.RFC3339), "profile.xboxlive.com", "1", 429) + ",\n" +
		anAtkEntry(t0.Add(2*time.Second).Format(time.RFC3339), "profile.xboxlive.com", "1", 429)
	for name, har := range map[string]string{
		"Entries": `{"log": {"version": "1.2", "entries": [` + ok + `], "Entries": [` + red + `]}}`,
		"LOG":     `{"log": {"version": "1.2", "entries": [` + ok + `]}, "LOG": {"version": "1.2", "entries": [` + red + `]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			// What encoding/json reads.
			var doc struct {
				Log struct {
					Entries []struct {
						Response struct{ Status int }
					}
				}
			}
			if err := json.Unmarshal([]byte(har), &doc); err != nil {
				t.Fatal(err)
			}
			n429 := 0
			for _, e := range doc.Log.Entries {
				if e.Response.Status == 429 {
					n429++
				}
			}
			if n429 != 2 {
				t.Fatalf("encoding/json read %d 429s, the attack expects 2", n429)
			}
			rep, in := anAtkAnalyze(t, har)
			t.Logf("analyzer: verdict %s, complete %v, calls %d", rep.Verdict, in.Complete(), rep.Calls)
			if anAtkPasses(rep.Verdict) {
				t.Errorf("encoding/json reads two 429s in a row from %q; the analyzer's verdict is %s, read whole %v: want incomplete (or red)",
					name, rep.Verdict, in.Complete())
			}
		})
	}
}

// TestAttackTrailingDotHost: "profile.xboxlive.com." is the same host as
// "profile.xboxlive.com" (an absolute name; clients send it as given, and
// the service answers it). Its two 429s in a row are not judged: "Hosts the
// limits name, and other hosts matching Rules.Services (*.xboxlive.com by
// default ...) are judged". Held: judged red, as the host without its dot.
func TestAttackTrailingDotHost(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for _, host := range []string{"profile.xboxlive.com", "profile.xboxlive.com.", "PROFILE.XBOXLIVE.COM.:443"} {
		har := anAtkHAR(
			anAtkEntry(t0.Format(time.RFC3339), host, "1", 429),
			anAtkEntry(t0.Add(time.Second).Format(time.RFC3339), host, "1", 429),
		)
		rep, _ := anAtkAnalyze(t, har)
		t.Logf("%s: verdict %s, judged %d, notJudged %v", host, rep.Verdict, rep.Judged, rep.NotJudged)
		if rep.Verdict != analyze.Red && rep.Verdict != analyze.Incomplete {
			t.Errorf("two 429s in a row from %q: verdict %s, want red", host, rep.Verdict)
		}
	}
}

// TestAttackTwoAuthorizationHeaders: a request holding two Authorization
// headers. ReadHAR's doc: a field "named twice (readers differ on which one
// counts)" makes the entry a problem. Readers differ on which of two
// headers counts (net/http's Header.Get takes the first; the analyzer the
// last). Two 429s in a row to user 1 (the first header of both requests)
// are split between users 1 and 2: two single 429s, yellow, read whole.
func TestAttackTwoAuthorizationHeaders(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	const host = "profile.xboxlive.com"
	har := anAtkHAR(
		anAtkEntryAuth(t0.Format(time.RFC3339), host, []string{"XBL3.0 x=1;tok"}, 429),
		anAtkEntryAuth(t0.Add(time.Second).Format(time.RFC3339), host, []string{"XBL3.0 x=1;tok", "XBL3.0 x=2;tok"}, 429),
	)
	rep, in := anAtkAnalyze(t, har)
	t.Logf("verdict %s, complete %v, problems %v", rep.Verdict, in.Complete(), in.Problems)
	if anAtkPasses(rep.Verdict) {
		t.Errorf("two 429s in a row for the user the first Authorization names: verdict %s, read whole %v; want red, or incomplete (readers differ on which header counts)",
			rep.Verdict, in.Complete())
	}
}

// TestAttackZeroAndOddTimesHold: entries out of order, at one instant, in
// other time zones, and times that are no RFC 3339 never pass a red trace.
func TestAttackZeroAndOddTimesHold(t *testing.T) {
	const host = "profile.xboxlive.com"
	cases := map[string]string{
		"out of order, zones": anAtkHAR(
			anAtkEntry("2026-03-01T21:00:01+01:00", host, "1", 429),
			anAtkEntry("2026-03-01T20:00:05Z", host, "1", 200),
			anAtkEntry("2026-03-01T15:00:00-05:00", host, "1", 429)),
		"one instant": anAtkHAR(
			anAtkEntry("2026-03-01T20:00:00Z", host, "1", 429),
			anAtkEntry("2026-03-01T20:00:00Z", host, "1", 429)),
		"lower-case t and z": anAtkHAR(
			anAtkEntry("2026-03-01T20:00:00Z", host, "1", 200),
			anAtkEntry("2026-03-01t20:00:01z", host, "1", 429),
			anAtkEntry("2026-03-01t20:00:02z", host, "1", 429)),
		"space for T": anAtkHAR(
			anAtkEntry("2026-03-01T20:00:00Z", host, "1", 200),
			anAtkEntry("2026-03-01 20:00:01Z", host, "1", 429),
			anAtkEntry("2026-03-01 20:00:02Z", host, "1", 429)),
		"no zone": anAtkHAR(
			anAtkEntry("2026-03-01T20:00:00Z", host, "1", 200),
			anAtkEntry("2026-03-01T20:00:01", host, "1", 429),
			anAtkEntry("2026-03-01T20:00:02", host, "1", 429)),
		"year 0": anAtkHAR(
			anAtkEntry("2026-03-01T20:00:00Z", host, "1", 200),
			anAtkEntry("0000-01-01T00:00:00Z", host, "1", 429),
			anAtkEntry("0000-01-01T00:00:01Z", host, "1", 429)),
	}
	for name, har := range cases {
		rep, in := anAtkAnalyze(t, har)
		if anAtkPasses(rep.Verdict) {
			t.Errorf("%s: verdict %s (complete %v, problems %v), want red or incomplete", name, rep.Verdict, in.Complete(), in.Problems)
		}
	}
}

// TestAttackEmptyAndDegenerateHARsNeverPass: a HAR with no entries, with only
// entries that are no call, and cut or doubled documents never pass.
func TestAttackEmptyAndDegenerateHARsNeverPass(t *testing.T) {
	e := anAtkEntry("2026-03-01T20:00:00Z", "profile.xboxlive.com", "1", 200)
	cases := map[string]string{
		"bom":            "\ufeff" + anAtkHAR(e),
		"cut mid entry":  anAtkHAR(e, e)[:len(anAtkHAR(e, e))-40],
		"two documents":  anAtkHAR(e) + anAtkHAR(anAtkEntry("2026-03-01T20:00:01Z", "profile.xboxlive.com", "1", 429)),
		"NaN time":       strings.Replace(anAtkHAR(e), `"time": 80`, `"time": NaN`, 1),
		"status string":  strings.Replace(anAtkHAR(e), `"status": 200`, `"status": "429"`, 1),
		"status 0429":    strings.Replace(anAtkHAR(e), `"status": 200`, `"status": 0429`, 1),
		"utf-16":         "\xff\xfe" + strings.Join(strings.Split(anAtkHAR(e), ""), "\x00"),
		"entries object": `{"log": {"entries": {"0": ` + e + `}}}`,
	}
	for name, har := range cases {
		a, err := analyze.New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		in, err := analyze.ReadHAR(strings.NewReader(har), a.Add)
		if err != nil {
			continue // no trace: exit 2
		}
		a.AddInput(in)
		rep := a.Report()
		if in.Complete() {
			t.Errorf("%s: read whole: verdict %s (calls %d)", name, rep.Verdict, in.Calls)
		}
	}
}

// TestFoldedEntryFieldIsAProblem: beyond the attack's "Entries", a field
// of an entry or of a header object named in another case (which
// encoding/json reads as the field, the last counting) makes the entry a
// problem, so the trace is not read whole.
func TestFoldedEntryFieldIsAProblem(t *testing.T) {
	e := anAtkEntry("2026-03-01T20:00:00Z", "profile.xboxlive.com", "1", 200)
	for name, har := range map[string]string{
		"StartedDateTime": anAtkHAR(strings.Replace(e, `"time": 80`, `"time": 80, "StartedDateTime": "2026-03-01T21:00:00Z"`, 1)),
		"Response":        anAtkHAR(strings.Replace(e, `"time": 80`, `"time": 80, "Response": {"status": 429}`, 1)),
		"Status":          anAtkHAR(strings.Replace(e, `"status": 200`, `"status": 200, "Status": 429`, 1)),
		"header Value":    anAtkHAR(strings.Replace(e, `"value": "XBL3.0 x=1;tok"`, `"value": "XBL3.0 x=1;tok", "Value": "XBL3.0 x=2;tok"`, 1)),
	} {
		_, in := anAtkAnalyze(t, har)
		if in.Complete() || in.ProblemCount != 1 {
			t.Errorf("%s: complete %v, problems %v; want the entry a problem", name, in.Complete(), in.Problems)
		}
	}
	if _, in := anAtkAnalyze(t, anAtkHAR(e)); !in.Complete() {
		t.Errorf("the entry as it is: problems %v", in.Problems)
	}
}

// TestFarFutureTimeInEveryReader: the analyzer's data files (and so their
// in-game events) take a time outside the years 1678 to 2262 as no time:
// the call is a problem, as in a HAR.
func TestFarFutureTimeInEveryReader(t *testing.T) {
	b, err := os.ReadFile("../examples/xlta-data.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"2610-09-20T19:34:34.000Z", "1600-01-01T00:00:00.000Z"} {
		csv := strings.Replace(string(b), `"2026-03-01T20:00:00.000Z"`, `"`+when+`"`, 1)
		in, err := analyze.ReadData(strings.NewReader(csv), func(*analyze.Call) {})
		if err != nil || in.Complete() {
			t.Errorf("a data file's call at %s: %v, complete %v, problems %v; want a problem", when, err, in.Complete(), in.Problems)
		}
	}
}
