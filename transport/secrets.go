package transport

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
)

// credentialHeaders are the headers that carry a user's credentials.
var credentialHeaders = []string{"Authorization", "Signature"}

// headerFold returns the first value of the header name (given in its
// canonical form) in h, whatever the case its key is spelt in: a map key set directly (h["authorization"])
// bypasses canonicalization, and net/http sends it as it is.
func headerFold(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 { // name is canonical: no need for Get's canonicalization
		return v[0]
	}
	for k, vs := range h {
		if len(vs) > 0 && strings.EqualFold(k, name) {
			return vs[0]
		}
	}
	return ""
}

// dropCredentialsOnRedirect returns req without its credential headers when
// it follows a redirect (req.Response is set) to another host, or to a host
// it cannot tell (the response that redirected names no request: a base
// RoundTripper such as a stub, recorder or cache may leave Response.Request
// empty); dropped says it did. Otherwise it returns req itself.
func dropCredentialsOnRedirect(req *http.Request) (_ *http.Request, dropped bool) {
	if req.Response == nil {
		return req, false
	}
	if from := req.Response.Request; from != nil && from.URL != nil && strings.EqualFold(from.URL.Host, req.URL.Host) {
		return req, false
	}
	var r *http.Request
	for k := range req.Header {
		for _, name := range credentialHeaders {
			if strings.EqualFold(k, name) {
				if r == nil {
					r = req.Clone(req.Context())
				}
				delete(r.Header, k)
			}
		}
	}
	if r == nil {
		return req, true
	}
	return r, true
}

// keepCode returns scrubbed, the error raw seen without its secrets, so
// that hresult.Of (and so permanent) finds in it raw's code: a Reporter
// under raw whose text tells a secret is not given through scrubbed, and a
// secret in a text must not change what the transport decides.
func keepCode(raw, scrubbed error) error {
	if scrubbed == nil || scrubbed == raw {
		return scrubbed
	}
	if c := hresult.Of(raw); c != hresult.Of(scrubbed) {
		return &codedError{err: scrubbed, code: c}
	}
	return scrubbed
}

// codedError is a scrubbed error with the HRESULT of the error it hides.
type codedError struct {
	err  error
	code hresult.HRESULT
}

func (e *codedError) Error() string            { return e.err.Error() }
func (e *codedError) Unwrap() error            { return e.err }
func (e *codedError) HRESULT() hresult.HRESULT { return e.code }

// GoString is the scrubbed error's, not codedError's fields.
func (e *codedError) GoString() string { return fmt.Sprintf("%#v", e.err) }

// Timeout and Temporary are the scrubbed error's: a *url.Error around
// codedError (http.Client's) asks its error directly.
func (e *codedError) Timeout() bool {
	t, ok := e.err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}

