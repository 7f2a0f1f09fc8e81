package har

import (
	"bytes"
	"testing"
)

// TestAttack2HARSignInBodyRedactedWhenURLHasNoHost: a023952 replaces the
// bodies whole when url.Parse refuses the URL, "without its host, whose
// rules redact them, nothing says which of their values are secrets"
// (write.go). A URL that parses but names no host leaves the writer in the
// same place: "https:login.live.com/..." (url.Parse reads it as opaque,
// where a WHATWG parser, a browser's, reads host login.live.com), a URL
// without its scheme, a backslash for the slashes. The bodies are then
// redacted as any host's: a sign-in form's state and session, and its
// answer's PPFT, are written as they came.
//
// Promised (internal/har, Writer): "Secrets are written redacted whatever
// the entry holds: the Authorization header, and in URLs and bodies what
// xblauth redacts."; write.go (raw): "The bodies of an entry whose URL
// does not parse ... are replaced whole: without its host, whose rules
// redact them, nothing says which of their values are secrets." xblauth
// (publicName): "A code, a token, a ticket, a secret, a verifier, a proof
// key, a state, a password or a session is not one".
func TestAttack2HARSignInBodyRedactedWhenURLHasNoHost(t *testing.T) {
	body := []byte("grant_type=authorization_code&client_id=c&state=ATKSTATESECRET&session=ATKSESSIONSECRET")
	page := []byte(`<form><input type="hidden" name="PPFT" value="ATKPPFTSECRET"/></form>`)
	for _, u := range []string{
		"https://login.live.com/oauth20_token.srf", // control: the host is known
		"https:login.live.com/oauth20_token.srf",
		"login.live.com/oauth20_token.srf",
		`https:\\login.live.com\oauth20_token.srf`,
		"https:///oauth20_token.srf",
	} {
		t.Run(u, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b)
			if err := w.Write(&Entry{Time: t0, Method: "POST", URL: u, RequestBody: body, Status: 200, ResponseBody: page}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			for _, s := range []string{"ATKSTATESECRET", "ATKSESSIONSECRET", "ATKPPFTSECRET"} {
				if bytes.Contains(b.Bytes(), []byte(s)) {
					t.Errorf("the HAR holds the sign-in secret %s for URL %q", s, u)
				}
			}
		})
	}
}
