package xblauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
)

// What a record of calls (the mock's, a HAR file, analyze.Recorder) may
// keep of a call is decided here, in one place: RedactParams for its URL,
// RedactBody for its bodies, Redact and Sensitive for its headers.
//
// The sign-in services are judged by what is public, so that a field they
// add tomorrow is a secret until named here: every value is replaced but
// those publicName and wholeName keep (and the numbers, booleans and nulls
// of JSON, which carry no credential). Elsewhere only the parameters
// secretParam names are. What cannot be read as a form or JSON, on a
// sign-in host, is replaced whole.

// Redacted is what a secret is replaced with.
const Redacted = "REDACTED"

// SignInHost reports whether host (with or without a port) is a sign-in
// service, whose every request and answer carries credentials: Microsoft
// account (login.live.com, login.microsoftonline.com, login.microsoft.com,
// login.windows.net), Xbox's token services (user, device, title and XSTS
// at *.auth.xboxlive.com) and sisu.xboxlive.com. Compared without case and
// a trailing dot.
func SignInHost(host string) bool {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i] // a port; net.SplitHostPort would allocate an error for every host without one
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	switch host {
	case "login.live.com", "login.microsoftonline.com", "login.microsoft.com", "login.windows.net", "sisu.xboxlive.com":
		return true
	}
	sub, ok := strings.CutSuffix(host, ".auth."+ServiceDomain)
	return ok && sub != "" && !strings.Contains(sub, ".")
}

// publicName reports whether the values of a sign-in service's field or
// parameter (named in lower case) are no secret: the OAuth 2.0 requests'
// and answers' descriptive ones (RFC 6749, RFC 8628, RFC 7636's method)
// and the Xbox token services' (OpenXbox/xbox-webapi-python,
// xbox/webapi/authentication/xal.py and manager.py). A code, a token, a
// ticket, a secret, a verifier, a proof key, a state, a password or a
// session is not one.
func publicName(n string) bool {
	switch n {
	case "grant_type", "client_id", "scope", "redirect_uri", "response_type", "response_mode", "display", "locale",
		"prompt", "approval_prompt", "code_challenge_method", "error", "error_description", "error_uri",
		"token_type", "expires_in", "ext_expires_in", "interval", "verification_uri",
		"relyingparty", "tokentype", "authmethod", "sitename", "sandboxid", "sandbox", "devicetype", "version",
		"appid", "titleid", "redirecturi", "offers", "issueinstant", "notafter", "identity", "xerr":
		return true
	}
	return false
}

// wholeName reports whether a sign-in service's field (named in lower
// case) is kept whole: the gamertag, XUID and userhash an answer claims.
func wholeName(n string) bool { return n == "displayclaims" }

// secretParam reports whether a query parameter (named in lower case) is
// redacted on any host: OAuth 2.0's credentials, wherever a client sends
// them.
func secretParam(n string) bool {
	switch n {
	case "access_token", "refresh_token", "id_token", "code", "device_code", "user_code", "client_secret",
		"code_verifier", "password", "assertion", "client_assertion", "token":
		return true
	}
	return false
}

// maxName bounds a field or parameter name a sign-in body may hold; a
// longer one, or one of other characters than a name's, means the text is
// not the form or JSON it looks like, and it is replaced whole.
const maxName = 64

// RedactParams returns ref (a URL, or a request URI: path?query#fragment)
// with the values of its query and fragment parameters that may be secret
// replaced by Redacted: every one but those publicName keeps at a sign-in
// host, and those secretParam names elsewhere. A sign-in host's query or fragment that is not
// a form is replaced whole. ref comes back unchanged, with no allocation,
// when there is nothing to replace.
func RedactParams(host, ref string) string {
	i := strings.IndexAny(ref, "?#")
	if i < 0 {
		return ref
	}
	signIn := SignInHost(host)
	base, query, frag := ref[:i], "", ""
	hasQuery, hasFrag := ref[i] == '?', ref[i] == '#'
	if hasQuery {
		query, frag, hasFrag = strings.Cut(ref[i+1:], "#")
	} else {
		frag = ref[i+1:]
	}
	q, qChanged := redactForm(query, signIn)
	f, fChanged := redactForm(frag, signIn)
	if !qChanged && !fChanged {
		return ref
	}
	var b strings.Builder
	b.Grow(len(ref) + 2*len(Redacted))
	b.WriteString(base)
	if hasQuery {
		b.WriteString("?" + q)
	}
	if hasFrag {
		b.WriteString("#" + f)
	}
	return b.String()
}

// RedactURL is RedactParams for a URL, at its own host. A URL that does not
// parse has its query and fragment replaced whole.
func RedactURL(rawURL string) string {
	i := strings.IndexAny(rawURL, "?#")
	if i < 0 {
		return rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL[:i+1] + Redacted
	}
	return RedactParams(u.Host, rawURL)
}

