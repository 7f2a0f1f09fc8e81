package limits

import "strings"

// globMatch reports whether s matches pattern, where '*' matches any run of
// characters other than '/' and every other byte matches itself, ignoring
// ASCII case. It runs in O(len(pattern)*len(s)) at worst and never allocates.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			starP, starI = p, i
			p++
		case p < len(pattern) && foldEq(pattern[p], s[i]):
			p++
			i++
		case starP >= 0 && s[starI] != '/':
			// Let the last star swallow one more byte and retry after it.
			starI++
			p, i = starP+1, starI
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

func foldEq(a, b byte) bool {
	return lower(a) == lower(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hostMatch reports whether a normalized host matches a rule's host
// pattern. A colon is left in a normalized host only in an IPv6 literal
// ("[::1]"); in any other it is no part of a name
// ("a.xboxlive.com:8080.xboxlive.com", whose last ":22" normalizeHost took
// for a port), and no '*' takes it for one. The colon is looked for only
// once the pattern matched: most hosts are matched by name, on every call.
func hostMatch(pattern, host string) bool {
	return globMatch(pattern, host) && (!strings.Contains(host, ":") || strings.HasPrefix(host, "["))
}
