package client

// Outsider's checks of the sign-in requests the client sends against the
// services' wire format as public sources record it:
//
//   - OpenXbox/xbox-webapi-python xbox/webapi/authentication/manager.py
//     (request_user_token, request_xsts_token, refresh_oauth_token and
//     _oauth2_token_request), xal.py (xsts_authorization, the signed
//     requests' ProofKey) and xbox/webapi/common/request_signer.py (the
//     Signature header: version, FILETIME, ES256 over
//     version\0ts\0METHOD\0path\0auth\0body\0; proof_field's JWK);
//   - npm @xboxreplay/xboxlive-auth src/shared/libs/xbox-network/modules/
//     requests/index.ts (exchangeRpsTicketForUserToken,
//     exchangeTokensForXSTSToken) and src/shared/libs/live/modules/
//     requests/index.ts (refreshAccessToken).
//
// Each request is captured by a RoundTripper in front of the mock, and
// the signature is verified by an implementation written here from
// request_signer.py, not by the package's own xblsign.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"

	"github.com/xblgo/fgrl/mock"
)

// attack93Sent is one request as it left the client.
type attack93Sent struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// attack93Recorder records every request, then sends it on to base.
type attack93Recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	sent []attack93Sent
}

func (r *attack93Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.mu.Lock()
	r.sent = append(r.sent, attack93Sent{Method: req.Method, URL: req.URL.String(), Header: req.Header.Clone(), Body: body})
	r.mu.Unlock()
	return r.base.RoundTrip(req)
}

func (r *attack93Recorder) to(u string) []attack93Sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []attack93Sent
	for _, s := range r.sent {
		if s.URL == u {
			out = append(out, s)
		}
	}
	return out
}

// attack93Shape is a JSON value's field names and types, recursively:
// "string", "number", "bool", "null", "[T]" and "{a:T,b:T}" with the
// names sorted.
func attack93Shape(v any) string {
	switch v := v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	case []any:
		var parts []string
		for _, e := range v {
			if s := attack93Shape(e); !slices.Contains(parts, s) {
				parts = append(parts, s)
			}
		}
		return "[" + strings.Join(parts, "|") + "]"
	case map[string]any:
		var keys []string
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+":"+attack93Shape(v[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return "?"
}

func attack93JSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %.200q", err, b)
	}
	return m
}

// attack93SignInAll signs a user in at h (device code flow), then signs in
// to Xbox starting from the refresh token alone, so that every request of
// the flow is sent once through rec.
func attack93SignInAll(t *testing.T, h *mock.Handler) (*attack93Recorder, *SignIn, XboxToken) {
	t.Helper()
	rec := &attack93Recorder{base: h}
	hc := &http.Client{Transport: rec}
	cfg := MicrosoftOAuth("00000000-0000-0000-0000-000000000000")
	tok, err := DeviceLogin(context.Background(), cfg, hc, func(*oauth2.DeviceAuthResponse) {})
	if err != nil {
		t.Fatal(err)
	}
	s := &SignIn{OAuth: cfg, Microsoft: &oauth2.Token{RefreshToken: tok.RefreshToken}, HTTPClient: hc}
	x, err := s.XboxToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rec, s, x
}

