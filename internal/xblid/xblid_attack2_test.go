package xblid

import (
	"errors"
	"strings"
	"testing"
)

// held: package doc: "XUIDs (decimal, 64-bit) and title IDs (decimal,
// 32-bit), each written one way only, with no leading zero, so that one
// number is one identifier". Signs, spaces, prefixes, underscores,
// non-ASCII digits (Arabic-Indic, fullwidth, superscript), NUL and
// overflow by one at 2^64 and 2^32 are refused; the largest values and 0
// are accepted, each with the right kind wrapped.
func TestAttack2XblidSpellings(t *testing.T) {
	for _, s := range []string{"+1", "-0", "1 ", " 1", "\t1", "1\n", "0x1", "0o1", "0b1", "1_0", "1e3", "1.0",
		"\u0661", "\uff11", "\u00b9", "1\x00", "\x001", "00", "01", "０", "18446744073709551616",
		"99999999999999999999", "18446744073709551615" + "0", ""} {
		if err := CheckXUID(s); err == nil || !errors.Is(err, ErrXUID) {
			t.Errorf("CheckXUID(%q) = %v, want an error wrapping ErrXUID", s, err)
		}
		if err := CheckTitle(s); err == nil || !errors.Is(err, ErrTitle) {
			t.Errorf("CheckTitle(%q) = %v, want an error wrapping ErrTitle", s, err)
		}
	}
	for _, s := range []string{"4294967296", "18446744073709551615", "2533274791234567"} {
		if CheckXUID(s) != nil || CheckTitle(s) == nil {
			t.Errorf("%s: a XUID and not a title ID", s)
		}
	}
	for _, s := range []string{"0", "1", "4294967295", "1234567890"} {
		if CheckXUID(s) != nil || CheckTitle(s) != nil {
			t.Errorf("%s: a XUID and a title ID", s)
		}
	}
	if err := CheckXUID(strings.Repeat("\x1b[2J", 100)); err == nil || len(err.Error()) > 200 || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("error not escaped and clipped: %q", err)
	}
}

// TestAttack2XblidErrorQuotesValue: the error puts the value between double
// quotes, but a double quote in the value is written as it is: the value
// `1" is a XUID; "x` gives `"1" is a XUID; "x" is not a XUID (...)`,
// whose quoted part is "1" and which starts by saying it is a XUID. The
// value is not escaped as a quoted value must be (safetext.Quote escapes
// it so; Clip escapes only control characters, invalid bytes and '\').
//
// Promised (internal/xblid, package doc): "Errors quote the bad value,
// escaped and clipped."; Error.Error: "returns `"abc" is not a XUID
// (...)`, the value escaped and clipped to 40 bytes".
func TestAttack2XblidErrorQuotesValue(t *testing.T) {
	v := `1" is a XUID; "x`
	err := CheckXUID(v)
	if err == nil {
		t.Fatal("accepted")
	}
	s := err.Error()
	if strings.HasPrefix(s, `"1" is a XUID`) {
		t.Errorf("the quoted value ends at the value's own quote: %s", s)
	}
}
