package ratelimit

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// parseHeadersBefore is ParseHeaders as it read the headers at c60cddc, by
// splitting each value and each item and keeping an item's parameters in a
// map: the reference FuzzParseHeadersAsBefore holds ParseHeaders to now that
// it reads them in place, without allocating.
func parseHeadersBefore(h http.Header, l throttle.Limit) (c throttle.Counts, ok bool) {
	state := first(h["Ratelimit"])
	if state == "" || len(state) > maxHeaderValue {
		return throttle.Counts{}, false
	}
	var limits throttle.Counts
	policy := first(h["Ratelimit-Policy"])
	if len(policy) > maxHeaderValue {
		policy = ""
	}
	for _, it := range strings.Split(policy, ",") {
		if p, params, good := rateItemBefore(it); good {
			if q, has := params["q"]; has {
				window(&limits, p).Limit = q
			}
		}
	}
	for _, it := range strings.Split(state, ",") {
		p, params, good := rateItemBefore(it)
		r, okR := params["r"]
		t, okT := params["t"]
		if !good || !okR || !okT {
			continue
		}
		limit := window(&limits, p).Limit
		if limit <= 0 {
			limit = l.Burst
			if p == throttle.Sustain {
				limit = l.Sustain
			}
		}
		*window(&c, p) = throttle.WindowState{Count: max(limit-r, 0), Limit: limit, Reset: time.Duration(t) * time.Second}
		ok = true
	}
	return c, ok
}

func rateItemBefore(it string) (throttle.Period, map[string]int, bool) {
	parts := strings.Split(strings.TrimSpace(it), ";")
	var p throttle.Period
	switch strings.Trim(parts[0], `"`) {
	case "burst":
		p = throttle.Burst
	case "sustain":
		p = throttle.Sustain
	default:
		return 0, nil, false
	}
	params := make(map[string]int, 3)
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > 1<<30 {
			return 0, nil, false
		}
		params[k] = n
	}
	return p, params, true
}

// FuzzParseHeadersAsBefore: ParseHeaders reads any pair of values, and any
// caller's limits, as parseHeadersBefore did.
func FuzzParseHeadersAsBefore(f *testing.F) {
	f.Add(`"burst";r=7;t=12, "sustain";r=27;t=290`, `"burst";q=10;w=15, "sustain";q=30;w=300`, 10, 30)
	f.Add(`burst;r=1;t=2;r=3, "sustain" ;r=1;t=1`, `"burst";q=0, burst;q=5;q=6,`, 0, 7)
	f.Add(`"burst";r=-1;t=x, ;, "sustain";r=+4;t=0010;x=1`, `"sustain";q=99999999999999999999`, 3, 4)
	f.Add(`""burst""; r = 2 ;t=3,"sustain";r=1;t=2;`, ``, 1, 1)
	f.Fuzz(func(t *testing.T, state, policy string, burst, sustain int) {
		h := http.Header{"Ratelimit": {state}, "Ratelimit-Policy": {policy}}
		l := throttle.Limit{Burst: burst, Sustain: sustain}
		got, gotOK := ParseHeaders(h, l)
		want, wantOK := parseHeadersBefore(h, l)
		if got != want || gotOK != wantOK {
			t.Fatalf("ParseHeaders(%q, %q, %+v) = %+v, %v; before: %+v, %v", state, policy, l, got, gotOK, want, wantOK)
		}
	})
}

// The headers the mock sends on every answer read without an allocation
// (the what-if replays millions of them: BENCHMARKS.md §7b).
func TestParseHeadersAllocatesNothing(t *testing.T) {
	h := http.Header{}
	SetHeaders(h, throttle.Decision{Counts: throttle.Counts{
		Burst:   throttle.WindowState{Count: 3, Limit: 10, Reset: 12 * time.Second},
		Sustain: throttle.WindowState{Count: 3, Limit: 30, Reset: 290 * time.Second},
	}})
	var c throttle.Counts
	if n := testing.AllocsPerRun(100, func() { c, _ = ParseHeaders(h, throttle.Limit{}) }); n != 0 {
		t.Errorf("ParseHeaders allocated %v times a call, want 0", n)
	}
	if c.Burst.Count != 3 || c.Sustain.Limit != 30 {
		t.Errorf("read %+v", c)
	}
}

// BenchmarkParseHeaders reads the two headers the mock sends on every
// answer, as the transport does for each response that carries them.
func BenchmarkParseHeaders(b *testing.B) {
	h := http.Header{}
	SetHeaders(h, throttle.Decision{Counts: throttle.Counts{
		Burst:   throttle.WindowState{Count: 3, Limit: 10, Reset: 12 * time.Second},
		Sustain: throttle.WindowState{Count: 3, Limit: 30, Reset: 290 * time.Second},
	}})
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ParseHeaders(h, throttle.Limit{}); !ok {
			b.Fatal("nothing read")
		}
	}
}
