package xblauth

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// RedactBody returns a request's or an answer's body as a record may keep
// it. JSON (a body starting with '{' or '[') and forms (any other) are
// rewritten in place, everything but the values replaced kept byte for
// byte (a byte order mark before JSON is left out; a multipart body is
// replaced whole): at a sign-in host, every value is replaced but those publicName
// and wholeName keep (and JSON's numbers, booleans and nulls), and
// anything else (cut short, not JSON, a form with a pair that is not
// name=value) is replaced whole; elsewhere only the values of the
// parameters and fields credentialName names, at any depth (every string
// and number inside such a field), and a JSON body cut short keeps its
// tokens up to the cut, never a token the cut split. An empty body stays
// empty; a body with nothing to replace comes back as it is.
func RedactBody(host string, body []byte) []byte {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return body
	}
	// A byte order mark before JSON, which many JSON readers skip (RFC
	// 8259 §8.1 lets them): the JSON is read after it.
	if b, ok := bytes.CutPrefix(t, []byte("\ufeff")); ok {
		t = bytes.TrimSpace(b)
		if len(t) == 0 {
			return body
		}
	}
	if multipart(t) {
		return []byte(Redacted)
	}
	signIn := SignInHost(host)
	if t[0] == '{' || t[0] == '[' {
		out, complete := redactJSON(t, signIn)
		switch {
		case !complete && signIn:
			return []byte(Redacted)
		case out == nil:
			return body
		}
		return out
	}
	out, changed := redactForm(string(t), signIn, bodySeparators, nil)
	if !changed && !signIn {
		return body
	}
	return []byte(out)
}

// multipart reports whether t is a multipart body (RFC 7578's
// form-data): a boundary line, then a part's header. Its parts are not
// read as pairs: the whole body is replaced, whatever its fields' names.
func multipart(t []byte) bool {
	line, rest, ok := bytes.Cut(t, []byte("\n"))
	if !ok || !bytes.HasPrefix(line, []byte("--")) {
		return false
	}
	head, _, _ := bytes.Cut(rest, []byte("\n"))
	name, _, _ := bytes.Cut(head, []byte(":"))
	return bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Disposition")) ||
		bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Type"))
}

// frame is one object or array being rewritten by redactJSON.
type frame struct {
	object bool
	n      int  // the tokens read in it (names and values)
	secret bool // inside a field credentialName names: every string and number goes
	// For an object, the name just read: whether its value is public
	// (publicName), kept whole (wholeName), or a credential
	// (credentialName, or inside one); for an array, whether its values
	// are public.
	public, whole, field bool
}

// redactJSON rewrites doc, one or more JSON values, token by token, and
// returns it with the values to hide replaced by "REDACTED", nil if none
// is, and whether doc was read to its end. At a sign-in host every string
// value is replaced but those of publicName fields (and of their arrays),
// and those inside a wholeName field that no credentialName names;
// objects are walked, each field
// judged by its own name, and a name that is not one (isName) ends the
// reading. On any host every string and number inside a field
// credentialName names is replaced. Bytes between tokens and the tokens
// kept are copied as they are; on a syntax error or a cut the output ends
// after the last whole token.
func redactJSON(doc []byte, signIn bool) (out []byte, complete bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var stack []frame
	keepWhole := 0 // the depth of the wholeName value being copied, 0 outside one
	var b []byte   // nil until a value is replaced
	copied := 0    // doc[:copied] is in b
	prev := 0      // where the token being read starts, separators before it included
	replace := func(start, end int) {
		if b == nil {
			b = make([]byte, 0, len(doc)+len(Redacted))
		}
		b = append(b, doc[copied:start]...)
		b = append(b, `"`+Redacted+`"`...)
		copied = end
	}
	finish := func(end int) []byte { // doc[:end] with the values replaced; nil for doc itself
		switch {
		case b == nil && end == len(doc):
			return nil
		case b == nil:
			b = make([]byte, 0, end)
		}
		return append(b, doc[copied:end]...)
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return finish(len(doc)), len(stack) == 0
		}
		if err != nil {
			return finish(prev), false
		}
		end := int(dec.InputOffset())
		start := prev + literalStart(doc[prev:end])
		prev = end
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) < keepWhole {
				keepWhole = 0
			}
			if len(stack) > 0 {
				stack[len(stack)-1].n++
			}
			continue
		}
		if top != nil && top.object && top.n%2 == 0 { // a field's name
			name, _ := tok.(string)
			if signIn && !isName(name) {
				return finish(start), false
			}
			lower := strings.ToLower(name)
			top.public, top.whole, top.field = publicName(lower), wholeName(lower), top.secret || credentialName(lower)
			// Inside a credential a name may be one too (a map of tokens to
			// their state): only the names of a token's own answer stay
			// (Token, and the public and whole ones: NotAfter,
			// DisplayClaims).
			if top.secret && keepWhole == 0 && !top.public && !top.whole && lower != "token" {
				replace(start, end)
			}
			top.n++
			continue
		}
		public := keepWhole > 0 || top != nil && top.public
		// Inside a field kept whole too: its credentials go (DisplayClaims'
		// xui entries carry a DelegationToken for a relying party
		// configured for delegation).
		secret := top != nil && (top.object && top.field || !top.object && top.secret)
		if d, ok := tok.(json.Delim); ok {
			if keepWhole == 0 && top != nil && top.object && top.whole {
				keepWhole = len(stack) + 1
				secret = false // a whole value is judged by its own names, not the token it is in
			}
			stack = append(stack, frame{object: d == '{', public: d == '[' && public, secret: secret})
			continue
		}
		switch tok.(type) {
		case string:
			if secret || signIn && !public {
				replace(start, end)
			}
		case json.Number:
			if secret {
				replace(start, end)
			}
		}
		if top != nil {
			top.n++
		}
	}
}

// literalStart returns where a token's own text starts in the bytes the
// decoder read for it: after the whitespace, ',' and ':' before it.
func literalStart(b []byte) int {
	for i, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n', ',', ':':
		default:
			return i
		}
	}
	return len(b)
}
