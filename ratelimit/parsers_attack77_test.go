package ratelimit

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

var attack77Now = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// BREAK. ParseRetryAfter godoc: "It returns false for a missing, negative or
// malformed value". A digit run that overflows uint64 followed by garbage is
// malformed, but strconv.ParseUint reports ErrRange before it reaches the
// garbage, and the overflow is read as "a larger value", giving (limit, true).
func TestAttack77RetryAfterOverflowThenGarbageAccepted(t *testing.T) {
	for _, v := range []string{
		"99999999999999999999x",
		"184467440737095516160 seconds",
		"99999999999999999999999-5",
		"99999999999999999999, 5",
	} {
		if d, ok := ParseRetryAfter(v, attack77Now, time.Hour); ok {
			t.Errorf("ParseRetryAfter(%q) = %v, true; want false (malformed)", v, d)
		}
	}
}

// Helper 191's TestAtkRetryAfterLeapSecondDate is judged: an HTTP-date at second 60 is refused as net/http.ParseTime refuses it (Retry-After is read as net/http reads it).

// held: ParseRetryAfter: "false for a missing, negative or malformed value;
// the result is never negative and never above limit (a larger value is read
// as limit)"; HTTP-date forms (IMF-fixdate, RFC 850 two-digit year, asctime).
func TestAttack77RetryAfterHeld(t *testing.T) {
	const limit = time.Hour
	for _, tt := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"   ", 0, false},
		{"-5", 0, false},
		{"-0", 0, false},
		{"+5", 0, false},
		{"5.0", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"5 5", 0, false},
		{"5, 10", 0, false},
		{"5\x00", 0, false},
		{"\t5 ", 5 * time.Second, true},
		{"007", 7 * time.Second, true},
		{"0", 0, true},
		{"3600", time.Hour, true},
		{"3601", limit, true},
		{"99999999999999999999", limit, true},
		{strings.Repeat("9", 5000), limit, true},
		{"Sat, 01 Jun 2024 12:00:30 GMT", 30 * time.Second, true},
		{"Saturday, 01-Jun-24 12:00:30 GMT", 30 * time.Second, true},
		{"Sat Jun  1 12:00:30 2024", 30 * time.Second, true},
		{"Sat, 01 Jun 2024 11:00:00 GMT", 0, true},     // past: 0
		{"Fri, 31 Dec 9999 23:59:59 GMT", limit, true}, // far future: limit
		{"Mon, 01 Jan 0001 00:00:00 GMT", 0, true},     // far past
		{"Sat, 01 Jun 2024 12:00:30 +0200", 0, false},  // numeric zone: not an HTTP-date
		{"Sat, 01 Jun 2024 25:00:30 GMT", 0, false},    // bad hour
		{"Sat, 31 Feb 2024 12:00:30 GMT", 0, false},    // bad day
	} {
		d, ok := ParseRetryAfter(tt.v, attack77Now, limit)
		if ok != tt.ok || d != tt.want {
			t.Errorf("ParseRetryAfter(%.40q) = %v, %v; want %v, %v", tt.v, d, ok, tt.want, tt.ok)
		}
		if d < 0 || d > limit {
			t.Errorf("ParseRetryAfter(%.40q) = %v out of [0, limit]", tt.v, d)
		}
	}
}

// Helper 191's TestAtkParseBodyDuplicateKeyNegativeAccepted is judged: a key named twice keeps its last value, as encoding/json does.

// BREAK. ParseBody godoc: "whose numbers may be sent as strings ... anything
// else are errors wrapping ErrBody". The string "null" is not a number, yet it
// is read as 0 (flexInt unquotes it, then takes "null" as JSON null).
func TestAttack77ParseBodyStringNullAccepted(t *testing.T) {
	for _, b := range []string{
		`{"maxRequests":"null"}`,
		`{"version":1,"currentRequests":" null ","maxRequests":30,"periodInSeconds":300,"limitType":"Rate"}`,
	} {
		if w, err := ParseBody([]byte(b)); err == nil {
			t.Errorf("ParseBody(%s) = %+v, nil; want an error (\"null\" is a string, not a number)", b, w)
		}
	}
}

// Helper 191's TestAtkParseBodyLimitTypeOtherAccepted is judged: limitType is the service's word, kept as sent (Body.LimitType's godoc now says so); what prints it clips and escapes it.