// held: the user token request has manager.py request_user_token's and
// @xboxreplay/xboxlive-auth exchangeRpsTicketForUserToken's URL, method,
// x-xbl-contract-version and JSON fields, with the identity platform's
// access token as "d=<token>" (manager.py's default for an Azure app);
// the XSTS request has request_xsts_token's and
// exchangeTokensForXSTSToken's (UserTokens a list of strings, SandboxId
// "RETAIL", RelyingParty "http://xboxlive.com").
//
// Promise (client package doc): "Every request carries what XSAPI sends
// (the service's x-xbl-contract-version, ...)"; signin.go: "The public
// sign-in endpoints (OpenXbox/xbox-webapi-python,
// xbox/webapi/authentication/manager.py ...)"; SignIn: "a user token from
// user.auth.xboxlive.com and an XSTS token from xsts.auth.xboxlive.com".
func TestAttack93WireUserAndXSTSRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		rec, s, _ := attack93SignInAll(t, h)
		access := s.MicrosoftToken().AccessToken

		users := rec.to("https://user.auth.xboxlive.com/user/authenticate")
		if len(users) != 1 {
			t.Fatalf("%d user token requests, want 1", len(users))
		}
		u := users[0]
		if u.Method != "POST" {
			t.Errorf("user token: method %s, want POST (manager.py request_user_token)", u.Method)
		}
		if got := u.Header.Get("x-xbl-contract-version"); got != "1" {
			t.Errorf("user token: x-xbl-contract-version %q, want \"1\" (manager.py request_user_token headers)", got)
		}
		if ct := u.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("user token: Content-Type %q, want application/json (manager.py posts json=data)", ct)
		}
		ub := attack93JSON(t, u.Body)
		if got, want := attack93Shape(ub), "{Properties:{AuthMethod:string,RpsTicket:string,SiteName:string},RelyingParty:string,TokenType:string}"; got != want {
			t.Errorf("user token body fields %s, want %s (manager.py request_user_token data)", got, want)
		}
		p, _ := ub["Properties"].(map[string]any)
		if ub["RelyingParty"] != "http://auth.xboxlive.com" || ub["TokenType"] != "JWT" ||
			p["AuthMethod"] != "RPS" || p["SiteName"] != "user.auth.xboxlive.com" || p["RpsTicket"] != "d="+access {
			t.Errorf("user token body values %s", u.Body)
		}

		xsts := rec.to("https://xsts.auth.xboxlive.com/xsts/authorize")
		if len(xsts) != 1 {
			t.Fatalf("%d XSTS requests, want 1", len(xsts))
		}
		x := xsts[0]
		if x.Method != "POST" || x.Header.Get("x-xbl-contract-version") != "1" || !strings.HasPrefix(x.Header.Get("Content-Type"), "application/json") {
			t.Errorf("XSTS: %s, x-xbl-contract-version %q, Content-Type %q; want POST, \"1\", application/json (manager.py request_xsts_token)",
				x.Method, x.Header.Get("x-xbl-contract-version"), x.Header.Get("Content-Type"))
		}
		xb := attack93JSON(t, x.Body)
		if got, want := attack93Shape(xb), "{Properties:{SandboxId:string,UserTokens:[string]},RelyingParty:string,TokenType:string}"; got != want {
			t.Errorf("XSTS body fields %s, want %s (manager.py request_xsts_token data)", got, want)
		}
		xp, _ := xb["Properties"].(map[string]any)
		ut, _ := xp["UserTokens"].([]any)
		if xb["RelyingParty"] != "http://xboxlive.com" || xb["TokenType"] != "JWT" || xp["SandboxId"] != "RETAIL" || len(ut) != 1 || ut[0] == "" {
			t.Errorf("XSTS body values %s", x.Body)
		}
		// Neither carries the other's or any credential in a header.
		for _, r := range []attack93Sent{u, x} {
			if r.Header.Get("Authorization") != "" {
				t.Errorf("%s carries an Authorization header", r.URL)
			}
		}
	})
}

// The Microsoft account refresh. manager.py's refresh_oauth_token posts
// grant_type, scope (" ".join(scopes)), refresh_token and client_id
// (_oauth2_token_request); @xboxreplay/xboxlive-auth's refreshAccessToken
// posts client_id, scope, grant_type and refresh_token.
//
// Promise (signin.go): "The public sign-in endpoints
// (OpenXbox/xbox-webapi-python, xbox/webapi/authentication/manager.py
// ...)" and "SignInScopes are the Microsoft account scopes Xbox sign-in
// asks for." The refresh the client sends asks for no scope.
func TestAttack93WireMicrosoftRefreshForm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		rec, s, _ := attack93SignInAll(t, h)
		var refresh *attack93Sent
		for _, r := range rec.to(MicrosoftTokenURL) {
			if f, _ := url.ParseQuery(string(r.Body)); f.Get("grant_type") == "refresh_token" {
				refresh = &r
			}
		}
		if refresh == nil {
			t.Fatal("no refresh_token grant was sent")
		}
		if refresh.Method != "POST" || !strings.HasPrefix(refresh.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			t.Errorf("refresh: %s, Content-Type %q; want a POSTed form", refresh.Method, refresh.Header.Get("Content-Type"))
		}
		f, _ := url.ParseQuery(string(refresh.Body))
		var keys []string
		for k := range f {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if f.Get("client_id") != s.OAuth.ClientID || f.Get("refresh_token") == "" {
			t.Errorf("refresh form %v: want client_id and refresh_token", keys)
		}
		if got, want := f.Get("scope"), strings.Join(SignInScopes, " "); got != want {
			t.Errorf("refresh form fields %v: scope %q, want %q (manager.py refresh_oauth_token and "+
				"@xboxreplay/xboxlive-auth refreshAccessToken both send scope)", keys, got, want)
		}
	})
}

