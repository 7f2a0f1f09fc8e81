// Package safetext bounds text, the module's one place for it, in three
// ways: Clip makes text from a server or a trace safe to put in an error or
// on a terminal (control characters, terminal escape sequences among them,
// and invalid UTF-8 are escaped, Go-style, and the result is clipped to a
// byte budget); Quote does that in Go quotes, for an argument in an error;
// Cut only bounds text kept as data, at a character boundary. None splits a
// UTF-8 character.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clip returns s with every control character, escape and invalid byte
// written as a Go escape (\x1b, \n, \u2028, \xff) and clipped to at most
// max bytes, ending in "..." when clipped. Printable text, including
// non-ASCII letters, is kept as it is. A max below 4 means 4.
func Clip(s string, max int) string {
	max = maxOf(max, 4)
	if len(s) <= max && plain(s) {
		return s
	}
	b := make([]byte, 0, min(len(s), max)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = `\x` + strconv.FormatUint(uint64(s[i]), 16)
		case r == '\\' || !unicode.IsPrint(r) && r != ' ':
			q := strconv.QuoteRune(r)
			piece = q[1 : len(q)-1]
		default:
			piece = s[i : i+size]
		}
		if len(b)+len(piece) > max-3 && i+size < len(s) || len(b)+len(piece) > max {
			return string(append(b, "..."...))
		}
		b = append(b, piece...)
		i += size
	}
	return string(b)
}

// Quote returns s cut to max bytes (Cut) and quoted as strconv.Quote does:
// escaped, in double quotes, for an argument in an error message. The
// result is at most 4*max+2 bytes.
func Quote(s string, max int) string { return strconv.Quote(Cut(s, max)) }

// Cut returns s cut to at most max bytes at a character boundary, ending in
// "..." when cut; a max below 4 means 4. It escapes nothing: it is for text
// kept as data, which whatever shows it escapes.
func Cut(s string, max int) string {
	max = maxOf(max, 4)
	if len(s) <= max {
		return s
	}
	i := max - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// plain reports whether s holds only printable text and no backslash.
func plain(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

func maxOf(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Reason returns a decoder's error message without the input it quotes
// (from the first quote on, since how much of the bad input a decoder
// quotes depends on how it arrived, and the input is not the reader's to
// print), clipped as Clip clips.
func Reason(msg string, max int) string {
	if i := strings.IndexAny(msg, "'\"`"); i > 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	return Clip(msg, max)
}
