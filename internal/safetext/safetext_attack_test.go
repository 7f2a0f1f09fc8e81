package safetext

import (
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/xblgo/fgrl/internal/racebuild"
)

// TestAttackQuoteBoundBelowFour: Quote with a limit below 4 cuts to 4 bytes
// (Cut: "a limit below 4 means 4") and escapes them, so its result passed
// the bound its godoc stated for the limit given ("at most 4*limit+2
// bytes"): Quote("\x01\x02\x03\x04\x05", 1) is "\x01..." in quotes, 9
// bytes, not at most 6. No caller passes a limit below 4; the godoc now
// states the bound with Cut's floor, which this checks.
//
// Promised (safetext.Quote): "Quote returns s cut to limit bytes (Cut)
// and quoted as strconv.Quote does ... The result is at most 4*limit+2
// bytes."
func TestAttackQuoteBoundBelowFour(t *testing.T) {
	for limit := range 4 {
		for _, s := range []string{"\x01\x02\x03\x04\x05", "\x1b\x1b\x1b\x1b", "abcdefgh"} {
			if got := Quote(s, limit); len(got) > 4*max(limit, 4)+2 {
				t.Errorf("Quote(%q, %d) = %s, %d bytes: over 4*max(limit, 4)+2 = %d", s, limit, got, len(got), 4*max(limit, 4)+2)
			}
		}
	}
}

// TestAttackReasonDropsInputQuotedFirst: a decoder message that starts with
// the input it quotes (`"\x1b]8;;http://evil.example\x07..." is not a
// duration`, `'secret' ...`) comes back from Reason with that input, only
// escaped: Reason cuts "from the first quote on" only when the quote is
// not the message's first byte (i > 0).
//
// Promised (safetext.Reason): "Reason returns a decoder's error message
// without the input it quotes (from the first quote on, since how much of
// the bad input a decoder quotes depends on how it arrived, and the input
// is not the reader's to print)".
func TestAttackReasonDropsInputQuotedFirst(t *testing.T) {
	for _, msg := range []string{
		"\"\x1b]8;;http://evil.example\x07click\x1b]8;;\x07 ATK-BODY-TEXT\" is not a duration",
		"'ATK-BODY-TEXT' looking for beginning of value",
		"`ATK-BODY-TEXT`: unknown escape",
	} {
		if got := Reason(msg, 100); strings.Contains(got, "ATK-BODY-TEXT") || strings.Contains(got, "evil.example") {
			t.Errorf("Reason(%q) = %q: holds the input it quotes", msg, got)
		}
	}
	// What the decoder says after the input is kept.
	if got := Reason("'ATK-BODY-TEXT' looking for beginning of value", 100); got != "(the input) looking for beginning of value" {
		t.Errorf("Reason of a message starting with its input = %q", got)
	}
}

// held: Clip escapes every terminal escape and invisible control an
// attacker may put in server or trace text (ESC and CSI, C1 CSI as UTF-8
// U+009B and as the raw byte 0x9b, OSC 8 hyperlinks ended by BEL or ST,
// DCS, CR rewriting a line, backspace, bidi overrides and isolates,
// zero-width space/joiners, word joiner, BOM, soft hyphen, line and
// paragraph separators, NEL, tag characters), never splits a UTF-8
// character, stays within its budget for any limit, and is linear (a
// 16 MiB string clipped with a 16 MiB budget in well under a second).
// Promised (safetext.Clip): "every control character, escape and invalid
// byte written as a Go escape ... and clipped to at most limit bytes";
// package doc: "None splits a UTF-8 character".
func TestAttackClipTerminalEscapes(t *testing.T) {
	bad := []string{
		"\x1b[2J", "\u009b2J", "\x9b2J", "\x1b]8;;http://evil.example\x07link\x1b]8;;\x07", "\x1b]8;;http://e\x1b\\l\x1b]8;;\x1b\\",
		"\x1bP+q\x1b\\", "ok\rEVIL", "a\bb", "\u202eevil", "\u2066x\u2069", "\u200b", "\u200c\u200d", "\u2060", "\ufeff",
		"\u00ad", "\u2028", "\u2029", "\u0085", "\U000e0041\U000e007f", "\x00", "\x7f", "\u061c", "\u180e",
	}
	for _, s := range bad {
		for _, limit := range []int{-5, 0, 3, 4, 5, 7, 11, 64} {
			got := Clip("pre "+s+" post", limit)
			if len(got) > max(limit, 4) {
				t.Errorf("Clip(%q, %d) = %q: %d bytes", s, limit, got, len(got))
			}
			if !utf8.ValidString(got) {
				t.Errorf("Clip(%q, %d) = %q: invalid UTF-8", s, limit, got)
			}
			for _, r := range got {
				if r != ' ' && !unicode.IsPrint(r) {
					t.Errorf("Clip(%q, %d) = %q holds %U", s, limit, got, r)
				}
			}
		}
	}
	// Cut never splits a character, whatever the limit lands on.
	s := "a€😀é\u0301x"
	for limit := range len(s) + 2 {
		if got := Cut(s, limit); !utf8.ValidString(got) || len(got) > max(limit, 4) {
			t.Errorf("Cut(%q, %d) = %q", s, limit, got)
		}
	}
}

// TestAttackClipLinear: TestAttackClipTerminalEscapes's promise that Clip
// is linear: an 18 MiB string of escapes clipped with its whole length as
// the budget in well under 5 s. A time figure, which the race detector's
// build moves (5.2 s under -race on a loaded CI machine): it runs without
// it (.ci/run's norace step).
func TestAttackClipLinear(t *testing.T) {
	racebuild.Skip(t, "a time figure over 18 MiB")
	big := strings.Repeat("\x1b[31m€\xff", 1<<21)
	start := time.Now()
	got := Clip(big, len(big))
	if took := time.Since(start); took > 5*time.Second || len(got) > len(big) {
		t.Errorf("Clip of %d bytes took %v, %d bytes out", len(big), took, len(got))
	}
}
