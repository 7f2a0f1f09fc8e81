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
var signInHosts = []string{liveHost, microsoftHost, userAuthHost, xstsHost, deviceAuthHost, titleAuthHost, sisuHost, serviceAuthHost}

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
	replays  replays       // the sign-in services' signatures seen (replays.go)
	services replays       // the services' signed calls' signatures seen
	pending  pendings      // login.live.com's device codes (livedevice.go)
	serial   atomic.Uint64 // the XSTS tokens minted so far
}

func newSignIn(w *world) *signIn {
	s := &signIn{w: w, account: DefaultAccount, accounts: map[string]Account{DefaultAccount.XUID: DefaultAccount}, services: replays{keyShare: replayCapacity}}
	rand.Read(s.key[:])
	return s
}

// isSignInHost reports whether host is one of the sign-in services.
func isSignInHost(host string) bool { return slices.Contains(signInHosts, host) }

// signInRoute is one sign-in call the mock answers: the one table serve
// dispatches on and Endpoints lists.
type signInRoute struct {
	host, method string
	path         string // as Endpoints shows it; {tenant} is any one segment
	serve        func(*signIn, http.ResponseWriter, *http.Request)
}

// signInRoutes are the sign-in calls, by host.
var signInRoutes = []signInRoute{
	{liveHost, http.MethodGet, "/oauth20_authorize.srf", (*signIn).liveAuthorize},
	{liveHost, http.MethodPost, "/oauth20_token.srf", (*signIn).liveToken},
	{liveHost, http.MethodPost, "/oauth20_connect.srf", (*signIn).liveDeviceCode},
	{liveHost, http.MethodPost, livePostPath, (*signIn).livePost},
	{liveHost, http.MethodGet, "/oauth20_remoteconnect.srf", (*signIn).liveRemoteConnect},
	{liveHost, http.MethodPost, "/oauth20_remoteconnect.srf", (*signIn).liveRemoteConnect},
	{microsoftHost, http.MethodGet, "/{tenant}/oauth2/v2.0/authorize", (*signIn).authorize},
	{microsoftHost, http.MethodPost, "/{tenant}/oauth2/v2.0/devicecode", (*signIn).deviceCode},
	{microsoftHost, http.MethodPost, "/{tenant}/oauth2/v2.0/token", (*signIn).oauthToken},
	{userAuthHost, http.MethodPost, "/user/authenticate", (*signIn).userAuthenticate},
	{xstsHost, http.MethodPost, "/xsts/authorize", (*signIn).xsts},
	{deviceAuthHost, http.MethodPost, "/device/authenticate", (*signIn).deviceAuthenticate},
	{titleAuthHost, http.MethodPost, "/title/authenticate", (*signIn).titleAuthenticate},
	{sisuHost, http.MethodPost, "/authenticate", (*signIn).sisuAuthenticate},
	{sisuHost, http.MethodPost, "/authorize", (*signIn).sisuAuthorize},
	{serviceAuthHost, http.MethodPost, "/service/authenticate", (*signIn).serviceAuthenticate},
}

// matches reports whether a request's path is the route's.
func (rt *signInRoute) matches(path string) bool {
	rest, ok := strings.CutPrefix(rt.path, "/{tenant}")
	if !ok {
		return path == rt.path
	}
	tenant, tail, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return tenant != "" && "/"+tail == rest
}

