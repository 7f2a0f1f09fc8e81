package mock

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The page's fields as @xboxreplay/xboxlive-auth 5.1.0 reads them
// (dist/shared/libs/live/modules/requests: extractPPFT, extractUrlPost).
var (
	pagePPFT    = regexp.MustCompile(`name=\\?"PPFT\\?"[^>]*value=\\?"([^"\\]+)\\?"`)
	pageURLPost = regexp.MustCompile(`\\?['"]?urlPost\\?['"]?:\s*\\?['"]([^'"\\]+)\\?['"]`)
)

// signInWithPassword opens login.live.com's page for the implicit grant
// and posts its form as login, returning the answer's status and
// Location.
func signInWithPassword(t *testing.T, h *Handler, login, password string, edit func(url.Values)) (int, string) {
	t.Helper()
	q := url.Values{"client_id": {msaClient}, "redirect_uri": {redirectURI}, "response_type": {"token"}, "scope": {sisuScope}, "state": {"s9"}}
	page := do(t, h, "GET", "https://login.live.com/oauth20_authorize.srf?"+q.Encode(), "", "")
	ppft, post := pagePPFT.FindStringSubmatch(page.body), pageURLPost.FindStringSubmatch(page.body)
	if page.status != http.StatusOK || ppft == nil || post == nil {
		t.Fatalf("the page: %d %s", page.status, page.body)
	}
	form := url.Values{"login": {login}, "loginfmt": {login}, "passwd": {password}, "PPFT": {ppft[1]}}
	if edit != nil {
		edit(form)
	}
	req, _ := http.NewRequest("POST", post[1], strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r := send(t, h, req)
	return r.status, r.header.Get("Location")
}

// TestLiveSignInPage: the implicit grant through login.live.com's page, as
// credential clients sign in: the form posted with a world account's name
// redirects to oauth20_desktop.srf with the tokens in the fragment, and
// the access token signs in at user.auth ("t="); an unknown account, no
// password or another page's PPFT gets the page again, with no redirect.
func TestLiveSignInPage(t *testing.T) {
	h := NewHandler()
	status, loc := signInWithPassword(t, h, "MockPlayer@example.com", "pw", nil)
	u, err := url.Parse(loc)
	if status != http.StatusFound || err != nil || !strings.HasPrefix(loc, redirectURI+"#") {
		t.Fatalf("the form: %d to %q", status, loc)
	}
	frag, _ := url.ParseQuery(u.Fragment)
	for _, k := range []string{"access_token", "token_type", "expires_in", "scope", "refresh_token", "user_id", "state"} {
		if frag.Get(k) == "" {
			t.Errorf("the fragment has no %s: %q", k, u.Fragment)
		}
	}
	if got := userToken(t, h, "t="+frag.Get("access_token")); got != http.StatusOK {
		t.Errorf("user token with the page's access token: %d", got)
	}
	for _, tc := range []struct {
		name, login, password string
		edit                  func(url.Values)
	}{
		{"unknown account", "nobody@example.com", "pw", nil},
		{"no password", "MockPlayer", "", nil},
		{"a PPFT not of this page", "MockPlayer", "pw", func(f url.Values) { f.Set("PPFT", "pp-x.eA.1.x") }},
	} {
		if status, loc := signInWithPassword(t, h, tc.login, tc.password, tc.edit); status != http.StatusOK || loc != "" {
			t.Errorf("%s: %d to %q, want the page again", tc.name, status, loc)
		}
	}
}

// TestLiveSignInPageHoldsNoSecret: the password, the PPFT and the tokens
// of the fragment are in no export of the record of calls.
func TestLiveSignInPageHoldsNoSecret(t *testing.T) {
	h := NewHandler()
	_, loc := signInWithPassword(t, h, "MockPlayer@example.com", "hunter2-secret", nil)
	u, _ := url.Parse(loc)
	frag, _ := url.ParseQuery(u.Fragment)
	noSecretIn(t, exportsOf(t, h), "hunter2-secret", frag.Get("access_token"), frag.Get("refresh_token"))
}
