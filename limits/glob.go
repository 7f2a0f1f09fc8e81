package limits

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
