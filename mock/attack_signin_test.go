package mock

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// Attacks on the mock's sign-in services by an outside reviewer; each test
// fails on the code as it stands.

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

// TestAttackIdentityCodeBoundToClientAndRedirect: the identity platform's
// code exchange must refuse a code presented by another client_id, or
// with another redirect_uri than the authorization's, or with none (RFC
// 6749 §4.1.3: the server MUST ensure the code was issued to the client
// and that redirect_uri is present and identical when the authorization
// request had one). login.live.com's exchange binds both (liveCodeKind);
// the identity platform's binds only the PKCE challenge, so a code that
// another application obtains (with the verifier it chose) is redeemed
// under any client ID, at any redirect URI.
func TestAttackIdentityCodeBoundToClientAndRedirect(t *testing.T) {
	const client, redirect = "game-a", "http://localhost:5000/cb"
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"another client_id", url.Values{"client_id": {"other-app"}, "redirect_uri": {redirect}}},
		{"another redirect_uri", url.Values{"client_id": {client}, "redirect_uri": {"http://127.0.0.1:9/elsewhere"}}},
		{"no redirect_uri", url.Values{"client_id": {client}}},
		{"no client_id", url.Values{"redirect_uri": {redirect}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHandler()
			code := identityCode(t, h, client, redirect)
			tc.form.Set("grant_type", "authorization_code")
			tc.form.Set("code", code)
			tc.form.Set("code_verifier", pkceVerifier)
			status, b := post(t, h, identityToken, "application/x-www-form-urlencoded", tc.form.Encode())
			var tok liveTokens
			json.Unmarshal(b, &tok)
			if status != http.StatusBadRequest || tok.Error != "invalid_grant" || tok.AccessToken != "" {
				t.Errorf("the code of %s at %s redeemed with %v: %d %s; want 400 invalid_grant", client, redirect, tc.form, status, b)
			}
		})
	}
}

// TestAttackRefreshTokenBoundToClient: a refresh token is good only for
// the client it was issued to ("Refresh tokens are bound to a combination
// of user and client": Microsoft identity platform docs, "Refresh tokens
// in the Microsoft identity platform"; RFC 6749 §6). The mock's
// login.live.com takes one client's refresh token from any client ID of
// the same kind, and its identity platform from any client at all.
func TestAttackRefreshTokenBoundToClient(t *testing.T) {
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
	})
	t.Run("identity platform", func(t *testing.T) {
		h := NewHandler()
		code := identityCode(t, h, "game-a", azureRedirect)
		_, b := post(t, h, identityToken, "application/x-www-form-urlencoded", url.Values{"grant_type": {"authorization_code"},
			"client_id": {"game-a"}, "code": {code}, "code_verifier": {pkceVerifier}, "redirect_uri": {azureRedirect}}.Encode())
		var first liveTokens
		json.Unmarshal(b, &first)
		if first.RefreshToken == "" {
			t.Fatalf("no refresh token: %s", b)
		}
		status, b := post(t, h, identityToken, "application/x-www-form-urlencoded", url.Values{"grant_type": {"refresh_token"},
			"client_id": {"other-app"}, "refresh_token": {first.RefreshToken}}.Encode())
		var tok liveTokens
		json.Unmarshal(b, &tok)
		if status != http.StatusBadRequest || tok.Error != "invalid_grant" {
			t.Errorf("game-a's refresh token redeemed by other-app: %d %s; want 400 invalid_grant", status, b)
		}
	})
}

// TestAttackDeviceCodeBoundToClient: a device code is polled for by the
// client it was issued to (RFC 8628 §3.4: the token request carries the
// client_id of a public client, and RFC 6749 §3.2.1 has the server check
// the grant was issued to it); the mock's identity platform hands the
// tokens to whatever client_id polls, or none.
func TestAttackDeviceCodeBoundToClient(t *testing.T) {
	h := NewHandler()
	_, b := post(t, h, "https://login.microsoftonline.com/consumers/oauth2/v2.0/devicecode", "application/x-www-form-urlencoded", "client_id=game-a")
	var dc struct {
		DeviceCode string `json:"device_code"`
	}
	if err := json.Unmarshal(b, &dc); err != nil || dc.DeviceCode == "" {
		t.Fatalf("device code: %s", b)
	}
	poll := func() (int, []byte) {
		return post(t, h, identityToken, "application/x-www-form-urlencoded", url.Values{
			"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "client_id": {"other-app"}, "device_code": {dc.DeviceCode}}.Encode())
	}
	poll() // authorization_pending
	status, b := poll()
	var tok liveTokens
	json.Unmarshal(b, &tok)
	if tok.AccessToken != "" {
		t.Errorf("game-a's device code redeemed by other-app: %d %s; want an error", status, b)
	}
}
