package transport

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
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
		{"2147483647", MaxRetryAfter, true},
		{"99999999999999999999999", MaxRetryAfter, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{now.Add(48 * time.Hour).Format(http.TimeFormat), MaxRetryAfter, true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"12", "-1", "soon", "2147483647", "Wed, 21 Oct 2015 07:28:00 GMT", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter(s, now)
		if d < 0 || d > MaxRetryAfter || (!ok && d != 0) {
			t.Fatalf("parseRetryAfter(%q) = %v, %v", s, d, ok)
		}
	})
}

func FuzzParseRateLimit(f *testing.F) {
	f.Add(`"burst";r=7;t=12, "sustain";r=27;t=290`, `"burst";q=10;w=15, "sustain";q=30;w=300`)
	f.Add(`"burst";r=-1;t=x`, ``)
	f.Fuzz(func(t *testing.T, state, policy string) {
		h := http.Header{}
		h.Set("RateLimit", state)
		h.Set("RateLimit-Policy", policy)
		ws := parseRateLimit(h)
		if len(ws) > 2 {
			t.Fatalf("%d windows", len(ws))
		}
		for _, w := range ws {
			if w.remaining < 0 || w.reset < 0 || w.period == 0 {
				t.Fatalf("bad window %+v from %q", w, state)
			}
		}
	})
}
