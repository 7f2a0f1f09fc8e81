package analyze_test

// A third outside attack on the trace analyzer (atk-analyze3): the
// throttled-calls rule's Retry-After, and times around it.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// attack3Entry is a HAR entry: a GET of profile settings by userhash uh at t,
// answered status, with the answer's headers hdrs (name, value pairs).
func attack3Entry(t time.Time, uh string, status int, hdrs ...string) string {
	var hs []string
	for i := 0; i+1 < len(hdrs); i += 2 {
		hs = append(hs, fmt.Sprintf(`{"name": %q, "value": %q}`, hdrs[i], hdrs[i+1]))
	}
	return fmt.Sprintf(`{"startedDateTime": %q, "time": 50, "request": {"method": "GET",
		"url": "https://profile.xboxlive.com/users/me/profile/settings",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=%s;tok"}]},
		"response": {"status": %d, "headers": [%s]}}`, t.Format(time.RFC3339Nano), uh, status, strings.Join(hs, ", "))
}

func attack3HAR(entries ...string) string {
	return `{"log": {"version": "1.2", "creator": {"name": "atk", "version": "1"}, "entries": [` + strings.Join(entries, ",\n") + `]}}`
}

// attack3AnalyzeHAR reads har whole (or fails the test) and reports on it.
func attack3AnalyzeHAR(t *testing.T, har string) *analyze.Report {
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
	rep := a.Report()
	return rep
}

// TestAttack3RetryAfterDateNotTruncated: analyze/doc.go:38-39 "throttled-calls:
// a single 429 warns; two or more 429s in a row fail, and so does any call
// sent before a 429's Retry-After had passed." Retry-After may be an
// HTTP-date (RFC 9110 §10.2.3: "Retry-After = HTTP-date / delay-seconds").
// A 429 at 20:00:00.900 says Retry-After: 20:00:02 GMT; the call at
// 20:00:01.950 is sent before that date passed. The analyzer keeps the
// wait in whole seconds (int32(d / time.Second): 1.1 s reads 1 s), so
// the early call is judged after the wait: yellow, not red.
func TestAttack3RetryAfterDateNotTruncated(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 900_000_000, time.UTC)
	date := time.Date(2026, 3, 1, 20, 0, 2, 0, time.UTC).Format(http.TimeFormat)
	// control: the same wait in seconds (2 s from 20:00:00.900) is judged red.
	control := attack3HAR(
		attack3Entry(t0, "1", 429, "Retry-After", "2"),
		attack3Entry(t0.Add(1050*time.Millisecond), "1", 200),
	)
	if rep := attack3AnalyzeHAR(t, control); rep.Verdict != analyze.Red {
		t.Fatalf("control (Retry-After: 2, retried 1.05 s later): verdict %s, want red", rep.Verdict)
	}
	hostile := attack3HAR(
		attack3Entry(t0, "1", 429, "Retry-After", date),
		attack3Entry(t0.Add(1050*time.Millisecond), "1", 200), // 20:00:01.950 < 20:00:02
	)
	if rep := attack3AnalyzeHAR(t, hostile); rep.Verdict != analyze.Red {
		t.Errorf("a call at 20:00:01.950 after a 429 saying Retry-After: %s: verdict %s, want red (sent before the Retry-After passed)", date, rep.Verdict)
	}
}

// TestAttack3RetryAfterBefore1970NotEverything: analyze/doc.go:38-39 (a call
// sent before a 429's Retry-After had passed fails) and harentry.go's
// ReadHAR doc: start times from 1678 to 2262 are read. A 429 in 1969 with
// Retry-After: 1, then a call a minute later (long after it passed): one
// 429 warns, yellow. The rule adds the wait as r.at + min(ra,
// MaxInt64-r.at), which overflows for a time before 1970 (negative
// UnixNano): every later call is "sent before the Retry-After passed".
func TestAttack3RetryAfterBefore1970NotEverything(t *testing.T) {
	for _, year := range []int{2026, 1969} {
		t0 := time.Date(year, 12, 31, 23, 0, 0, 0, time.UTC)
		har := attack3HAR(
			attack3Entry(t0, "1", 429, "Retry-After", "1"),
			attack3Entry(t0.Add(time.Minute), "1", 200),
		)
		if rep := attack3AnalyzeHAR(t, har); rep.Verdict != analyze.Yellow {
			for _, f := range rep.Findings {
				t.Logf("%d: %s %s %s", year, f.Rule, f.Level, f.Reason)
			}
			t.Errorf("%d: one 429 (Retry-After: 1), the next call a minute later: verdict %s, want yellow", year, rep.Verdict)
		}
	}
}

// held: TestAttack3LeapSecondAndOddTimesNeverPass: analyze/doc.go "incomplete
// ... when a trace ... held entries that could not be read as calls". A
// startedDateTime of 23:59:60 (a leap second, which time.Parse refuses),
// year 0000, no zone, or no seconds, on one of two 429s in a row: the
// entry is a problem and the trace never passes.
func TestAttack3LeapSecondAndOddTimesNeverPass(t *testing.T) {
	t0 := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	ok := attack3Entry(t0, "1", 429)
	for _, odd := range []string{"2026-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "2026-12-31T23:59:59", "2026-12-31T23:59Z", "2026-12-31T23:59:59+24:00", "2026-12-31T23:59:59.5-23:59"} {
		e := strings.Replace(attack3Entry(t0.Add(time.Second), "1", 429), t0.Add(time.Second).Format(time.RFC3339Nano), odd, 1)
		rep := attack3AnalyzeHAR(t, attack3HAR(ok, e))
		if rep.Verdict == analyze.Green || rep.Verdict == analyze.Yellow {
			t.Errorf("second 429 at %q: verdict %s, want red or incomplete", odd, rep.Verdict)
		}
	}
}

// TestAttack3RetryAfterSecondsFromTheAnswer: analyze/doc.go:38-39 ("any call
// sent before a 429's Retry-After had passed" fails). RFC 9110 §10.2.3:
// delay-seconds is "the number of seconds to delay after the response is
// received". A 429 whose answer took 3 s to arrive (the HAR entry's
// "time": 3000 ms, so received at t0+3 s) says Retry-After: 2: the client
// may call again from t0+5 s. A call at t0+4 s is sent before the
// Retry-After passed; the analyzer counts the wait from the request's
// start (t0+2 s) and judges it after: yellow.
func TestAttack3RetryAfterSecondsFromTheAnswer(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	slow := strings.Replace(attack3Entry(t0, "1", 429, "Retry-After", "2"), `"time": 50`, `"time": 3000`, 1)
	har := attack3HAR(slow, attack3Entry(t0.Add(4*time.Second), "1", 200))
	if rep := attack3AnalyzeHAR(t, har); rep.Verdict != analyze.Red {
		t.Errorf("a 429 received at t0+3s with Retry-After: 2, the next call at t0+4s: verdict %s, want red", rep.Verdict)
	}
}
