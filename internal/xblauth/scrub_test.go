package xblauth

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzScrub: whatever the posted body and the headers, Scrub leaves none
// of the secrets they hold in the text (but a secret made of "[redacted]"'s
// own brackets, which the replacement could form anew), scrubbing twice
// changes nothing more, and no secret is shorter than minSecret.
func FuzzScrub(f *testing.F) {
	f.Add([]byte(`{"Properties":{"RpsTicket":"d=SECRET-ACCESS-TOKEN-0123"},"RelyingParty":"http://auth.xboxlive.com"}`),
		"XBL3.0 x=1;SECRET-TOKEN-abcdef", "sig", "ticket SECRET-ACCESS-TOKEN-0123 for http://auth.xboxlive.com")
	f.Add([]byte(`{"UserTokens":["aaaaaaaaaaaaaaaa","aaaaaaaab"]}`), "", "", "aaaaaaaaaaaaaaaaab aaaaaaaab")
	f.Fuzz(func(t *testing.T, body []byte, auth, sig, text string) {
		h := http.Header{}
		h.Set("Authorization", auth)
		h.Set("Signature", sig)
		ss := Secrets{}.PostedSecrets(body).HeaderSecrets(h)
		out := ss.Scrub(text)
		for _, x := range ss {
			if len(x) < minSecret {
				t.Fatalf("a secret of %d bytes: %q", len(x), x)
			}
			if !strings.ContainsAny(x, "[]") && strings.Contains(asciiLower(out), asciiLower(x)) {
				t.Fatalf("Scrub(%q) = %q still holds %q", text, out, x)
			}
		}
		if again := ss.Scrub(out); again != out && !secretsWithBrackets(ss) {
			t.Fatalf("scrubbing twice changed %q to %q", out, again)
		}
	})
}

func secretsWithBrackets(ss Secrets) bool {
	for _, x := range ss {
		if strings.ContainsAny(x, "[]") {
			return true
		}
	}
	return false
}

// TestPostedSecrets: the strings under credential fields, at any depth,
// a ticket's token alone, and the form a URL escapes each to; not the
// public fields a refusal names.
func TestPostedSecrets(t *testing.T) {
	body := `{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"AuthMethod":"RPS",` +
		`"SiteName":"user.auth.xboxlive.com","RpsTicket":"d=ACCESS-0123456789","UserTokens":["USER-TOKEN-0123"],"SandboxId":"RETAIL"}}`
	got := Secrets{}.PostedSecrets([]byte(body))
	want := map[string]bool{"d=ACCESS-0123456789": true, "d%3DACCESS-0123456789": true, "ACCESS-0123456789": true, "USER-TOKEN-0123": true}
	if len(got) != len(want) {
		t.Errorf("PostedSecrets = %q, want %d secrets", got, len(want))
	}
	for _, x := range got {
		if !want[x] {
			t.Errorf("PostedSecrets took %q", x)
		}
	}
}

// TestAddEscapedForms: a secret is taken out as given, URL-escaped and
// JSON-escaped (a server that echoes it through encoding/json writes <, >
// and & as \u003c, \u003e, \u0026), the forms xblcall check's and proxy
// --status's errors met.
func TestAddEscapedForms(t *testing.T) {
	const secret = "s3cret<&>TOKEN+/="
	ss := Secrets{}.Add(secret)
	for _, echoed := range []string{secret, "s3cret%3C%26%3ETOKEN%2B%2F%3D", `s3cret\u003c\u0026\u003eTOKEN+/=`} {
		if got := ss.Scrub("auth: " + echoed + "."); got != "auth: [redacted]." {
			t.Errorf("Scrub(%q) = %q", echoed, got)
		}
	}
}
