package analyze_test

// A fourth outside attack on the trace analyzer (atk-analyze4): the
// Retry-After kept in milliseconds and counted from the answer's arrival
// (raWait, rec.answer, raEnd, raText), as commit 6dce909 changed it.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// attack4Entry4 is a HAR entry: a GET of profile settings by userhash 1 started
// at t, whose answer (status, headers hdrs as name, value pairs) ended ms
// milliseconds later (the entry's "time").
func attack4Entry4(t time.Time, ms float64, status int, hdrs ...string) string {
	var hs []string
	for i := 0; i+1 < len(hdrs); i += 2 {
		hs = append(hs, fmt.Sprintf(`{"name": %q, "value": %q}`, hdrs[i], hdrs[i+1]))
	}
	return fmt.Sprintf(`{"startedDateTime": %q, "time": %v, "request": {"method": "GET",
		"url": "https://profile.xboxlive.com/users/me/profile/settings",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=1;tok"}]},
		"response": {"status": %d, "headers": [%s]}}`, t.Format(time.RFC3339Nano), ms, status, strings.Join(hs, ", "))
}

// attack4Report4 reads the HAR of entries whole (or fails the test) and reports.
func attack4Report4(t *testing.T, entries ...string) *analyze.Report {
	t.Helper()
	har := `{"log": {"version": "1.2", "creator": {"name": "atk", "version": "1"}, "entries": [` + strings.Join(entries, ",\n") + `]}}`
	a, err := analyze.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := analyze.ReadHAR(strings.NewReader(har), a.Add)
	if err != nil {
		t.Fatalf("ReadHAR: %v", err)
	}
	if !in.Complete() {
		t.Fatalf("trace not read whole: %+v", in)
	}
	in.Name = "atk.har"
	a.AddInput(in)
	return a.Report()
}

// attack4Throttled4 returns the throttled-calls findings of rep at level.
func attack4Throttled4(rep *analyze.Report, level string) []analyze.Finding {
	var out []analyze.Finding
	for _, f := range rep.Findings {
		if f.Rule == analyze.RuleThrottledCalls && f.Level == level {
			out = append(out, f)
		}
	}
	return out
}

// TestAttack4RetryAfterDatePassedBeforeTheAnswer: analyze/doc.go:40-45
// "throttled-calls: ... fails ... any call sent before a 429's Retry-After
// had passed, to the millisecond. As RFC 9110 §10.2.3 says, a Retry-After
// in seconds counts from when the answer was received". RFC 9110 §10.2.3:
// "Retry-After = HTTP-date / delay-seconds"; an HTTP-date is an instant,
// which passes at that instant whenever the answer arrived. A 429 whose
// request started 20:00:00 and whose answer (a slow download) ended at
// 20:00:03 says Retry-After: 20:00:01 GMT; the next call is sent at
// 20:00:02, after the date passed. raWait counts a date from the answer's
// arrival and clamps a date already past to 0 there (ParseRetryAfter's
// max(t.Sub(now), 0)), so the wait ends at 20:00:03: the call at 20:00:02
// fails, a false red (exit 1 in CI). Before 6dce909 the date counted
// from the request's start: yellow. Also a HAR "time" past 24.8 days
// (1e12 ms) makes every call of the next 24.8 days "sent before the
// Retry-After" of a date one second after the request.
func TestAttack4RetryAfterDatePassedBeforeTheAnswer(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	date := t0.Add(time.Second).Format(http.TimeFormat) // 20:00:01 GMT
	for _, c := range []struct {
		name  string
		ms    float64       // the 429's answer ended this long after its start
		after time.Duration // the next call, after the 429's start
	}{
		{"answer ended 3 s after the start, next call at 2 s", 3000, 2 * time.Second},
		{"answer \"time\" 1e12 ms, next call an hour later", 1e12, time.Hour},
	} {
		rep := attack4Report4(t,
			attack4Entry4(t0, c.ms, 429, "Retry-After", date),
			attack4Entry4(t0.Add(c.after), 50, 200),
		)
		if fails := attack4Throttled4(rep, analyze.Fail); len(fails) > 0 {
			t.Errorf("%s: Retry-After: %s passed before the next call, yet %q (verdict %s); want no failure",
				c.name, date, fails[0].Reason, rep.Verdict)
		}
	}
}

