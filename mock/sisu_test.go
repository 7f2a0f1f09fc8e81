package mock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/wiretest"
	"github.com/xblgo/fgrl/internal/xblsign"
)

// A device as an Xbox app is one (OpenXbox/xbox-webapi-python, xal.py):
// its proof key, signing every call, and the XAL app it signs in as
// (APP_PARAMS_GAMEPASS, CLIENT_PARAMS_ANDROID).
type xalDevice struct {
	key      *ecdsa.PrivateKey
	now      func() time.Time
	id       string // the Id sent
	appID    string
	titleID  string
	redirect string
}

func newXALDevice(t *testing.T, h *Handler, now func() time.Time) *xalDevice {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &xalDevice{key: key, now: now, id: "{decf45e4-945d-4379-b708-d4ee92c12d99}",
		appID: "000000004c20a908", titleID: "1016898439", redirect: "ms-xal-000000004c20a908://auth"}
}

// signedPost sends a JSON body to rawURL through h, signed with key at
// when; edit, when not nil, changes the request after it is signed.
func signedPost(t *testing.T, h *Handler, key *ecdsa.PrivateKey, when time.Time, rawURL string, body any, edit func(*http.Request)) (int, []byte, http.Header) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, rawURL, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-xbl-contract-version", "1")
	if key != nil {
		if err := xblsign.Sign(req, key, when, xblsign.DefaultPolicy()); err != nil {
			t.Fatal(err)
		}
	}
	if edit != nil {
		edit(req)
	}
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header
}

func (d *xalDevice) deviceTokenRequest() map[string]any {
	return map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"AuthMethod": "ProofOfPossession", "Id": d.id, "DeviceType": "Android", "Version": "8.0.0",
			"ProofKey": xblsign.ProofKeyOf(&d.key.PublicKey)}}
}

// deviceToken signs in the device at device.auth.xboxlive.com.
func (d *xalDevice) deviceToken(t *testing.T, h *Handler) (string, []byte) {
	t.Helper()
	status, body, _ := signedPost(t, h, d.key, d.now(), "https://device.auth.xboxlive.com/device/authenticate", d.deviceTokenRequest(), nil)
	if status != http.StatusOK {
		t.Fatalf("device/authenticate: %d %s", status, body)
	}
	var tok struct{ Token string }
	json.Unmarshal(body, &tok)
	return tok.Token, body
}

// authenticateBody signs d in at device.auth.xboxlive.com and returns its
// sisu/authenticate request, with testVerifier's challenge.
func (d *xalDevice) authenticateBody(t *testing.T, h *Handler) map[string]any {
	t.Helper()
	dt, _ := d.deviceToken(t, h)
	return d.sisuAuthenticateRequest(dt, testVerifier)
}

// testVerifier is the PKCE verifier of the tests' SISU sign-ins.
const testVerifier = "a-verifier-of-forty-three-characters-or-more-0123"

func (d *xalDevice) sisuAuthenticateRequest(deviceToken, verifier string) map[string]any {
	return map[string]any{"AppId": d.appID, "TitleId": d.titleID, "RedirectUri": d.redirect, "DeviceToken": deviceToken,
		"Sandbox": "RETAIL", "TokenType": "code", "Offers": []string{"service::user.auth.xboxlive.com::MBI_SSL"},
		"Query": map[string]string{"display": "android_phone", "code_challenge": s256Challenge(verifier), "code_challenge_method": "S256", "state": "st8"}}
}

// sisuAnswers are the answers along a SISU sign-in, in order.
type sisuAnswers struct {
	device, authenticate, authorize []byte
	session, accessToken            string
	authorizeStatus                 int
}

