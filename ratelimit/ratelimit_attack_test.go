package ratelimit_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// ratelimit.ParseHeaders: "Unknown names and malformed items are skipped;
// a value over 1 KiB is ignored." Only the RateLimit value is measured: a
// RateLimit-Policy of 4 KiB is read whole, and its q sets the limit the
// counts are read against (5 where the caller's burst is 10: 2 used
// instead of 7).
func TestAttackPolicyOverOneKiBIgnored(t *testing.T) {
	h := http.Header{}
	h.Set("RateLimit", `"burst";r=3;t=5`)
	policy := `"burst";q=5` + strings.Repeat(", ", 2048)
	h.Set("RateLimit-Policy", policy)
	c, ok := ratelimit.ParseHeaders(h, throttle.Limit{Burst: 10, Sustain: 30})
	if !ok {
		t.Fatal("the RateLimit value was not read")
	}
	if c.Burst.Limit != 10 || c.Burst.Count != 7 {
		t.Errorf("a policy of %d bytes was read: burst %+v, want limit 10 (the caller's), count 7", len(policy), c.Burst)
	}
}

// ratelimit.Body: "the JSON body of an FGRL 429, with lower camel case
// keys"; ParseBody: "whose unknown keys are ignored". encoding/json
// matches a key in any case, so "MaxRequests" (no key of the body) after
// "maxRequests" overrides it: a 429 reporting 10 is read as 999.
func TestAttackBodyKeyInAnotherCaseIgnored(t *testing.T) {
	b, err := ratelimit.ParseBody([]byte(`{"version":1,"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate","MaxRequests":999,"PERIODINSECONDS":300}`))
	if err != nil {
		t.Fatal(err)
	}
	if b.MaxRequests != 10 || b.PeriodInSeconds != 15 {
		t.Errorf("ParseBody read keys of another case: maxRequests %d (want 10), periodInSeconds %d (want 15)", b.MaxRequests, b.PeriodInSeconds)
	}
}

// ratelimit.RetryAfterDate: "returns the Retry-After value that names the
// instant at, in the HTTP-date form"; the package: "each writer beside its
// reader". An instant with a fraction of a second is written truncated,
// so the reader reads a wait that ends before at: the mock's
// RetryAfterHTTPDate mode (now + whole seconds, now with its fraction)
// tells a client to come back up to a second before its window frees.
func TestAttackRetryAfterDateNotBeforeTheInstant(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 500_000_000, time.UTC)
	at := now.Add(time.Second)
	got, ok := ratelimit.ParseRetryAfter(ratelimit.RetryAfterDate(at), now, 10*time.Minute)
	if !ok || got < at.Sub(now) {
		t.Errorf("RetryAfterDate(%v) = %q reads back as a wait of %v, %v from %v: before the instant (want at least %v)",
			at, ratelimit.RetryAfterDate(at), got, ok, now, at.Sub(now))
	}
}

// held: ParseRetryAfter "returns false for a missing, negative or
// malformed value; the result is never negative and never above limit (a
// larger value is read as limit)".
func TestAttackRetryAfterOddValues(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const limit = 10 * time.Minute
	for v, want := range map[string]struct {
		d  time.Duration
		ok bool
	}{
		"+5": {0, false}, "-5": {0, false}, "-0": {0, false}, "5.5": {0, false}, "0x10": {0, false},
		"1e3": {0, false}, "5, 7": {0, false}, "5s": {0, false}, " 5\t": {5 * time.Second, true},
		"99999999999999999999999": {limit, true}, "601": {limit, true}, "600": {limit, true},
		"Thu, 01 Jan 2026 11:00:00 GMT": {0, true}, "Thu, 01 Jan 2026 12:00:07 GMT": {7 * time.Second, true},
		"Thu, 01 Jan 2099 12:00:07 GMT": {limit, true}, "Thu, 01 Jan 2026 12:00:07 PST": {0, false},
		"": {0, false}, "\x00": {0, false},
	} {
		d, ok := ratelimit.ParseRetryAfter(v, now, limit)
		if d != want.d || ok != want.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", v, d, ok, want.d, want.ok)
		}
	}
}

// held: ParseBody: "negative numbers and anything else are errors
// wrapping ErrBody"; the Store text written by StoreText reads back.
func TestAttackBodyOddNumbers(t *testing.T) {
	for _, b := range []string{
		`{"maxRequests":"-5"}`, `{"maxRequests":-5}`, `{"maxRequests":1.5}`, `{"maxRequests":"1e3"}`,
		`{"maxRequests":99999999999999999999}`, `{"maxRequests":true}`, `{"maxRequests":1} x`,
		"The rate limit of -1 operations in 10 seconds has been exceeded for aspect {a;b}.",
		strings.Repeat(" ", ratelimit.MaxBodySize) + "{}",
	} {
		if got, err := ratelimit.ParseBody([]byte(b)); err == nil {
			t.Errorf("ParseBody(%.60q) = %+v, want an error", b, got)
		}
	}
	aspect := "{2535405290996870;1234567}"
	got, err := ratelimit.ParseBody([]byte(ratelimit.StoreText(100, 60, aspect)))
	if err != nil || got.MaxRequests != 100 || got.PeriodInSeconds != 60 || got.Aspect != aspect {
		t.Errorf("StoreText read back as %+v, %v", got, err)
	}
}

// held: a decision's headers read back as its counts, even over a limit
// (count read as the limit) and with contradicting items skipped.
func TestAttackHeadersMalformedSkipped(t *testing.T) {
	h := http.Header{}
	h.Set("RateLimit", `"burst";r=-1;t=5, "sustain";r=x;t=3, "other";r=1;t=1`)
	if c, ok := ratelimit.ParseHeaders(h, throttle.Limit{Burst: 10, Sustain: 30}); ok {
		t.Errorf("malformed items read: %+v", c)
	}
	h.Set("RateLimit", `"burst";r=99;t=5`)
	if c, ok := ratelimit.ParseHeaders(h, throttle.Limit{Burst: 10, Sustain: 30}); !ok || c.Burst.Count != 0 || c.Burst.Limit != 10 {
		t.Errorf("r over the limit: %+v, %v", c, ok)
	}
}
