package xblauth

import (
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
)

// attack19Interesting are bytes and runes where TrimSpace, TrimLeftFunc and
// TrimRightFunc could part ways: ASCII and Unicode white space, runes that
// look like it but are not (U+180E since Unicode 6.3, U+FEFF, U+200B), the
// halves of NEL (U+0085 is C2 85) and of an em space (E2 80 83), NUL, and
// invalid UTF-8.
var attack19Interesting = []string{
	" ", "\t", "\n", "\v", "\f", "\r", "\x00", ";", "x", "=", "1",
	"\u0085", "\u00a0", "\u1680", "\u2000", "\u2003", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
	"\u180e", "\ufeff", "\u200b",
	"\xc2", "\x85", "\xa0", "\xe2", "\x80", "\x83", "\xe2\x80", "\xff", "\xef\xbf\xbd",
}

func attack19Check(t *testing.T, h string) {
	t.Helper()
	uhs, tok, err := Parse(h)
	if wuhs, wtok, werr := parseBefore(h); uhs != wuhs || tok != wtok || err != werr {
		t.Fatalf("Parse(%q) = %q, %q, %v; Parse of 9264bfd: %q, %q, %v: Parse's contract changed "+
			"(commit 635610e: \"Parse keeps its contract\")", h, uhs, tok, err, wuhs, wtok, werr)
	}
	if got := UserHashOf(h); got != uhs {
		t.Fatalf("UserHashOf(%q) = %q, Parse's userhash %q: the godoc says "+
			"\"UserHashOf returns the userhash Parse returns for h, or \\\"\\\" when Parse fails\"", h, got, uhs)
	}
}

// held: every value made of a prefix (scheme, x=, userhash, ';' in places)
// and a tail of up to three of the interesting pieces (Unicode white space,
// look-alikes, halves of multi-byte runes, invalid UTF-8, NUL), and the
// same pieces before the scheme and around the ';': Parse against the
// Parse of 9264bfd and UserHashOf against Parse.
func TestAttack19UserHashOfExhaustiveTails(t *testing.T) {
	prefixes := []string{
		"", "XBL3.0", "XBL3.0 ", "xbl3.0 x=", "XBL3.0 x=1", "XBL3.0 x=1;", "XBL3.0  x=1;t",
		"XBL3.0 x=1;;", "XBL3.0 x=;t", "XBL3.0 x=1\u00a0;", "XBL3.0 x=1\x00;", "\u3000XBL3.0 x=1;",
		"\xc2XBL3.0 x=1;", "XBL3.0\u00a0x=1;", "XBL3.0 x=1\n;",
	}
	p := attack19Interesting
	n := 0
	for _, pre := range prefixes {
		attack19Check(t, pre)
		for _, a := range p {
			attack19Check(t, pre+a)
			attack19Check(t, a+pre)
			for _, b := range p {
				attack19Check(t, pre+a+b)
				attack19Check(t, a+pre+b)
				for _, c := range p {
					attack19Check(t, pre+a+b+c)
					attack19Check(t, a+b+pre+c)
					n += 2
				}
			}
		}
	}
	// the pieces around a ';' and as the token's last bytes
	for _, a := range p {
		for _, b := range p {
			for _, c := range p {
				attack19Check(t, "XBL3.0 x=1"+a+";"+b+c)
				attack19Check(t, "XBL3.0 x=1;"+a+"t"+b+c)
				attack19Check(t, "XBL3.0"+a+"x=1;"+b+"t"+c)
				attack19Check(t, a+"XBL3.0 "+b+"x=1;t"+c)
				n += 4
			}
		}
	}
	t.Logf("%d values checked", n)
}

// held: values at and around MaxHeader, where white space around a value
// would have been trimmed to fit before: Parse and UserHashOf decide on
// the untrimmed length as before, and agree.
func TestAttack19UserHashOfNearMaxHeader(t *testing.T) {
	for _, pad := range []string{" ", "\t", "\u00a0", "\u3000", "x", "\xff"} {
		for _, d := range []int{-4, -3, -2, -1, 0, 1, 2, 3} {
			base := "XBL3.0 x=123;"
			for _, where := range []string{"tail", "head", "token"} {
				var h string
				switch where {
				case "tail":
					h = base + "t"
					h += strings.Repeat(pad, (MaxHeader+d-len(h))/len(pad)+1)
				case "head":
					h = strings.Repeat(pad, (MaxHeader+d-len(base)-1)/len(pad)+1) + base + "t"
				case "token":
					h = base + strings.Repeat(pad, (MaxHeader+d-len(base)-1)/len(pad)+1) + "t"
				}
				attack19Check(t, h)
			}
		}
	}
}

// held: the worst inputs for split's scans (a token of white space up to
// MaxHeader, many spaces before x=, a long userhash, broken runes) stay
// linear: each shape at a sixteenth of MaxHeader and at MaxHeader, the
// faster of three timings of 200 calls each, within 48 times (16 for
// linear) and 20 ms. Without the race detector (racebuild.Skip: .ci/run's
// norace step runs it), whose build times are not the code's.
func TestAttack19UserHashOfNotSuperlinear(t *testing.T) {
	racebuild.Skip(t, "time figures")
	shapes := []func(n int) string{
		func(n int) string { return "XBL3.0 x=1;" + strings.Repeat("\u3000", (n-12)/3) + "t" },
		func(n int) string { return "XBL3.0 x=1;" + strings.Repeat(" ", n-12) },
		func(n int) string { return "XBL3.0" + strings.Repeat(" ", n-16) + "x=1;t" },
		func(n int) string { return "XBL3.0 x=" + strings.Repeat("1", n-11) + ";t" },
		func(n int) string { return strings.Repeat("\u00a0", n/2-8) + "XBL3.0 x=1;t" },
		func(n int) string { return "XBL3.0 x=1;" + strings.Repeat("\xe2\x80", (n-11)/2) },
	}
	calls := func(h string) func() {
		return func() {
			for range 200 {
				UserHashOf(h)
			}
		}
	}
	for i, shape := range shapes {
		small, large := shape(MaxHeader/16), shape(MaxHeader)
		attack19Check(t, small)
		attack19Check(t, large)
		// Alternately, the least of three (internal/scaletest).
		if g := scaletest.Measure(3, calls(small), calls(large)); g.Ratio() > 48 && g.Large() > 20*time.Millisecond {
			t.Errorf("shape %d: 200 UserHashOf of %d bytes, then of %d bytes: %v: superlinear", i, len(small), len(large), g)
		}
	}
}
