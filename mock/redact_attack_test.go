package mock

import (
	"net/http"
	"strings"
	"testing"
)

// TestAttackServiceCallsKeepNoSecret: "no secret: credentials in URLs and
// bodies (any field or parameter named like a token, code, secret,
// password, ticket or signature ...) are recorded as REDACTED, and of the
// headers only the userhash is kept". Odd spellings through service
// endpoints: a parameter name percent-encoded, a field name escaped in
// JSON, a credential nested in an MPSD session's custom properties, an
// Authorization sent again under other header spellings. (This held on
// the code attacked.)
func TestAttackServiceCallsKeepNoSecret(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	serveRaw(t, h, "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag&acc%65ss_%74oken=qenc-SECRET-1&X-Xbl-Signature=qsig-SECRET-2")
	url := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + SCID(title1) + "/sessiontemplates/quick/sessions/red"
	do(t, h, "PUT", url, tok, `{"properties":{"custom":{"hostXstsToken":"sess-SECRET-3","\u0070assword":"esc-SECRET-4"}},`+
		`"members":{"me":{"properties":{"custom":{"deep":[{"apiKey":"deep-SECRET-5"}]}}}}}`)
	req, err := http.NewRequest("POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current",
		strings.NewReader(`{"state":"active","ticket":"body-SECRET-6"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", tok)
	req.Header["authorization"] = []string{"XBL3.0 x=1;hdr-SECRET-7"}
	req.Header.Set("X-Authorization", "hdr-SECRET-8")
	send(t, h, req)
	noSecretIn(t, exportsOf(t, h), "qenc-SECRET-1", "qsig-SECRET-2", "sess-SECRET-3", "esc-SECRET-4", "deep-SECRET-5",
		"body-SECRET-6", "hdr-SECRET-7", "hdr-SECRET-8")
}
