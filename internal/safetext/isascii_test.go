package safetext

import "testing"

func TestIsASCII(t *testing.T) {
	for s, want := range map[string]bool{"": true, "xboxlive.com": true, "\x7f": true, "ſ": false, "\u212a": false, "ẞ.example": false, "a\x80": false} {
		if got := IsASCII(s); got != want {
			t.Errorf("IsASCII(%q) = %v, want %v", s, got, want)
		}
	}
}
