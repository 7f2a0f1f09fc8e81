// Package safetext bounds text, the module's one place for it, in three
// ways: Clip makes text from a server or a trace safe to put in an error or
// on a terminal (control characters, terminal escape sequences among them,
// and invalid UTF-8 are escaped, Go-style, and the result is clipped to a
// byte budget); Quote does that in Go quotes, for an argument in an error;
// Cut only bounds text kept as data, at a character boundary. None splits a
// UTF-8 character. IsASCII tells text that only ASCII may name (a host, a
// field's name), where Unicode case folding would map other letters onto
// ASCII ones. HideOpaque takes what looks like a credential out of text
// from a file or a trace before an error quotes it.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clip returns s with every control character, escape and invalid byte
// written as a Go escape (\x1b, \n, \u2028, \xff) and clipped to at most
// limit bytes: when the escaped text is longer, the longest run of its
// whole characters and escapes that leaves room for "...", then "...".
// Printable text, including non-ASCII letters, is kept as it is. A limit
// below 4 means 4.
func Clip(s string, limit int) string {
	limit = max(limit, 4)
	if len(s) <= limit && plain(s) {
		return s
	}
	b := make([]byte, 0, min(len(s), limit)+8)
	keep := 0 // the bytes of b that leave room for "..."
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
		if len(b)+len(piece) > limit {
			return string(append(b[:keep], "..."...))
		}
		b = append(b, piece...)
		if len(b) <= limit-3 {
			keep = len(b)
		}
		i += size
	}
	return string(b)
}

// Quote returns s cut to limit bytes (Cut) and quoted as strconv.Quote
// does: escaped, in double quotes, for an argument in an error message.
// The result is at most 4*max(limit, 4)+2 bytes (Cut's limit is at least 4).
func Quote(s string, limit int) string { return strconv.Quote(Cut(s, limit)) }

// Cut returns s cut to at most limit bytes at a character boundary, ending
// in "..." when cut; a limit below 4 means 4. It escapes nothing: it is for
// text kept as data, which whatever shows it escapes. In invalid UTF-8 it
// cuts before the bytes that continue a character, if any start one.
func Cut(s string, limit int) string {
	limit = max(limit, 4)
	if len(s) <= limit {
		return s
	}
	i := limit - 3
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

// Reason returns a decoder's error message without the input it quotes
// (from the first quote on, since how much of the bad input a decoder
// quotes depends on how it arrived, and the input is not the reader's to
// print), clipped as Clip clips. A message that starts with the input it
// quotes keeps what follows the last quote of that kind, after "(the
// input)", cut at its own first quote too.
func Reason(msg string, limit int) string {
	const quotes = "'\"`"
	if msg != "" && strings.IndexByte(quotes, msg[0]) >= 0 {
		tail := ""
		if j := strings.LastIndexByte(msg, msg[0]); j > 0 {
			tail = msg[j+1:]
		}
		msg = strings.TrimSpace("(the input) " + strings.TrimSpace(tail))
	}
	if i := strings.IndexAny(msg, quotes); i != -1 { // not at 0: a message that starts with one is rewritten above
		msg = strings.TrimSpace(msg[:i])
	}
	return Clip(msg, limit)
}

// IsASCII reports whether s holds ASCII only. Where a name is compared
// without case (a host, a scheme, a field's name), text in another script
// is refused with it: Unicode case folding maps some of its letters onto
// ASCII ones ("ſ" to "s", the Kelvin sign to "k", "ẞ" to "ß" and IDNA's
// "ss").
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// EqualFoldASCII reports whether a and b are equal ignoring the case of
// ASCII letters only: unlike strings.EqualFold, "ſ" is not "s" nor the
// Kelvin sign "k", as the services and limits.Match compare paths.
func EqualFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// MinOpaque is the shortest run HideOpaque hides: a credential's secret
// part is longer (a JWT's signature is 43 bytes and more, an XSTS token
// hundreds).
const MinOpaque = 24

// HideOpaque returns s with each run of at least MinOpaque bytes of the
// alphabets credentials are written in (letters, digits and "+/-_=", as
// base64, base64url and hex use) that holds both a letter and a digit
// replaced by its length: "[26 bytes hidden]". A name of letters alone
// (MultiplayerCorrelationId) and a number stay. Text an error quotes from a
// file or a trace may hold a token where something else belongs (an
// exporter's shifted column, a token pasted as a field's name), and a token
// is never printed. s comes back unchanged, with no allocation, when it
// holds no such run.
func HideOpaque(s string) string {
	var b strings.Builder
	last, start := 0, -1
	letters, digits := false, false
	end := func(at int) {
		if start >= 0 && at-start >= MinOpaque && letters && digits {
			b.WriteString(s[last:start])
			b.WriteString("[" + strconv.Itoa(at-start) + " bytes hidden]")
			last = at
		}
		start, letters, digits = -1, false, false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letters = true
		case '0' <= c && c <= '9':
			digits = true
		case c == '+', c == '/', c == '-', c == '_', c == '=':
		default:
			end(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	end(len(s))
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
