package mock

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/wiretest"
)

// login.live.com's token answer as two clients record it (values
// replaced): OpenXbox/xbox-webapi-python
// tests/data/responses/auth_oauth2_token.json, and the npm package
// xbox-webapi 1.4.2 tests/mock_data/oauth20_token.srf/POST.mock.
const (
	recordedLiveToken = `{"token_type": "bearer", "expires_in": 3600, "scope": "Xboxlive.signin Xboxlive.offline_access",
	"access_token": "a", "refresh_token": "r", "user_id": "123456789"}`
	recordedLiveTokenNPM = `{"token_type":"bearer","expires_in":3600,"scope":"XboxLive.signin XboxLive.offline_access",
	"access_token":"a","refresh_token":"r","user_id":"u"}`
)

// Client IDs of the two kinds: a Microsoft account client (the ID
// xbox-webapi-python's old flow and @xboxreplay/xboxlive-auth use, with
// RpsTicket t=) and an Azure app (a GUID, as the npm xbox-webapi's examples
// use, with RpsTicket d=).
const (
	msaClient   = "0000000048093EE3"
	azureClient = "388ea51c-0b25-4029-aae2-17df49d23905"
	redirectURI = "https://login.live.com/oauth20_desktop.srf"
)

// liveAuthorize opens login.live.com's authorization page and returns the
// redirect's query.
func liveAuthorizeAt(t *testing.T, h *Handler, clientID, redirect, state string) (int, url.Values) {
	t.Helper()
	q := url.Values{"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope": {"Xboxlive.signin Xboxlive.offline_access"}, "state": {state}}
	req, _ := http.NewRequest("GET", "https://login.live.com/oauth20_authorize.srf?"+q.Encode(), nil)
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc == nil {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, loc.Query()
}

type liveTokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Error        string `json:"error"`
}

func liveTokenAt(t *testing.T, h *Handler, form url.Values) (int, []byte, liveTokens) {
	t.Helper()
	status, b := post(t, h, "https://login.live.com/oauth20_token.srf", "application/x-www-form-urlencoded", form.Encode())
	var tok liveTokens
	json.Unmarshal(b, &tok)
	return status, b, tok
}

func userToken(t *testing.T, h *Handler, ticket string) int {
	t.Helper()
	status, _ := post(t, h, "https://user.auth.xboxlive.com/user/authenticate", "application/json",
		`{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT", "Properties": {"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "`+ticket+`"}}`)
	return status
}

// TestLiveSignIn walks login.live.com's code flow as the published clients
// do, for both kinds of client ID: authorize, exchange the code, take the
// user token with the RpsTicket preamble of the client's kind, refresh.
func TestLiveSignIn(t *testing.T) {
	for _, tt := range []struct{ client, preamble, other string }{
		{msaClient, "t=", "d="},
		{azureClient, "d=", "t="},
	} {
		t.Run(tt.client, func(t *testing.T) {
			h := NewHandler()
			status, back := liveAuthorizeAt(t, h, tt.client, redirectURI, "s1")
			if status != http.StatusFound || back.Get("code") == "" || back.Get("state") != "s1" {
				t.Fatalf("authorize: %d %v", status, back)
			}
			form := url.Values{"grant_type": {"authorization_code"}, "client_id": {tt.client}, "code": {back.Get("code")},
				"redirect_uri": {redirectURI}, "scope": {"Xboxlive.signin Xboxlive.offline_access"}}
			status, b, tok := liveTokenAt(t, h, form)
			for _, rec := range []string{recordedLiveToken, recordedLiveTokenNPM} {
				if d := wiretest.ShapeDiff([]byte(rec), b); status != 200 || d != "" {
					t.Fatalf("token %d (-recorded +mock):\n%s", status, d)
				}
			}
			if got := userToken(t, h, tt.preamble+tok.AccessToken); got != 200 {
				t.Errorf("user token with %s: %d", tt.preamble, got)
			}
			if got := userToken(t, h, tt.other+tok.AccessToken); got != 401 {
				t.Errorf("user token with the other preamble %s: %d, want 401", tt.other, got)
			}
			status, _, again := liveTokenAt(t, h, url.Values{"grant_type": {"refresh_token"}, "client_id": {tt.client},
				"refresh_token": {tok.RefreshToken}, "scope": {"Xboxlive.signin Xboxlive.offline_access"}})
			if status != 200 || again.AccessToken == "" || userToken(t, h, tt.preamble+again.AccessToken) != 200 {
				t.Errorf("refresh: %d %+v", status, again)
			}
		})
	}
}

