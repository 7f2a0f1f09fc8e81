package mock

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// SISU, the Xbox apps' one-call sign-in (sisu.xboxlive.com): authenticate
// returns the login.live.com page to open and a session; authorize takes
// the device token, the login.live.com access token and the proof key and
// returns the device, title, user and XSTS tokens. Requests as
// OpenXbox/xbox-webapi-python's xal.py sends them, answers in its
// recorded shapes (tests/data/responses/xal_authentication_resp.json,
// xal_authorization_resp.json); every request is signed with the device's
// key.

const sisuHost = "sisu.xboxlive.com"

// sisuSessionLife bounds a SISU session: the time a user has to sign in at
// the page authenticate returns (login.live.com's code lives 5 minutes
// after that).
const sisuSessionLife = 15 * time.Minute

// sisuScope is the scope SISU asks login.live.com for (xal.py's Offers).
const sisuScope = "service::user.auth.xboxlive.com::MBI_SSL"

// sisuAuthenticate answers POST /authenticate: the login.live.com URL to
// open (with the client's PKCE challenge and state, as recorded) and the
// session, in the X-SessionId header, bound to the app and the device.
func (s *signIn) sisuAuthenticate(w http.ResponseWriter, r *http.Request) {
	b, ok := signedBody(w, r)
	if !ok {
		return
	}
	var req struct {
		AppId, TitleId, RedirectUri, DeviceToken, Sandbox, TokenType string
		Offers                                                       []string
		Query                                                        map[string]string
	}
	if json.Unmarshal(b, &req) != nil {
		writeError(w, http.StatusBadRequest, "BadRequest", "the body is not the JSON expected")
		return
	}
	now := s.w.now()
	d, ok := s.signedByDevice(w, r, req.DeviceToken, now)
	if !ok {
		return
	}
	q := req.Query
	switch {
	case req.AppId == "" || req.TokenType != "code" || q["code_challenge"] == "" || q["code_challenge_method"] != "S256":
		writeError(w, http.StatusBadRequest, "BadRequest", "AppId, TokenType code and an S256 code_challenge are required")
		return
	case len(req.TitleId) > maxIDBytes || strings.Trim(req.TitleId, "0123456789") != "":
		writeError(w, http.StatusBadRequest, "BadRequest", "TitleId is not a title ID")
		return
	}
	if _, ok := s.w.redirectTo(req.AppId, req.RedirectUri); !ok {
		writeError(w, http.StatusBadRequest, "BadRequest", badRedirect)
		return
	}
	title := req.TitleId
	if title == "" {
		title = s.w.signInTitle
	}
	u := url.Values{"lw": {"1"}, "fl": {"dob,easi2"}, "xsup": {"1"}, "display": {q["display"]},
		"code_challenge": {q["code_challenge"]}, "code_challenge_method": {"S256"}, "state": {q["state"]},
		"client_id": {req.AppId}, "response_type": {"code"}, "scope": {sisuScope}, "redirect_uri": {req.RedirectUri}, "nopa": {"2"}}
	w.Header().Set("X-SessionId", s.mint(sessionKind(req.AppId, d), title, now.Add(sisuSessionLife)))
	writeJSON(w, http.StatusOK, map[string]any{
		"MsaOauthRedirect":     "https://" + liveHost + "/oauth20_authorize.srf?" + u.Encode(),
		"MsaRequestParameters": map[string]string{},
	})
}

// sisuAuthorize answers POST /authorize: for the device (its token, and
// the same proof key, which signed the request), the user of the
// login.live.com access token ("t=" or "d=", as user.auth takes it) and,
// when given, the session authenticate opened for that app and device,
// the device, title, user and XSTS tokens, the XSTS token for the world's
// account of that user.
func (s *signIn) sisuAuthorize(w http.ResponseWriter, r *http.Request) {
	b, ok := signedBody(w, r)
	if !ok {
		return
	}
	var req struct {
		AccessToken, AppId, DeviceToken, Sandbox, SiteName, SessionId string
		ProofKey                                                      xblsign.ProofKey
	}
	if json.Unmarshal(b, &req) != nil || req.AppId == "" {
		writeError(w, http.StatusBadRequest, "BadRequest", "the body is not the JSON expected")
		return
	}
	now := s.w.now()
	d, ok := s.deviceOf(req.DeviceToken, now)
	if !ok || req.ProofKey.X != d.key.X || req.ProofKey.Y != d.key.Y {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if !s.verified(w, r, d.key, false) {
		return
	}
	title := s.w.signInTitle
	if req.SessionId != "" {
		if title, ok = s.check(req.SessionId, sessionKind(req.AppId, d), now); !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	xuid, ok := s.rpsTicket(req.AccessToken, now)
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	xsts, status := s.xstsAnswer(xuid, title, "http://xboxlive.com", now) // SISU authorizes for the Xbox services
	if status != http.StatusOK {
		writeJSON(w, status, xsts)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"DeviceToken":        req.DeviceToken,
		"TitleToken":         s.titleToken(title, d, now),
		"UserToken":          s.userTokenAnswer(xuid, now),
		"AuthorizationToken": xsts,
		"WebPage":            "https://" + sisuHost + "/client/v33/" + strings.ToLower(req.AppId) + "/view/index.html",
		"Sandbox":            "RETAIL",
		"UseModernGamertag":  true,
	})
}

// sessionKind is the kind of a SISU session minted for app appID on
// device d: bound to both, the app's ID in any case.
func sessionKind(appID string, d device) string {
	return boundKind("ss", append([]string{strings.ToLower(appID)}, d.bind()...)...)
}
