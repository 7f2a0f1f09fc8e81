package xblauth

import (
	"strings"
	"testing"
)

// redactBodyTests are RedactBody's cases: requests and answers of the
// sign-in services in the shapes the published clients send and record
// (OpenXbox/xbox-webapi-python xbox/webapi/authentication/xal.py and
// tests/data/responses/auth_*.json), and bodies sent to service hosts
// (the xCloud login, {"token": <XSTS token>, "offeringId": "xhome"}, as
// the public xCloud clients post it to
// {offering}.gssv-play-prod.xboxlive.com/v2/login/user); FuzzRedact starts
// from them.
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
		`{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT", "Properties": {"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "REDACTED"}}`},
	{"an XSTS request", "xsts.auth.xboxlive.com",
		`{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT", "Properties": {"SandboxId": "RETAIL", "DeviceToken": "SECRET", "TitleToken": "SECRET", "UserTokens": ["SECRET", "SECRET"]}}`,
		`{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT", "Properties": {"SandboxId": "RETAIL", "DeviceToken": "REDACTED", "TitleToken": "REDACTED", "UserTokens": ["REDACTED", "REDACTED"]}}`},
	{"a device token request with its proof key", "device.auth.xboxlive.com",
		`{"Properties": {"AuthMethod": "ProofOfPossession", "Id": "{SECRET}", "DeviceType": "Android", "ProofKey": {"crv": "P-256", "x": "SECRET", "y": "SECRET"}}}`,
		`{"Properties": {"AuthMethod": "ProofOfPossession", "Id": "REDACTED", "DeviceType": "Android", "ProofKey": {"crv": "REDACTED", "x": "REDACTED", "y": "REDACTED"}}}`},
	{"login.live.com's tokens", "login.live.com",
		`{"token_type": "bearer", "expires_in": 3600, "scope": "s", "access_token": "SECRET", "refresh_token": "SECRET", "user_id": "SECRET"}`,
		`{"token_type": "bearer", "expires_in": 3600, "scope": "s", "access_token": "REDACTED", "refresh_token": "REDACTED", "user_id": "REDACTED"}`},
	{"an XSTS token", "xsts.auth.xboxlive.com",
		`{"IssueInstant": "2010-10-10T03:06:35.5251155Z", "NotAfter": "2999-10-10T19:06:35.5251155Z", "Token": "SECRET", "DisplayClaims": {"xui": [{"gtg": "e", "xid": "2669321029139235", "uhs": "abcdefg"}]}}`,
		`{"IssueInstant": "2010-10-10T03:06:35.5251155Z", "NotAfter": "2999-10-10T19:06:35.5251155Z", "Token": "REDACTED", "DisplayClaims": {"xui": [{"gtg": "e", "xid": "2669321029139235", "uhs": "abcdefg"}]}}`},
	{"a SISU authorization", "sisu.xboxlive.com",
		`{"DeviceToken": "SECRET", "TitleToken": {"Token": "SECRET", "DisplayClaims": {"xti": {"tid": "1"}}}, "UserToken": {"Token": "SECRET"}, "WebPage": "https://sisu.xboxlive.com/x?y=SECRET", "Sandbox": "RETAIL"}`,
		`{"DeviceToken": "REDACTED", "TitleToken": {"Token": "REDACTED", "DisplayClaims": {"xti": {"tid": "1"}}}, "UserToken": {"Token": "REDACTED"}, "WebPage": "REDACTED", "Sandbox": "RETAIL"}`},
	{"a device code answer", "login.microsoftonline.com",
		`{"user_code": "SECRET", "device_code": "SECRET", "verification_uri": "https://microsoft.com/devicelogin", "expires_in": 900, "interval": 5, "message": "enter the code SECRET"}`,
		`{"user_code": "REDACTED", "device_code": "REDACTED", "verification_uri": "https://microsoft.com/devicelogin", "expires_in": 900, "interval": 5, "message": "REDACTED"}`},
	{"a numeric code", "login.live.com", `{"code": 123456, "expires_in": 900}`, `{"code": "REDACTED", "expires_in": 900}`},
	{"an error", "login.live.com", `{"error": "invalid_grant", "error_description": "The provided value is not valid."}`,
		`{"error": "invalid_grant", "error_description": "The provided value is not valid."}`},
	{"a top-level array", "user.auth.xboxlive.com", `["SECRET", 1, null, true]`, `["REDACTED", 1, null, true]`},
	{"JSON cut short", "xsts.auth.xboxlive.com", `{"Properties": {"UserTokens": ["SECR`, "REDACTED"},
	{"a field not named like one", "xsts.auth.xboxlive.com", `{"SECRET value": 1}`, "REDACTED"},
	{"a page", "login.live.com", `<html><input name="PPFT" value="SECRET"/></html>`, "REDACTED"},
	{"a bare token", "login.live.com", "eyJSECRET", "REDACTED"},
	{"empty", "login.live.com", "", ""},

	{"the xCloud login's XSTS token", "xhome.gssv-play-prod.xboxlive.com", `{"token": "SECRET", "offeringId": "xhome"}`,
		`{"token": "REDACTED", "offeringId": "xhome"}`},
	{"a token beside a service's data", "profile.xboxlive.com",
		`{"userIds": ["2533274791234567"], "settings": ["Gamertag"], "access_token": "SECRET"}`,
		`{"userIds": ["2533274791234567"], "settings": ["Gamertag"], "access_token": "REDACTED"}`},
	{"credentials at any depth, in any case", "sessiondirectory.xboxlive.com",
		`{"properties": {"system": {"joinRestriction": "followed", "Authorization": "XBL3.0 x=1;SECRET", "nested": [{"RpsTicket": "t=SECRET", "n": 1}]}}, "XSTS": {"value": "SECRET", "count": 7}, "ClientSecret": "SECRET", "pin": {"PASSWORD": 1234}}`,
		`{"properties": {"system": {"joinRestriction": "followed", "Authorization": "REDACTED", "nested": [{"RpsTicket": "REDACTED", "n": 1}]}}, "XSTS": {"REDACTED": "REDACTED", "REDACTED": "REDACTED"}, "ClientSecret": "REDACTED", "pin": {"PASSWORD": "REDACTED"}}`},
	{"the Xbox token services' names", "titlehub.xboxlive.com",
		`{"UserTokens": ["SECRET", "SECRET"], "DeviceToken": "SECRET", "TitleToken": {"Token": "SECRET"}, "Signature": "SECRET", "code": "SECRET", "id_token": "SECRET", "refresh_token": "SECRET"}`,
		`{"UserTokens": ["REDACTED", "REDACTED"], "DeviceToken": "REDACTED", "TitleToken": {"Token": "REDACTED"}, "Signature": "REDACTED", "code": "REDACTED", "id_token": "REDACTED", "refresh_token": "REDACTED"}`},
	{"a service's public names kept", "achievements.xboxlive.com",
		`{"pagingInfo": {"continuationToken": "2", "totalRecords": 9}, "token_type": "bearer", "countryCode": "US", "errorCode": 7}`,
		`{"pagingInfo": {"continuationToken": "2", "totalRecords": 9}, "token_type": "bearer", "countryCode": "US", "errorCode": 7}`},
	{"a service's JSON cut in a secret", "xhome.gssv-play-prod.xboxlive.com", "{\"offeringId\": \"xhome\",\n \"token\": \"eyJSECR",
		`{"offeringId": "xhome",` + "\n" + ` "token"`},
	{"a service's JSON cut after a secret", "profile.xboxlive.com", `{"token": "SECRET", "userIds": ["1", "2`,
		`{"token": "REDACTED", "userIds": ["1"`},
	{"a service's text that is not JSON", "profile.xboxlive.com", `{"token" SECRET}`, `{"token"`},
	{"a form posted to a service", "profile.xboxlive.com", "settings=Gamertag&access_token=SECRET;UserToken=SECRET&x",
		"settings=Gamertag&access_token=REDACTED;UserToken=REDACTED&x"},
	{"a service's text", "profile.xboxlive.com", "hello, world", "hello, world"},
	{"a service's body with nothing to hide, as sent", "profile.xboxlive.com", " {\"userIds\" :\t[\"1\"]}\n", " {\"userIds\" :\t[\"1\"]}\n"},
}

