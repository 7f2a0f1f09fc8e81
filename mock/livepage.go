package mock

import (
	"cmp"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// login.live.com's sign-in page and the implicit grant: GET
// oauth20_authorize.srf?response_type=token shows the page (its PPFT
// field and the ServerData urlPost the form is sent to, which the
// published credential flows read: @xboxreplay/xboxlive-auth 5.1.0's
// preAuth and authenticate); the form, posted with a world account's
// name, redirects to redirect_uri with the tokens in the fragment, which
// desktop clients read from oauth20_desktop.srf's address (the fields of
// xbox-webapi-python's first AuthenticationManager and of that client:
// access_token, token_type, expires_in, scope, refresh_token, user_id).

// pageLife bounds a sign-in page's PPFT.
const pageLife = 15 * time.Minute

// livePostPath is the form's address (the real one, ppsecure/post.srf,
// carries more parameters of its own).
const livePostPath = "/ppsecure/post.srf"

// liveSignInPage answers oauth20_authorize.srf?response_type=token: the
// page, with a PPFT bound to the client, redirect URI, scope and state the
// form will redirect with.
func (s *signIn) liveSignInPage(w http.ResponseWriter, clientID, raw string, q url.Values) {
	params := url.Values{"client_id": {clientID}, "redirect_uri": {raw}, "scope": {q.Get("scope")}, "state": {q.Get("state")}}
	ppft := s.mint(boundKind("pp", params.Encode()), "-", s.w.now().Add(pageLife))
	post := "https://" + liveHost + livePostPath + "?" + params.Encode()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(`<!doctype html><html><head><title>Sign in to your Microsoft account</title>` +
		`<script>var ServerData = {urlPost:'` + post + `',sFT:'` + ppft + `'};</script></head><body>` + // post is URL-encoded: no quote, backslash or '<'
		`<form name="f1" method="post" action="` + html.EscapeString(post) + `">` +
		`<input type="email" name="loginfmt"><input type="password" name="passwd">` +
		`<input type="hidden" name="PPFT" id="i0327" value="` + ppft + `"/>` +
		`<input type="submit" value="Sign in"></form></body></html>` + "\n"))
}

// livePost answers the form: a PPFT of a page for the same parameters and
// a login naming a world account (its gamertag, or an address whose name
// is the gamertag, without case) with a password redirects (302) to the
// redirect URI with the tokens in the fragment; anything else is the page
// again with an error, 200, as the service shows it.
func (s *signIn) livePost(w http.ResponseWriter, r *http.Request) {
	form, ok := readForm(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	clientID, raw := q.Get("client_id"), q.Get("redirect_uri")
	params := url.Values{"client_id": {clientID}, "redirect_uri": {raw}, "scope": {q.Get("scope")}, "state": {q.Get("state")}}
	now := s.w.now()
	login := cmp.Or(form.Get("login"), form.Get("loginfmt"))
	name, _, _ := strings.Cut(login, "@")
	xuid, known := s.w.xuidOfGamertag(name)
	_, page := s.check(form.Get("PPFT"), boundKind("pp", params.Encode()), now)
	redirect, registered := s.w.redirectTo(clientID, raw)
	if !page || !known || form.Get("passwd") == "" || !registered {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><title>Sign in</title><p>Your account or password is incorrect.</p>\n"))
		return
	}
	frag := url.Values{
		"access_token": {s.mint("la-"+liveClientKind(clientID), xuid, now.Add(accessTokenLife))}, "token_type": {"bearer"},
		"expires_in": {strconv.Itoa(int(accessTokenLife / time.Second))}, "scope": {cmp.Or(q.Get("scope"), sisuScope)},
		"refresh_token": {s.mint(boundKind("lr", clientID), xuid, now.Add(refreshTokenLife))}, "user_id": {liveUserID(xuid)},
	}
	if st := q.Get("state"); st != "" {
		frag.Set("state", st)
	}
	w.Header().Set("Location", redirect.String()+"#"+frag.Encode()) // redirectTo takes no URI with a fragment
	w.WriteHeader(http.StatusFound)
}
