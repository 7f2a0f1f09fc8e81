package xblid

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// held: "each written one way only, with no leading zero"; decimal 64-bit
// XUIDs and 32-bit title IDs; no sign, space, prefix; over-range refused.
func TestAttack77CheckHeld(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "1": true, "18446744073709551615": true, "2533274791234567": true,
		"": false, "00": false, "01": false, "+1": false, "-0": false, " 1": false, "1 ": false,
		"1\n": false, "0x1": false, "1_000": false, "１": false, "18446744073709551616": false,
		"99999999999999999999999x": false, "1e3": false, "1.0": false,
	} {
		err := CheckXUID(s)
		if (err == nil) != want {
			t.Errorf("CheckXUID(%q) = %v, want ok=%v", s, err, want)
		}
		if err != nil && !errors.Is(err, ErrXUID) {
			t.Errorf("CheckXUID(%q) error does not wrap ErrXUID", s)
		}
	}
	for s, want := range map[string]bool{
		"0": true, "4294967295": true, "4294967296": false, "04294967295": false, "+5": false,
	} {
		err := CheckTitle(s)
		if (err == nil) != want {
			t.Errorf("CheckTitle(%q) = %v, want ok=%v", s, err, want)
		}
		if err != nil && !errors.Is(err, ErrTitle) {
			t.Errorf("CheckTitle(%q) error does not wrap ErrTitle", s)
		}
	}
}

// held: Error: "the value cut to 28 bytes and quoted (safetext.Quote:
// escaped, at most 114 bytes), the whole at most 200"; "Errors quote the bad
// value, escaped and clipped."
func TestAttack77ErrorTextBounded(t *testing.T) {
	for _, v := range []string{
		strings.Repeat("\x1b", 1000),
		strings.Repeat("\xff", 1000),
		strings.Repeat("\u2028", 500),
		strings.Repeat("é", 500),
		"\x1b[2J\x1b[31m" + strings.Repeat("9", 10000),
		strings.Repeat("\U0010FFFF", 100),
	} {
		for _, check := range []func(string) error{CheckXUID, CheckTitle} {
			msg := check(v).Error()
			if len(msg) > 200 {
				t.Errorf("error of %d bytes: %q", len(msg), msg)
			}
			if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\x1b\u2028\n") {
				t.Errorf("error not escaped: %q", msg)
			}
		}
	}
}
