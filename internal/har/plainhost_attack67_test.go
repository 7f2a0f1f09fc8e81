package har

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// attack67Dial returns the host a Go http.Client dials for rawURL (lower
// case, without a trailing dot or the port), "" when it makes no call.
func attack67Dial(rawURL string) string {
	var dialed string
	c := &http.Client{Transport: &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		dialed = addr
		return nil, errors.New("attack67: no traffic")
	}}}
	c.Post(rawURL, "text/plain", strings.NewReader("x"))
	if h, _, err := net.SplitHostPort(dialed); err == nil {
		dialed = h
	}
	return strings.TrimSuffix(strings.ToLower(dialed), ".")
}

// attack67Entries reads back a HAR document's entries' URLs and bodies,
// failing when it is not JSON.
func attack67Entries(t *testing.T, doc []byte) []map[string]any {
	t.Helper()
	var d struct {
		Log struct {
			Entries []map[string]any `json:"entries"`
		} `json:"log"`
	}
	if !json.Valid(doc) {
		t.Fatalf("not JSON:\n%s", doc)
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	return d.Log.Entries
}

// held: a sign-in service's host written in any spelling a Go client
// still dials it by (upper case, a trailing dot, a port, an empty port,
// a zero-padded port, user info before it, a percent-encoded fullwidth
// letter, soft hyphen or ideographic full stop), and a host url.Parse
// refuses (login%2Elive.com, a ".." inside an escape), has the state, the
// PPFT, the device code answer's message and the proof key written
// REDACTED, in the URL's query and in the bodies, and the document stays
// JSON. Promised (internal/har, package doc): "It never writes a secret:
// tokens, codes, tickets and the sign-in services' bodies are redacted
// (xblauth)."; (Writer) "Secrets are written redacted whatever the entry
// holds".
func TestAttack67HARSignInHostSpellingsRedacted(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	answer := `{"user_code":"ATKUSERCODE","device_code":"ATKDEV","verification_uri":"https://www.microsoft.com/link",` +
		`"interval":5,"message":"enter the code ATKMSGCODE to sign in"}`
	form := "client_id=0000000048093EE3&state=ATKSTATE&PPFT=ATKPPFT"
	deviceReq := `{"RelyingParty":"http://auth.xboxlive.com","Properties":{"AuthMethod":"ProofOfPossession","Id":"{ATKDEVICEID}",` +
		`"ProofKey":{"crv":"P-256","x":"ATKPROOFX","y":"ATKPROOFY"}}}`
	secrets := []string{"ATKUSERCODE", "ATKMSGCODE", "ATKSTATE", "ATKPPFT", "ATKPROOFX", "ATKDEVICEID", "ATKQSTATE"}
	for _, sp := range []struct {
		login, device string
		reach         bool // a Go client dials the sign-in service
	}{
		{"LOGIN.LIVE.COM", "DEVICE.AUTH.XBOXLIVE.COM", true},
		{"login.live.com.", "device.auth.xboxlive.com.", true},
		{"Login.Live.Com.:443", "Device.Auth.XboxLive.Com.:443", true},
		{"login.live.com:", "device.auth.xboxlive.com:", true},
		{"login.live.com.:", "device.auth.xboxlive.com.:", true},
		{"login.live.com:0443", "device.auth.xboxlive.com:0443", true},
		{"evil.example@login.live.com", "evil.example:pw@device.auth.xboxlive.com", true},
		{"%EF%BD%8Cogin.live.com", "%EF%BD%84evice.auth.xboxlive.com", true},         // fullwidth l, d
		{"%EF%BC%ACOGIN.live.com", "%EF%BC%A4EVICE.auth.xboxlive.com", true},         // fullwidth L, D
		{"login.live.com%C2%AD", "device.auth.xboxlive.com%C2%AD", true},             // a soft hyphen
		{"login%E3%80%82live%E3%80%82com", "device%E3%80%82auth.xboxlive.com", true}, // an ideographic full stop
		{"login%2Elive.com", "device%2Eauth.xboxlive.com", false},
		{"login.live.com%2", "device.auth.xboxlive.com%", false},
	} {
		for _, h := range []struct{ host, want string }{{sp.login, "login.live.com"}, {sp.device, "device.auth.xboxlive.com"}} {
			got := attack67Dial("https://" + h.host + "/x")
			if sp.reach && got != h.want || !sp.reach && got != "" {
				t.Fatalf("%q: a Go client dials %q", h.host, got)
			}
		}
		doc := attackHAR(t,
			Entry{Time: t0, Method: "POST", URL: "https://" + sp.login + "/oauth20_connect.srf?lc=1033&state=ATKQSTATE", Status: 200,
				RequestBody: []byte(form), ResponseBody: []byte(answer)},
			Entry{Time: t0, Method: "POST", URL: "https://" + sp.device + "/device/authenticate", Status: 200,
				RequestBody: []byte(deviceReq)})
		attack67Entries(t, doc)
		for _, s := range secrets {
			if bytes.Contains(doc, []byte(s)) {
				t.Errorf("hosts %q, %q: the HAR holds %s:\n%s", sp.login, sp.device, s, doc)
			}
		}
	}
}

// held: an ordinary Xbox service's call (a plain host, with a port, in
// upper case, with a trailing dot, the mock's loopback address, an IPv6
// literal with a port, a websocket) keeps its harmless query and its
// bodies as they came; only a credential-named parameter goes. Promised
// (internal/har, raw): only "The bodies and query of an entry whose URL
// names no host (hostOf), or a host not written as a client sends it
// (plainHost), are replaced whole"; elsewhere what xblauth redacts
// ("Elsewhere the data is what the record is for").
func TestAttack67HARPlainHostKeepsQuery(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	path := "/users/batch/profile/settings?settings=Gamertag,GameDisplayPicRaw&maxItems=50&continuationToken=abc&access_token=ATKTOKEN"
	want := "/users/batch/profile/settings?settings=Gamertag,GameDisplayPicRaw&maxItems=50&continuationToken=abc&access_token=REDACTED"
	body := `{"userIds":["2533274790395904"],"settings":["Gamertag"]}`
	answer := `{"profileUsers":[{"id":"2533274790395904","settings":[{"id":"Gamertag","value":"Major Nelson"}]}]}`
	for _, base := range []string{
		"https://profile.xboxlive.com", "https://profile.xboxlive.com:443", "HTTPS://PROFILE.XBOXLIVE.COM",
		"https://profile.xboxlive.com.", "http://127.0.0.1:39517", "http://[::1]:39517", "http://localhost:8080",
		"wss://rta.xboxlive.com", "https://user@titlehub.xboxlive.com", "https://peoplehub_2.xboxlive.com",
	} {
		doc := attackHAR(t, Entry{Time: t0, Method: "POST", URL: base + path, Status: 200,
			RequestBody: []byte(body), ResponseBody: []byte(answer)})
		es := attack67Entries(t, doc)
		if len(es) != 1 {
			t.Fatalf("%s: %d entries", base, len(es))
		}
		req := es[0]["request"].(map[string]any)
		resp := es[0]["response"].(map[string]any)
		u, _ := req["url"].(string)
		if !strings.HasSuffix(u, want) {
			t.Errorf("%s: URL written %q, want it to end %q", base, u, want)
		}
		if pd, _ := req["postData"].(map[string]any); pd == nil || pd["text"] != body {
			t.Errorf("%s: request body written %v", base, req["postData"])
		}
		if c, _ := resp["content"].(map[string]any); c == nil || c["text"] != answer {
			t.Errorf("%s: answer written %v", base, resp["content"])
		}
	}
}
