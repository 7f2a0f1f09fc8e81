package client

import (
	"encoding/json"
	"net/http"
	"strings"
)

// secrets are credentials a request carried, taken out of whatever text a
// service sends back before it reaches an error: a service, or a hostile
// one, may echo them.
type secrets []string

// minSecret is the shortest text taken for a secret: shorter ones would
// take ordinary words out.
const minSecret = 8

// credentialsOf returns the tokens (what follows the ';' of
// Authorization) and signatures of the headers given, nil ones skipped:
// the caller's request's and the attempt's that was sent last (the
// transport renews a token after a 401 and signs each attempt afresh).
func credentialsOf(hs ...http.Header) secrets {
	var ss secrets
	for _, h := range hs {
		if h == nil {
			continue
		}
		_, tok, _ := strings.Cut(h.Get("Authorization"), ";")
		ss = ss.add(tok).add(h.Get("Signature"))
	}
	return ss
}

// postedSecrets returns every string of a posted JSON body long enough
// to be a credential (a token, a ticket, a key): a sign-in's answer may
// echo what it was sent.
func postedSecrets(body []byte) secrets {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var ss secrets
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if len(v) >= 16 {
				ss = ss.add(v)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return ss
}

func (ss secrets) add(s string) secrets {
	if len(s) < minSecret {
		return ss
	}
	return append(ss, s)
}

// clean returns s with each secret replaced by "[redacted]".
func (ss secrets) clean(s string) string {
	for _, x := range ss {
		s = strings.ReplaceAll(s, x, "[redacted]")
	}
	return s
}

// cleaned is an error whose text has had secrets taken out; errors.Is and
// errors.As still reach the error it wraps.
type cleaned struct {
	err  error
	text string
}

func (e *cleaned) Error() string { return e.text }
func (e *cleaned) Unwrap() error { return e.err }

// cleanErr returns err, or a cleaned one when its text holds a secret.
func (ss secrets) cleanErr(err error) error {
	if err == nil {
		return nil
	}
	if t := err.Error(); ss.clean(t) != t {
		return &cleaned{err: err, text: ss.clean(t)}
	}
	return err
}
