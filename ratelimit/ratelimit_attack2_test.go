package ratelimit

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held: ParseBody: "the JSON form, whose numbers may be sent as strings and
// whose unknown keys are ignored ... anything else are errors wrapping
// ErrBody"; e287eef: "the keys are read exactly as the body has them". A
// key spelt with a JSON escape is that key (RFC 8259 §7: an escaped
// character is the character); a key named twice reads its last value, as
// before the fix; null leaves a field zero; a number as a string with
// spaces is read; an unknown key nested 5,000 deep is ignored; a body that
// is an array, a JSON null, has a BOM or is cut short is an error
// wrapping ErrBody; the SPEC's example body and the Store's text are read.
func TestAttack2ParseBodyOddJSON(t *testing.T) {
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	for in, want := range map[string]Body{
		`{"max\u0052equests": 5, "periodInSeconds": 15}`:                                              {MaxRequests: 5, PeriodInSeconds: 15},
		`{"maxRequests": 10, "maxRequests": 20}`:                                                      {MaxRequests: 20},
		`{"maxRequests": null, "limitType": null, "debugMessage": null, "version": null}`:             {},
		`{"maxRequests": " 7 ", "currentRequests": "13"}`:                                             {MaxRequests: 7, CurrentRequests: 13},
		`{"x": ` + deep + `, "maxRequests": 3}`:                                                       {MaxRequests: 3},
		`{"MaxRequests": 99, "maxrequests": 98, "maxRequests": 4}`:                                    {MaxRequests: 4},
		`{"version":1,"currentRequests":13,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate"}`: {Version: 1, CurrentRequests: 13, MaxRequests: 10, PeriodInSeconds: 15, LimitType: "Rate"},
	} {
		got, err := ParseBody([]byte(in))
		if err != nil || got != want {
			t.Errorf("ParseBody(%.60s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{`[{"maxRequests": 1}]`, `null`, "\ufeff{\"maxRequests\": 1}", `{"maxRequests": 1`, `{"maxRequests": -1}`, `{"maxRequests": 1.5}`} {
		if b, err := ParseBody([]byte(in)); !errors.Is(err, ErrBody) {
			t.Errorf("ParseBody(%q) = %+v, %v; want an error wrapping ErrBody", in, b, err)
		}
	}
	if b, err := ParseBody([]byte(StoreText(100, 300, "{u;t}"))); err != nil || b.MaxRequests != 100 || b.PeriodInSeconds != 300 {
		t.Errorf("Store text: %+v, %v", b, err)
	}
}

// held: RetryAfterDate: "rounded up to its whole second ... what it names
// is never before at, so a wait read from it (ParseRetryAfter) never ends
// early". Instants before 1970 and before year 1's end, far in the future
// (year 9998), with a monotonic reading, in zones east and west of UTC and
// with a zone offset of seconds (LMT), with and without a fraction: the
// date names the instant's second, or the next one when it has a fraction.
func TestAttack2RetryAfterDateRoundsUp(t *testing.T) {
	lmt := time.FixedZone("LMT", -(4*3600 + 56*60 + 2))
	east := time.FixedZone("X", 13*3600+45*60)
	var ats []time.Time
	for _, base := range []time.Time{
		time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1900, 3, 1, 0, 0, 0, 0, lmt),
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9998, 12, 31, 23, 59, 58, 0, east),
		time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC),
		time.Now(), // monotonic reading
	} {
		for _, f := range []time.Duration{0, 1, time.Second / 2, time.Second - 1} {
			ats = append(ats, base.Add(f), base.In(lmt).Add(f), base.In(east).Add(f))
		}
	}
	for _, at := range ats {
		v := RetryAfterDate(at)
		named, err := http.ParseTime(v)
		if err != nil {
			t.Errorf("RetryAfterDate(%v) = %q: not an HTTP-date: %v", at, v, err)
			continue
		}
		want := at.Truncate(time.Second)
		if !want.Equal(at) {
			want = want.Add(time.Second)
		}
		if !named.Equal(want) || named.Before(at) {
			t.Errorf("RetryAfterDate(%v) = %q, names %v; want %v", at, v, named, want)
		}
		if d, ok := ParseRetryAfter(v, at, 1000*time.Hour); !ok || d < 0 || d >= time.Second {
			t.Errorf("ParseRetryAfter(RetryAfterDate(%v)) at it = %v, %v", at, d, ok)
		}
	}
}

// held: ParseHeaders: "a value over 1 KiB is ignored". A RateLimit-Policy
// of exactly 1024 bytes is read (its q sets the limit); 1025 bytes is
// ignored (the caller's limits count); a second RateLimit-Policy line is
// not read, over 1 KiB or not, and does not make the first ignored.
func TestAttack2PolicyBound(t *testing.T) {
	l := throttle.Limit{Burst: 10, Sustain: 30}
	policy := func(n int) string {
		p := `"burst";q=5;w=15`
		return p + strings.Repeat(" ", n-len(p))
	}
	for _, tc := range []struct {
		lines []string
		limit int
	}{
		{[]string{policy(1024)}, 5},
		{[]string{policy(1025)}, 10},
		{[]string{policy(100), policy(5000)}, 5},
		{[]string{policy(5000), `"burst";q=5;w=15`}, 10},
	} {
		h := http.Header{"Ratelimit-Policy": tc.lines, "Ratelimit": {`"burst";r=2;t=3`}}
		c, ok := ParseHeaders(h, l)
		if !ok || c.Burst.Limit != tc.limit {
			t.Errorf("policy lines of %d bytes: burst limit %d, ok %v; want %d", len(tc.lines[0]), c.Burst.Limit, ok, tc.limit)
		}
	}
}
