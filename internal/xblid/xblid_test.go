package xblid

import (
	"errors"
	"strings"
	"testing"
)

var tests = []struct {
	in          string
	xuid, title bool // valid as such
}{
	{"2533274791234567", true, false},
	{"1234567890", true, true},
	{"4294967295", true, true},
	{"4294967296", true, false},
	{"18446744073709551615", true, false},
	{"18446744073709551616", false, false},
	{"", false, false},
	{"-1", false, false},
	{"12a", false, false},
	{"xuid(1)", false, false},
	{" 1", false, false},
	{strings.Repeat("9", 30), false, false},
	{"0", true, true},
	{"01", false, false},
	{"0001", false, false},
	{"02533274791234567", false, false},
	{"00", false, false},
}

func TestCheck(t *testing.T) {
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if err := CheckXUID(tt.in); (err == nil) != tt.xuid || err != nil && !errors.Is(err, ErrXUID) {
				t.Errorf("CheckXUID(%q) = %v, want valid %v", tt.in, err, tt.xuid)
			}
			if err := CheckTitle(tt.in); (err == nil) != tt.title || err != nil && !errors.Is(err, ErrTitle) {
				t.Errorf("CheckTitle(%q) = %v, want valid %v", tt.in, err, tt.title)
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	for _, tt := range tests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckTitle(s) == nil && CheckXUID(s) != nil {
			t.Fatalf("%q is a title ID but not a XUID", s)
		}
		if err := CheckXUID(s); err != nil && len(err.Error()) > 200 {
			t.Fatalf("error of %d bytes", len(err.Error()))
		}
	})
}
