package ratelimit

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/throttle"
)

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	const limit = 10 * time.Minute
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"12", 12 * time.Second, true},
		{" 3 ", 3 * time.Second, true},
		{"0", 0, true},
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
		{"2147483647", limit, true},
		{"99999999999999999999999", limit, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{now.Add(48 * time.Hour).Format(http.TimeFormat), limit, true},
		{"600", limit, true},
		{"601", limit, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.in, now, limit)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
	// A cap between whole seconds: the whole seconds under it read as
	// themselves, anything above as the cap.
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{{"10", 10 * time.Second}, {"11", 10500 * time.Millisecond}} {
		if got, ok := ParseRetryAfter(tt.in, now, 10500*time.Millisecond); got != tt.want || !ok {
			t.Errorf("ParseRetryAfter(%q, cap 10.5s) = %v, %v; want %v, true", tt.in, got, ok, tt.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"}, {-time.Second, "0"}, {-1500 * time.Millisecond, "0"}, {-time.Nanosecond, "0"},
		{time.Nanosecond, "1"}, {time.Second, "1"}, {1500 * time.Millisecond, "2"}, {300 * time.Second, "300"},
		{math.MaxInt64, "9223372037"}, // 292 years, rounded up without overflowing
	} {
		if got := RetryAfter(tt.d); got != tt.want {
			t.Errorf("RetryAfter(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := RetryAfterDate(now.Add(time.Minute)); got != "Thu, 01 Jan 2026 00:01:00 GMT" {
		t.Errorf("RetryAfterDate = %q", got)
	}
}

func TestHeadersRoundTrip(t *testing.T) {
	d := throttle.Decision{
		Counts: throttle.Counts{Burst: throttle.WindowState{Count: 3, Limit: 10, Reset: 11500 * time.Millisecond}, Sustain: throttle.WindowState{Count: 33, Limit: 30, Reset: 290 * time.Second}},
	}
	h := http.Header{}
	SetHeaders(h, d)
	if got, want := h.Get("RateLimit"), `"burst";r=7;t=12, "sustain";r=0;t=290`; got != want {
		t.Errorf("RateLimit = %q, want %q", got, want)
	}
	// Read back as counts: what is used of each limit (a count over its
	// limit reads as the limit: r is never below 0), the reset rounded up.
	want := throttle.Counts{
		Burst:   throttle.WindowState{Count: 3, Limit: 10, Reset: 12 * time.Second},
		Sustain: throttle.WindowState{Count: 30, Limit: 30, Reset: 290 * time.Second},
	}
	if got, ok := ParseHeaders(h, throttle.Limit{}); !ok || got != want {
		t.Errorf("ParseHeaders(SetHeaders(d)) = %+v, %v; want %+v", got, ok, want)
	}
	// Bounds: a value of at most 1 KiB, numbers of at most 2^30.
	item := `"burst";r=1073741824;t=10`
	for _, tt := range []struct {
		name, state string
		want        bool // a window read
	}{
		{"a value of exactly 1 KiB", strings.Repeat(" ", 1024-len(item)) + item, true},
		{"a byte over", strings.Repeat(" ", 1025-len(item)) + item, false},
		{"a number over 2^30", `"burst";r=1073741825;t=10`, false},
	} {
		if _, ok := ParseHeaders(http.Header{"Ratelimit": {tt.state}}, throttle.Limit{Burst: 10}); ok != tt.want {
			t.Errorf("%s: ParseHeaders read a window: %v, want %v", tt.name, ok, tt.want)
		}
	}
	// Without RateLimit-Policy (or with a limit of 0), a window's limit is
	// the caller's.
	for _, policy := range []string{"", `"burst";q=0;w=15`} {
		h := http.Header{"Ratelimit": {`"burst";r=7;t=12`}}
		if policy != "" {
			h["Ratelimit-Policy"] = []string{policy}
		}
		want := throttle.Counts{Burst: throttle.WindowState{Count: 3, Limit: 10, Reset: 12 * time.Second}}
		if got, ok := ParseHeaders(h, throttle.Limit{Burst: 10, Sustain: 30}); !ok || got != want {
			t.Errorf("ParseHeaders with policy %q = %+v, %v; want %+v", policy, got, ok, want)
		}
	}
	empty := http.Header{}
	SetHeaders(empty, throttle.Decision{})
	if len(empty) != 0 {
		t.Errorf("a decision without limits wrote %v", empty)
	}
}

func TestBodyOf(t *testing.T) {
	var s throttle.MemoryServerStore
	l := throttle.Limit{Burst: 10, Sustain: 30}
	var d throttle.Decision
	for i := 0; i < 13; i++ {
		d, _ = s.Take(context.Background(), throttle.Key{User: "1"}, l, now)
	}
	want := Body{Version: 1, CurrentRequests: 13, MaxRequests: 10, PeriodInSeconds: 15, LimitType: "Rate"}
	if diff := cmp.Diff(want, BodyOf(d)); diff != "" {
		t.Errorf("BodyOf mismatch (-want +got):\n%s", diff)
	}
}

func FuzzParseBody(f *testing.F) {
	f.Add([]byte(`{"version":1,"currentRequests":13,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate"}`))
	f.Add([]byte(`{"version":"1","currentRequests":"13","maxRequests":"10","periodInSeconds":"300","limitType":"rate"}`))
	f.Add([]byte(StoreText(100, 300, "{userId;titleId}")))
	f.Add([]byte(`{"maxRequests": -1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBody(data)
		if err != nil {
			return
		}
		if b.Version < 0 || b.CurrentRequests < 0 || b.MaxRequests < 0 || b.PeriodInSeconds < 0 {
			t.Fatalf("ParseBody(%q) = %+v: negative field", data, b)
		}
	})
}

// FuzzRetryAfterRoundTrip: whatever the input, the reader's result is
// bounded; and what RetryAfter writes reads back as the wait rounded up.
func FuzzRetryAfterRoundTrip(f *testing.F) {
	for _, s := range []string{"12", "-1", "soon", "2147483647", "Wed, 21 Oct 2015 07:28:00 GMT", ""} {
		f.Add(s, int64(1500))
	}
	const limit = 10 * time.Minute
	f.Fuzz(func(t *testing.T, s string, ms int64) {
		d, ok := ParseRetryAfter(s, now, limit)
		if d < 0 || d > limit || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v", s, d, ok)
		}
		wait := time.Duration(ms%int64(limit/time.Millisecond)) * time.Millisecond
		got, ok := ParseRetryAfter(RetryAfter(wait), now, limit)
		if !ok || got != time.Duration(CeilSeconds(wait))*time.Second {
			t.Fatalf("ParseRetryAfter(RetryAfter(%v)) = %v, %v", wait, got, ok)
		}
		if wait > 0 {
			got, ok = ParseRetryAfter(RetryAfterDate(now.Add(time.Duration(CeilSeconds(wait))*time.Second)), now, limit)
			if !ok || got != time.Duration(CeilSeconds(wait))*time.Second {
				t.Fatalf("the HTTP-date form of %v reads back as %v, %v", wait, got, ok)
			}
		}
	})
}

// FuzzHeadersRoundTrip: arbitrary header values never give negative fields
// or counts over their limits; and any decision's headers read back as its
// counts.
func FuzzHeadersRoundTrip(f *testing.F) {
	f.Add(`"burst";r=7;t=12, "sustain";r=27;t=290`, `"burst";q=10;w=15, "sustain";q=30;w=300`, 3, 10, 33, 30)
	f.Add(`"burst";r=-1;t=x`, ``, 0, 0, 0, 0)
	f.Fuzz(func(t *testing.T, state, policy string, bc, bl, sc, sl int) {
		h := http.Header{}
		h.Set("RateLimit", state)
		h.Set("RateLimit-Policy", policy)
		c, _ := ParseHeaders(h, throttle.Limit{Burst: 10, Sustain: 30})
		for _, w := range []throttle.WindowState{c.Burst, c.Sustain} {
			if w.Count < 0 || w.Limit < 0 || w.Reset < 0 || w.Count > w.Limit {
				t.Fatalf("bad window %+v from %q", w, state)
			}
		}
		small := func(n int) int { return min(max(n, 0)%100_000, throttle.MaxLimit) }
		d := throttle.Decision{
			Counts: throttle.Counts{Burst: throttle.WindowState{Count: small(bc), Limit: small(bl), Reset: 5 * time.Second}, Sustain: throttle.WindowState{Count: small(sc), Limit: small(sl), Reset: 200 * time.Second}},
		}
		h = http.Header{}
		SetHeaders(h, d)
		got, _ := ParseHeaders(h, throttle.Limit{})
		for _, p := range []throttle.Period{throttle.Burst, throttle.Sustain} {
			w, s := got.Window(p), d.Window(p)
			if s.Limit == 0 { // not written
				if w != (throttle.WindowState{}) {
					t.Fatalf("%v: read %+v, written none", p, w)
				}
				continue
			}
			if w.Limit != s.Limit || w.Count != min(s.Count, s.Limit) || w.Reset != s.Reset {
				t.Fatalf("window %+v does not read back from %+v", w, s)
			}
		}
	})
}
