package har

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAttack63HARSignInHostSpellingsGoUnredacted: a sign-in service's host
// written as an HTTP client still reaches it: with a soft hyphen (U+00AD,
// invisible, which IDNA maps to nothing), fullwidth letters or an
// ideographic full stop. Go's own http.Client dials login.live.com:443 /
// user.auth.xboxlive.com:443 for each (checked below, the dial refused
// before any traffic). The Writer takes the host from url.Parse as
// written, xblauth.SignInHost does not know it, and the sign-in service's
// body is redacted as any other host's: only credential-named fields go,
// so the device-code answer's message (which spells the user code out),
// an OAuth state, the login page's PPFT and the device's proof key are
// written as they came, where the same entry at "login.live.com" has
// every one of them REDACTED.
//
// Promised (internal/har, package doc): "It never writes a secret:
// tokens, codes, tickets and the sign-in services' bodies are redacted
// (xblauth)." and (Writer) "Secrets are written redacted whatever the
// entry holds". xblauth's publicName: "A code, a token, a ticket, a
// secret, a verifier, a proof key, a state, a password or a session is
// not one".
func TestAttack63HARSignInHostSpellingsGoUnredacted(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	deviceAnswer := `{"user_code":"ATKUSERCODE","device_code":"ATKDEV","verification_uri":"https://www.microsoft.com/link",` +
		`"expires_in":900,"interval":5,"message":"To sign in, open https://www.microsoft.com/link and enter the code ATKMSGCODE to authenticate."}`
	form := "client_id=0000000048093EE3&scope=service::user.auth.xboxlive.com::MBI_SSL&state=ATKSTATE&PPFT=ATKPPFT"
	deviceReq := `{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"AuthMethod":"ProofOfPossession",` +
		`"Id":"{ATKDEVICEID}","DeviceType":"Win32","Version":"10.0","ProofKey":{"crv":"P-256","alg":"ES256","use":"sig","kty":"EC","x":"ATKPROOFX","y":"ATKPROOFY"}}}`
	secrets := []string{"ATKMSGCODE", "ATKSTATE", "ATKPPFT", "ATKPROOFX", "ATKDEVICEID"}
	entries := func(login, device string) []Entry {
		return []Entry{
			{Time: t0, Method: "POST", URL: "https://" + login + "/oauth20_connect.srf", Status: 200,
				RequestBody: []byte(form), ResponseBody: []byte(deviceAnswer)},
			{Time: t0, Method: "POST", URL: "https://" + device + "/device/authenticate", Status: 200,
				RequestBody: []byte(deviceReq)},
		}
	}
	// The control: the canonical spelling has every one redacted.
	doc := attackHAR(t, entries("login.live.com", "device.auth.xboxlive.com")...)
	for _, s := range secrets {
		if bytes.Contains(doc, []byte(s)) {
			t.Fatalf("control: the canonical host's entry holds %s:\n%s", s, doc)
		}
	}
	for _, sp := range []struct{ login, device string }{
		{"login.live.com\u00ad", "device.auth.xboxlive.com\u00ad"},
		{"ｌｏｇｉｎ.live.com", "ｄｅｖｉｃｅ.auth.xboxlive.com"},
		{"login\u3002live\u3002com", "device\u3002auth\u3002xboxlive\u3002com"},
	} {
		// A Go client sends to the sign-in service itself.
		for host, want := range map[string]string{sp.login: "login.live.com:443", sp.device: "device.auth.xboxlive.com:443"} {
			var dialed string
			c := &http.Client{Transport: &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
				dialed = addr
				return nil, errors.New("atk: no traffic")
			}}}
			c.Post("https://"+host+"/x", "text/plain", strings.NewReader("x"))
			if dialed != want {
				t.Fatalf("%q: the client dialed %q, want %q", host, dialed, want)
			}
		}
		doc := attackHAR(t, entries(sp.login, sp.device)...)
		for _, s := range secrets {
			if bytes.Contains(doc, []byte(s)) {
				t.Errorf("hosts %q, %q (a client reaches the sign-in services): the HAR holds %s, REDACTED at the canonical hosts", sp.login, sp.device, s)
			}
		}
	}
}
