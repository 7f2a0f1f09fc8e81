package mock

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// attack4UserXSTS signs the default account in and asks XSTS for its token for
// relying party rp: the status and the Authorization value.
func attack4UserXSTS(t *testing.T, h *Handler, rp string) (int, string) {
	t.Helper()
	ut := attackUserToken(t, h)
	status, b := post(t, h, "https://xsts.auth.xboxlive.com/xsts/authorize", "application/json",
		`{"RelyingParty":"`+rp+`","TokenType":"JWT","Properties":{"UserTokens":["`+ut+`"],"SandboxId":"RETAIL"}}`)
	var a struct {
		Token         string
		DisplayClaims struct{ Xui []struct{ Uhs string } }
	}
	json.Unmarshal(b, &a)
	if status != http.StatusOK || len(a.DisplayClaims.Xui) == 0 {
		return status, ""
	}
	return status, "XBL3.0 x=" + a.DisplayClaims.Xui[0].Uhs + ";" + a.Token
}

// TestAttack4UserTokenForTitleServiceAtXboxService: docs/MOCK.md "A game
// backend's sign-in", the mock's choices: "an X-token for another relying
// party at an Xbox service | 401 | such tokens are issued for the relying
// party alone" (and README.md: X-tokens are "for their relying party").
// A user's XSTS token for a title service's relying party
// (rp://fgrl-mock-service/, the one every mock knows) is what a game
// client hands its backend; the mock's user token carries no relying
// party (signInToken: XUID, title, serial, expiry), so the backend, or
// whoever sees that token, calls profile.xboxlive.com as the user with it.
func TestAttack4UserTokenForTitleServiceAtXboxService(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	status, auth := attack4UserXSTS(t, h, MockServiceRelyingParty)
	if status != http.StatusOK || auth == "" {
		t.Fatalf("user XSTS for %s: %d", MockServiceRelyingParty, status)
	}
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", auth)
	req.Header.Set("x-xbl-contract-version", "2")
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a user's token for relying party %s at profile.xboxlive.com: %d %.200s, want 401 (issued for that relying party alone)",
			MockServiceRelyingParty, resp.StatusCode, b)
	}
}