// held: the device code flow's requests are the Microsoft identity
// platform's (RFC 8628 3.1 and 3.4): the device code request posts
// client_id and the sign-in scopes; each poll posts grant_type
// urn:ietf:params:oauth:grant-type:device_code, client_id and the
// device_code it was given.
//
// Promise (signin.go): "the Microsoft identity platform's device code flow
// for consumer accounts"; DeviceLogin "asks for a code ... and waits until
// the user has entered it".
func TestAttack93WireDeviceCodeRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		rec, s, _ := attack93SignInAll(t, h)
		dc := rec.to(MicrosoftDeviceCodeURL)
		if len(dc) != 1 {
			t.Fatalf("%d device code requests, want 1", len(dc))
		}
		f, _ := url.ParseQuery(string(dc[0].Body))
		if dc[0].Method != "POST" || f.Get("client_id") != s.OAuth.ClientID || f.Get("scope") != "XboxLive.signin offline_access" {
			t.Errorf("device code request %s %s", dc[0].Method, dc[0].Body)
		}
		polls := 0
		for _, r := range rec.to(MicrosoftTokenURL) {
			f, _ := url.ParseQuery(string(r.Body))
			if f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code" {
				continue
			}
			polls++
			if r.Method != "POST" || f.Get("client_id") != s.OAuth.ClientID || f.Get("device_code") == "" {
				t.Errorf("poll %d: %s fields %v", polls, r.Method, f)
			}
		}
		if polls < 1 {
			t.Error("no device code poll was sent")
		}
	})
}

// attack93FileTimeEpoch is 1970-01-01 as a Windows FILETIME
// (request_signer.py via filetimes.dt_to_filetime).
const attack93FileTimeEpoch = 116444736000000000

// attack93Verify checks a Signature header as request_signer.py makes it:
// base64 of version (4 bytes BE) || FILETIME (8 bytes BE) || r || s (32
// bytes each), r and s an ECDSA P-256 signature of SHA-256 over version
// \0 ts \0 METHOD \0 path?query \0 Authorization \0 body \0. It returns
// the instant signed.
func attack93Verify(t *testing.T, what string, r attack93Sent, pub *ecdsa.PublicKey) time.Time {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(r.Header.Get("Signature"))
	if err != nil || len(raw) != 76 {
		t.Errorf("%s: Signature %q is not base64 of 76 bytes (request_signer.py _sign_raw): %v", what, r.Header.Get("Signature"), err)
		return time.Time{}
	}
	if v := binary.BigEndian.Uint32(raw[:4]); v != 1 {
		t.Errorf("%s: signature version %d, want 1 (request_signer.py SIGNATURE_VERSION)", what, v)
	}
	u, _ := url.Parse(r.URL)
	h := sha256.New()
	h.Write(raw[:4])
	h.Write([]byte{0})
	h.Write(raw[4:12])
	h.Write([]byte{0})
	h.Write([]byte(strings.ToUpper(r.Method)))
	h.Write([]byte{0})
	h.Write([]byte(u.RequestURI()))
	h.Write([]byte{0})
	h.Write([]byte(r.Header.Get("Authorization")))
	h.Write([]byte{0})
	h.Write(r.Body)
	h.Write([]byte{0})
	if !ecdsa.Verify(pub, h.Sum(nil), new(big.Int).SetBytes(raw[12:44]), new(big.Int).SetBytes(raw[44:76])) {
		t.Errorf("%s: the Signature does not verify as request_signer.py computes it (whole body)", what)
	}
	ft := binary.BigEndian.Uint64(raw[4:12])
	return time.Unix(0, 0).Add(time.Duration(ft-attack93FileTimeEpoch) * 100)
}

// attack93ProofKey reads a ProofKey JWK as request_signer.py's proof_field
// writes it: exactly use "sig", alg "ES256", kty "EC", crv "P-256", and x
// and y as unpadded base64url of 32 bytes each.
func attack93ProofKey(t *testing.T, v any) *ecdsa.PublicKey {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("ProofKey %v is not an object", v)
	}
	if got, want := attack93Shape(m), "{alg:string,crv:string,kty:string,use:string,x:string,y:string}"; got != want {
		t.Errorf("ProofKey fields %s, want %s (request_signer.py proof_field)", got, want)
	}
	if m["use"] != "sig" || m["alg"] != "ES256" || m["kty"] != "EC" || m["crv"] != "P-256" {
		t.Errorf("ProofKey %v", m)
	}
	coord := func(name string) []byte {
		s, _ := m[name].(string)
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) != 32 || strings.ContainsAny(s, "+/=") {
			t.Errorf("ProofKey %s %q: want unpadded base64url of 32 bytes (request_signer.py __encode_ec_coord)", name, s)
		}
		return b
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), slices.Concat([]byte{4}, coord("x"), coord("y")))
	if err != nil {
		t.Fatalf("ProofKey %v is no P-256 point: %v", m, err)
	}
	return pub
}