func TestRedactBody(t *testing.T) {
	for _, tt := range redactBodyTests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(RedactBody(tt.host, []byte(tt.body)))
			if got != tt.want {
				t.Errorf("RedactBody(%q, %q)\n got %s\nwant %s", tt.host, tt.body, got, tt.want)
			}
			if strings.Contains(got, "SECRET") || strings.Contains(got, "SECR") {
				t.Errorf("RedactBody(%q, %q) keeps a secret: %s", tt.host, tt.body, got)
			}
		})
	}
}

// TestRedactBodyKeepsCleanBodies: a service's body with nothing to hide
// comes back as it is, not a copy.
func TestRedactBodyKeepsCleanBodies(t *testing.T) {
	body := []byte(`{"userIds": ["2533274791234567"], "settings": ["Gamertag", "GameDisplayPicRaw"]}`)
	var got []byte
	testing.AllocsPerRun(10, func() { got = RedactBody("profile.xboxlive.com", body) })
	if &got[0] != &body[0] {
		t.Errorf("RedactBody copied a body it kept")
	}
}

func BenchmarkRedactBody(b *testing.B) {
	for _, bc := range []struct{ name, host, body string }{
		{"an XSTS request", "xsts.auth.xboxlive.com", `{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT", "Properties": {"SandboxId": "RETAIL", "UserTokens": ["` + strings.Repeat("e", 1500) + `"]}}`},
		{"a profile batch", "profile.xboxlive.com", `{"userIds": [` + strings.Repeat(`"2533274791234567", `, 99) + `"2533274791234567"], "settings": ["Gamertag", "GameDisplayPicRaw", "Gamerscore"]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(bc.body)
			b.ReportAllocs()
			for b.Loop() {
				RedactBody(bc.host, body)
			}
		})
	}
}