// sisuSignIn signs in as xal.py's auth_flow does: device token, SISU
// authenticate, the login.live.com page (which approves at once), the
// code's exchange with the PKCE verifier, SISU authorize.
func (d *xalDevice) sisuSignIn(t *testing.T, h *Handler) sisuAnswers {
	t.Helper()
	var a sisuAnswers
	dt, dev := d.deviceToken(t, h)
	a.device = dev
	const verifier = testVerifier
	status, body, hdr := signedPost(t, h, d.key, d.now(), "https://sisu.xboxlive.com/authenticate", d.sisuAuthenticateRequest(dt, verifier), nil)
	if status != http.StatusOK || hdr.Get("X-SessionId") == "" {
		t.Fatalf("sisu/authenticate: %d %s (session %q)", status, body, hdr.Get("X-SessionId"))
	}
	a.authenticate, a.session = body, hdr.Get("X-SessionId")
	var page struct{ MsaOauthRedirect string }
	json.Unmarshal(body, &page)
	req, _ := http.NewRequest(http.MethodGet, page.MsaOauthRedirect, nil)
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(back.String(), d.redirect) || back.Query().Get("state") != "st8" {
		t.Fatalf("login.live.com page: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	status, tok, lt := liveTokenAt(t, h, url.Values{"client_id": {d.appID}, "code": {back.Query().Get("code")}, "code_verifier": {verifier},
		"grant_type": {"authorization_code"}, "redirect_uri": {d.redirect}, "scope": {sisuScope}})
	if status != http.StatusOK {
		t.Fatalf("oauth20_token.srf: %d %s", status, tok)
	}
	a.accessToken = lt.AccessToken
	a.authorizeStatus, a.authorize, _ = signedPost(t, h, d.key, d.now(), "https://sisu.xboxlive.com/authorize", d.authorizeRequest(dt, a.accessToken, a.session), nil)
	return a
}

func (d *xalDevice) authorizeRequest(deviceToken, accessToken, session string) map[string]any {
	return map[string]any{"AccessToken": "t=" + accessToken, "AppId": d.appID, "DeviceToken": deviceToken, "Sandbox": "RETAIL",
		"SiteName": "user.auth.xboxlive.com", "SessionId": session, "ProofKey": xblsign.ProofKeyOf(&d.key.PublicKey)}
}

