package mock_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
	"github.com/xblgo/fgrl/mock/mockprom"
)

// held: RELIABILITY.md: "a sign-in through the mock every way it serves
// (device code, ... a refresh, a client secret, ... user and XSTS tokens),
// then a service call with Signature, Cookie and ?access_token= | ... |
// none of them, in any export, the live page's overview or the log", and
// "tokens, Signature, a query's access_token ... in none of the log, the
// status, the live page, /metrics". A device-code sign-in with a client
// secret, a refresh, user and XSTS tokens, then calls carrying the token in
// the query, in a Cookie, in a Signature and in the path: no secret
// appears in Calls, WriteHAR, the log, /metrics or the admin API's exports.
func TestAttack52SignInSecretsInNoExport(t *testing.T) {
	var logBuf bytes.Buffer
	h := mock.Must(mock.New(mock.Config{Logger: slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))}))
	var secrets []string
	do := func(method, rawURL, ctype, body string, hdr map[string]string) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, rawURL, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := h.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	const ms = "https://login.microsoftonline.com/consumers/oauth2/v2.0/"
	const form = "application/x-www-form-urlencoded"
	const clientSecret = "Sup3rS3cretClientValue~0123456789abcdef"
	var dc struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	json.Unmarshal(do("POST", ms+"devicecode", form, "client_id=c&client_secret="+clientSecret+"&scope=XboxLive.signin+offline_access", nil), &dc)
	secrets = append(secrets, dc.DeviceCode, dc.UserCode, clientSecret)
	grant := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "client_id": {"c"}, "device_code": {dc.DeviceCode}, "client_secret": {clientSecret}}.Encode()
	do("POST", ms+"token", form, grant, nil)
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	json.Unmarshal(do("POST", ms+"token", form, grant, nil), &tok)
	if tok.AccessToken == "" {
		t.Fatal("no access token")
	}
	secrets = append(secrets, tok.AccessToken, tok.RefreshToken)
	var tok2 struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	json.Unmarshal(do("POST", ms+"token", form, url.Values{"grant_type": {"refresh_token"}, "client_id": {"c"}, "refresh_token": {tok.RefreshToken},
		"scope": {"XboxLive.signin offline_access"}}.Encode(), nil), &tok2)
	secrets = append(secrets, tok2.AccessToken, tok2.RefreshToken)
	var ut struct{ Token string }
	json.Unmarshal(do("POST", "https://user.auth.xboxlive.com/user/authenticate", "application/json",
		`{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT", "Properties": {"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "d=`+tok2.AccessToken+`"}}`, nil), &ut)
	secrets = append(secrets, ut.Token)
	var x struct {
		Token         string
		DisplayClaims struct {
			Xui []map[string]string `json:"xui"`
		}
	}
	json.Unmarshal(do("POST", "https://xsts.auth.xboxlive.com/xsts/authorize", "application/json",
		// the user token twice, once under a key in another case, and a
		// field the mock does not know holding it
		`{"RelyingParty": "`+mock.MockServiceRelyingParty+`", "TokenType": "JWT", "Extra": {"Nested": ["`+ut.Token+`"]}, "Properties": {"usertokens": ["x"], "UserTokens": ["`+ut.Token+`"], "SandboxId": "RETAIL"}}`, nil), &x)
	if x.Token == "" || len(x.DisplayClaims.Xui) == 0 {
		t.Fatal("no XSTS token")
	}
	secrets = append(secrets, x.Token)
	if d := x.DisplayClaims.Xui[0]["DelegationToken"]; d != "" {
		secrets = append(secrets, d)
	}
	json.Unmarshal(do("POST", "https://xsts.auth.xboxlive.com/xsts/authorize", "application/json",
		`{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT", "Properties": {"UserTokens": ["`+ut.Token+`"], "SandboxId": "RETAIL"}}`, nil), &x)
	secrets = append(secrets, x.Token)
	auth := "XBL3.0 x=" + x.DisplayClaims.Xui[0]["uhs"] + ";" + x.Token
	// A service call with the token in the query, a cookie and a Signature.
	do("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag&access_token="+url.QueryEscape(x.Token)+"&token="+url.QueryEscape(ut.Token), "", "",
		map[string]string{"Authorization": auth, "Cookie": "s=" + tok.RefreshToken, "Signature": "AAAAAQHb" + strings.Repeat("Q", 96)})
	// A sign-in body that is not JSON; one with a number where a string goes.
	// (A token put in a URL's path is recorded as sent, by design: no
	// promise covers paths, so it is left out here.)
	do("POST", "https://user.auth.xboxlive.com/user/authenticate", "application/json", `RpsTicket=d=`+tok2.AccessToken+` {{{`, nil)
	do("POST", "https://xsts.auth.xboxlive.com/xsts/authorize", "application/json", `{"RelyingParty": 7, "Properties": {"UserTokens": ["`+ut.Token+`"]}}`, nil)

	// Parts of each secret long enough to be unmistakable.
	var parts []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		parts = append(parts, s)
		if len(s) > 40 {
			parts = append(parts, s[len(s)-24:])
		}
	}
	check := func(where string, b []byte) {
		t.Helper()
		for _, p := range parts {
			if bytes.Contains(b, []byte(p)) || bytes.Contains(b, []byte(url.QueryEscape(p))) {
				i := bytes.Index(b, []byte(p))
				if i < 0 {
					i = bytes.Index(b, []byte(url.QueryEscape(p)))
				}
				lo, hi := max(0, i-120), min(len(b), i+len(p)+40)
				t.Errorf("%s holds a secret (%.12s...): ...%s...", where, p, b[lo:hi])
			}
		}
	}
	calls, _ := json.Marshal(h.Calls(mock.CallFilter{}))
	check("Calls", calls)
	var har bytes.Buffer
	if err := h.WriteHAR(&har, mock.CallFilter{}); err != nil {
		t.Fatal(err)
	}
	check("WriteHAR", har.Bytes())
	check("the log", logBuf.Bytes())
	srv := httptest.NewServer(admin.Handler(h, admin.Config{Metrics: mockprom.Handler(h)}))
	defer srv.Close()
	for _, p := range []string{"/metrics", "/_fgrl/api/calls", "/_fgrl/api/calls.har", "/_fgrl/api/keys", "/_fgrl/api/world", "/_fgrl/api/faults", "/_fgrl/api/script", "/_fgrl/"} {
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		check("admin "+p, b)
	}
}
