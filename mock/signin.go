package mock

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
)

// The sign-in hosts the mock answers, as the real services do
// (OpenXbox/xbox-webapi-python, tests/data/responses/auth_*.json; the
// Microsoft identity platform's device code flow; the Windows Live OAuth
// endpoints that published Xbox clients sign in at).
const (
	microsoftHost = "login.microsoftonline.com"
	liveHost      = "login.live.com"
	userAuthHost  = "user.auth.xboxlive.com"
	xstsHost      = "xsts.auth.xboxlive.com"
)

// signInHosts are the sign-in services' hosts the mock answers.
var signInHosts = []string{liveHost, microsoftHost, userAuthHost, xstsHost}

// Account is who signs in at the mock: the XUID and gamertag its XSTS
// token names, or the XErr XSTS refuses it with (XErrNoProfile and the
// others of client.SignInError).
type Account struct {
	XUID     string
	Gamertag string
	XErr     int64
}

// DefaultAccount signs in when no other is set.
var DefaultAccount = Account{XUID: "2533274791234567", Gamertag: "MockPlayer"}

// Lifetimes of the tokens the mock mints (the real services' orders of
// magnitude).
const (
	deviceCodeLife   = 15 * time.Minute
	accessTokenLife  = time.Hour
	refreshTokenLife = 90 * 24 * time.Hour
	userTokenLife    = 14 * 24 * time.Hour
	xstsTokenLife    = 16 * time.Hour
)

// signIn is the sign-in services: the account that approves the next
// device code, the accounts by XUID, and the one-time codes issued. It
// answers from the world (gamertags, registered apps) and holds nothing of
// the Handler.
type signIn struct {
	w        *world
	mu       sync.Mutex
	key      [32]byte
	account  Account
	accounts map[string]Account
	codes    oneTime       // authorization and device codes (codes.go)
	serial   atomic.Uint64 // the XSTS tokens minted so far
}

func newSignIn(w *world) *signIn {
	s := &signIn{w: w, account: DefaultAccount, accounts: map[string]Account{DefaultAccount.XUID: DefaultAccount}}
	rand.Read(s.key[:])
	return s
}

// isSignInHost reports whether host is one of the sign-in services.
func isSignInHost(host string) bool { return slices.Contains(signInHosts, host) }

// serve answers a request to a sign-in host.
func (s *signIn) serve(w http.ResponseWriter, r *http.Request, host string) {
	if r.Method == http.MethodGet && host == microsoftHost && strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/authorize") {
		s.authorize(w, r)
		return
	}
	if r.Method == http.MethodGet && host == liveHost && r.URL.Path == "/oauth20_authorize.srf" {
		s.liveAuthorize(w, r)
		return
	}
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request"})
		return
	}
	switch {
	case host == microsoftHost && strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/devicecode"):
		s.deviceCode(w, r)
	case host == microsoftHost && strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token"):
		s.oauthToken(w, r)
	case host == liveHost && r.URL.Path == "/oauth20_token.srf":
		s.liveToken(w, r)
	case host == userAuthHost && r.URL.Path == "/user/authenticate":
		s.userAuthenticate(w, r)
	case host == xstsHost && r.URL.Path == "/xsts/authorize":
		s.xstsAuthorize(w, r)
	default:
		writeError(w, http.StatusNotFound, "NotFound", "no such sign-in endpoint")
	}
}

// mint makes a token of kind for xuid, valid until exp: signed, so the mock
// can check it without keeping it.
func (s *signIn) mint(kind, xuid string, exp time.Time) string {
	payload := kind + "." + base64.RawURLEncoding.EncodeToString([]byte(xuid)) + "." + strconv.FormatInt(exp.Unix(), 10)
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(payload))
	return payload + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// check returns the XUID of a token of kind minted by this mock and not
// expired at now.
func (s *signIn) check(tok, kind string, now time.Time) (string, bool) {
	i := strings.LastIndexByte(tok, '.')
	if i < 0 || len(tok) > 512 {
		return "", false
	}
	payload, sig := tok[:i], tok[i+1:]
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(payload))
	if !hmac.Equal([]byte(base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])), []byte(sig)) {
		return "", false
	}
	parts := strings.Split(payload, ".")
	if len(parts) != 3 || parts[0] != kind {
		return "", false
	}
	xuid, err := base64.RawURLEncoding.DecodeString(parts[1])
	exp, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || err2 != nil || now.Unix() >= exp {
		return "", false
	}
	return string(xuid), true
}