// redactForm returns a form's text (name=value pairs split by & or ;) with
// its secret values replaced, and whether anything was. At a sign-in host
// a form holding a pair that is not name=value, or a name that is not one,
// is replaced whole.
func redactForm(form string, signIn bool) (string, bool) {
	var b strings.Builder
	changed := false
	for start := 0; start < len(form); {
		end := strings.IndexAny(form[start:], "&;")
		if end < 0 {
			end = len(form)
		} else {
			end += start
		}
		pair := form[start:end]
		name, value, hasValue := strings.Cut(pair, "=")
		secret, whole := pairSecret(name, hasValue, signIn)
		switch {
		case pair == "":
		case whole:
			return Redacted, form != Redacted
		case secret && hasValue && value != Redacted:
			if !changed {
				b.Grow(len(form) + 2*len(Redacted))
				b.WriteString(form[:start])
				changed = true
			}
			b.WriteString(name + "=" + Redacted)
			pair = ""
		}
		if changed {
			b.WriteString(pair)
			if end < len(form) {
				b.WriteByte(form[end])
			}
		}
		start = end + 1
	}
	if !changed {
		return form, false
	}
	return b.String(), true
}

// pairSecret reports whether the value of a form's parameter name may be a
// secret, and whether the whole form must go (at a sign-in host, a pair
// that is not name=value, or a name that is not one).
func pairSecret(name string, hasValue, signIn bool) (secret, whole bool) {
	n, err := url.QueryUnescape(name)
	if signIn {
		if err != nil || !hasValue || !isName(n) {
			return true, name != ""
		}
		return !publicName(strings.ToLower(n)), false
	}
	if err != nil {
		n = name
	}
	return secretParam(strings.ToLower(n)), false
}

// isName reports whether s is what a form or JSON field of the sign-in
// services is named like: 1 to maxName letters, digits, '_', '-' or '.'.
func isName(s string) bool {
	if s == "" || len(s) > maxName {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// RedactBody returns a request's or an answer's body as a record may keep
// it: at a sign-in host, a form or a JSON document with every value
// replaced by Redacted but those publicName and wholeName keep (and JSON's
// numbers, booleans and nulls), and anything else (cut short, not JSON,
// not a form) replaced whole; elsewhere body itself. An empty body stays
// empty.
func RedactBody(host string, body []byte) []byte {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || !SignInHost(host) {
		return body
	}
	if t[0] == '{' || t[0] == '[' {
		if out, err := redactJSON(t); err == nil {
			return out
		}
		return []byte(Redacted)
	}
	out, _ := redactForm(string(t), true)
	return []byte(out)
}

// frame is one object or array being rewritten by redactJSON.
type frame struct {
	object bool
	n      int // the tokens written in it (names and values)
	// For an object, whether the value of the name just read is public
	// (publicName) or kept whole (wholeName); for an array, whether its
	// values are public.
	public, whole bool
}

// redactJSON rewrites a JSON document token by token, in its order: every
// string value is replaced but those of publicName fields (and of their
// arrays), and those inside a wholeName field; objects are walked, each
// field judged by its own name. A name that is not one (isName) fails it.
func redactJSON(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(doc))
	var stack []frame
	keepWhole := 0 // the depth of the wholeName value being copied, 0 outside one
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		d, delim := tok.(json.Delim)
		if delim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) < keepWhole {
				keepWhole = 0
			}
			out.WriteByte(byte(d))
			if len(stack) > 0 {
				stack[len(stack)-1].n++
			}
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
			if top.n > 0 && (!top.object || top.n%2 == 0) {
				out.WriteByte(',')
			}
		}
		if top != nil && top.object && top.n%2 == 0 { // a field's name
			name, _ := tok.(string)
			if !isName(name) {
				return nil, errors.New("xblauth: a field not named like one")
			}
			lower := strings.ToLower(name)
			top.public, top.whole = publicName(lower), wholeName(lower)
			writeJSON(&out, name)
			out.WriteByte(':')
			top.n++
			continue
		}
		public := keepWhole > 0 || top != nil && top.public
		if delim {
			if keepWhole == 0 && top != nil && top.object && top.whole {
				keepWhole = len(stack) + 1
			}
			stack = append(stack, frame{object: d == '{', public: d == '[' && public})
			out.WriteByte(byte(d))
			continue
		}
		if _, ok := tok.(string); ok && !public {
			tok = Redacted
		}
		writeJSON(&out, tok)
		if top != nil {
			top.n++
		}
	}
	if len(stack) != 0 {
		return nil, io.ErrUnexpectedEOF
	}
	return out.Bytes(), nil
}

// writeJSON appends v as JSON; v is a token's string, json.Number, bool or
// nil, which always encode.
func writeJSON(out *bytes.Buffer, v any) {
	b, _ := json.Marshal(v)
	out.Write(b)
}