// TestSISUSignIn: the XAL sign-in completes, every answer in its recorded
// shape (xbox-webapi-python's tests/data/responses), and the XSTS token
// names the world's account and the SISU title, and reads its profile.
func TestSISUSignIn(t *testing.T) {
	h := Must(New(Config{World: loadWorld(t, "testdata/wire-world.json")}))
	d := newXALDevice(t, h, time.Now)
	a := d.sisuSignIn(t, h)
	if a.authorizeStatus != http.StatusOK {
		t.Fatalf("sisu/authorize: %d %s", a.authorizeStatus, a.authorize)
	}
	for _, c := range []struct {
		file string
		got  []byte
	}{
		{"auth_device_token.json", a.device},
		{"xal_authentication_resp.json", a.authenticate},
		{"xal_authorization_resp.json", a.authorize},
	} {
		recorded, err := os.ReadFile("testdata/recorded/xbox-webapi-python/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if diff := missingFields(wiretest.ShapeDiff(recorded, c.got), nil); diff != "" {
			t.Errorf("%s (-recorded +mock):\n%s\n%s", c.file, diff, c.got)
		}
	}
	var z struct {
		TitleToken struct {
			DisplayClaims struct{ Xti struct{ Tid string } }
		}
		AuthorizationToken struct {
			Token         string
			DisplayClaims struct {
				Xui []struct{ Xid, Uhs, Gtg string }
			}
		}
	}
	if err := json.Unmarshal(a.authorize, &z); err != nil {
		t.Fatal(err)
	}
	x := z.AuthorizationToken.DisplayClaims.Xui[0]
	if z.TitleToken.DisplayClaims.Xti.Tid != d.titleID {
		t.Errorf("title token for %q, want %q", z.TitleToken.DisplayClaims.Xti.Tid, d.titleID)
	}
	authz := "XBL3.0 x=" + x.Uhs + ";" + z.AuthorizationToken.Token
	id, err := parseToken(authz)
	if err != nil || id.xuid != DefaultAccount.XUID || id.title != d.titleID {
		t.Fatalf("XSTS token names %+v (%v), want %s playing %s", id, err, DefaultAccount.XUID, d.titleID)
	}
	r := do(t, h, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", authz, "")
	if r.status != http.StatusOK || !strings.Contains(r.body, x.Gtg) {
		t.Errorf("profile with the SISU token: %d %s, want the gamertag %q", r.status, r.body, x.Gtg)
	}
}

// TestSignedSignInRefusals: each signed sign-in call is refused when its
// signature is missing (400), does not match, is another key's, is stale
// or from the future, or is replayed (403: device.auth's measured answers
// to a missing and to a flipped signature, device.go); a session or device
// token is good only with the device it was issued to (401); a code only
// with its PKCE verifier.
func TestSignedSignInRefusals(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	now := t0
	h := Must(New(Config{Now: func() time.Time { return now }}))
	d := newXALDevice(t, h, func() time.Time { return now })
	other := newXALDevice(t, h, func() time.Time { return now })
	other.id = "{00000000-945d-4379-b708-d4ee92c12d99}"
	dt, _ := d.deviceToken(t, h)
	otherDT, _ := other.deviceToken(t, h)
	const verifier = testVerifier
	auth := d.sisuAuthenticateRequest(dt, verifier)
	_, _, hdr := signedPost(t, h, d.key, now, "https://sisu.xboxlive.com/authenticate", auth, nil)
	session := hdr.Get("X-SessionId")
	lt := liveAccessToken(t, h)
	const sisuAuth = "https://sisu.xboxlive.com/authenticate"
	replayed := func(r *http.Request) {}
	tests := []struct {
		name string
		key  *ecdsa.PrivateKey
		when time.Time
		url  string
		body any
		edit func(*http.Request)
		want int
	}{
		{"unsigned", nil, now, sisuAuth, auth, nil, http.StatusBadRequest},
		{"signature of another key", other.key, now, sisuAuth, auth, nil, http.StatusForbidden},
		{"body changed after signing", d.key, now, sisuAuth, auth, func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader(strings.Replace(mustJSON(auth), "RETAIL", "XDKS.1", 1)))
		}, http.StatusForbidden},
		{"path changed after signing", d.key, now, sisuAuth, auth, func(r *http.Request) { r.URL.RawQuery = "x=1" }, http.StatusForbidden},
		{"stale", d.key, now.Add(-signatureSkew - time.Second), sisuAuth, auth, nil, http.StatusForbidden},
		{"from the future", d.key, now.Add(signatureSkew + time.Second), sisuAuth, auth, nil, http.StatusForbidden},
		{"garbage signature", d.key, now, sisuAuth, auth, func(r *http.Request) { r.Header.Set("Signature", "AAAA") }, http.StatusForbidden},
		{"replayed", d.key, now, sisuAuth, auth, replayed, http.StatusForbidden},
		{"device token of another device", d.key, now, sisuAuth, d.sisuAuthenticateRequest(otherDT, verifier), nil, http.StatusForbidden},
		{"device token of another device, signed by it, with this device's session", other.key, now, "https://sisu.xboxlive.com/authorize",
			other.authorizeRequest(otherDT, lt, session), nil, http.StatusUnauthorized},
		{"proof key not the device token's", d.key, now, "https://sisu.xboxlive.com/authorize",
			other.authorizeRequest(dt, lt, session), nil, http.StatusUnauthorized},
		{"title token of another device at XSTS", other.key, now, "https://xsts.auth.xboxlive.com/xsts/authorize",
			map[string]any{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT", "Properties": map[string]any{"UserTokens": []string{"x"}, "DeviceToken": otherDT, "TitleToken": "tt"}},
			nil, http.StatusUnauthorized},
		{"body over the bound", d.key, now, sisuAuth, map[string]string{"pad": strings.Repeat("a", maxSignedBody)}, nil, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "replayed" {
				b, _ := json.Marshal(tc.body)
				req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(string(b)))
				xblsign.Sign(req, tc.key, tc.when, xblsign.DefaultPolicy())
				sig := req.Header.Get("Signature")
				if status, body, _ := signedPost(t, h, nil, tc.when, tc.url, tc.body, func(r *http.Request) { r.Header.Set("Signature", sig) }); status != http.StatusOK {
					t.Fatalf("first presentation: %d %s", status, body)
				}
				tc.key, tc.edit = nil, func(r *http.Request) { r.Header.Set("Signature", sig) }
			}
			if status, body, _ := signedPost(t, h, tc.key, tc.when, tc.url, tc.body, tc.edit); status != tc.want {
				t.Errorf("status %d (%s), want %d", status, body, tc.want)
			}
		})
	}
	t.Run("code without its verifier", func(t *testing.T) {
		q := url.Values{"client_id": {d.appID}, "redirect_uri": {d.redirect}, "response_type": {"code"},
			"code_challenge": {s256Challenge(verifier)}, "code_challenge_method": {"S256"}, "scope": {sisuScope}}
		req, _ := http.NewRequest(http.MethodGet, "https://login.live.com/oauth20_authorize.srf?"+q.Encode(), nil)
		resp, _ := h.RoundTrip(req)
		back, _ := url.Parse(resp.Header.Get("Location"))
		form := url.Values{"client_id": {d.appID}, "code": {back.Query().Get("code")}, "grant_type": {"authorization_code"}, "redirect_uri": {d.redirect}}
		for _, v := range []string{"", "another-verifier-of-forty-three-characters-000"} {
			form.Set("code_verifier", v)
			if status, body, _ := liveTokenAt(t, h, form); status != http.StatusBadRequest {
				t.Errorf("verifier %q: %d %s, want 400", v, status, body)
			}
		}
		form.Set("code_verifier", verifier)
		if status, body, _ := liveTokenAt(t, h, form); status != http.StatusOK {
			t.Errorf("the right verifier after wrong ones: %d %s, want 200", status, body)
		}
	})
}

