package xblauth

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestSignInHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"login.live.com", true},
		{"LOGIN.live.com.", true},
		{"login.live.com:443", true},
		{"login.microsoftonline.com", true},
		{"user.auth.xboxlive.com", true},
		{"xsts.auth.xboxlive.com", true},
		{"device.auth.xboxlive.com", true},
		{"title.auth.xboxlive.com", true},
		{"sisu.xboxlive.com", true},
		{"auth.xboxlive.com", false},
		{"a.b.auth.xboxlive.com", false},
		{"profile.xboxlive.com", false},
		{"login.live.com.evil.example", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := SignInHost(tt.host); got != tt.want {
			t.Errorf("SignInHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

// redactParamsTests are RedactParams' cases; FuzzRedact starts from them.
var redactParamsTests = []struct {
	name, host, ref, want string
}{
	{"a service's query", "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag", "/users/me/profile/settings?settings=Gamertag"},
	{"no query", "login.live.com", "/oauth20_token.srf", "/oauth20_token.srf"},
	{"a code at the desktop redirect", "login.live.com", "/oauth20_desktop.srf?code=M.C105_SECRET&lc=1033",
		"/oauth20_desktop.srf?code=REDACTED&lc=REDACTED"},
	{"an authorization request", "login.live.com",
		"/oauth20_authorize.srf?client_id=000000004C12AE6F&redirect_uri=https%3A%2F%2Flogin.live.com%2Foauth20_desktop.srf&response_type=code&scope=service%3A%3Auser.auth.xboxlive.com%3A%3AMBI_SSL&state=ST",
		"/oauth20_authorize.srf?client_id=000000004C12AE6F&redirect_uri=https%3A%2F%2Flogin.live.com%2Foauth20_desktop.srf&response_type=code&scope=service%3A%3Auser.auth.xboxlive.com%3A%3AMBI_SSL&state=REDACTED"},
	{"tokens in the fragment", "login.live.com", "/oauth20_desktop.srf#access_token=SECRET&token_type=bearer&refresh_token=SECRET",
		"/oauth20_desktop.srf#access_token=REDACTED&token_type=bearer&refresh_token=REDACTED"},
	{"a query and a fragment", "https://login.live.com", "https://login.live.com/x?code=SECRET#access_token=SECRET",
		"https://login.live.com/x?code=REDACTED#access_token=REDACTED"},
	{"a sign-in query that is not a form", "login.live.com", "/x?eyJSECRET", "/x?REDACTED"},
	{"a sign-in name that is not one", "login.live.com", "/x?a=1&%3Cb%3E=SECRET", "/x?REDACTED"},
	{"a token to a service, split by ; and escaped", "profile.xboxlive.com", "/users/me?settings=G;ACCESS%5FTOKEN=SECRET&token=SECRET&code",
		"/users/me?settings=G;ACCESS%5FTOKEN=REDACTED&token=REDACTED&code"},
	{"a loopback redirect", "127.0.0.1:8080", "/auth/callback?code=SECRET&state=s", "/auth/callback?code=REDACTED&state=s"},
	{"already redacted", "login.live.com", "/x?code=REDACTED", "/x?code=REDACTED"},
	{"empty pairs", "login.live.com", "/x?&client_id=c&&code=SECRET&", "/x?&client_id=c&&code=REDACTED&"},
}

func TestRedactParams(t *testing.T) {
	for _, tt := range redactParamsTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RedactParams(tt.host, tt.ref); got != tt.want {
				t.Errorf("RedactParams(%q, %q)\n got %q\nwant %q", tt.host, tt.ref, got, tt.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://login.live.com/oauth20_desktop.srf?code=SECRET&state=s", "https://login.live.com/oauth20_desktop.srf?code=REDACTED&state=REDACTED"},
		{"https://profile.xboxlive.com/users/me?settings=Gamertag", "https://profile.xboxlive.com/users/me?settings=Gamertag"},
		{"https://profile.xboxlive.com/users/me", "https://profile.xboxlive.com/users/me"},
		{"%zz://login.live.com/?code=SECRET", "%zz://login.live.com/?REDACTED"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// redactBodyTests are RedactBody's cases, requests and answers of the
// sign-in services in the shapes the published clients send and record
// (OpenXbox/xbox-webapi-python xbox/webapi/authentication/xal.py and
// tests/data/responses/auth_*.json); FuzzRedact starts from them.
var redactBodyTests = []struct {
	name, host, body, want string
}{
	{"a code exchange", "login.live.com",
		"client_id=000000004c12ae6f&code=M.C1_SECRET&code_verifier=SECRET&grant_type=authorization_code&redirect_uri=ms-xal-000000004c12ae6f%3A%2F%2Fauth&scope=service%3A%3Auser.auth.xboxlive.com%3A%3AMBI_SSL",
		"client_id=000000004c12ae6f&code=REDACTED&code_verifier=REDACTED&grant_type=authorization_code&redirect_uri=ms-xal-000000004c12ae6f%3A%2F%2Fauth&scope=service%3A%3Auser.auth.xboxlive.com%3A%3AMBI_SSL"},
	{"a refresh with a client secret", "login.microsoftonline.com",
		"grant_type=refresh_token&refresh_token=SECRET&client_id=c&client_secret=SECRET",
		"grant_type=refresh_token&refresh_token=REDACTED&client_id=c&client_secret=REDACTED"},
	{"a password form", "login.live.com", "login=ada%40example.com&passwd=SECRET&PPFT=SECRET",
		"login=REDACTED&passwd=REDACTED&PPFT=REDACTED"},
	{"a user token request", "user.auth.xboxlive.com",
		`{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT", "Properties": {"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "t=SECRET"}}`,
		`{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"AuthMethod":"RPS","SiteName":"user.auth.xboxlive.com","RpsTicket":"REDACTED"}}`},
	{"an XSTS request", "xsts.auth.xboxlive.com",
		`{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT", "Properties": {"SandboxId": "RETAIL", "DeviceToken": "SECRET", "TitleToken": "SECRET", "UserTokens": ["SECRET", "SECRET"]}}`,
		`{"RelyingParty":"http://xboxlive.com","TokenType":"JWT","Properties":{"SandboxId":"RETAIL","DeviceToken":"REDACTED","TitleToken":"REDACTED","UserTokens":["REDACTED","REDACTED"]}}`},
	{"a device token request with its proof key", "device.auth.xboxlive.com",
		`{"Properties": {"AuthMethod": "ProofOfPossession", "Id": "{SECRET}", "DeviceType": "Android", "ProofKey": {"crv": "P-256", "x": "SECRET", "y": "SECRET"}}}`,
		`{"Properties":{"AuthMethod":"ProofOfPossession","Id":"REDACTED","DeviceType":"Android","ProofKey":{"crv":"REDACTED","x":"REDACTED","y":"REDACTED"}}}`},
	{"login.live.com's tokens", "login.live.com",
		`{"token_type": "bearer", "expires_in": 3600, "scope": "s", "access_token": "SECRET", "refresh_token": "SECRET", "user_id": "SECRET"}`,
		`{"token_type":"bearer","expires_in":3600,"scope":"s","access_token":"REDACTED","refresh_token":"REDACTED","user_id":"REDACTED"}`},
	{"an XSTS token", "xsts.auth.xboxlive.com",
		`{"IssueInstant": "2010-10-10T03:06:35.5251155Z", "NotAfter": "2999-10-10T19:06:35.5251155Z", "Token": "SECRET", "DisplayClaims": {"xui": [{"gtg": "e", "xid": "2669321029139235", "uhs": "abcdefg"}]}}`,
		`{"IssueInstant":"2010-10-10T03:06:35.5251155Z","NotAfter":"2999-10-10T19:06:35.5251155Z","Token":"REDACTED","DisplayClaims":{"xui":[{"gtg":"e","xid":"2669321029139235","uhs":"abcdefg"}]}}`},
	{"a SISU authorization", "sisu.xboxlive.com",
		`{"DeviceToken": "SECRET", "TitleToken": {"Token": "SECRET", "DisplayClaims": {"xti": {"tid": "1"}}}, "UserToken": {"Token": "SECRET"}, "WebPage": "https://sisu.xboxlive.com/x?y=SECRET", "Sandbox": "RETAIL"}`,
		`{"DeviceToken":"REDACTED","TitleToken":{"Token":"REDACTED","DisplayClaims":{"xti":{"tid":"1"}}},"UserToken":{"Token":"REDACTED"},"WebPage":"REDACTED","Sandbox":"RETAIL"}`},
	{"a device code answer", "login.microsoftonline.com",
		`{"user_code": "SECRET", "device_code": "SECRET", "verification_uri": "https://microsoft.com/devicelogin", "expires_in": 900, "interval": 5, "message": "enter the code SECRET"}`,
		`{"user_code":"REDACTED","device_code":"REDACTED","verification_uri":"https://microsoft.com/devicelogin","expires_in":900,"interval":5,"message":"REDACTED"}`},
	{"an error", "login.live.com", `{"error": "invalid_grant", "error_description": "The provided value is not valid."}`,
		`{"error":"invalid_grant","error_description":"The provided value is not valid."}`},
	{"a top-level array", "user.auth.xboxlive.com", `["SECRET", 1, null, true]`, `["REDACTED",1,null,true]`},
	{"JSON cut short", "xsts.auth.xboxlive.com", `{"Properties": {"UserTokens": ["SECR`, "REDACTED"},
	{"a field not named like one", "xsts.auth.xboxlive.com", `{"SECRET value": 1}`, "REDACTED"},
	{"a page", "login.live.com", `<html><input name="PPFT" value="SECRET"/></html>`, "REDACTED"},
	{"a bare token", "login.live.com", "eyJSECRET", "REDACTED"},
	{"empty", "login.live.com", "", ""},
	{"a service's body", "profile.xboxlive.com", `{"userIds": ["1"], "token": "kept"}`, `{"userIds": ["1"], "token": "kept"}`},
}

func TestRedactBody(t *testing.T) {
	for _, tt := range redactBodyTests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(RedactBody(tt.host, []byte(tt.body)))
			if got != tt.want {
				t.Errorf("RedactBody(%q, %q)\n got %s\nwant %s", tt.host, tt.body, got, tt.want)
			}
			if strings.Contains(got, "SECRET") {
				t.Errorf("RedactBody(%q, %q) keeps a secret: %s", tt.host, tt.body, got)
			}
		})
	}
}

// TestRedactParamsAllocs: a service's URL, the mock's every request, costs
// no allocation.
func TestRedactParamsAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		RedactParams("profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag,GameDisplayPicRaw")
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

// FuzzRedact: what RedactBody and RedactParams keep of a sign-in host's
// text holds no value a sign-in service may have meant as a secret: a form
// keeps only public parameters' values, JSON only public fields' strings;
// a second redaction changes nothing; at other hosts no secret
// parameter's value is kept.
func FuzzRedact(f *testing.F) {
	for _, tt := range redactBodyTests {
		f.Add(tt.host, tt.body)
	}
	for _, tt := range redactParamsTests {
		f.Add(tt.host, tt.ref)
	}
	f.Fuzz(func(t *testing.T, host, text string) {
		body := RedactBody(host, []byte(text))
		if again := RedactBody(host, body); !bytes.Equal(again, body) {
			t.Fatalf("RedactBody(%q) = %q, then %q", text, body, again)
		}
		ref := RedactParams(host, text)
		if again := RedactParams(host, ref); again != ref {
			t.Fatalf("RedactParams(%q) = %q, then %q", text, ref, again)
		}
		if _, q, ok := strings.Cut(ref, "?"); ok {
			q, _, _ = strings.Cut(q, "#")
			checkForm(t, q, SignInHost(host))
		}
		if !SignInHost(host) {
			return
		}
		if b := bytes.TrimSpace(body); len(b) > 0 && (b[0] == '{' || b[0] == '[') {
			checkJSON(t, body)
		} else if len(b) > 0 {
			checkForm(t, string(body), true)
		}
	})
}

// checkForm fails t if form keeps a value RedactParams would not.
func checkForm(t *testing.T, form string, signIn bool) {
	t.Helper()
	if signIn && form == Redacted {
		return
	}
	for _, pair := range strings.FieldsFunc(form, func(r rune) bool { return r == '&' || r == ';' }) {
		name, value, _ := strings.Cut(pair, "=")
		n, err := url.QueryUnescape(name)
		if err != nil {
			n = name
		}
		n = strings.ToLower(n)
		if value != Redacted && value != "" && (signIn && !publicName(n) || !signIn && secretParam(n)) {
			t.Fatalf("%q keeps the value of %q", form, name)
		}
	}
}

// checkJSON fails t if a JSON document keeps a string that is not a public
// field's, read with encoding/json's Unmarshal rather than the rewriter's
// tokens.
func checkJSON(t *testing.T, doc []byte) {
	t.Helper()
	var v any
	if string(doc) == Redacted {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for dec.More() {
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("redacted JSON %q does not read back: %v", doc, err)
		}
		walkJSON(t, v, false, doc)
	}
}

func walkJSON(t *testing.T, v any, public bool, doc []byte) {
	t.Helper()
	switch v := v.(type) {
	case string:
		if !public && v != Redacted {
			t.Fatalf("%q keeps %q", doc, v)
		}
	case []any:
		for _, e := range v {
			walkJSON(t, e, public, doc)
		}
	case map[string]any:
		for k, e := range v {
			if wholeName(strings.ToLower(k)) {
				continue
			}
			walkJSON(t, e, publicName(strings.ToLower(k)), doc)
		}
	}
}

func BenchmarkRedactParams(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		RedactParams("profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag,GameDisplayPicRaw")
		RedactParams("login.live.com", "/oauth20_desktop.srf?code=M.C105_SECRET&lc=1033")
	}
}

func BenchmarkRedactBody(b *testing.B) {
	body := []byte(`{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT", "Properties": {"SandboxId": "RETAIL", "UserTokens": ["` + strings.Repeat("e", 1500) + `"]}}`)
	b.ReportAllocs()
	for b.Loop() {
		RedactBody("xsts.auth.xboxlive.com", body)
	}
}
