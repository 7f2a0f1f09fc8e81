package mock

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// TestOneTimeWindow: a code is refused once used, and once codeWindow
// later codes were issued, used or not; a serial never issued is refused.
func TestOneTimeWindow(t *testing.T) {
	var o oneTime
	first := o.issue()
	unused := o.issue()
	if before, ok := o.present(first); before != 0 || !ok {
		t.Fatalf("the first presentation: %d, %v", before, ok)
	}
	if before, ok := o.present(first); before != 1 || !ok {
		t.Errorf("the second presentation: %d, %v; want 1 before", before, ok)
	}
	for range codeWindow - 1 {
		o.issue()
	}
	if before, ok := o.present(unused); before != 0 || !ok {
		t.Errorf("an unused code codeWindow-1 codes ago: %d, %v; want good", before, ok)
	}
	o.issue()
	for _, n := range []uint64{first, unused} {
		if _, ok := o.present(n); ok {
			t.Errorf("code %d, more than codeWindow codes ago, was taken", n)
		}
	}
	for _, n := range []uint64{0, o.last + 1} {
		if _, ok := o.present(n); ok {
			t.Errorf("serial %d, never issued, was taken", n)
		}
	}
}

const identityToken = "https://login.microsoftonline.com/consumers/oauth2/v2.0/token"

// identityCode runs the identity platform's authorization page for client
// and redirect with the RFC 7636 PKCE pair, and returns the code.
func identityCode(t *testing.T, h *Handler, client, redirect string) string {
	t.Helper()
	q := url.Values{"client_id": {client}, "redirect_uri": {redirect}, "response_type": {"code"},
		"code_challenge": {pkceChallenge}, "code_challenge_method": {"S256"}, "state": {"s"}}
	r := send(t, h, mustRequest("GET", "https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize?"+q.Encode()))
	loc, err := url.Parse(r.header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %d %q %s", r.status, r.header.Get("Location"), r.body)
	}
	return loc.Query().Get("code")
}

// oauthAnswer is a token endpoint's answer: tokens, or an error.
type oauthAnswer struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
}

// identityTokenAt posts form to the identity platform's token endpoint.
func identityTokenAt(t *testing.T, h *Handler, form url.Values) (int, oauthAnswer) {
	t.Helper()
	status, b := post(t, h, identityToken, "application/x-www-form-urlencoded", form.Encode())
	var a oauthAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%d %s: %v", status, b, err)
	}
	return status, a
}

// TestIdentityCodeBoundToClientAndRedirect: the identity platform redeems
// a code only for the client_id it was issued to, with the redirect_uri
// and PKCE verifier of its authorization (RFC 6749 4.1.3: the server MUST
// ensure the code was issued to the client, and that redirect_uri is
// present and identical when the authorization request had one); anything
// else is invalid_grant with the service's AADSTS description, and leaves
// the code good for its own client.
func TestIdentityCodeBoundToClientAndRedirect(t *testing.T) {
	const client, redirect = "game-a", "http://localhost:5000/cb"
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"another client_id", url.Values{"client_id": {"other-app"}, "redirect_uri": {redirect}, "code_verifier": {pkceVerifier}}, aadBadGrant},
		{"no client_id", url.Values{"redirect_uri": {redirect}, "code_verifier": {pkceVerifier}}, aadBadGrant},
		{"another redirect_uri", url.Values{"client_id": {client}, "redirect_uri": {"http://127.0.0.1:9/elsewhere"}, "code_verifier": {pkceVerifier}}, aadBadReply},
		{"no redirect_uri", url.Values{"client_id": {client}, "code_verifier": {pkceVerifier}}, aadBadReply},
		{"another verifier", url.Values{"client_id": {client}, "redirect_uri": {redirect}, "code_verifier": {pkceChallenge}}, aadBadVerifier},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHandler()
			code := identityCode(t, h, client, redirect)
			tc.form.Set("grant_type", "authorization_code")
			tc.form.Set("code", code)
			status, got := identityTokenAt(t, h, tc.form)
			if status != http.StatusBadRequest || got.Error != "invalid_grant" || got.Description != tc.want || got.AccessToken != "" {
				t.Errorf("the code of %s at %s redeemed with %v: %d %+v; want 400 invalid_grant %q", client, redirect, tc.form, status, got, tc.want)
			}
			own := url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "redirect_uri": {redirect},
				"code": {code}, "code_verifier": {pkceVerifier}}
			if status, got := identityTokenAt(t, h, own); status != http.StatusOK || got.AccessToken == "" {
				t.Errorf("then by its own client: %d %+v", status, got)
			}
			if _, got := identityTokenAt(t, h, own); got.Error != "invalid_grant" || got.Description != aadRedeemed {
				t.Errorf("then again: %+v; want invalid_grant %q", got, aadRedeemed)
			}
		})
	}
}

