package safetext

import (
	"strings"
	"testing"
)

// held: Reason: "a decoder's error message without the input it quotes
// ... clipped as Clip clips. A message that starts with the input it
// quotes keeps what follows the last quote of that kind, after "(the
// input)", cut at its own first quote too." An empty message, one quote
// character of each kind, only quotes, a quote with nothing closing it, an
// input holding the quote escaped or another kind, a tail quoting the
// input again, and 1 MiB of quoted input: none keeps ATK, none is over
// the limit, none panics.
func TestAttack2ReasonQuoteFirst(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "",
		`"`:                                      "(the input)",
		`'`:                                      "(the input)",
		"`":                                      "(the input)",
		`"""`:                                    "(the input)",
		`''''''`:                                 "(the input)",
		`"ATK`:                                   "(the input)",
		`"ATK\"ATK" is not valid`:                "(the input) is not valid",
		`'AT"K' is bad near "ATK"`:               "(the input) is bad near",
		"`ATK` cannot be unmarshaled into `int`": "(the input)",
		`"ATK" ` + "\x1b[2J":                     "(the input) \\x1b[2J",
		`bad "ATK"`:                              "bad",
	} {
		got := Reason(in, 200)
		if got != want || strings.Contains(got, "ATK") {
			t.Errorf("Reason(%q) = %q, want %q", in, got, want)
		}
	}
	long := `"` + strings.Repeat("ATK", 1<<18) + `" is not a number` + strings.Repeat(" and more", 100)
	if got := Reason(long, 40); len(got) > 40 || strings.Contains(got, "ATK") || !strings.HasPrefix(got, "(the input) is not a number") {
		t.Errorf("Reason of a long message = %q", got)
	}
}