// TestLiveErrors: what login.live.com refuses gets its error shape, 400
// with error and error_description: a code used twice, a code for another
// redirect URI or client, an expired refresh token, a malformed form.
func TestLiveErrors(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	_, back := liveAuthorizeAt(t, h, msaClient, redirectURI, "")
	code := back.Get("code")
	exchange := url.Values{"grant_type": {"authorization_code"}, "client_id": {msaClient}, "code": {code}, "redirect_uri": {redirectURI}}
	_, _, tok := liveTokenAt(t, h, exchange)
	if tok.AccessToken == "" {
		t.Fatal("the first exchange failed")
	}
	_, other := liveAuthorizeAt(t, h, msaClient, redirectURI, "")
	tests := []struct {
		name string
		form url.Values
		want string
	}{
		{"code used twice", exchange, "invalid_grant"},
		{"code for another redirect URI", url.Values{"grant_type": {"authorization_code"}, "client_id": {msaClient},
			"code": {other.Get("code")}, "redirect_uri": {"https://example.com/cb"}}, "invalid_grant"},
		{"code for another client", url.Values{"grant_type": {"authorization_code"}, "client_id": {azureClient},
			"code": {other.Get("code")}, "redirect_uri": {redirectURI}}, "invalid_grant"},
		{"forged refresh token", url.Values{"grant_type": {"refresh_token"}, "client_id": {msaClient}, "refresh_token": {"forged"}}, "invalid_grant"},
		{"refresh token of another client", url.Values{"grant_type": {"refresh_token"}, "client_id": {azureClient},
			"refresh_token": {tok.RefreshToken}}, "invalid_grant"},
		{"no client_id", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}, "invalid_request"},
		{"unknown grant", url.Values{"grant_type": {"password\x1b[2J"}, "client_id": {msaClient}}, "unsupported_grant_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, b, got := liveTokenAt(t, h, tt.form)
			var shape struct {
				Description string `json:"error_description"`
			}
			json.Unmarshal(b, &shape)
			if status != 400 || got.Error != tt.want || shape.Description == "" || strings.ContainsRune(string(b), 0x1b) {
				t.Errorf("%d %s; want 400 %s with a description", status, b, tt.want)
			}
		})
	}
	if status, b := post(t, h, "https://login.live.com/oauth20_token.srf", "application/x-www-form-urlencoded", "grant_type=%zz&client_id"); status != 400 ||
		!strings.Contains(string(b), `"error":"invalid_request"`) {
		t.Errorf("a malformed form: %d %s", status, b)
	}
	now = now.Add(refreshTokenLife)
	if status, _, got := liveTokenAt(t, h, url.Values{"grant_type": {"refresh_token"}, "client_id": {msaClient},
		"refresh_token": {tok.RefreshToken}}); status != 400 || got.Error != "invalid_grant" {
		t.Errorf("an expired refresh token: %d %+v", status, got)
	}
	for _, q := range []string{"client_id=c&response_type=code&redirect_uri=javascript:alert(1)", "response_type=code&redirect_uri=https://x/",
		"client_id=c&response_type=token&redirect_uri=https://x/"} {
		req, _ := http.NewRequest("GET", "https://login.live.com/oauth20_authorize.srf?"+q, nil)
		resp, _ := h.RoundTrip(req)
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
			t.Errorf("authorize ?%s: %d, redirect %q", q, resp.StatusCode, resp.Header.Get("Location"))
		}
		resp.Body.Close()
	}
}
