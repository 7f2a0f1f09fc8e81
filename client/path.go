package client

import (
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
)

// reqPath is a request path built from segments: Path is the decoded form
// and Raw the form sent on the wire, each segment escaped once. Characters
// XSAPI sends literally (RFC 3986 sub-delimiters such as '(' ')' ',' and
// ':' '@') stay literal, so xuid(N) and a,b go out as written.
type reqPath struct {
	Path, Raw string
}

// path joins segments into a reqPath. A segment may not be empty.
func path(segs ...string) reqPath {
	var p, raw strings.Builder
	for _, s := range segs {
		p.WriteByte('/')
		p.WriteString(s)
		raw.WriteByte('/')
		raw.WriteString(escapeSegment(s))
	}
	return reqPath{Path: p.String(), Raw: raw.String()}
}

// userSeg is the path segment naming a user: xuid(N).
func userSeg(xuid string) string { return "xuid(" + xuid + ")" }

// userPath is the path /users/xuid(N)/segs...: the one place every
// per-user path starts.
func userPath(xuid string, segs ...string) reqPath {
	return path(append([]string{"users", userSeg(xuid)}, segs...)...)
}

// escapeSegment percent-encodes the bytes of s that may not appear in a path
// segment (RFC 3986 pchar), once.
func escapeSegment(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !pchar(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if pchar(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

// pchar reports whether c may stand unescaped in a path segment: unreserved
// characters, sub-delimiters, ':' and '@' (RFC 3986 §3.3).
func pchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0
}

// checkXUID refuses, without sending, an XUID that is not a decimal number
// that fits in 64 bits, naming the argument.
func checkXUID(a api, arg, xuid string) error {
	if err := xblid.CheckXUID(xuid); err != nil {
		return invalid(a, arg+": "+err.Error())
	}
	return nil
}

// checkXUIDs checks every XUID of a list and its length.
func checkXUIDs(a api, arg string, xuids []string, lo, hi int) error {
	if err := checkCount(a, arg, len(xuids), lo, hi); err != nil {
		return err
	}
	for i, x := range xuids {
		if err := checkXUID(a, arg+"["+strconv.Itoa(i)+"]", x); err != nil {
			return err
		}
	}
	return nil
}

// normSCID checks that scid is a GUID (8-4-4-4-12 hex digits) and returns
// it lower-cased, as XSAPI sends it: the achievements service compares SCIDs
// case-sensitively and expects lower case.
func normSCID(a api, arg, scid string) (string, error) {
	if !isGUID(scid) {
		return "", invalid(a, arg+" must be a GUID such as 7492baca-c1b4-440d-a391-b7ef364a8d40, not "+safetext.Quote(scid, 64))
	}
	return strings.ToLower(scid), nil
}

func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