// TestAttack4RetryAfterQuotedAfterALongAnswer: analyzer.go's rec.answer
// ("ra less answer is the Retry-After the answer gave, which the findings
// quote") and raText ("writes a 429's Retry-After, as a wait from its
// answer"). A 429 whose answer took 100 s (a HAR "time" of 100000) says
// Retry-After: 5. rec.answer saturates at 65,535 ms, so the finding quotes
// "Retry-After 39.465s", a figure the answer never gave.
func TestAttack4RetryAfterQuotedAfterALongAnswer(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	rep := attack4Report4(t, attack4Entry4(t0, 100_000, 429, "Retry-After", "5"))
	warns := attack4Throttled4(rep, analyze.Warn)
	if len(warns) != 1 {
		t.Fatalf("a single 429: findings %+v, want one throttled-calls warning", rep.Findings)
	}
	if !strings.Contains(warns[0].Reason, "Retry-After 5s") {
		t.Errorf("a 429 saying Retry-After: 5 after a 100 s answer: the finding says %q; want it to quote Retry-After 5s", warns[0].Reason)
	}
}

// held: TestAttack4RetryAfterHeldProbes: analyze/doc.go:40-45. (a) A 429 whose
// HTTP-date is before the request: the wait ends as the answer arrives, a
// call after that passes. (b) delay-seconds count from the answer: Retry-After: 2
// after an answer of 3 s, a call at 4.5 s fails. (c) A negative HAR
// "time" is no answer time: Retry-After: 1 counts from the start, a call
// at 1.5 s passes. (d) Retry-After past 24 hours (2^31 seconds) reads as
// 24 hours: a call 23 h later fails, one 25 h later does not.
func TestAttack4RetryAfterHeldProbes(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	past := t0.Add(-time.Hour).Format(http.TimeFormat)
	if rep := attack4Report4(t, attack4Entry4(t0, 1000, 429, "Retry-After", past), attack4Entry4(t0.Add(1500*time.Millisecond), 50, 200)); len(attack4Throttled4(rep, analyze.Fail)) > 0 {
		t.Errorf("(a) date before the request, call after the answer: %+v", rep.Findings)
	}
	if rep := attack4Report4(t, attack4Entry4(t0, 3000, 429, "Retry-After", "2"), attack4Entry4(t0.Add(4500*time.Millisecond), 50, 200)); len(attack4Throttled4(rep, analyze.Fail)) != 1 {
		t.Errorf("(b) Retry-After: 2 after a 3 s answer, call at 4.5 s: findings %+v, want a failure", rep.Findings)
	}
	if rep := attack4Report4(t, attack4Entry4(t0, -5000, 429, "Retry-After", "1"), attack4Entry4(t0.Add(1500*time.Millisecond), 50, 200)); len(attack4Throttled4(rep, analyze.Fail)) > 0 {
		t.Errorf("(c) negative time, Retry-After: 1, call at 1.5 s: %+v", rep.Findings)
	}
	if rep := attack4Report4(t, attack4Entry4(t0, 50, 429, "Retry-After", "2147483648"), attack4Entry4(t0.Add(23*time.Hour), 50, 200)); len(attack4Throttled4(rep, analyze.Fail)) != 1 {
		t.Errorf("(d) Retry-After 2^31 s, call 23 h later: findings %+v, want a failure", rep.Findings)
	}
	if rep := attack4Report4(t, attack4Entry4(t0, 50, 429, "Retry-After", "2147483648"), attack4Entry4(t0.Add(25*time.Hour), 50, 200)); len(attack4Throttled4(rep, analyze.Fail)) > 0 {
		t.Errorf("(d) Retry-After 2^31 s (24 h at most), call 25 h later: %+v", rep.Findings)
	}
}

// TestAttack4RetryAfterCallSentWhileThe429WasInFlight: analyze/doc.go:40-45
// (a call sent before a 429's Retry-After had passed fails; delay-seconds
// count from when the answer was received). RFC 9110 §10.2.3: Retry-After
// says "how long the user agent ought to wait before making a follow-up
// request"; a call sent before the 429 arrived follows nothing. A 429
// whose answer took 10 s (a HAR "time" of 10000) says Retry-After: 1;
// another call, on another connection or HTTP/2 stream, starts 5 s after
// the 429's request, 5 s before its answer. Since 6dce909 the wait ends
// 11 s after the 429's start, so the call in flight alongside it fails:
// red, where before it the trace was yellow. Retry-After: 0 (no wait at
// all) fails the same way.
func TestAttack4RetryAfterCallSentWhileThe429WasInFlight(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for _, ra := range []string{"1", "0"} {
		rep := attack4Report4(t,
			attack4Entry4(t0, 10_000, 429, "Retry-After", ra),
			attack4Entry4(t0.Add(5*time.Second), 50, 200),
		)
		if fails := attack4Throttled4(rep, analyze.Fail); len(fails) > 0 {
			t.Errorf("Retry-After: %s, a call sent 5 s before the 429 arrived: %q (verdict %s); want no failure", ra, fails[0].Reason, rep.Verdict)
		}
	}
}
