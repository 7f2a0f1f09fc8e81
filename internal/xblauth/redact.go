package xblauth

import (
	"net/url"
	"strings"
)

// What a record of calls (the mock's, a HAR file, analyze.Recorder) or a
// command's output may keep of a call is decided here, in one place:
// RedactParams and RedactURL for its URL, RedactBody for its bodies,
// Redact and Sensitive for its headers.
//
// The sign-in services are judged by what is public, so that a field they
// add tomorrow is a secret until named here: every value is replaced but
// those publicName and wholeName keep (and the numbers, booleans and nulls
// of JSON, which carry no credential unless credentialName names their
// field). What cannot be read as a form or JSON, on a sign-in host, is
// replaced whole. Elsewhere the data is what the record is for, and only
// the values of parameters and fields credentialName names are replaced,
// at any depth.

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

// wholeName reports whether a field (named in lower case) is kept whole:
// the gamertag, XUID and userhash a sign-in answer claims.
func wholeName(n string) bool { return n == "displayclaims" }

// credentialName reports whether a parameter or field (named in lower
// case) holds a credential on any host, wherever a client sends it: OAuth
// 2.0's codes, tokens, secrets, verifiers and assertions (RFC 6749, RFC
// 7636, RFC 7521), the Xbox token services' tickets and tokens (RpsTicket,
// UserToken(s), DeviceToken, TitleToken, XSTS tokens, as xbox-webapi-python
// and the xCloud clients send them: {"token": ..., "offeringId": ...}), a
// request's Authorization, Signature and cookies, and anything named like
// a token, secret, password, ticket, credential, verifier, assertion or API
// key, or a code (a name ending in "code" or "codes": auth_code, authCode,
// verification_code, backupCodes, but not describesCode's errorCode or
// countryCode), a name followed by "[]" as the name. The public names of the
// sign-in services (token_type, TokenType) are not, nor continuationToken,
// the services' page cursor, which they hand out with every page.
func credentialName(n string) bool {
	n = strings.TrimSuffix(n, "[]") // code[]: the array form PHP, Rails and qs read as code
	if publicName(n) || n == "continuationtoken" {
		return false
	}
	switch n {
	case "code", "device_code", "user_code", "code_verifier", "sig", "pwd", "passwd", "assertion", "client_assertion":
		return true
	}
	if strings.HasPrefix(n, "xsts") {
		return true
	}
	if (strings.HasSuffix(n, "code") || strings.HasSuffix(n, "codes")) && !describesCode(strings.TrimSuffix(n, "s")) { // auth_code, authCode, verification_code, otp_code, recovery_codes
		return true
	}
	for _, part := range [...]string{"token", "secret", "password", "ticket", "authorization", "signature", "cookie",
		"apikey", "api_key", "api-key", "credential", "verifier", "assertion"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// describesCode reports whether a name (in lower case) that ends in
// "code" names what describes a call rather than a credential: a status,
// an error or a place's or language's code.
func describesCode(n string) bool {
	switch n {
	case "errorcode", "error_code", "statuscode", "status_code", "httpstatuscode", "countrycode", "country_code",
		"languagecode", "language_code", "regioncode", "region_code", "currencycode", "currency_code":
		return true
	}
	return false
}

// maxName bounds a field or parameter name a sign-in body may hold; a
// longer one, or one of other characters than a name's, means the text is
// not the form or JSON it looks like, and it is replaced whole.
const maxName = 64

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

// RedactParams returns ref (a request target as a server reads it, a URL,
// or a request URI: path?query#fragment) with the values of its query and
// fragment parameters that may be secret replaced by Redacted: every one
// but those publicName keeps at a sign-in host, and those credentialName
// names elsewhere. A sign-in host's query or fragment that is not a form is
// replaced whole. ref comes back unchanged, with no allocation, when there
// is nothing to replace.
//
// ref is read both as net/http's server reads a request target
// (url.ParseRequestURI: no fragment; the query is everything after the
// first '?', a '#' included) and as a URL (the fragment after the first
// '#'), and redacted under both: the text between a '#' and the first '?'
// after it is a form, and so is everything after the first '?', split at
// '&', ';' and '#'.
func RedactParams(host, ref string) string {
	i := strings.IndexAny(ref, "?#")
	if i < 0 {
		return ref
	}
	signIn := SignInHost(host)
	frag, query, hasFrag, hasQuery := "", "", ref[i] == '#', ref[i] == '?'
	rest := ref[i+1:]
	if hasFrag {
		frag, query, hasQuery = strings.Cut(rest, "?")
	} else {
		query = rest
	}
	f, fChanged := redactForm(frag, signIn, urlSeparators, nil)
	q, qChanged := redactForm(query, signIn, urlSeparators, nil)
	// net/http reads the query's pairs split at '&' (and ';', which a
	// server of another language may take): a '#' inside one is part of
	// its name there ("access_token\x80x#?code=y" is one pair, named like
	// a token), where the split at '#' too judged "?code".
	if q2, changed := redactForm(q, signIn, bodySeparators, hashName); changed {
		q, qChanged = q2, true
	}
	if !fChanged && !qChanged {
		return ref
	}
	var b strings.Builder
	b.Grow(len(ref) + 2*len(Redacted))
	b.WriteString(ref[:i])
	if hasFrag {
		b.WriteString("#" + f)
	}
	if hasQuery {
		b.WriteString("?" + q)
	}
	return b.String()
}

// hashName reports whether a pair's name holds a '#' (redactForm's only,
// for the pairs net/http names otherwise than a split at '#' does).
func hashName(name string) bool { return strings.Contains(name, "#") }

// The separators of a form's pairs: in a body, '&' and ';' (the ';' that
// net/url refuses, since a server of another language may take it); in a
// URL, also '#', so that the pairs a URL parser reads after a fragment's
// '#' are judged as well as those net/http reads as the query.
const (
	bodySeparators = "&;"
	urlSeparators  = "&;#"
)

// RedactURL returns rawURL as a record or a command's output may show it:
// without its user info (a password, or a token given as the user name),
// and with RedactParams' redaction at its own host. A URL that does not
// parse loses what may be user info (everything after "//" up to its last
// '@', which may have ended an unescaped password's '/', '?' or '#') and
// its query and fragment whole. rawURL comes back unchanged, with no
// allocation, when it holds none of '@', '?' and '#'.
func RedactURL(rawURL string) string {
	if !strings.ContainsAny(rawURL, "@?#") {
		return rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		s := rawURL
		if i := strings.Index(s, "//"); i >= 0 {
			if at := strings.LastIndexByte(s[i:], '@'); at >= 0 {
				s = s[:i+2] + s[i+at+1:]
			}
		}
		if i := strings.IndexAny(s, "?#"); i >= 0 {
			s = s[:i+1] + Redacted
		}
		return s
	}
	if u.User != nil {
		// The authority starts after the scheme's "//" and, as url.Parse
		// reads it, ends at the first '/', '?' or '#'; its user info ends at
		// its last '@'.
		start := 0
		if u.Scheme != "" {
			start = len(u.Scheme) + 1
		}
		start += 2
		end := strings.IndexAny(rawURL[start:], "/?#")
		if end < 0 {
			end = len(rawURL) - start
		}
		at := strings.LastIndexByte(rawURL[start:start+end], '@')
		rawURL = rawURL[:start] + rawURL[start+at+1:]
	}
	return RedactParams(u.Host, rawURL)
}

// redactForm returns a form's text (name=value pairs split by any byte of
// seps) with its secret values replaced, and whether anything was. At a
// sign-in host a form holding a pair that is not name=value, or a name
// that is not one, is replaced whole. With only, the form is read again
// as another reader splits it: only the pairs whose names only takes are
// judged, by their names alone, the others kept as they are.
func redactForm(form string, signIn bool, seps string, only func(name string) bool) (string, bool) {
	var b strings.Builder
	changed := false
	for start := 0; start < len(form); {
		end := strings.IndexAny(form[start:], seps)
		if end < 0 {
			end = len(form)
		} else {
			end += start
		}
		pair := form[start:end]
		name, value, hasValue := strings.Cut(pair, "=")
		secret, whole := pairSecret(name, hasValue, signIn)
		if only != nil {
			secret, whole = secret && only(name), false
		}
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
	return credentialName(strings.ToLower(n)), false
}