func (s *signIn) deviceCode(w http.ResponseWriter, r *http.Request) {
	form, ok := readForm(w, r)
	if !ok {
		return
	}
	clientID := form.Get("client_id")
	if clientID == "" {
		oauthError(w, "invalid_request", "client_id is required")
		return
	}
	now := s.w.now()
	code := s.mintCode("dc", s.signingIn(), now.Add(deviceCodeLife), clientID)
	user := strings.ToUpper(code[len(code)-8:len(code)-4] + "-" + code[len(code)-4:])
	writeJSON(w, http.StatusOK, map[string]any{
		"device_code": code, "user_code": user, "verification_uri": "https://microsoft.com/devicelogin",
		"expires_in": int(deviceCodeLife / time.Second), "interval": 1,
		"message": "To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code " + user + " to authenticate.",
	})
}

// The identity platform's descriptions of the grants it refuses, with
// their AADSTS codes (Microsoft Entra's "authentication and authorization
// error codes" reference; the wording as the service answers it, quoted
// in public issue threads: AzureAD/microsoft-identity-web#1435,
// PartnerCenterSamples/Reseller-Web-Application#73,
// BingAds/BingAds-Python-SDK#279). Each comes with error invalid_grant.
const (
	aadBadGrant    = "AADSTS70000: Provided grant is invalid or malformed."
	aadBadReply    = "AADSTS50011: The reply address does not match the reply address provided when requesting Authorization code."
	aadBadVerifier = "AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request."
	aadRedeemed    = "AADSTS54005: OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token."
	aadBadRefresh  = "AADSTS70000: The provided value for the input parameter 'refresh_token' or 'assertion' is not valid."
)

// oauthToken is the identity platform's token endpoint. Every grant is
// bound to the client it was issued to: a code also to its redirect URI
// and PKCE challenge, a device code to the client that asked for it, a
// refresh token to its client. What another client presents, or a client
// without its client_id, is invalid_grant.
func (s *signIn) oauthToken(w http.ResponseWriter, r *http.Request) {
	form, ok := readForm(w, r)
	if !ok {
		return
	}
	now := s.w.now()
	clientID := form.Get("client_id")
	var xuid string
	switch form.Get("grant_type") {
	case "urn:ietf:params:oauth:grant-type:device_code":
		// The first poll finds the user yet to enter the code, the second
		// approved; a code redeemed is gone, as one expired.
		c := s.presentCode(form.Get("device_code"), "dc", now, clientID)
		switch {
		case c.unbound > 0:
			oauthError(w, "invalid_grant", aadBadGrant)
			return
		case c.unknown || c.before > 1:
			oauthError(w, "expired_token", "the device code is unknown, has expired, or was redeemed")
			return
		case c.before == 0:
			oauthError(w, "authorization_pending", "waiting for the user to enter the code")
			return
		}
		xuid = c.xuid
	case "authorization_code":
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		c := s.presentCode(form.Get("code"), "code", now, clientID, form.Get("redirect_uri"), base64.RawURLEncoding.EncodeToString(sum[:]))
		var refusal string
		switch {
		case c.unknown, c.unbound == 1: // another client's, or no code of this mock's
			refusal = aadBadGrant
		case c.unbound == 2:
			refusal = aadBadReply
		case c.unbound == 3:
			refusal = aadBadVerifier
		case c.before > 0:
			refusal = aadRedeemed
		}
		if refusal != "" {
			oauthError(w, "invalid_grant", refusal)
			return
		}
		xuid = c.xuid
	case "refresh_token":
		x, ok := s.check(form.Get("refresh_token"), boundKind("rt", clientID), now)
		if !ok {
			oauthError(w, "invalid_grant", aadBadRefresh)
			return
		}
		xuid = x
	default:
		oauthError(w, "unsupported_grant_type", "grant_type "+safetext.Quote(form.Get("grant_type"), 40))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"token_type": "Bearer", "scope": "XboxLive.signin offline_access", "expires_in": int(accessTokenLife / time.Second),
		"ext_expires_in": int(accessTokenLife / time.Second),
		"access_token":   s.mint("ac", xuid, now.Add(accessTokenLife)), "refresh_token": s.mint(boundKind("rt", clientID), xuid, now.Add(refreshTokenLife)),
	})
}

