package xblauth

import (
	"strings"
	"testing"
)

// TestAttack4DelegationTokenInDisplayClaims: RELIABILITY.md "A game backend's
// sign-in: service to service" promises the delegation token "in no export
// of the record of calls, nor the log" (TestServiceSignInLeavesNoSecret),
// and redact.go:74-93 (credentialName) names anything named like a token
// a credential "on any host, wherever a client sends it". The mock's XSTS
// answer carries the user's delegation token among its display claims
// (mock/s2s.go addDelegation: DisplayClaims.xui[0].DelegationToken), which
// the client reads there (client/signin.go xboxAuth). RedactBody keeps
// DisplayClaims whole (wholeName) and, inside it, skips even the fields
// credentialName names.
func TestAttack4DelegationTokenInDisplayClaims(t *testing.T) {
	const secret = "dg.SECRETDELEGATION.1773604800.abcdef"
	body := `{"IssueInstant":"2026-03-01T20:00:00Z","NotAfter":"2026-03-02T12:00:00Z","Token":"tok",` +
		`"DisplayClaims":{"xui":[{"gtg":"g","xid":"2533274791234567","uhs":"123","DelegationToken":"` + secret + `"}]}}`
	for _, host := range []string{"xsts.auth.xboxlive.com", "profile.xboxlive.com"} {
		if out := RedactBody(host, []byte(body)); strings.Contains(string(out), "SECRETDELEGATION") {
			t.Errorf("RedactBody(%s) keeps the delegation token: %s", host, out)
		}
	}
}

// held: a field named like a token inside a public field's array is
// redacted at a sign-in host (body.go redactJSON).
func TestAttack4TokenInOffersRedacted(t *testing.T) {
	body := `{"Offers":[{"token":"SECRETOFFER"}],"RelyingParty":"http://xboxlive.com"}`
	if out := RedactBody("sisu.xboxlive.com", []byte(body)); strings.Contains(string(out), "SECRETOFFER") {
		t.Errorf("RedactBody keeps a token inside Offers: %s", out)
	}
}