// held: a game backend's sign-in requests (XSAS's S-token, XSTS's
// service-auth and delegated X-tokens) are POSTed JSON with
// x-xbl-contract-version 1, each signed as request_signer.py signs (the
// whole body, the instant of sending), with the proof key XSAS was given
// in request_signer.py's proof_field form; XSTS's fields follow xal.py's
// xsts_authorization (RelyingParty, TokenType "JWT", Properties.SandboxId).
//
// Promise (ServiceSignIn): "its Business Partner Certificate ... gets an
// S-token from XSAS for its proof key ... and XSTS exchanges the S-token
// for X-tokens"; AuthSignaturePolicy: "the policy of the authentication
// services (XSAS, XSTS): version 1, ES256, the whole body".
func TestAttack93WireServiceSignInSigned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		cert, p := newPartner(t, h)
		user := signInAt(t, h)
		user.RelyingParty = mock.MockServiceRelyingParty
		ux, err := user.XboxToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec := &attack93Recorder{base: p}
		s := &ServiceSignIn{Certificate: cert, HTTPClient: &http.Client{Transport: rec}}
		if err := s.SetDelegation(ux.XUID, ux.DelegationToken); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := s.Token(ctx, ""); err != nil {
			t.Fatal(err)
		}
		tok, err := s.Token(ctx, ux.XUID)
		if err != nil {
			t.Fatal(err)
		}

		xsas := rec.to(ServiceAuthURL)
		if len(xsas) != 1 {
			t.Fatalf("%d XSAS requests, want 1", len(xsas))
		}
		a := xsas[0]
		if a.Method != "POST" || a.Header.Get("x-xbl-contract-version") != "1" || !strings.HasPrefix(a.Header.Get("Content-Type"), "application/json") {
			t.Errorf("XSAS: %s, contract %q, Content-Type %q", a.Method, a.Header.Get("x-xbl-contract-version"), a.Header.Get("Content-Type"))
		}
		ab := attack93JSON(t, a.Body)
		if got, want := attack93Shape(ab), "{Properties:{ProofKey:{alg:string,crv:string,kty:string,use:string,x:string,y:string}},RelyingParty:string,TokenType:string}"; got != want {
			t.Errorf("XSAS body fields %s, want %s", got, want)
		}
		pub := attack93ProofKey(t, ab["Properties"].(map[string]any)["ProofKey"])
		if !pub.Equal(&tok.Key.PublicKey) {
			t.Error("the ProofKey XSAS was given is not the key Token.Key signs with")
		}
		if at := attack93Verify(t, "XSAS", a, pub); time.Until(at).Abs() > time.Minute {
			t.Errorf("XSAS signed at %v, now %v", at, time.Now())
		}

		xsts := rec.to(XSTSURL)
		if len(xsts) != 2 {
			t.Fatalf("%d XSTS requests, want 2 (service, delegated)", len(xsts))
		}
		shapes := map[string]bool{}
		for i, x := range xsts {
			if x.Method != "POST" || x.Header.Get("x-xbl-contract-version") != "1" {
				t.Errorf("XSTS %d: %s, contract %q", i, x.Method, x.Header.Get("x-xbl-contract-version"))
			}
			attack93Verify(t, "XSTS", x, pub)
			xb := attack93JSON(t, x.Body)
			shapes[attack93Shape(xb)] = true
			xp, _ := xb["Properties"].(map[string]any)
			if xb["RelyingParty"] != XboxRelyingParty || xb["TokenType"] != "JWT" || xp["SandboxId"] != "RETAIL" || xp["ServiceToken"] == "" {
				t.Errorf("XSTS %d body %s", i, x.Body)
			}
			if d, ok := xp["DelegationToken"]; ok && d != ux.DelegationToken {
				t.Errorf("XSTS %d: DelegationToken is not the user's", i)
			}
		}
		for _, want := range []string{
			"{Properties:{SandboxId:string,ServiceToken:string},RelyingParty:string,TokenType:string}",
			"{Properties:{DelegationToken:string,SandboxId:string,ServiceToken:string},RelyingParty:string,TokenType:string}",
		} {
			if !shapes[want] {
				t.Errorf("no XSTS request of fields %s; sent %v", want, shapes)
			}
		}
	})
}
