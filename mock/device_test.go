package mock

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/wiretest"
	"github.com/xblgo/fgrl/limits"
)

// TestDeviceIDForms: the device Id in each form clients send it (xal.py:
// Android "{guid}", iOS upper case; the npm client's Win32 bare) names one
// device; another form of Id, or a device type no platform has, is 400.
func TestDeviceIDForms(t *testing.T) {
	h := NewHandler()
	d := newXALDevice(t, h, time.Now)
	dids := map[string]bool{}
	for _, tc := range []struct {
		id, typ string
		want    int
	}{
		{"{decf45e4-945d-4379-b708-d4ee92c12d99}", "Android", http.StatusOK},
		{"DECF45E4-945D-4379-B708-D4EE92C12D99", "iOS", http.StatusOK},
		{"decf45e4-945d-4379-b708-d4ee92c12d99", "Win32", http.StatusOK},
		{"decf45e4945d4379b708d4ee92c12d99", "Win32", http.StatusBadRequest},
		{"{decf45e4-945d-4379-b708-d4ee92c12d99", "Android", http.StatusBadRequest},
		{"", "Android", http.StatusBadRequest},
		{"decf45e4-945d-4379-b708-d4ee92c12d99", "Toaster", http.StatusBadRequest},
	} {
		body := d.deviceTokenRequest()
		p := body["Properties"].(map[string]any)
		p["Id"], p["DeviceType"] = tc.id, tc.typ
		status, b, _ := signedPost(t, h, d.key, time.Now(), "https://device.auth.xboxlive.com/device/authenticate", body, nil)
		if status != tc.want {
			t.Errorf("Id %q, %s: %d %s, want %d", tc.id, tc.typ, status, b, tc.want)
			continue
		}
		var a struct {
			DisplayClaims struct{ Xdi struct{ Did string } }
		}
		json.Unmarshal(b, &a)
		if status == http.StatusOK {
			dids[a.DisplayClaims.Xdi.Did] = true
		}
	}
	if len(dids) != 1 {
		t.Errorf("one device's Ids got the device IDs %v, want one", dids)
	}
}

// TestPublishedWin32DeviceToken: @xboxreplay/xboxlive-auth 5.1.0's
// createDummyWin32DeviceToken request, as it sends it (its one signature,
// made on 2025-08-25), gets a device token: the mock checks the
// signature against the body's key but not its age at this endpoint
// (device.go); the same body with its key changed is refused.
func TestPublishedWin32DeviceToken(t *testing.T) {
	const body = `{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"AuthMethod":"ProofOfPossession",` +
		`"Id":"91dc36cd-080a-4493-8234-3b585c78b0d5","DeviceType":"Win32","Version":"10.0.19042","ProofKey":{"crv":"P-256",` +
		`"alg":"ES256","use":"sig","kty":"EC","x":"qMKczrK1b5opLCIX-tzyqOWztlbERh1i5sxDzdHrdxs","y":"23uwwgd2oSnWzyjHflRKaLxFsxX0-oE-mECf6c0gOaE"}}}`
	const sig = "AAAAAQHcFbBVEuAAHfvqYcbt4rhMgxAKtPiOJgct4UTCX2HqbQNLTHsnwjp9zcYNZMKHEknpyGWNqsIhyXaAd2v8ADmGrfh11oMS1g=="
	h := NewHandler()
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"as published, twice", body, http.StatusOK},
		{"as published, again", body, http.StatusOK},
		{"another key", strings.Replace(body, `"y":"23uw`, `"y":"23uv`, 1), http.StatusBadRequest},
		{"another Id", strings.Replace(body, "91dc36cd", "91dc36ce", 1), http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodPost, "https://device.auth.xboxlive.com/device/authenticate", strings.NewReader(tc.body))
		req.Header.Set("Signature", sig)
		r := send(t, h, req)
		if r.status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.want)
		}
	}
}

