package mock

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// login.live.com, the Windows Live OAuth endpoints that published Xbox
// clients sign in at: the authorization page and the token endpoint.

// liveCodeLife bounds a login.live.com authorization code, which is also
// good for one exchange only (codes.go).
const liveCodeLife = 5 * time.Minute

// badRedirect is what login.live.com answers a redirect URI the client did
// not register, as its error page shows it (quoted in public issue
// threads: MicrosoftDocs/azure-dev-docs#791, microsoft/semantic-kernel#905).
// The identity platform's consumer sign-in is login.live.com's, so the mock
// answers it the same.
const badRedirect = "The provided value for the input parameter 'redirect_uri' is not valid. " +
	"The expected value is a URI which matches a redirect URI registered for this client application."

// liveAuthorize is login.live.com's authorization page: the mock approves at
// once, as the current account, and redirects to redirect_uri with a
// one-time code (bound to the client ID and the redirect URI, as the real
// service binds it) and the state. A redirect URI the client did not
// register (redirectTo) is never redirected to: the answer is 400
// invalid_request, where the real service shows its error page.
func (s *signIn) liveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	clientID, raw := q.Get("client_id"), q.Get("redirect_uri")
	if clientID == "" {
		oauthError(w, "invalid_request", "The request must contain a client_id.")
		return
	}
	redirect, ok := s.w.redirectTo(clientID, raw)
	switch {
	case !ok:
		oauthError(w, "invalid_request", badRedirect)
		return
	case q.Get("response_type") != "code":
		oauthError(w, "unsupported_response_type", "The mock answers response_type=code only.")
		return
	}
	code := s.mintCode("lc", s.signingIn(), s.w.now().Add(liveCodeLife), clientID, raw)
	if st := q.Get("state"); st != "" {
		redirectWith(w, r, redirect, "code", code, "state", st)
		return
	}
	redirectWith(w, r, redirect, "code", code)
}

// liveToken is login.live.com's token endpoint, with the authorization_code
// and refresh_token grants, answering in the recorded shape
// (OpenXbox/xbox-webapi-python tests/data/responses/auth_oauth2_token.json).
// A code is good for one exchange, by the client it was issued to, at
// the redirect URI it was sent to; a refresh token until it expires, for
// its client only (codes.go).
func (s *signIn) liveToken(w http.ResponseWriter, r *http.Request) {
	form, ok := readForm(w, r)
	if !ok {
		return
	}
	clientID := form.Get("client_id")
	if clientID == "" {
		oauthError(w, "invalid_request", "The request must contain a client_id.")
		return
	}
	now := s.w.now()
	var xuid string
	switch form.Get("grant_type") {
	case "authorization_code":
		c := s.presentCode(form.Get("code"), "lc", now, clientID, form.Get("redirect_uri"))
		if c.unknown || c.unbound > 0 || c.before > 0 {
			oauthError(w, "invalid_grant", "The provided value for the 'code' parameter is not valid.")
			return
		}
		xuid = c.xuid
	case "refresh_token":
		x, ok := s.check(form.Get("refresh_token"), boundKind("lr", clientID), now)
		if !ok {
			oauthError(w, "invalid_grant", "The provided value for the input parameter 'refresh_token' or 'assertion' is not valid.")
			return
		}
		xuid = x
	default:
		oauthError(w, "unsupported_grant_type", "The provided value for the input parameter 'grant_type' is not valid.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"token_type": "bearer", "expires_in": int(accessTokenLife / time.Second),
		"scope":         cmp.Or(form.Get("scope"), "service::user.auth.xboxlive.com::MBI_SSL"),
		"access_token":  s.mint("la-"+liveClientKind(clientID), xuid, now.Add(accessTokenLife)),
		"refresh_token": s.mint(boundKind("lr", clientID), xuid, now.Add(refreshTokenLife)),
		"user_id":       liveUserID(xuid),
	})
}

// liveClientKind is "d" for an Azure app's client ID (a GUID), whose
// tokens go to the user token service as "d=<token>", and "t" for a
// Microsoft account client ID ("t=<token>").
func liveClientKind(clientID string) string {
	if len(clientID) == 36 && strings.Count(clientID, "-") == 4 {
		return "d"
	}
	return "t"
}

// liveUserID is the account's ID as login.live.com gives it: 16 hex digits.
func liveUserID(xuid string) string {
	sum := sha256.Sum256([]byte("cid:" + xuid))
	return fmt.Sprintf("%x", sum[:8])
}
