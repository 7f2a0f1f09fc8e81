package mock

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
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

// Client IDs of the two kinds, with the redirect URIs their clients use: a
// Microsoft account client (xbox-webapi-python's old browser flow, with
// RpsTicket t=) and an Azure app (a GUID: OpenXbox xbox-webapi-python's
// xbox/webapi/scripts/__init__.py, with a loopback redirect and RpsTicket
// d=).
const (
	msaClient     = "0000000048093EE3"
	redirectURI   = "https://login.live.com/oauth20_desktop.srf"
	azureClient   = "388ea51c-0b25-4029-aae2-17df49d23905"
	azureRedirect = "http://localhost:8080/auth/callback"
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
// user token with the RpsTicket preamble of the client's kind (and none,
// the compact ticket, for a Microsoft account client), refresh.
func TestLiveSignIn(t *testing.T) {
	for _, tt := range []struct {
		client, redirect, preamble, other string
		otherStatus, bareStatus           int
	}{
		// A Microsoft account client's token: "t=" or bare (xbox-webapi-python's
		// use_compact_ticket); as "d=" 400 (OpenXbox/xbox-webapi-csharp#28).
		{msaClient, redirectURI, "t=", "d=", 400, 200},
		{azureClient, azureRedirect, "d=", "t=", 401, 401},
	} {
		t.Run(tt.client, func(t *testing.T) {
			h := NewHandler()
			status, back := liveAuthorizeAt(t, h, tt.client, tt.redirect, "s1")
			if status != http.StatusFound || back.Get("code") == "" || back.Get("state") != "s1" {
				t.Fatalf("authorize: %d %v", status, back)
			}
			form := url.Values{"grant_type": {"authorization_code"}, "client_id": {tt.client}, "code": {back.Get("code")},
				"redirect_uri": {tt.redirect}, "scope": {"Xboxlive.signin Xboxlive.offline_access"}}
			status, b, tok := liveTokenAt(t, h, form)
			for _, rec := range []string{recordedLiveToken, recordedLiveTokenNPM} {
				if d := wiretest.ShapeDiff([]byte(rec), b); status != 200 || d != "" {
					t.Fatalf("token %d (-recorded +mock):\n%s", status, d)
				}
			}
			if got := userToken(t, h, tt.preamble+tok.AccessToken); got != 200 {
				t.Errorf("user token with %s: %d", tt.preamble, got)
			}
			if got := userToken(t, h, tt.other+tok.AccessToken); got != tt.otherStatus {
				t.Errorf("user token with the other preamble %s: %d, want %d", tt.other, got, tt.otherStatus)
			}
			if got := userToken(t, h, tok.AccessToken); got != tt.bareStatus {
				t.Errorf("user token with no preamble: %d, want %d", got, tt.bareStatus)
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

// codeFlows are the three one-time codes the mock issues, each as a client
// gets one and presents it: login.live.com's, the identity platform's
// (PKCE), and the device code (whose first poll is pending and second
// redeems it). present returns the error of the answer, "" for tokens.
var codeFlows = []struct {
	name    string
	life    time.Duration
	get     func(t *testing.T, h *Handler) string
	present func(t *testing.T, h *Handler, code string) string
}{
	{"login.live.com", 5 * time.Minute, func(t *testing.T, h *Handler) string {
		_, back := liveAuthorizeAt(t, h, msaClient, redirectURI, "")
		return back.Get("code")
	}, func(t *testing.T, h *Handler, code string) string {
		_, _, tok := liveTokenAt(t, h, url.Values{"grant_type": {"authorization_code"}, "client_id": {msaClient}, "code": {code}, "redirect_uri": {redirectURI}})
		return tok.Error
	}},
	{"the identity platform", 10 * time.Minute, func(t *testing.T, h *Handler) string {
		q := url.Values{"client_id": {"c"}, "redirect_uri": {azureRedirect}, "response_type": {"code"},
			"code_challenge": {pkceChallenge}, "code_challenge_method": {"S256"}}
		r := send(t, h, mustRequest("GET", "https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize?"+q.Encode()))
		loc, _ := url.Parse(r.header.Get("Location"))
		return loc.Query().Get("code")
	}, func(t *testing.T, h *Handler, code string) string {
		_, b := post(t, h, "https://login.microsoftonline.com/consumers/oauth2/v2.0/token", "application/x-www-form-urlencoded",
			url.Values{"grant_type": {"authorization_code"}, "client_id": {"c"}, "code": {code}, "code_verifier": {pkceVerifier},
				"redirect_uri": {azureRedirect}}.Encode())
		var tok liveTokens
		json.Unmarshal(b, &tok)
		return tok.Error
	}},
	{"device code", 15 * time.Minute, func(t *testing.T, h *Handler) string {
		_, b := post(t, h, "https://login.microsoftonline.com/consumers/oauth2/v2.0/devicecode", "application/x-www-form-urlencoded", "client_id=c")
		var dc struct {
			DeviceCode string `json:"device_code"`
		}
		json.Unmarshal(b, &dc)
		if got := pollDeviceCode(t, h, dc.DeviceCode); got != "authorization_pending" {
			t.Fatalf("the first poll: %q, want authorization_pending", got)
		}
		return dc.DeviceCode
	}, pollDeviceCode},
}

// A PKCE pair: the challenge is the verifier's SHA-256, base64url.
const (
	pkceVerifier  = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	pkceChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" // RFC 7636, appendix B
)

func pollDeviceCode(t *testing.T, h *Handler, code string) string {
	t.Helper()
	_, b := post(t, h, "https://login.microsoftonline.com/consumers/oauth2/v2.0/token", "application/x-www-form-urlencoded",
		url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "client_id": {"c"}, "device_code": {code}}.Encode())
	var tok liveTokens
	json.Unmarshal(b, &tok)
	return tok.Error
}

// TestCodeUsableOnce: a code is redeemed once, ever: presented again at
// once, or after 10,001 other accounts signed in with codes of their own
// (the mock once forgot the codes used at 10,000), it is refused.
func TestCodeUsableOnce(t *testing.T) {
	racebuild.Skip(t, "a volume test: 10,001 sign-ins a flow on one goroutine")
	for _, f := range codeFlows {
		t.Run(f.name, func(t *testing.T) {
			now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
			h := Must(New(Config{Now: func() time.Time { return now }}))
			code := f.get(t, h)
			if got := f.present(t, h, code); got != "" {
				t.Fatalf("the first redemption: %q", got)
			}
			if got := f.present(t, h, code); got == "" {
				t.Fatal("the code redeemed twice")
			}
			for i := range 10_001 {
				h.SetAccount(Account{XUID: strconv.Itoa(2533274790000000 + i)})
				if got := f.present(t, h, f.get(t, h)); got != "" {
					t.Fatalf("another code: %q", got)
				}
			}
			if got := f.present(t, h, code); got == "" {
				t.Error("the code redeemed again after 10,001 others")
			}
		})
	}
}

// TestCodesExpire: a code is good until its lifetime ends (5 minutes at
// login.live.com, 10 at the identity platform, 15 for a device code), and
// refused from then on.
func TestCodesExpire(t *testing.T) {
	for _, f := range codeFlows {
		t.Run(f.name, func(t *testing.T) {
			t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
			now := t0
			h := Must(New(Config{Now: func() time.Time { return now }}))
			good, late := f.get(t, h), f.get(t, h)
			now = t0.Add(f.life - time.Second)
			if got := f.present(t, h, good); got != "" {
				t.Errorf("a second before its end: %q", got)
			}
			now = t0.Add(f.life)
			if got := f.present(t, h, late); got == "" {
				t.Error("a code was taken at the end of its life")
			}
		})
	}
}

// TestPublishedAppsRedirect: login.live.com sends a code to every redirect
// URI of the published apps.
func TestPublishedAppsRedirect(t *testing.T) {
	h := NewHandler()
	for _, a := range PublishedApps() {
		for _, r := range a.RedirectURIs {
			if status, back := liveAuthorizeAt(t, h, a.ClientID, r, ""); status != http.StatusFound || back.Get("code") == "" {
				t.Errorf("%s to %s: %d %v, want a redirect with a code", a.ClientID, r, status, back)
			}
		}
	}
}

// TestCodesDistinct: two authorizations at the same instant, for the same
// client, redirect URI and account, get two codes, each good once.
func TestCodesDistinct(t *testing.T) {
	for _, f := range codeFlows {
		t.Run(f.name, func(t *testing.T) {
			now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
			h := Must(New(Config{Now: func() time.Time { return now }}))
			a, b := f.get(t, h), f.get(t, h)
			if a == b {
				t.Fatalf("two authorizations share the code %q", a)
			}
			for _, code := range []string{a, b} {
				if got := f.present(t, h, code); got != "" {
					t.Errorf("redeeming one of the two: %q", got)
				}
			}
		})
	}
}

// TestRedirectRegistered: the authorization pages redirect only to a
// redirect URI the client registered (PublishedApps, a world's apps) or to
// a loopback address; anything else gets 400 invalid_request and no
// redirect.
func TestRedirectRegistered(t *testing.T) {
	world := World{Apps: []WorldApp{
		{ClientID: "Game-App", RedirectURIs: []string{"https://game.example/signin", "com.game.example://auth"}},
		{ClientID: "0000000048093ee3", RedirectURIs: []string{"https://game.example/mine"}}, // replaces a published app's
	}}
	tests := []struct {
		name, client, redirect string
		ok                     bool
	}{
		{"the Xbox app at the desktop page", "000000004C12AE6F", redirectURI, true},
		{"the Xbox app's XAL redirect, client ID in lower case", "000000004c12ae6f", "ms-xal-000000004c12ae6f://auth", true},
		{"Game Pass", "000000004C20A908", "ms-xal-public-beta-000000004c20a908://auth", true},
		{"family settings", "00000000482C8F49", redirectURI, true},
		{"any client at localhost", "any", "http://localhost:8080/auth/callback", true},
		{"any client at 127.0.0.1", "any", "http://127.0.0.1:51234/", true},
		{"any client at [::1]", "any", "http://[::1]:9/x", true},
		{"a world's app", "game-app", "https://game.example/signin", true},
		{"a world's app, its own scheme", "GAME-APP", "com.game.example://auth", true},
		{"a world's app replacing a published one", msaClient, "https://game.example/mine", true},
		{"the published redirect it replaced", msaClient, redirectURI, false},
		{"the Xbox app elsewhere", "000000004C12AE6F", "https://evil.example/cb", false},
		{"a world's app elsewhere", "game-app", "https://game.example/other", false},
		{"another client at the desktop page", "any", redirectURI, false},
		{"another's redirect", "any", "https://game.example/signin", false},
		{"https at localhost", "any", "https://localhost:8080/cb", false},
		{"a look-alike of localhost", "any", "http://localhost.evil.example/cb", false},
		{"localhost as user info", "any", "http://localhost:80@evil.example/cb", false},
		{"a fragment", "any", "http://127.0.0.1:8080/cb#x", false},
		{"a script", "any", "javascript:alert(1)", false},
		{"none", "any", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Must(New(Config{World: world}))
			pages := map[string]url.Values{
				"https://login.live.com/oauth20_authorize.srf": {"client_id": {tt.client}, "redirect_uri": {tt.redirect}, "response_type": {"code"}, "state": {"s"}},
				"https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize": {"client_id": {tt.client}, "redirect_uri": {tt.redirect},
					"response_type": {"code"}, "code_challenge": {pkceChallenge}, "code_challenge_method": {"S256"}, "state": {"s"}},
			}
			for page, q := range pages {
				r := send(t, h, mustRequest("GET", page+"?"+q.Encode()))
				loc := r.header.Get("Location")
				var e struct {
					Error       string `json:"error"`
					Description string `json:"error_description"`
				}
				json.Unmarshal([]byte(r.body), &e)
				switch {
				case tt.ok && (r.status != http.StatusFound || !strings.HasPrefix(loc, tt.redirect+"?code=")):
					t.Errorf("%s: %d to %q, want 302 to %s with a code", page, r.status, loc, tt.redirect)
				case !tt.ok && (r.status != http.StatusBadRequest || loc != "" || e.Error != "invalid_request" || !strings.Contains(e.Description, "'redirect_uri'")):
					t.Errorf("%s: %d to %q, %s; want 400 invalid_request naming redirect_uri, no redirect", page, r.status, loc, r.body)
				}
			}
		})
	}
}
