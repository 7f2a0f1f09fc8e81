package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "slow down", 200, "slow down"},
		{"unicode letters kept", "débit limité", 200, "débit limité"},
		{"escape sequence", "\x1b[2Jcleared", 200, `\x1b[2Jcleared`},
		{"newline and tab", "a\nb\tc", 200, `a\nb\tc`},
		{"invalid utf-8", "a\xffb", 200, `a\xffb`},
		{"line separator", "a\u2028b", 200, `a\u2028b`},
		{"backslash escaped so output is unambiguous", `a\x1b`, 200, `a\\x1b`},
		{"clipped", strings.Repeat("x", 300), 200, strings.Repeat("x", 197) + "..."},
		{"clipped inside an escape", strings.Repeat("\x1b", 100), 10, `\x1b...`},
		{"clip keeps runes whole", strings.Repeat("é", 10), 7, "éé..."},
		{"plain, an exact fit", "0123456789", 10, "0123456789"},
		{"escaped, an exact fit", "abc\n", 5, `abc\n`},
		{"escaped, a byte short of the limit", "ab\ncd", 7, `ab\ncd`},
		{"escaped, a byte over", "ab\ncdef", 7, `ab\n...`},
		{"only invalid bytes", "\xff\xfe", 40, `\xff\xfe`},
		{"only a backslash", `\`, 40, `\\`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clip(tt.in, tt.max); got != tt.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// TestClipPlainAllocatesNothing: printable text within the limit, an exact
// fit included, comes back as it is, without a copy.
func TestClipPlainAllocatesNothing(t *testing.T) {
	for _, s := range []string{"slow down", "0123456789", "débit"} {
		if allocs := testing.AllocsPerRun(100, func() { Clip(s, 10) }); allocs != 0 {
			t.Errorf("Clip(%q, 10): %v allocations, want 0", s, allocs)
		}
	}
}

func TestCutAndQuote(t *testing.T) {
	tests := []struct {
		in        string
		max       int
		cut, quot string
	}{
		{"short", 10, "short", `"short"`},
		{strings.Repeat("x", 30), 10, "xxxxxxx...", `"xxxxxxx..."`},
		{strings.Repeat("é", 10), 8, "éé...", `"éé..."`}, // not a half é
		{"a\x1b[2J", 40, "a\x1b[2J", `"a\x1b[2J"`},       // Cut keeps, Quote escapes
		{"a\nb", 40, "a\nb", `"a\nb"`},
		{"\xff", 40, "\xff", `"\xff"`},
		{"exact", 5, "exact", `"exact"`},
		{"\x80\x80\x80\x80\x80\x80", 5, "...", `"..."`}, // invalid UTF-8: no character starts before the cut
	}
	for _, tt := range tests {
		if got := Cut(tt.in, tt.max); got != tt.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.cut)
		}
		if got := Quote(tt.in, tt.max); got != tt.quot {
			t.Errorf("Quote(%q, %d) = %s, want %s", tt.in, tt.max, got, tt.quot)
		}
	}
}

func FuzzClip(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J", "a\xffb", strings.Repeat("é", 100)} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = limit % 1000
		got := Clip(s, limit)
		if len(got) > max(limit, 4) {
			t.Fatalf("Clip(%q, %d) = %q, longer than the budget", s, limit, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Clip(%q) = %q is not valid UTF-8", s, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("Clip(%q) = %q holds a control character", s, got)
			}
		}
		cut := Cut(s, limit)
		if len(cut) > max(limit, 4) || utf8.ValidString(s) && !utf8.ValidString(cut) {
			t.Fatalf("Cut(%q, %d) = %q: over the budget or a split character", s, limit, cut)
		}
		if !strings.HasPrefix(s, strings.TrimSuffix(cut, "...")) {
			t.Fatalf("Cut(%q, %d) = %q is not a prefix", s, limit, cut)
		}
		q := Quote(s, limit)
		for _, r := range q {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("Quote(%q) = %q holds a control character", s, q)
			}
		}
	})
}

func TestReason(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`invalid character 'x' looking for beginning of value`, "invalid character"},
		{"cannot unmarshal string \"\x1b[31mred\" into int", "cannot unmarshal string"},
		{"unexpected end of input", "unexpected end of input"},
		{"'starts with a quote'", "(the input)"}, // the whole message is the input it quotes
		{"control \x1b[2J in the reason", `control \x1b[2J in the reason`},
	} {
		if got := Reason(tc.in, 60); got != tc.want {
			t.Errorf("Reason(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEqualFoldASCII(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"titles", "TITLES", true},
		{"Titles", "tItLeS", true},
		{"az", "AZ", true},
		{"@[`{", "@[`{", true},
		{"@", "`", false}, // one below 'A' and one below 'a': not a case pair
		{"[", "{", false}, // one past 'Z' and one past 'z'
		{"titleſ", "titles", false},
		{"\u212a", "k", false}, // the Kelvin sign
		{"state", "ſtate", false},
		{"me", "m", false},
		{"m", "me", false},
		{"ab", "ac", false},
		{"AB", "AC", false},
	} {
		if got := EqualFoldASCII(c.a, c.b); got != c.want {
			t.Errorf("EqualFoldASCII(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := EqualFoldASCII(c.b, c.a); got != c.want {
			t.Errorf("EqualFoldASCII(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}