// TestDeviceCodeBoundToClient: a device code's tokens go to the client
// that asked for it (RFC 8628 3.4: the token request carries the client_id
// of a public client, and RFC 6749 3.2.1 has the server check the grant
// was issued to it); another client's polls get invalid_grant and change
// nothing of the code's.
func TestDeviceCodeBoundToClient(t *testing.T) {
	h := NewHandler()
	_, b := post(t, h, "https://login.microsoftonline.com/consumers/oauth2/v2.0/devicecode", "application/x-www-form-urlencoded", "client_id=game-a")
	var dc struct {
		DeviceCode string `json:"device_code"`
	}
	if err := json.Unmarshal(b, &dc); err != nil || dc.DeviceCode == "" {
		t.Fatalf("device code: %s", b)
	}
	poll := func(client string) (int, oauthAnswer) {
		return identityTokenAt(t, h, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"},
			"client_id": {client}, "device_code": {dc.DeviceCode}})
	}
	for _, client := range []string{"other-app", "other-app", ""} {
		if status, got := poll(client); status != http.StatusBadRequest || got.Error != "invalid_grant" || got.AccessToken != "" {
			t.Errorf("game-a's device code polled by %q: %d %+v; want 400 invalid_grant", client, status, got)
		}
	}
	if _, got := poll("game-a"); got.Error != "authorization_pending" {
		t.Errorf("then game-a's first poll: %+v; want authorization_pending", got)
	}
	if _, got := poll("game-a"); got.AccessToken == "" {
		t.Errorf("then game-a's second poll: %+v; want tokens", got)
	}
}

// TestRefreshTokenBoundToClient: a refresh token is good only for the
// client it was issued to ("Refresh tokens are bound to a combination of
// user and client": Microsoft identity platform docs, "Refresh tokens in
// the Microsoft identity platform"; RFC 6749 6), at login.live.com (for
// another client ID of the same kind too) and at the identity platform.
func TestRefreshTokenBoundToClient(t *testing.T) {
	t.Run("login.live.com", func(t *testing.T) {
		h := NewHandler()
		_, back := liveAuthorizeAt(t, h, msaClient, redirectURI, "")
		_, _, first := liveTokenAt(t, h, url.Values{"grant_type": {"authorization_code"}, "client_id": {msaClient},
			"code": {back.Get("code")}, "redirect_uri": {redirectURI}})
		if first.RefreshToken == "" {
			t.Fatal("no refresh token")
		}
		const xboxApp = "000000004C12AE6F" // another published client of the same kind
		status, b, tok := liveTokenAt(t, h, url.Values{"grant_type": {"refresh_token"}, "client_id": {xboxApp},
			"refresh_token": {first.RefreshToken}})
		if status != http.StatusBadRequest || tok.Error != "invalid_grant" {
			t.Errorf("%s's refresh token redeemed by %s: %d %s; want 400 invalid_grant", msaClient, xboxApp, status, b)
		}
		if _, _, tok := liveTokenAt(t, h, url.Values{"grant_type": {"refresh_token"}, "client_id": {msaClient},
			"refresh_token": {first.RefreshToken}}); tok.AccessToken == "" {
			t.Errorf("then by its own client: %+v", tok)
		}
	})
	t.Run("identity platform", func(t *testing.T) {
		h := NewHandler()
		code := identityCode(t, h, "game-a", azureRedirect)
		_, first := identityTokenAt(t, h, url.Values{"grant_type": {"authorization_code"},
			"client_id": {"game-a"}, "code": {code}, "code_verifier": {pkceVerifier}, "redirect_uri": {azureRedirect}})
		if first.RefreshToken == "" {
			t.Fatalf("no refresh token: %+v", first)
		}
		for _, client := range []string{"other-app", ""} {
			status, got := identityTokenAt(t, h, url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {first.RefreshToken},
				"scope": {"XboxLive.signin offline_access"}})
			if status != http.StatusBadRequest || got.Error != "invalid_grant" || got.Description != aadBadRefresh {
				t.Errorf("game-a's refresh token redeemed by %q: %d %+v; want 400 invalid_grant %q", client, status, got, aadBadRefresh)
			}
		}
		if _, got := identityTokenAt(t, h, url.Values{"grant_type": {"refresh_token"}, "client_id": {"game-a"},
			"refresh_token": {first.RefreshToken}, "scope": {"XboxLive.signin offline_access"}}); got.AccessToken == "" {
			t.Errorf("then by its own client: %+v", got)
		}
	})
}

// TestIdentityRefreshNeedsScope: the identity platform refuses a
// refresh_token grant without scope, which its docs ("Refresh the access
// token") mark required, with AADSTS900144; the refresh token stays good
// for a refresh that names one.
func TestIdentityRefreshNeedsScope(t *testing.T) {
	h := NewHandler()
	code := identityCode(t, h, "game-a", azureRedirect)
	_, first := identityTokenAt(t, h, url.Values{"grant_type": {"authorization_code"},
		"client_id": {"game-a"}, "code": {code}, "code_verifier": {pkceVerifier}, "redirect_uri": {azureRedirect}})
	if first.RefreshToken == "" {
		t.Fatalf("no refresh token: %+v", first)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {"game-a"}, "refresh_token": {first.RefreshToken}}
	if status, got := identityTokenAt(t, h, form); status != http.StatusBadRequest || got.Error != "invalid_request" || got.Description != aadNoScope {
		t.Errorf("a refresh without scope: %d %+v; want 400 invalid_request %q", status, got, aadNoScope)
	}
	form.Set("scope", "XboxLive.signin offline_access")
	if _, got := identityTokenAt(t, h, form); got.AccessToken == "" {
		t.Errorf("then with scope: %+v", got)
	}
}

// TestSignInRefusalsDocumented: docs/MOCK.md's table of the identity
// platform's refusals quotes each as the mock answers it.
func TestSignInRefusalsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../docs/MOCK.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{aadBadGrant, aadBadReply, aadBadVerifier, aadRedeemed, aadBadRefresh, aadNoScope} {
		if !strings.Contains(string(readme), "`"+d+"`") {
			t.Errorf("docs/MOCK.md does not quote %q", d)
		}
	}
}

func BenchmarkOneTime(b *testing.B) {
	var o oneTime
	b.ReportAllocs()
	for b.Loop() {
		o.present(o.issue())
	}
}