// held: ParseBody: numbers as strings read; unknown keys ignored; floats,
// NaN, huge, nested, negative, BOM, trailing data, over MaxBodySize are
// errors wrapping ErrBody; the Store text reads.
func TestAttack77ParseBodyHeld(t *testing.T) {
	good := map[string]Body{
		`{"version":"1","currentRequests":"31","maxRequests":"30","periodInSeconds":"300","limitType":"Rate","x":{"y":[1,2]}}`: {Version: 1, CurrentRequests: 31, MaxRequests: 30, PeriodInSeconds: 300, LimitType: "Rate"},
		"  \n" + StoreText(10, 15, AspectTitle) + "\n": {MaxRequests: 10, PeriodInSeconds: 15, LimitType: "Rate", DebugMessage: StoreText(10, 15, AspectTitle), Aspect: AspectTitle},
	}
	for b, want := range good {
		w, err := ParseBody([]byte(b))
		if err != nil || w != want {
			t.Errorf("ParseBody(%.60q) = %+v, %v; want %+v", b, w, err, want)
		}
	}
	bad := []string{
		``,
		`{"maxRequests":1.5}`,
		`{"maxRequests":1e2}`,
		`{"maxRequests":"1.5"}`,
		`{"maxRequests":NaN}`,
		`{"maxRequests":"NaN"}`,
		`{"maxRequests":99999999999999999999999}`,
		`{"maxRequests":"99999999999999999999999"}`,
		`{"maxRequests":-1}`,
		`{"maxRequests":"-1"}`,
		`{"maxRequests":{"n":1}}`,
		`{"maxRequests":[1]}`,
		`{"maxRequests":true}`,
		`{"limitType":5}`,
		"\uFEFF" + `{"maxRequests":1}`,
		`{"maxRequests":1} trailing`,
		`{"maxRequests":1}{"maxRequests":2}`,
		`{"maxRequests":1`,
		strings.Repeat("[", 100000),
		`{"a":` + strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000) + `}`,
		`{"debugMessage":"` + strings.Repeat("a", MaxBodySize) + `"}`,
		"The rate limit of -1 operations in 15 seconds has been exceeded for aspect {userId;titleId}.",
		"The rate limit of 10 operations in 1e9 seconds has been exceeded for aspect {userId;titleId}.",
	}
	for _, b := range bad {
		w, err := ParseBody([]byte(b))
		if err == nil || !errors.Is(err, ErrBody) {
			t.Errorf("ParseBody(%.60q) = %+v, %v; want an error wrapping ErrBody", b, w, err)
		}
	}
}

// held: ParseBody in time linear in its (bounded) input.
func TestAttack77ParseBodyTime(t *testing.T) {
	b := []byte(`{"debugMessage":"` + strings.Repeat(`\u00e9`, (MaxBodySize-40)/6) + `"}`)
	start := time.Now()
	for range 20 {
		if _, err := ParseBody(b); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("20 ParseBody of 64 KiB took %v", el)
	}
}

// held: ParseHeaders: parameters in any order, a later item of a name over an
// earlier, unknown names and case-different names skipped, malformed items
// skipped, the used count at least 0.
func TestAttack77ParseHeadersHeld(t *testing.T) {
	l := throttle.Limit{Burst: 10, Sustain: 30}
	h := http.Header{}
	h["Ratelimit-Policy"] = []string{`"sustain";w=300;q=40, "burst";q=0`}
	h["Ratelimit"] = []string{`"BURST";r=1;t=1, "sustain";t=290;r=27, "burst";t=12;r=7, "nope";r=1;t=1, "sustain";r=x;t=1, "burst";r=99;t=3`}
	c, ok := ParseHeaders(h, l)
	if !ok {
		t.Fatal("ok false")
	}
	if want := (throttle.WindowState{Count: 13, Limit: 40, Reset: 290 * time.Second}); c.Sustain != want {
		t.Errorf("sustain = %+v, want %+v", c.Sustain, want)
	}
	if want := (throttle.WindowState{Count: 0, Limit: 10, Reset: 3 * time.Second}); c.Burst != want {
		t.Errorf("burst = %+v, want %+v", c.Burst, want)
	}
	h["Ratelimit"] = []string{strings.Repeat(" ", 1020) + `"burst";r=1;t=1`}
	if c, ok := ParseHeaders(h, l); ok {
		t.Errorf("value over 1 KiB read: %+v", c)
	}
}