func (e *codedError) Temporary() bool {
	t, ok := e.err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// sentSecrets returns what an attempt sent that no error, event or log may
// tell: its credentials (credential headers, the URL's query credentials
// and user info) and the users its URL names (urlUsers): an Event names
// the service, never the user, and a service may quote the request it
// refused.
func sentSecrets(r *http.Request) xblauth.Secrets {
	ss := xblauth.Secrets{}.HeaderSecrets(r.Header).URLSecrets(r.URL)
	if r.URL != nil {
		ss = urlUsers(ss, r.URL)
	}
	return ss
}

// scrubSent returns err scrubbed of what the attempt r sent (sentSecrets)
// and of the users its own text names (textUsers).
func scrubSent(r *http.Request, err error) error {
	if err == nil {
		return nil
	}
	return textUsers(sentSecrets(r), err.Error()).ScrubError(err)
}

// maxUsers bounds the users taken one by one from a URL, and from a text:
// past it, the URL's path and query, or the text, are taken whole (a URL
// naming thousands would make every scrub read the text once a user).
const maxUsers = 64

// urlUsers returns ss with the users u names, as the services' URLs name
// them: its path's selectors (xuid(…), xuids(…,…), gt(…), gamertag(…),
// gamertags(…), in any case, however percent-encoded, nested in another's
// parentheses or beside other text in their segment), its segments of
// digits alone as long as an XUID, and its query's xuid, xuids, gt,
// gamertag and gamertags values (pairs split at '&' or ';'). Each user is
// taken as its value (in both cases of its letters), its selector or pair
// whole, and the segment it is in as sent and decoded: a short gamertag
// goes by its selector. A path in Opaque is read as one.
func urlUsers(ss xblauth.Secrets, u *url.URL) xblauth.Secrets {
	raw := u.EscapedPath()
	if u.Opaque != "" {
		raw = u.Opaque
	}
	n, whole := 0, false
	for seg := range strings.SplitSeq(raw, "/") {
		dec := seg
		if strings.IndexByte(seg, '%') >= 0 {
			if d, err := url.PathUnescape(seg); err == nil {
				dec = d
			}
		}
		before := len(ss)
		ss = findUsers(ss, dec, &n)
		if n > maxUsers {
			whole = true
			break
		}
		if len(ss) > before {
			ss = append(ss, seg)
			if dec != seg {
				ss = append(ss, dec)
			}
		}
	}
	if !whole && u.RawQuery != "" {
		ss, whole = queryUsers(ss, u.RawQuery, &n)
	}
	if whole {
		for _, w := range [...]string{raw, u.Path, u.RawQuery} {
			if w != "" { // an empty secret would match everywhere
				ss = append(ss, w)
			}
		}
	}
	return ss
}

// queryUsers returns ss with the users a URL's query names by its user
// parameters (pairs split at '&' or ';'), each value decoded whole (a
// gamertag may hold a space) and split at commas, with the pair as sent
// and decoded; whole reports more than maxUsers.
func queryUsers(ss xblauth.Secrets, raw string, n *int) (_ xblauth.Secrets, whole bool) {
	for pair := range strings.FieldsFuncSeq(raw, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, _ := strings.Cut(pair, "=")
		if d, err := url.QueryUnescape(k); err == nil {
			k = d
		}
		if d, err := url.QueryUnescape(v); err == nil {
			v = d
		}
		if !userParam(k) || strings.TrimSpace(v) == "" {
			continue
		}
		for x := range strings.SplitSeq(v, ",") {
			if *n++; *n > maxUsers {
				return ss, true
			}
			if x = strings.TrimSpace(x); x != "" && len(x) <= maxUserLen {
				ss = ss.Add(x)
				if !safetext.IsASCII(x) {
					ss = ss.Add(strings.ToUpper(x)).Add(strings.ToLower(x))
				}
			}
		}
		ss = append(ss, pair, k+"="+v)
	}
	return ss, false
}

// textUsers returns ss with the users text itself names (findUsers): what a
// service or a Base quotes of a request, whatever the request named. Past
// maxUsers, text is taken whole.
func textUsers(ss xblauth.Secrets, text string) xblauth.Secrets {
	n := 0
	if ss = findUsers(ss, text, &n); n > maxUsers {
		return append(ss, text)
	}
	return ss
}

// findUsers returns ss with each user s names, counting them in *n, and
// stops past maxUsers: a selector's values (a word that is a user selector,
// in any case, before '(' written plain, escaped (%28, &#40;, &lpar;,
// \u0028) or full-width, with spaces between or none, its values up to
// the matching close, split at commas), a user
// parameter's values (such a word before '=' or "%3D", its value up to
// '&', ';', '#', a space, a quote, '<', '>', a parenthesis or a line's
// end, split at commas up to the first piece holding '='), and a run of
// digits as long as an XUID. A word is letters with no letter, digit or
// '_' before them (count_gt( is no selector). s is read once.
func findUsers(ss xblauth.Secrets, s string, n *int) xblauth.Secrets {
	take := func(value, whole string) {
		// Each selector, pair or number counts, named users or none, so
		// that the work stays bounded whatever s holds.
		if *n++; *n > maxUsers {
			return
		}
		taken, before := false, len(ss)
		for v := range strings.SplitSeq(value, ",") {
			if strings.IndexByte(v, '=') >= 0 {
				break // the next pair of a list ("xuid=…,status=429"), no user
			}
			if v = strings.TrimSpace(v); v == "" || len(v) > maxUserLen {
				continue
			}
			if taken {
				if *n++; *n > maxUsers {
					return
				}
			}
			taken = true
			ss = ss.Add(v)
			if !safetext.IsASCII(v) {
				ss = ss.Add(strings.ToUpper(v)).Add(strings.ToLower(v))
			}
		}
		// The selector or pair whole when none of its values is long
		// enough to be a secret of its own (a short gamertag goes by its
		// selector): Scrub covers every secret it finds, so a whole
		// beside its values would take the pairs after them too
		// ("xuid=…,status=429").
		if taken && whole != "" && len(ss) == before {
			ss = append(ss, whole)
		}
	}
	run := 0
	for i := 0; i <= len(s) && *n <= maxUsers; i++ {
		if i < len(s) && '0' <= s[i] && s[i] <= '9' {
			run++
			continue
		}
		if run >= minXUIDDigits {
			take(s[i-run:i], "")
		}
		run = 0
		if i == len(s) {
			break
		}
		var open, closer string
		switch {
		case s[i] == '(':
			open, closer = "(", ")"
		case strings.HasPrefix(s[i:], "%28"):
			open, closer = "%28", "%29"
		case strings.HasPrefix(s[i:], "\uff08"):
			open, closer = "\uff08", "\uff09"
		case strings.HasPrefix(s[i:], "&#40;"):
			open, closer = "&#40;", "&#41;"
		case strings.HasPrefix(s[i:], "&lpar;"):
			open, closer = "&lpar;", "&rpar;"
		case strings.HasPrefix(s[i:], `\u0028`):
			open, closer = `\u0028`, `\u0029`
		case s[i] == '=':
			open = "="
		case strings.HasPrefix(s[i:], "%3D") || strings.HasPrefix(s[i:], "%3d"):
			open = "%3D"
		default:
			continue
		}
		pair := open == "=" || open == "%3D"
		end := i
		for !pair && end > 0 && s[end-1] == ' ' {
			end-- // "gamertag (…)"
		}
		start := end
		for start > 0 && isLetter(s[start-1]) {
			start--
		}
		if start >= 2 && start < end && s[start-2] == '%' && isHex(s[start-1]) && isHex(s[start]) {
			start++ // "%3Fgt": the F is the escape's
		}
		afterEscape := start >= 3 && s[start-3] == '%' && isHex(s[start-2]) && isHex(s[start-1])
		if name := s[start:end]; !userParam(name) || start > 0 && !afterEscape && (isLetter(s[start-1]) || isDigit(s[start-1]) || s[start-1] == '_') {
			continue
		}
		rest := s[i+len(open):]
		win := rest[:min(len(rest), maxListLen)] // a list of users is not longer
		var stop int
		if pair {
			stops := "&;# \"'<>()\n\r\t"
			if open != "=" {
				stops += "%" // an escaped pair ends at its next escape (%26: '&')
			}
			stop = strings.IndexAny(win, stops)
			if stop < 0 {
				stop = len(win)
			}
			take(rest[:stop], s[start:i+len(open)+stop])
			continue
		}
		stop = strings.Index(win, closer)
		if stop < 0 {
			stop = strings.IndexAny(win, "/?#& \"'")
		}
		if stop < 0 {
			stop = len(win)
		}
		take(rest[:stop], s[start:i+len(open)+stop+min(len(closer), len(rest)-stop)])
	}
	return ss
}

// maxUserLen is the longest value taken for one user: a gamertag is at
// most 15 characters (a modern one with its suffix a few more), an XUID
// 20 digits; what is longer is no user.
const maxUserLen = 64

// maxListLen bounds the text read for one selector's or parameter's values
// (maxUsers of them, each at most maxUserLen).
const maxListLen = maxUsers * (maxUserLen + 1)

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isLetter reports whether c is an ASCII letter.
func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// userParam reports whether a selector or query parameter names users.
func userParam(k string) bool {
	for _, p := range [...]string{"xuid", "xuids", "gt", "gamertag", "gamertags"} {
		if strings.EqualFold(k, p) {
			return true
		}
	}
	return false
}

// minXUIDDigits is the fewest digits taken for an XUID where nothing else
// names one: XUIDs are 16 digits (2533274790395904); title ids 10 or
// fewer.
const minXUIDDigits = 15

// hideXUIDs returns s with each run of at least minXUIDDigits digits
// replaced by "[redacted]": a service's text may name a user the request
// named only in its body (a batch's userIds), which the transport does not
// read. s itself when it holds none.
func hideXUIDs(s string) string {
	var b strings.Builder
	run, last := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && '0' <= s[i] && s[i] <= '9' {
			run++
			continue
		}
		if run >= minXUIDDigits {
			b.WriteString(s[last : i-run])
			b.WriteString("[redacted]")
			last = i
		}
		run = 0
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
