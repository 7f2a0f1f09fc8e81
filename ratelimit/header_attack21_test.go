package ratelimit

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/throttle"
)

// held: ParseHeaders reads as parseHeadersBefore did on empty items,
// leading/trailing ';' and ',', quotes, every Unicode space, duplicate
// parameters, signs, leading zeros, overflow, 2^30 and 2^30+1, values of
// 1024 and 1025 bytes, several values, non-canonical keys; and gives no
// negative field and no count over its limit for a non-negative caller's
// limit.
func TestAttack21ParseHeadersAsBeforeTable(t *testing.T) {
	spaces := []string{" ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\u200b"}
	states := []string{
		``, `,`, `;`, `,,`, `;;`, `"burst"`, `"burst";`, `;"burst";r=1;t=1`, `"burst";r=1;t=1;`, `"burst";r=1;t=1,`, `,"burst";r=1;t=1`,
		`"burst";;r=1;t=1`, `"burst";r=1;;t=1`, `"burst";r=1;t=1;;`, `"burst";r=1;t=1;=`, `"burst";r=1;t=1;x`, `"burst";r=1;t=1;x=`,
		`"burst";r=1;t=1;x=1`, `"burst";r=1;t=1;x=-1`, `"burst";r=+1;t=+1`, `"burst";r=-0;t=-0`, `"burst";r=00007;t=0000000000000000000000012`,
		`"burst";r=1073741824;t=1073741824`, `"burst";r=1073741825;t=1`, `"burst";r=99999999999999999999;t=1`, `"burst";r=1;t=1;r=2;t=3`,
		`"burst";r=1;t=1;r=x`, `"burst"";r=1;t=1`, `""burst";r=1;t=1`, `"burst;r=1;t=1`, `burst";r=1;t=1`, `"Burst";r=1;t=1`,
		`"burst" ;r=1 ;t=1`, `"burst"; r = 1; t=1`, `"burst";r= 1;t=1`, `"burst";r =1;t=1`, `"burst";r=1 ;t=1 `, `"burst";r="1";t=1`,
		`"burst";r=1;t=1,"burst";r=2;t=2`, `"sustain";r=1;t=1,"burst";r=2;t=2,`, `"burst";r=0x1;t=1`, `"burst";r=1_0;t=1`, `"burst";r=1e2;t=1`,
		`"burst";r=١;t=1`, `"burst";q=5;r=1;t=1`, `"burst";R=1;T=1`, `"burst";r==1;t=1`,
	}
	policies := []string{``, `,`, `"burst";q=0`, `"burst";q=5`, `"burst";q=5;q=0`, `"burst";q=0;q=5`, `"burst";q=-1`, `"burst";q=5;w=x`,
		`"burst";q=5,"burst";q=6`, `"burst";q=5,"burst";q=x`, `"sustain";q=1073741824, "burst";q=3`, `"burst";q=99999999999999999999`,
		`"burst";w=15`, `"burst" ; q = 7 ;`, `;"burst";q=5`}
	for _, sp := range spaces {
		states = append(states, sp+`"burst";r=1;t=1`+sp, `"burst"`+sp+`;r=1;t=1`, `"burst";`+sp+`r=1`+sp+`;t=1`, `"burst";r=1`+sp+`;t=1`, `"burst";r`+sp+`=1;t=1`, `"burst";r=`+sp+`1;t=1`)
		policies = append(policies, sp+`"burst";q=9`+sp, `"burst";q=9`+sp+`,`+sp)
	}
	long := `"burst";r=1;t=1,` + strings.Repeat(" ", 1024)
	states = append(states, long[:1024], long[:1025], strings.Repeat(",", 1023)+`"burst";r=1;t=1`[:1], `"burst";r=1;t=1`+strings.Repeat(";x=1", 252))
	policies = append(policies, `"burst";q=5`+strings.Repeat(" ", 1024-len(`"burst";q=5`)), `"burst";q=5`+strings.Repeat(" ", 1025-len(`"burst";q=5`)))
	limits := []throttle.Limit{{}, {Burst: 10, Sustain: 30}, {Burst: -3, Sustain: -1}, {Burst: 1 << 40, Sustain: 1}}
	n := 0
	for _, st := range states {
		for _, po := range policies {
			for _, l := range limits {
				for _, h := range []http.Header{
					{"Ratelimit": {st}, "Ratelimit-Policy": {po}},
					{"Ratelimit": {st, `"burst";r=1;t=1`}, "Ratelimit-Policy": {po, `"burst";q=100`}},
					{"RateLimit": {st}, "ratelimit-policy": {po}, "Ratelimit": {`"sustain";r=2;t=3`}},
				} {
					n++
					got, gotOK := ParseHeaders(h, l)
					want, wantOK := parseHeadersBefore(h, l)
					if got != want || gotOK != wantOK {
						t.Fatalf("ParseHeaders(%q, %+v) = %+v, %v; before: %+v, %v (the godoc: \"Unknown names and malformed items are skipped; a value over 1 KiB is ignored\"; FuzzParseHeadersAsBefore)", h, l, got, gotOK, want, wantOK)
					}
					if l.Burst >= 0 && l.Sustain >= 0 {
						for _, w := range []throttle.WindowState{got.Burst, got.Sustain} {
							if w.Count < 0 || w.Limit < 0 || w.Reset < 0 || w.Count > w.Limit {
								t.Fatalf("bad window %+v from %q (FuzzHeadersRoundTrip: \"never give negative fields or counts over their limits\")", w, h)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d inputs read alike", n)
}

// held: well-formed values other than SetHeaders' exact bytes (one window,
// unquoted names, spaces, extra and repeated parameters, leading zeros, a
// 1 KiB value) read without an allocation.
func TestAttack21ParseHeadersWellFormedAllocatesNothing(t *testing.T) {
	for _, v := range [][2]string{
		{`"burst";r=7;t=12`, ``},
		{`burst;r=7;t=12, sustain;r=27;t=290`, `burst;q=10;w=15, sustain;q=30;w=300`},
		{` "burst" ; r=7 ; t=12 ,	"sustain";r=27;t=290 `, ` "burst";q=10;w=15 `},
		{`"burst";r=7;t=12;r=6;x=3`, `"burst";q=10;q=11;w=15`},
		{`"burst";r=0000000000000000000000007;t=+12`, `"burst";q=1073741824`},
		{`"burst";r=7;t=12` + strings.Repeat(`;x=1`, (1024-len(`"burst";r=7;t=12`))/4), `"burst";q=10` + strings.Repeat(" ", 1024-len(`"burst";q=10`))},
	} {
		h := http.Header{"Ratelimit": {v[0]}, "Ratelimit-Policy": {v[1]}}
		var ok bool
		if n := testing.AllocsPerRun(50, func() { _, ok = ParseHeaders(h, throttle.Limit{Burst: 1, Sustain: 1}) }); n != 0 || !ok {
			t.Errorf("ParseHeaders(%q) allocated %v times (ok %v), want 0 (commit f166dbc: \"reads the RateLimit headers in place, without an allocation\")", h, n, ok)
		}
	}
}

// held: a 1 KiB value of the worst shapes (all commas, all semicolons,
// one item of 500 parameters) reads in time linear in its length: not much
// slower a byte than SetHeaders' value.
func TestAttack21ParseHeadersLinear(t *testing.T) {
	racebuild.Skip(t, "a timing test: per-byte times of short loops")
	per := func(h http.Header) float64 {
		best := time.Duration(1 << 62)
		for range 5 { // the best of five short rounds (no benchmark: a shared machine)
			start := time.Now()
			for range 2000 {
				ParseHeaders(h, throttle.Limit{Burst: 1, Sustain: 1})
			}
			best = min(best, time.Since(start))
		}
		return float64(best.Nanoseconds()) / 2000 / float64(len(h["Ratelimit"][0])+len(h["Ratelimit-Policy"][0]))
	}
	base := http.Header{}
	SetHeaders(base, throttle.Decision{Counts: throttle.Counts{Burst: throttle.WindowState{Count: 3, Limit: 10, Reset: 12 * time.Second}, Sustain: throttle.WindowState{Count: 3, Limit: 30, Reset: 290 * time.Second}}})
	ref := per(base)
	for _, v := range []string{strings.Repeat(",", 1024), strings.Repeat(`"burst";`, 128), `"burst"` + strings.Repeat(";r=1", 254), strings.Repeat(`burst;r=1;t=1,`, 73)} {
		h := http.Header{"Ratelimit": {v}, "Ratelimit-Policy": {v}}
		if got := per(h); got > 20*ref+5 {
			t.Errorf("%.60q...: %.1f ns a byte, SetHeaders' value %.1f", v, got, ref)
		}
	}
}
