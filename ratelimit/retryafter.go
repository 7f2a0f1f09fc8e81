package ratelimit

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter returns the Retry-After value for a wait of d: whole seconds,
// rounded up, as the services send it ("0" for no wait).
func RetryAfter(d time.Duration) string {
	return strconv.FormatInt(CeilSeconds(d), 10)
}

// RetryAfterDate returns the Retry-After value that names the instant at, in
// the HTTP-date form, rounded up to its whole second (the form has nothing
// finer): what it names is never before at, so a wait read from it
// (ParseRetryAfter) never ends early.
func RetryAfterDate(at time.Time) string {
	if s := at.Truncate(time.Second); !s.Equal(at) {
		at = s.Add(time.Second)
	}
	return at.UTC().Format(http.TimeFormat)
}

// CeilSeconds returns d in whole seconds, rounded up; 0 for d <= 0.
func CeilSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return max(s, 0)
}

// ParseRetryAfter reads a Retry-After value: integer seconds or an
// HTTP-date, the latter relative to now. It returns false for a missing,
// negative or malformed value; the result is never negative and never above
// limit (a larger value is read as limit).
func ParseRetryAfter(v string, now time.Time, limit time.Duration) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 64)
		// ParseUint gives up at the overflow, before what follows it: a
		// larger value is digits alone ("99999999999999999999x" is none).
		if err != nil && (!errors.Is(err, strconv.ErrRange) || strings.TrimLeft(v, "0123456789") != "") {
			return 0, false
		}
		if err != nil || n > uint64(limit/time.Second) {
			return limit, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), limit), true
}