// liveAccessToken signs the default account in at login.live.com and
// returns its access token.
func liveAccessToken(t *testing.T, h *Handler) string {
	t.Helper()
	_, back := liveAuthorizeAt(t, h, "000000004C12AE6F", "https://login.live.com/oauth20_desktop.srf", "")
	_, _, lt := liveTokenAt(t, h, url.Values{"client_id": {"000000004C12AE6F"}, "code": {back.Get("code")}, "grant_type": {"authorization_code"},
		"redirect_uri": {"https://login.live.com/oauth20_desktop.srf"}})
	return lt.AccessToken
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSISUHoldsNoSecret: after a SISU sign-in, no export of the record of
// calls (Calls, WriteHAR, the admin API's calls and HAR) holds a token,
// the session, the code, the PKCE verifier and challenge or the proof key
// (the record keeps no header: no Signature).
func TestSISUHoldsNoSecret(t *testing.T) {
	h := NewHandler()
	d := newXALDevice(t, h, time.Now)
	a := d.sisuSignIn(t, h)
	var z struct {
		DeviceToken                               string
		TitleToken, UserToken, AuthorizationToken struct{ Token string }
	}
	json.Unmarshal(a.authorize, &z)
	if z.AuthorizationToken.Token == "" {
		t.Fatalf("no sign-in: %s", a.authorize)
	}
	pk := xblsign.ProofKeyOf(&d.key.PublicKey)
	noSecretIn(t, exportsOf(t, h), z.DeviceToken, z.TitleToken.Token, z.UserToken.Token, z.AuthorizationToken.Token,
		a.session, a.accessToken, "a-verifier-of-forty-three-characters-or-more-0123", pk.X, pk.Y, s256Challenge("a-verifier-of-forty-three-characters-or-more-0123"))
	for _, c := range h.Calls(CallFilter{}) {
		if strings.Contains(c.URL, "code=") && !strings.Contains(c.URL, "code=REDACTED") {
			t.Errorf("a call's URL holds a code: %s", c.URL)
		}
	}
}
