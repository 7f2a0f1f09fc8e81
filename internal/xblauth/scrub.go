package xblauth

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Secrets are credentials a request carried, to be taken out of whatever
// text a service sends back (Scrub) before it reaches an error, a log or
// an event: a service, or a hostile one, may echo them.
type Secrets []string

// minSecret is the shortest text taken for a secret: shorter ones would
// take ordinary words out.
const minSecret = 8

// Add returns ss with s, when s is long enough to be a secret.
func (ss Secrets) Add(s string) Secrets {
	if len(s) < minSecret {
		return ss
	}
	return append(ss, s)
}

// HeaderSecrets returns ss with the credentials of each header given (nil
// ones skipped): the token of Authorization (what follows its ';'), and
// the Signature.
func (ss Secrets) HeaderSecrets(hs ...http.Header) Secrets {
	for _, h := range hs {
		if h == nil {
			continue
		}
		_, tok, _ := strings.Cut(h.Get("Authorization"), ";")
		ss = ss.Add(tok).Add(h.Get("Signature"))
	}
	return ss
}

// PostedSecrets returns ss with the credentials of a posted JSON body:
// the strings under a field named like one (Sensitive: RpsTicket,
// UserTokens, DelegationToken, ...) at any depth, and of a ticket such as
// RpsTicket's "d=<access token>", the token alone too. The other fields
// (RelyingParty, SiteName) are what a refusal names to be understood.
func (ss Secrets) PostedSecrets(body []byte) Secrets {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ss
	}
	var walk func(v any, secret bool)
	walk = func(v any, secret bool) {
		switch v := v.(type) {
		case string:
			if secret {
				ss = ss.Add(v)
				if p, tok, ok := strings.Cut(v, "="); ok && len(p) <= 2 {
					ss = ss.Add(tok)
				}
			}
		case []any:
			for _, e := range v {
				walk(e, secret)
			}
		case map[string]any:
			for k, e := range v {
				walk(e, secret || Sensitive(k))
			}
		}
	}
	walk(v, false)
	return ss
}

// Scrub returns s with each of ss replaced by "[redacted]". Scrub before
// clipping: a clipped text may hold a secret's first part only.
func (ss Secrets) Scrub(s string) string {
	for _, x := range ss {
		s = strings.ReplaceAll(s, x, "[redacted]")
	}
	return s
}

// ScrubError returns err, or, when its text holds one of ss, an error
// whose text is scrubbed and which errors.Is and errors.As see through to
// err.
func (ss Secrets) ScrubError(err error) error {
	if err == nil || len(ss) == 0 {
		return err
	}
	if t := err.Error(); ss.Scrub(t) != t {
		return &scrubbed{err: err, text: ss.Scrub(t)}
	}
	return err
}

type scrubbed struct {
	err  error
	text string
}

func (e *scrubbed) Error() string { return e.text }
func (e *scrubbed) Unwrap() error { return e.err }
