package analyze_test

// A fourth outside attack on the trace analyzer (atk-analyze4): a HAR
// entry's "time", which since 6dce909 says when a 429's Retry-After starts.

import (
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// TestAttack4HARTimeNeverNegative: analyze/call.go:32 Call.Duration is "until
// the answer ended; 0 when unknown", and analyze/doc.go:40-45 counts a
// Retry-After in seconds from the answer's arrival, "a HAR entry's time".
// HAR 1.2's entry "time" is the request's total elapsed milliseconds. The
// reader converts ms*1e6 to a Duration unchecked: a time of 1e13 ms (or
// 1e300) overflows int64, which Go leaves to the machine (amd64 gives
// math.MinInt64, arm64 math.MaxInt64), so a Duration of -292 years is
// neither the time nor 0 (unknown), and whether the 429's wait reads as
// from the start or 24.8 days long, so the verdict, depends on the
// machine the analysis runs on. A negative "time" likewise.
func TestAttack4HARTimeNeverNegative(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for _, ms := range []float64{1e13, 1e300, -1e300, -5000} {
		var got []time.Duration
		_, err := analyze.ReadHAR(strings.NewReader(`{"log": {"version": "1.2", "creator": {"name": "atk", "version": "1"}, "entries": [`+
			attack4Entry4(t0, ms, 429, "Retry-After", "1")+`]}}`), func(c *analyze.Call) { got = append(got, c.Duration) })
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range got {
			if d < 0 {
				t.Errorf("a HAR entry's \"time\" of %g ms read as a Duration of %v; want the time, or 0 (unknown), never negative", ms, d)
			}
		}
	}
}
