package analyze

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAttack4RecorderDropsDelegationToken: README/RELIABILITY.md "Secrets and
// hostile text" promises that the HAR writer and analyze.Recorder redact
// sign-in answers' bodies ("answers' bodies too"), and RELIABILITY.md "A
// game backend's sign-in" that the delegation token is in no record. An
// XSTS answer for a relying party configured for delegation carries the
// user's delegation token in DisplayClaims.xui[0].DelegationToken (the
// mock's s2s.go addDelegation; client/signin.go reads it there): a
// credential a game backend trades for X-tokens acting for the user. The
// Recorder keeps it, as RedactBody keeps DisplayClaims whole.
func TestAttack4RecorderDropsDelegationToken(t *testing.T) {
	const answer = `{"IssueInstant":"2026-03-01T20:00:00Z","NotAfter":"2026-03-02T12:00:00Z","Token":"XSTSSECRET",` +
		`"DisplayClaims":{"xui":[{"gtg":"g","xid":"2533274791234567","uhs":"123","DelegationToken":"DELEGATIONSECRET"}]}}`
	rec := &Recorder{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
			Body: io.NopCloser(strings.NewReader(answer))}, nil
	})}
	req := mustRequest(t, "POST", "https://xsts.auth.xboxlive.com/xsts/authorize",
		`{"RelyingParty":"rp://game.example/","TokenType":"JWT","Properties":{"UserTokens":["USERSECRET"],"SandboxId":"RETAIL"}}`)
	resp, err := rec.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, c := range rec.Calls() {
		all := c.URL + " " + string(c.RequestBody) + " " + string(c.ResponseBody)
		for _, s := range []string{"XSTSSECRET", "USERSECRET", "DELEGATIONSECRET"} {
			if strings.Contains(all, s) {
				t.Errorf("the recorded call holds %s: %s", s, all)
			}
		}
	}
}