// TestTitleToken: title/authenticate in both published forms (the title's
// ID with the proof key, after go-xsapi's xal/xast; the RPS ticket) gives
// a title token in the recorded shape (xal_authorization_resp.json's
// TitleToken), and XSTS then names the title token's title; a title
// token is good only with its device's token.
func TestTitleToken(t *testing.T) {
	h := NewHandler()
	d := newXALDevice(t, h, time.Now)
	dt, _ := d.deviceToken(t, h)
	lt := liveAccessToken(t, h)
	url := "https://title.auth.xboxlive.com/title/authenticate"
	status, b, _ := signedPost(t, h, d.key, time.Now(), url, map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"DeviceToken": dt, "TitleId": 1016898439}}, nil)
	if status != http.StatusOK {
		t.Fatalf("title/authenticate with TitleId: %d %s", status, b)
	}
	var rec struct{ TitleToken json.RawMessage }
	recorded, _ := os.ReadFile("testdata/recorded/xbox-webapi-python/xal_authorization_resp.json")
	json.Unmarshal(recorded, &rec)
	if diff := missingFields(wiretest.ShapeDiff(rec.TitleToken, b), nil); diff != "" {
		t.Errorf("(-recorded +mock):\n%s\n%s", diff, b)
	}
	var tt struct{ Token string }
	json.Unmarshal(b, &tt)
	status, b, _ = signedPost(t, h, d.key, time.Now(), url, map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"AuthMethod": "RPS", "DeviceToken": dt, "RpsTicket": "t=" + lt, "SiteName": "user.auth.xboxlive.com"}}, nil)
	if status != http.StatusOK || !strings.Contains(string(b), `"tid":"1234567890"`) {
		t.Errorf("title/authenticate with an RPS ticket: %d %s, want the sign-in title", status, b)
	}
	status, b = post(t, h, "https://user.auth.xboxlive.com/user/authenticate", "application/json",
		`{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT", "Properties": {"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "t=`+lt+`"}}`)
	if status != http.StatusOK {
		t.Fatalf("user token: %d %s", status, b)
	}
	var ut struct{ Token string }
	json.Unmarshal(b, &ut)
	xsts := func(deviceToken string) (int, []byte) {
		s, b, _ := signedPost(t, h, d.key, time.Now(), "https://xsts.auth.xboxlive.com/xsts/authorize", map[string]any{
			"RelyingParty": "http://xboxlive.com", "TokenType": "JWT",
			"Properties": map[string]any{"UserTokens": []string{ut.Token}, "DeviceToken": deviceToken, "TitleToken": tt.Token, "SandboxId": "RETAIL"}}, nil)
		return s, b
	}
	status, b = xsts(dt)
	var x struct {
		Token         string
		DisplayClaims struct{ Xui []struct{ Uhs string } }
	}
	json.Unmarshal(b, &x)
	if status != http.StatusOK || len(x.DisplayClaims.Xui) != 1 {
		t.Fatalf("xsts/authorize with device and title tokens: %d %s", status, b)
	}
	if id, err := parseToken("XBL3.0 x=" + x.DisplayClaims.Xui[0].Uhs + ";" + x.Token); err != nil || id.title != "1016898439" {
		t.Errorf("XSTS token for %+v (%v), want title 1016898439", id, err)
	}
	other := newXALDevice(t, h, time.Now)
	other.id = "{11111111-945d-4379-b708-d4ee92c12d99}"
	otherDT, _ := other.deviceToken(t, h)
	if status, b := xsts(otherDT); status != http.StatusUnauthorized {
		t.Errorf("a title token with another device's token: %d %s, want 401", status, b)
	}
}

// TestNSAL: the title's endpoints, read without a token as xal.py reads
// them, in the recorded shape, list every service host the mock serves
// with a relying party and the signature policy the mock checks; with the
// 2022 limits and a token the call is counted (RateLimit headers), as the
// limits' "authentication" rule says.
func TestNSAL(t *testing.T) {
	h := NewHandler()
	for _, path := range []string{"/titles/default/endpoints?type=1", "/titles/current/endpoints", "/titles/1016898439/endpoints"} {
		r := do(t, h, "GET", "https://title.mgt.xboxlive.com"+path, "", "")
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	r := do(t, h, "GET", "https://title.mgt.xboxlive.com/titles/default/endpoints?type=1", "", "")
	recorded, _ := os.ReadFile("testdata/recorded/xbox-webapi-python/auth_title_endpoints.json")
	// The mock pins no certificates: Certs and RootCerts are empty.
	if diff := missingFields(wiretest.ShapeDiff(recorded, []byte(r.body)), []string{"$.Certs[0]", "$.RootCerts[0]"}); diff != "" {
		t.Errorf("(-recorded +mock):\n%s", diff)
	}
	var doc struct {
		EndPoints []struct {
			Host, HostType, RelyingParty string
			SignaturePolicyIndex         *int
		}
		SignaturePolicies []struct{ MaxBodyBytes int }
	}
	json.Unmarshal([]byte(r.body), &doc)
	listed := map[string]string{}
	for _, e := range doc.EndPoints {
		if e.RelyingParty == "" || e.SignaturePolicyIndex == nil || *e.SignaturePolicyIndex >= len(doc.SignaturePolicies) {
			t.Errorf("endpoint %+v has no relying party or policy", e)
		}
		listed[e.Host] = e.RelyingParty
	}
	for _, host := range h.Hosts() {
		if isSignInHost(host) && host != sisuHost {
			continue
		}
		if strings.Contains(host, "*") {
			host = "*" + host[strings.IndexByte(host, '.'):]
		}
		if listed[host] == "" {
			t.Errorf("NSAL lists no %s", host)
		}
	}
	if got, want := listed["collections.mp.microsoft.com"], "http://licensing.xboxlive.com"; got != want {
		t.Errorf("collections.mp.microsoft.com's party %q, want the recorded %q", got, want)
	}

	l, err := limits.Revision("2022")
	if err != nil {
		t.Fatal(err)
	}
	h22 := Must(New(Config{Limits: l}))
	counted := do(t, h22, "GET", "https://title.mgt.xboxlive.com/titles/default/endpoints?type=1", Token(DefaultAccount.XUID, "1234567890"), "")
	if counted.status != http.StatusOK || counted.header.Get("RateLimit") == "" {
		t.Errorf("NSAL with a token under 2022's limits: %d, RateLimit %q; want counted", counted.status, counted.header.Get("RateLimit"))
	}
}
