package mock

import (
	"io"
	"net/http"
	"testing"
)

// Outside attacks (attack58) on the relying-party binding of a user's XSTS
// tokens for the Xbox services' other relying parties.

// attack58RPCall sends method url with an XSTS answer's token and returns the
// status.
func attack58RPCall(t *testing.T, h *Handler, a authAnswer, method, url string, hdr ...string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("Authorization", "XBL3.0 x="+a.DisplayClaims.Xui[0]["uhs"]+";"+a.Token)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// held: docs/MOCK.md "a user's XSTS token for one of the Xbox services'
// other relying parties (licensing, music, accounts) | taken only at the
// hosts the NSAL document gives that relying party (inventory.xboxlive.com
// and collections.mp.microsoft.com for licensing); refused elsewhere,
// 401". Licensing is taken at inventory and collections (any case, a
// port, a trailing dot), refused at collections.md.mp.microsoft.com (the
// recording gives it *.mp.microsoft.com's party), at RTA's upgrade, and
// at profile; music and accounts are taken at none of them.
func TestAttack58RPBindingAcrossHostsAndRTA(t *testing.T) {
	h := Must(New(Config{}))
	ut := attack52UserToken(t, h)
	tokenFor := func(rp string) authAnswer {
		st, a, b := attack52XSTS(t, h, `{"RelyingParty": "`+rp+`", "TokenType": "JWT", "Properties": {"UserTokens": ["`+ut+`"], "SandboxId": "RETAIL"}}`)
		if st != 200 {
			t.Fatalf("XSTS for %s: %d %s", rp, st, b)
		}
		return a
	}
	lic := tokenFor("http://licensing.xboxlive.com")
	for _, u := range []string{"https://inventory.xboxlive.com/users/me/inventory", "https://INVENTORY.xboxlive.com:443/users/me/inventory",
		"https://inventory.xboxlive.com./users/me/inventory", "https://collections.mp.microsoft.com/v7.0/collections/query"} {
		if st := attack58RPCall(t, h, lic, "GET", u); st == 401 || st == 403 {
			t.Errorf("licensing token at %s: %d, want taken", u, st)
		}
	}
	for _, u := range []string{"https://collections.md.mp.microsoft.com/v7.0/collections/query", "https://firstparty-collections.mp.microsoft.com/x",
		"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"} {
		if st := attack58RPCall(t, h, lic, "GET", u); st != 401 {
			t.Errorf("licensing token at %s: %d, want 401", u, st)
		}
	}
	if st := attack58RPCall(t, h, lic, "GET", "https://rta.xboxlive.com"+RTAPath, "Connection", "Upgrade", "Upgrade", "websocket",
		"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol", RTASubprotocol); st != 401 {
		t.Errorf("licensing token at RTA's upgrade: %d, want 401", st)
	}
	for _, rp := range []string{"http://music.xboxlive.com", "http://accounts.xboxlive.com"} {
		a := tokenFor(rp)
		for _, u := range []string{"https://inventory.xboxlive.com/users/me/inventory", "https://collections.mp.microsoft.com/v7.0/collections/query",
			"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"} {
			if st := attack58RPCall(t, h, a, "GET", u); st != 401 {
				t.Errorf("%s token at %s: %d, want 401", rp, u, st)
			}
		}
	}
}

// held: script.go "A token the services would refuse (not minted, or past
// its NotAfter) names no caller: the answer is neither counted nor
// recorded as theirs". A counted scripted rule at profile answers a
// licensing token, recording no user and counting nothing; at inventory
// the same token is the user's.
func TestAttack58RPBindingScriptedAnswers(t *testing.T) {
	h := Must(New(Config{}))
	ut := attack52UserToken(t, h)
	st, lic, b := attack52XSTS(t, h, `{"RelyingParty": "http://licensing.xboxlive.com", "TokenType": "JWT", "Properties": {"UserTokens": ["`+ut+`"], "SandboxId": "RETAIL"}}`)
	if st != 200 {
		t.Fatalf("XSTS: %d %s", st, b)
	}
	if err := h.SetScript(Script{Rules: []ScriptRule{
		{Name: "prof", Match: ScriptMatch{Host: "profile.xboxlive.com"}, Answers: []ScriptAnswer{{Status: 200}}, Count: true},
		{Name: "inv", Match: ScriptMatch{Host: "inventory.xboxlive.com"}, Answers: []ScriptAnswer{{Status: 200}}, Count: true},
	}}); err != nil {
		t.Fatal(err)
	}
	h.ForgetCalls()
	attack58RPCall(t, h, lic, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag")
	attack58RPCall(t, h, lic, "GET", "https://inventory.xboxlive.com/users/me/inventory")
	calls := h.Calls(CallFilter{})
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	if calls[0].XUID != "" {
		t.Errorf("scripted profile answer to a licensing token recorded as user %s's", calls[0].XUID)
	}
	if calls[1].XUID == "" {
		t.Errorf("scripted inventory answer to a licensing token recorded as no user's")
	}
}