// serve answers a request to a sign-in host: 404 for a path it does not
// serve, 405 for a method the path does not take.
func (s *signIn) serve(w http.ResponseWriter, r *http.Request, host string) {
	known := false
	for i := range signInRoutes {
		rt := &signInRoutes[i]
		if rt.host != host || !rt.matches(r.URL.Path) {
			continue
		}
		if rt.method == r.Method {
			rt.serve(s, w, r)
			return
		}
		known = true
	}
	if known {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request"})
		return
	}
	writeError(w, http.StatusNotFound, "NotFound", "no such sign-in endpoint")
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
// expired at now (checkDetail).
func (s *signIn) check(tok, kind string, now time.Time) (string, bool) {
	t, ok := s.checkDetail(tok, kind, now)
	return t.xuid, ok
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

// aadNoScope is the identity platform's refusal, with error
// invalid_request, of a refresh_token grant without scope, a parameter its
// docs ("Refresh the access token") mark required.
const aadNoScope = "AADSTS900144: The request body must contain the following parameter: 'scope'."

// oauthToken is the identity platform's token endpoint. Every grant is
// bound to the client it was issued to: a code also to its redirect URI
// and PKCE challenge, a device code to the client that asked for it, a
// refresh token to its client. What another client presents, or a client
// without its client_id, is invalid_grant. A refresh without scope is
// invalid_request (aadNoScope), before its refresh token is looked at.
func (s *signIn) oauthToken(w http.ResponseWriter, r *http.Request) {
	form, ok := readForm(w, r)
	if !ok {
		return
	}
	now := s.w.now()
	clientID := form.Get("client_id")
	var xuid string
	switch form.Get("grant_type") {
	case deviceCodeGrant, "device_code": // both names clients send
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
		c := s.presentCode(form.Get("code"), "code", now, clientID, form.Get("redirect_uri"), s256Challenge(form.Get("code_verifier")))
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
		if form.Get("scope") == "" {
			oauthError(w, "invalid_request", aadNoScope)
			return
		}
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
	switch {
	case req.RelyingParty != "http://auth.xboxlive.com" || req.Properties.AuthMethod != "RPS":
		w.WriteHeader(http.StatusUnauthorized) // the service answers an empty 401
		return
	case !ok && s.msaTicketAsD(req.Properties.RpsTicket, now):
		// A Microsoft account client's token sent as "d=": 400, as
		// recorded in OpenXbox/xbox-webapi-csharp#28.
		w.WriteHeader(http.StatusBadRequest)
		return
	case !ok:
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	writeJSON(w, http.StatusOK, s.userTokenAnswer(xuid, now))
}

// userTokenAnswer is a user token's answer, as user/authenticate and
// SISU's authorize (UserToken) give it.
func (s *signIn) userTokenAnswer(xuid string, now time.Time) map[string]any {
	return map[string]any{
		"IssueInstant": now.UTC().Format(time.RFC3339Nano), "NotAfter": now.Add(userTokenLife).UTC().Format(time.RFC3339Nano),
		"Token":         s.mint("ut", xuid, now.Add(userTokenLife)),
		"DisplayClaims": map[string]any{"xui": []map[string]string{{"uhs": UserHash(xuid)}}},
	}
}

// rpsTicket returns the XUID of an RpsTicket the user token service takes:
// "d=<token>" for a token of the Microsoft identity platform (v2) or of
// login.live.com for an Azure app's client ID (a GUID), "t=<token>" for a
// login.live.com token of a Microsoft account client ID (16 hex digits), as
// the published clients send them (npm @xboxreplay/xboxlive-auth's "t"
// preamble by default, "d" for custom Azure apps), and the bare token of
// such a client, the "compact ticket" (OpenXbox/xbox-webapi-python,
// AuthenticationManager.request_user_token's use_compact_ticket).
func (s *signIn) rpsTicket(ticket string, now time.Time) (string, bool) {
	if tok, ok := strings.CutPrefix(ticket, "d="); ok {
		if xuid, ok := s.check(tok, "ac", now); ok {
			return xuid, true
		}
		return s.check(tok, "la-d", now)
	}
	tok, _ := strings.CutPrefix(ticket, "t=")
	return s.check(tok, "la-t", now)
}

// msaTicketAsD reports whether ticket is "d=" and a Microsoft account
// client's login.live.com token, which goes as "t=".
func (s *signIn) msaTicketAsD(ticket string, now time.Time) bool {
	tok, ok := strings.CutPrefix(ticket, "d=")
	_, msa := s.check(tok, "la-t", now)
	return ok && msa
}

// xstsAuthorize is xsts.auth.xboxlive.com's xsts/authorize: an XSTS token
// for the user of the user token, for the title of the title token when
// one is given (else the mock's sign-in title). A device token, when
// given, must be one the mock issued, and a signed request must be signed
// with its key; an unsigned one is taken, as @xboxreplay/xboxlive-auth
// sends a device token unsigned (exchangeTokensForXSTSToken).
func (s *signIn) xstsAuthorize(w http.ResponseWriter, r *http.Request) {
	b, ok := signedBody(w, r)
	if !ok {
		return
	}
	var req struct {
		RelyingParty string
		TokenType    string
		Properties   struct {
			UserTokens              []string
			SandboxId               string
			DeviceToken, TitleToken string
		}
	}
	if err := json.Unmarshal(b, &req); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("the body is not the JSON expected: %v", err))
		return
	}
	now := s.w.now()
	var xuid string
	ok = len(req.Properties.UserTokens) == 1
	if ok {
		xuid, ok = s.check(req.Properties.UserTokens[0], "ut", now)
	}
	if !ok || req.RelyingParty == "" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	title := s.w.signInTitle
	if p := req.Properties; p.DeviceToken != "" || p.TitleToken != "" {
		d, ok := s.deviceOf(p.DeviceToken, now)
		if ok && p.TitleToken != "" {
			title, ok = s.titleOf(p.TitleToken, d, now)
		}
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Signature") != "" && !s.verified(w, r, d.key, false) {
			return
		}
	}
	a, status := s.xstsAnswer(xuid, title, req.RelyingParty, now)
	if status == http.StatusOK {
		s.addDelegation(a, req.RelyingParty, xuid, req.Properties.SandboxId, now)
	}
	writeJSON(w, status, a)
}

// xstsAnswer is the XSTS token's answer for xuid playing title, as
// xsts/authorize and SISU's authorize (AuthorizationToken) give it, or the
// refusal (401, XErr) of an account the world refuses.
func (s *signIn) xstsAnswer(xuid, title, rp string, now time.Time) (map[string]any, int) {
	s.mu.Lock()
	a, known := s.accounts[xuid]
	s.mu.Unlock()
	if !known {
		a = Account{XUID: xuid}
	}
	if a.XErr != 0 {
		return map[string]any{"Identity": "0", "XErr": a.XErr, "Message": "",
			"Redirect": "https://start.ui.xboxlive.com/CreateAccount"}, http.StatusUnauthorized
	}
	notAfter := now.Add(xstsTokenLife)
	tok := signInToken(xuid, title, s.serial.Add(1), notAfter, rp)
	return map[string]any{
		"IssueInstant": now.UTC().Format(time.RFC3339Nano), "NotAfter": notAfter.UTC().Format(time.RFC3339Nano),
		"Token": tok[strings.IndexByte(tok, ';')+1:],
		"DisplayClaims": map[string]any{"xui": []map[string]string{{"gtg": s.w.gamertagOf(xuid), "xid": xuid, "uhs": UserHash(xuid),
			"agg": "Adult", "usr": "", "utr": "", "prv": ""}}},
	}, http.StatusOK
}

// maxSignInBody bounds a sign-in request's body, form or JSON: a body
// past it is refused whole, never read as its first part.
const maxSignInBody = 64 << 10

func readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxSignInBody+1))
	if err == nil && len(b) > maxSignInBody {
		oauthError(w, "invalid_request", "the form is larger than 64 KiB")
		return nil, false
	}
	form, perr := url.ParseQuery(string(b))
	if err != nil || perr != nil {
		oauthError(w, "invalid_request", "the body is not a form")
		return nil, false
	}
	return form, true
}

// readJSON reads the body as one JSON value into v: a body past
// maxSignInBody, or with anything but white space after the value, is
// refused (400).
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxSignInBody+1))
	switch {
	case err == nil && len(b) > maxSignInBody:
		writeError(w, http.StatusBadRequest, "BadRequest", "the body is larger than 64 KiB")
		return false
	case err == nil:
		err = json.Unmarshal(b, v)
	}
	if err != nil {
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