func (s *signIn) userAuthenticate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RelyingParty string
		TokenType    string
		Properties   struct{ AuthMethod, SiteName, RpsTicket string }
	}
	if !readJSON(w, r, &req) {
		return
	}
	now := s.w.now()
	xuid, ok := s.rpsTicket(req.Properties.RpsTicket, now)
	if req.RelyingParty != "http://auth.xboxlive.com" || req.Properties.AuthMethod != "RPS" || !ok {
		w.WriteHeader(http.StatusUnauthorized) // the service answers an empty 401
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"IssueInstant": now.UTC().Format(time.RFC3339Nano), "NotAfter": now.Add(userTokenLife).UTC().Format(time.RFC3339Nano),
		"Token":         s.mint("ut", xuid, now.Add(userTokenLife)),
		"DisplayClaims": map[string]any{"xui": []map[string]string{{"uhs": UserHash(xuid)}}},
	})
}

// rpsTicket returns the XUID of an RpsTicket the user token service takes:
// "d=<token>" for a token of the Microsoft identity platform (v2) or of
// login.live.com for an Azure app's client ID (a GUID), "t=<token>" for a
// login.live.com token of a Microsoft account client ID (16 hex digits), as
// the published clients send them (npm @xboxreplay/xboxlive-auth's "t"
// preamble by default, "d" for custom Azure apps).
func (s *signIn) rpsTicket(ticket string, now time.Time) (string, bool) {
	if tok, ok := strings.CutPrefix(ticket, "d="); ok {
		if xuid, ok := s.check(tok, "ac", now); ok {
			return xuid, true
		}
		return s.check(tok, "la-d", now)
	}
	if tok, ok := strings.CutPrefix(ticket, "t="); ok {
		return s.check(tok, "la-t", now)
	}
	return "", false
}

func (s *signIn) xstsAuthorize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RelyingParty string
		TokenType    string
		Properties   struct {
			UserTokens []string
			SandboxId  string
		}
	}
	if !readJSON(w, r, &req) {
		return
	}
	now := s.w.now()
	var xuid string
	ok := len(req.Properties.UserTokens) == 1
	if ok {
		xuid, ok = s.check(req.Properties.UserTokens[0], "ut", now)
	}
	if !ok || req.RelyingParty == "" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	a, known := s.accounts[xuid]
	s.mu.Unlock()
	if !known {
		a = Account{XUID: xuid}
	}
	if a.XErr != 0 {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"Identity": "0", "XErr": a.XErr, "Message": "",
			"Redirect": "https://start.ui.xboxlive.com/CreateAccount"})
		return
	}
	tok := mintToken(xuid, s.w.signInTitle, strconv.FormatUint(s.serial.Add(1), 10))
	writeJSON(w, http.StatusOK, map[string]any{
		"IssueInstant": now.UTC().Format(time.RFC3339Nano), "NotAfter": now.Add(xstsTokenLife).UTC().Format(time.RFC3339Nano),
		"Token": tok[strings.IndexByte(tok, ';')+1:],
		"DisplayClaims": map[string]any{"xui": []map[string]string{{"gtg": s.w.gamertagOf(xuid), "xid": xuid, "uhs": UserHash(xuid),
			"agg": "Adult", "usr": "", "utr": "", "prv": ""}}},
	})
}

func readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	form, perr := url.ParseQuery(string(b))
	if err != nil || perr != nil {
		oauthError(w, "invalid_request", "the body is not a form")
		return nil, false
	}
	return form, true
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("the body is not the JSON expected: %v", err))
		return false
	}
	return true
}

// oauthError answers as the Microsoft identity platform and login.live.com
// do: 400 with {"error": ..., "error_description": ...}.
func oauthError(w http.ResponseWriter, code, desc string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
}

// authorize is the page a browser opens: the mock approves at once, as the
// current account, and redirects to a redirect URI the client registered,
// or a loopback address (redirectTo), with a one-time code bound to the
// client, that redirect URI and the PKCE challenge.
func (s *signIn) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("client_id") == "" {
		oauthError(w, "invalid_request", "client_id and an S256 code_challenge are required")
		return
	}
	redirect, ok := s.w.redirectTo(q.Get("client_id"), q.Get("redirect_uri"))
	if !ok {
		oauthError(w, "invalid_request", badRedirect)
		return
	}
	code := s.mintCode("code", s.signingIn(), s.w.now().Add(10*time.Minute), q.Get("client_id"), q.Get("redirect_uri"), q.Get("code_challenge"))
	redirectWith(w, r, redirect, "code", code, "state", q.Get("state"))
}

// signingIn returns the XUID of the account that signs in now.
func (s *signIn) signingIn() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.account.XUID
}

// redirectWith redirects (302) to u with the query parameters given as
// name, value pairs added.
func redirectWith(w http.ResponseWriter, r *http.Request, u *url.URL, pairs ...string) {
	q := u.Query()
	for i := 0; i+1 < len(pairs); i += 2 {
		q.Set(pairs[i], pairs[i+1])
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}
