package mock_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

const (
	attack99A     = "2533274800000001"
	attack99B     = "2533274800000002"
	attack99Title = "1234567890"
)

// attack99Clock is a settable clock for Config.Now.
type attack99Clock struct{ ns atomic.Int64 }

func newAtkClock() *attack99Clock {
	c := &attack99Clock{}
	c.ns.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}
func (c *attack99Clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *attack99Clock) add(d time.Duration) { c.ns.Add(int64(d)) }

// attack99Client is srv's client that never follows a redirect (a sign-in
// answer redirects to the real hosts: nothing may leave loopback).
func attack99Client(srv *httptest.Server) *http.Client {
	c := *srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// attack99Do sends one request over real HTTP to srv, for host, with the
// request target sent exactly as rawTarget (path and query, unnormalized).
func attack99Do(t *testing.T, srv *httptest.Server, method, host, rawTarget, auth, body string) (int, string, http.Header) {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	target := &url.URL{Scheme: "http", Host: u.Host}
	path, query, _ := strings.Cut(rawTarget, "?")
	target.Opaque = path
	target.RawQuery = query
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.URL = target
	req.Host = host
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("x-xbl-contract-version", "3")
	resp, err := attack99Client(srv).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawTarget, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func attack99State(t *testing.T, srv *httptest.Server, xuid string) string {
	t.Helper()
	status, body, _ := attack99Do(t, srv, "GET", "userpresence.xboxlive.com", "/users/xuid("+xuid+")", mock.Token(xuid, attack99Title), "")
	if status != 200 {
		t.Fatalf("presence of %s: %d %s", xuid, status, body)
	}
	var p struct {
		State string `json:"state"`
	}
	json.Unmarshal([]byte(body), &p)
	return p.State
}

func attack99Count(t *testing.T, h *mock.Handler, xuid, scope string) int {
	t.Helper()
	d, err := h.Counts(throttle.Key{User: mock.UserHash(xuid), Title: attack99Title, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	return int(d.Burst.Count)
}

// held: "Bodies are validated as the service does" / presence:
// "a user may set only their own presence" (presence.go's refusal) and
// docs/MOCK.md's "{user} is me or xuid(N)": user A's token never sets
// user B's presence, whatever the spelling of B's path; a spelling that
// is served resolves to A's own presence.
func TestAttack99RoutesPresenceSetOtherUserSpellings(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := mock.Token(attack99A, attack99Title)
	const tail = "/devices/current/titles/current"
	const set = `{"state":"active"}`
	long := "xuid(" + attack99B + strings.Repeat("0", 5000) + ")"
	spellings := []string{
		"/users/xuid(" + attack99A + ")/../xuid(" + attack99B + ")" + tail,
		"/users/xuid(" + attack99A + ")/./../xuid(" + attack99B + ")" + tail,
		"/users/me/../xuid(" + attack99B + ")" + tail,
		"/users/xuid(" + attack99A + ")%2F..%2Fxuid(" + attack99B + ")" + tail,
		"/users/xuid%28" + attack99B + "%29" + tail,
		"/users%2Fxuid(" + attack99B + ")" + tail,
		"/users//xuid(" + attack99B + ")" + tail,
		"/users/xuid(" + attack99B + ")//devices/current//titles/current",
		"/users/XUID(" + attack99B + ")" + tail,
		"/users/Xuid(" + attack99B + ")" + tail,
		"/USERS/xuid(" + attack99B + ")" + tail,
		"/users/xuid(" + attack99B + ")" + tail + "/",
		"/users/xuid(" + attack99B + ");xuid=" + attack99A + tail,
		"/users/me;xuid(" + attack99B + ")" + tail,
		"/users/xuid(" + attack99A + ")" + tail + ";user=xuid(" + attack99B + ")",
		"/users/me" + tail + "?xuid=" + attack99B + "&user=xuid(" + attack99B + ")&userId=" + attack99B,
		"/users/xuid(" + attack99A + ")" + tail + "?xuid(" + attack99B + ")",
		"/users/" + long + tail,
		"/users/xuid(0" + attack99B + ")" + tail,
		"/users/xuid(00" + attack99B + ")" + tail,
		"/users/xuid(+" + attack99B + ")" + tail,
		"/users/xuid( " + attack99B + ")" + tail,
		"/users/xuid(" + attack99B + "%00)" + tail,
		"/users/xuid(" + attack99B + ")%20" + tail,
		"/users/xuid(" + attack99B + ")" + tail,
	}
	for _, p := range spellings {
		for _, m := range []string{"POST", "DELETE"} {
			h.ResetCounts(context.Background(), nil)
			status, body, _ := attack99Do(t, srv, m, "userpresence.xboxlive.com", p, a, set)
			if status/100 == 2 {
				if st := attack99State(t, srv, attack99B); st != "Offline" {
					t.Errorf("%s %s: %d, and B's presence is now %q", m, p, status, st)
				}
				continue
			}
			if status != 400 && status != 403 && status != 404 && status != 405 {
				t.Errorf("%s %s: %d %s", m, p, status, body)
			}
		}
		// The state (cloak) write too.
		h.ResetCounts(context.Background(), nil)
		status, _, _ := attack99Do(t, srv, "PUT", "userpresence.xboxlive.com", strings.Replace(p, tail, "/state", 1), a, `{"state":"Cloaked"}`)
		if status/100 == 2 && attack99State(t, srv, attack99B) != "Offline" {
			t.Errorf("PUT state %s: %d", p, status)
		}
	}
	// B set online by B itself, then A's spellings must not clear or cloak it.
	if s, b, _ := attack99Do(t, srv, "POST", "userpresence.xboxlive.com", "/users/me"+tail, mock.Token(attack99B, attack99Title), set); s != 200 {
		t.Fatalf("B sets own presence: %d %s", s, b)
	}
	for _, p := range spellings {
		h.ResetCounts(context.Background(), nil)
		attack99Do(t, srv, "DELETE", "userpresence.xboxlive.com", p, a, "")
		h.ResetCounts(context.Background(), nil)
		attack99Do(t, srv, "PUT", "userpresence.xboxlive.com", strings.Replace(p, tail, "/state", 1), a, `{"state":"Cloaked"}`)
		h.ResetCounts(context.Background(), nil)
		if st := attack99State(t, srv, attack99B); st != "Online" {
			t.Fatalf("after A's DELETE/PUT state of %s, B's presence is %q", p, st)
		}
	}
}

// BREAK. The FGRL rule of presence writes (limits data, 2020 table;
// SPEC.md §3 "Presence | userpresence.xboxlive.com | Read 30, Write 3 |
// Read 100, Write 30"), and go doc ./mock: "FGRL counts a request against
// its user + title + rule scope when ... its method and path a route of
// the service". The route matcher's literal segments are matched
// "ignoring ASCII case as the services do" (route.go's pattern doc), but
// with strings.EqualFold, which folds Unicode: "titleſ" (U+017F LATIN
// SMALL LETTER LONG S) reaches the presence write route and sets the
// caller's presence, while limits.Match (ASCII folding) finds no write
// rule for that path and counts it under presence/read (30 / 100). A
// client spelling its writes so sends 30 writes in 15 s where the
// service allows 3, with no 429.
func TestAttack99RoutesPresenceWriteUnicodeFoldDodgesWriteRule(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := mock.Token(attack99A, attack99Title)
	for _, p := range []string{
		"/users/me/devices/current/title%C5%BF/current", // titleſ
		"/u%C5%BFers/me/devices/current/titles/current", // uſers
	} {
		t.Run(p, func(t *testing.T) {
			h.Reset(context.Background())
			served := 0
			for i := 0; i < 10; i++ {
				status, body, _ := attack99Do(t, srv, "POST", "userpresence.xboxlive.com", p, a, `{"state":"active"}`)
				if status == 200 {
					served++
				} else if i == 0 {
					t.Logf("first write: %d %s", status, body)
				}
			}
			w, r := attack99Count(t, h, attack99A, "presence/write"), attack99Count(t, h, attack99A, "presence/read")
			t.Logf("served %d of 10 writes; counted presence/write=%d presence/read=%d; A's presence: %s", served, w, r, attack99State(t, srv, attack99A))
			if served > 3 {
				t.Errorf("POST %s: %d of 10 presence writes in one burst window served (write burst limit 3); counted write=%d read=%d", p, served, w, r)
			}
		})
	}
	// The state write: PUT /users/me/ſtate.
	h.Reset(context.Background())
	served := 0
	for i := 0; i < 10; i++ {
		if s, _, _ := attack99Do(t, srv, "PUT", "userpresence.xboxlive.com", "/users/me/%C5%BFtate", a, `{"state":"Active"}`); s == 200 {
			served++
		}
	}
	if served > 3 {
		t.Errorf("PUT /users/me/ſtate: %d of 10 served (write burst limit 3); write=%d read=%d", served,
			attack99Count(t, h, attack99A, "presence/write"), attack99Count(t, h, attack99A, "presence/read"))
	}
}

// held: go doc ./mock, "FGRL counts a request against its user + title +
// rule scope when ... its method and path a route of the service"; the
// ASCII spellings that reach a presence write (case, "me", empty
// segments, %2F, a query) are each counted under presence/write, and the
// 4th write in a burst window is 429.
func TestAttack99RoutesPresenceWriteSpellingsCounted(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := mock.Token(attack99A, attack99Title)
	for _, p := range []string{
		"/users/me/devices/current/titles/current",
		"/users/ME/devices/current/titles/current",
		"/USERS/XUID(" + attack99A + ")/DEVICES/CURRENT/TITLES/CURRENT",
		"/users//me//devices/current/titles/current",
		"/users/me%2Fdevices%2Fcurrent/titles/current",
		"/users/xuid%28" + attack99A + "%29/devices/current/titles/current",
		"/users/me/devices/current/titles/current?xuid=" + attack99B,
	} {
		h.Reset(context.Background())
		var statuses []int
		for i := 0; i < 5; i++ {
			s, _, _ := attack99Do(t, srv, "POST", "userpresence.xboxlive.com", p, a, `{"state":"active"}`)
			statuses = append(statuses, s)
		}
		w := attack99Count(t, h, attack99A, "presence/write")
		served := 0
		for _, s := range statuses {
			if s == 200 {
				served++
			}
		}
		if served > 3 || (served > 0 && w != 5) {
			t.Errorf("POST %s: statuses %v, presence/write count %d", p, statuses, w)
		}
	}
}

// held: an achievement update is the caller's own ("a user may update
// only their own achievements", "titleId is not the caller's title", "the
// service configuration is not the caller's title's"): under A's token,
// B's path in any spelling, or another title's SCID, is refused.
func TestAttack99RoutesAchievementUpdateOtherUser(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := mock.Token(attack99A, attack99Title)
	scid := mock.SCID(attack99Title)
	other := mock.SCID("1234567891")
	body := func(user, scid, title string) string {
		return fmt.Sprintf(`{"action":"progressUpdate","serviceConfigId":%q,"titleId":%s,"userId":%q,"achievements":[{"id":"1","percentComplete":100}]}`, scid, title, user)
	}
	for _, tc := range []struct{ path, body string }{
		{"/users/xuid(" + attack99B + ")/achievements/" + scid + "/update", body(attack99B, scid, attack99Title)},
		{"/users/xuid(" + attack99B + ")/achievements/" + scid + "/update", body(attack99A, scid, attack99Title)},
		{"/users/xuid(" + attack99A + ")/achievements/" + scid + "/update", body(attack99B, scid, attack99Title)},
		{"/users/XUID(" + attack99B + ")/achievements/" + scid + "/update", body(attack99B, scid, attack99Title)},
		{"/users/xuid(" + attack99A + ")/../xuid(" + attack99B + ")/achievements/" + scid + "/update", body(attack99B, scid, attack99Title)},
		{"/users/xuid(0" + attack99A + ")/achievements/" + scid + "/update", body(attack99A, scid, attack99Title)},
		{"/users/xuid(" + attack99A + ")/achievements/" + other + "/update", body(attack99A, other, "1234567891")},
		{"/users/xuid(" + attack99A + ")/achievements/" + other + "/update", body(attack99A, other, attack99Title)},
		{"/users/xuid(" + attack99A + ")/achievements/" + scid + "/update", body(attack99A, scid, "1234567891")},
		{"/users/xuid(" + attack99A + ")/achievements/" + strings.ToUpper(other) + "/update", body(attack99A, strings.ToUpper(other), "1234567891")},
	} {
		status, b, _ := attack99Do(t, srv, "POST", "achievements.xboxlive.com", tc.path, a, tc.body)
		if status/100 == 2 {
			t.Errorf("POST %s with %s: %d %s", tc.path, tc.body, status, b)
		}
	}
	// A's own update is served (the control).
	if status, b, _ := attack99Do(t, srv, "POST", "achievements.xboxlive.com", "/users/xuid("+attack99A+")/achievements/"+scid+"/update", a, body(attack99A, scid, attack99Title)); status/100 != 2 {
		t.Errorf("A's own update: %d %s", status, b)
	}
}

// held: "403 for a write under another title's SCID" (docs/MOCK.md): a
// session PUT under another title's SCID, in its spellings, is refused;
// "A user who is not a member of a session and does not join it
// (members.me) may read it but not write it".
func TestAttack99RoutesSessionOtherTitleAndUser(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := mock.Token(attack99A, attack99Title)
	b := mock.Token(attack99B, attack99Title)
	other := mock.SCID("1234567891")
	join := `{"members":{"me":{"constants":{"system":{"initialize":true}}}},"properties":{"custom":{"secret":"b"}}}`
	for _, p := range []string{
		"/serviceconfigs/" + other + "/sessiontemplates/t/sessions/s",
		"/serviceconfigs/" + strings.ToUpper(other) + "/sessiontemplates/t/sessions/s",
		"/serviceconfigs/x/../" + other + "/sessiontemplates/t/sessions/s",
	} {
		if status, body, _ := attack99Do(t, srv, "PUT", "sessiondirectory.xboxlive.com", p, a, join); status/100 == 2 {
			t.Errorf("PUT %s (another title's SCID): %d %s", p, status, body)
		}
	}
	mine := "/serviceconfigs/" + mock.SCID(attack99Title) + "/sessiontemplates/t/sessions/bs"
	if status, body, _ := attack99Do(t, srv, "PUT", "sessiondirectory.xboxlive.com", mine, b, join); status != 201 {
		t.Fatalf("B creates a session: %d %s", status, body)
	}
	// A writes B's session without joining: refused in any spelling.
	write := `{"properties":{"custom":{"secret":"a"}}}`
	for _, p := range []string{mine, strings.ToUpper(mine), strings.Replace(mine, "/sessions/", "//sessions//", 1)} {
		if status, body, _ := attack99Do(t, srv, "PUT", "sessiondirectory.xboxlive.com", p, a, write); status/100 == 2 {
			t.Errorf("A writes B's session at %s without joining: %d %s", p, status, body)
		}
	}
	_, got, _ := attack99Do(t, srv, "GET", "sessiondirectory.xboxlive.com", mine, b, "")
	if !strings.Contains(got, `"secret":"b"`) {
		t.Errorf("B's session after A's writes: %s", got)
	}
}

// held: a token whose userhash is another user's ("the userhash is
// derived from the xuid"; "a tampered token is refused with 401") is
// refused, uncounted for either user.
func TestAttack99RoutesUserhashOfAnotherUser(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	tokA := mock.Token(attack99A, attack99Title)
	_, rest, _ := strings.Cut(tokA, ";")
	forged := "XBL3.0 x=" + mock.UserHash(attack99B) + ";" + rest
	for _, auth := range []string{forged, "XBL3.0 x=" + mock.UserHash(attack99B) + ";" + rest + ";" + rest, "XBL3.0 x=-;" + rest, "XBL3.0 x=" + mock.UserHash(attack99A) + " ;" + rest} {
		status, body, _ := attack99Do(t, srv, "GET", "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag", auth, "")
		if status != 401 {
			t.Errorf("%q: %d %s", auth, status, body)
		}
	}
	if a, b := attack99Count(t, h, attack99A, "profile"), attack99Count(t, h, attack99B, "profile"); a != 0 || b != 0 {
		t.Errorf("forged userhash counted: A %d, B %d", a, b)
	}
}

// held: limits data (profile 10 / 30): profile reads in every spelling
// that is served are counted against profile, and the 11th in a burst
// window is 429.
func TestAttack99RoutesProfileSpellingsShareOneCounter(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := mock.Token(attack99A, attack99Title)
	paths := []string{
		"/users/me/profile/settings?settings=Gamertag",
		"/users/ME/profile/settings?settings=Gamertag",
		"/users/xuid(" + attack99A + ")/profile/settings?settings=Gamertag",
		"/USERS/XUID(" + attack99A + ")/PROFILE/SETTINGS?settings=Gamertag",
		"/users//me/profile//settings?settings=Gamertag",
		"/users/me%2Fprofile%2Fsettings?settings=Gamertag",
		"/users/me/profile/settings/?settings=Gamertag",
		"/users/me/./profile/settings?settings=Gamertag",
		"/users/me/profile/setting%C5%BF?settings=Gamertag",
		"/users/xuid(" + attack99B + ")/profile/settings?settings=Gamertag",
		"/users/me/profile/settings?settings=Gamertag&xuid=" + attack99B,
	}
	served, n := 0, 0
	for round := 0; round < 3; round++ {
		for _, p := range paths {
			status, _, _ := attack99Do(t, srv, "GET", "profile.xboxlive.com", p, a, "")
			if status == 200 {
				served++
			}
			n++
		}
	}
	if served > 10 {
		t.Errorf("%d of %d profile reads served in one burst window (limit 10); counted %d", served, n, attack99Count(t, h, attack99A, "profile"))
	}
}

// held: docs/MOCK.md, "a refresh token without scope (invalid_request,
// before the token is looked at) | AADSTS900144"; login.live.com's
// refresh_token grant takes none.
func TestAttack99RoutesRefreshWithoutScope(t *testing.T) {
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(host, path string, form url.Values) (int, map[string]any) {
		status, body, _ := attack99DoForm(t, srv, host, path, form)
		var m map[string]any
		json.Unmarshal([]byte(body), &m)
		return status, m
	}
	// The identity platform's device code: first poll pending, the second tokens.
	const client = "00000000-0000-0000-0000-0000000000aa"
	_, dc := post("login.microsoftonline.com", "/consumers/oauth2/v2.0/devicecode", url.Values{"client_id": {client}, "scope": {"XboxLive.signin offline_access"}})
	code, _ := dc["device_code"].(string)
	var tok map[string]any
	for i := 0; i < 3; i++ {
		_, tok = post("login.microsoftonline.com", "/consumers/oauth2/v2.0/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "client_id": {client}, "device_code": {code}})
		if tok["refresh_token"] != nil {
			break
		}
	}
	rt, _ := tok["refresh_token"].(string)
	if rt == "" {
		t.Fatalf("no refresh token from the device code: %v", tok)
	}
	for _, f := range []url.Values{
		{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}},
		{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}, "scope": {""}},
		{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}, "scope": {"", "XboxLive.signin"}},
	} {
		status, m := post("login.microsoftonline.com", "/consumers/oauth2/v2.0/token", f)
		if status != 400 || m["error"] != "invalid_request" || !strings.Contains(fmt.Sprint(m["error_description"]), "AADSTS900144") {
			t.Errorf("refresh without scope %v: %d %v", f, status, m)
		}
	}
	// Scope in the query string, not the body: the body has none.
	status, body, _ := attack99DoForm(t, srv, "login.microsoftonline.com", "/consumers/oauth2/v2.0/token?scope=XboxLive.signin",
		url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}})
	if status != 400 || !strings.Contains(body, "AADSTS900144") {
		t.Errorf("scope in the query only: %d %s", status, body)
	}
	if status, m := post("login.microsoftonline.com", "/consumers/oauth2/v2.0/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}, "scope": {"XboxLive.signin offline_access"}}); status != 200 || m["access_token"] == nil {
		t.Errorf("refresh with scope: %d %v", status, m)
	}
	// login.live.com: a code, then a refresh without scope, accepted.
	const msa = "0000000048093EE3"
	redirect := "https://login.live.com/oauth20_desktop.srf"
	q := url.Values{"client_id": {msa}, "redirect_uri": {redirect}, "response_type": {"code"}, "scope": {"service::user.auth.xboxlive.com::MBI_SSL"}}
	_, _, hdr := attack99Do(t, srv, "GET", "login.live.com", "/oauth20_authorize.srf?"+q.Encode(), "", "")
	loc, _ := url.Parse(hdr.Get("Location"))
	if loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("live authorize: Location %q", hdr.Get("Location"))
	}
	_, lt := post("login.live.com", "/oauth20_token.srf", url.Values{"grant_type": {"authorization_code"}, "client_id": {msa}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}})
	lrt, _ := lt["refresh_token"].(string)
	if lrt == "" {
		t.Fatalf("live code: %v", lt)
	}
	if status, m := post("login.live.com", "/oauth20_token.srf", url.Values{"grant_type": {"refresh_token"}, "client_id": {msa}, "refresh_token": {lrt}}); status != 200 || m["access_token"] == nil {
		t.Errorf("live refresh without scope: %d %v", status, m)
	}
	// A live refresh token at the identity platform, and the other way round: refused.
	if status, m := post("login.microsoftonline.com", "/consumers/oauth2/v2.0/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {msa}, "refresh_token": {lrt}, "scope": {"x"}}); status == 200 {
		t.Errorf("a live refresh token at the identity platform: %d %v", status, m)
	}
	if status, m := post("login.live.com", "/oauth20_token.srf", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}}); status == 200 {
		t.Errorf("an identity platform refresh token at login.live.com: %d %v", status, m)
	}
}

func attack99DoForm(t *testing.T, srv *httptest.Server, host, target string, form url.Values) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+target, strings.NewReader(form.Encode()))
	req.Host = host
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := attack99Client(srv).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// held: docs/MOCK.md, "an expired X-token at a service, or an expired
// XSTS token of a user's sign-in | 401, WWW-Authenticate: XBL3.0
// error="token_expired"", uncounted ("with a token the mock did not mint
// (401)" is not counted), at a service and at RTA's upgrade.
func TestAttack99RoutesExpiredSignInToken(t *testing.T) {
	clk := newAtkClock()
	h, err := mock.New(mock.Config{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(host, path, body string) map[string]any {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-xbl-contract-version", "1")
		resp, err := attack99Client(srv).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		if resp.StatusCode != 200 {
			t.Fatalf("%s%s: %d %v", host, path, resp.StatusCode, m)
		}
		return m
	}
	const msa = "0000000048093EE3"
	redirect := "https://login.live.com/oauth20_desktop.srf"
	q := url.Values{"client_id": {msa}, "redirect_uri": {redirect}, "response_type": {"code"}, "scope": {"service::user.auth.xboxlive.com::MBI_SSL"}}
	_, _, hdr := attack99Do(t, srv, "GET", "login.live.com", "/oauth20_authorize.srf?"+q.Encode(), "", "")
	loc, _ := url.Parse(hdr.Get("Location"))
	_, body, _ := attack99DoForm(t, srv, "login.live.com", "/oauth20_token.srf", url.Values{"grant_type": {"authorization_code"}, "client_id": {msa}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}})
	var lt map[string]any
	json.Unmarshal([]byte(body), &lt)
	ut := post("user.auth.xboxlive.com", "/user/authenticate", fmt.Sprintf(`{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"AuthMethod":"RPS","SiteName":"user.auth.xboxlive.com","RpsTicket":"t=%s"}}`, lt["access_token"]))
	xt := post("xsts.auth.xboxlive.com", "/xsts/authorize", fmt.Sprintf(`{"RelyingParty":"http://xboxlive.com","TokenType":"JWT","Properties":{"SandboxId":"RETAIL","UserTokens":[%q]}}`, ut["Token"]))
	claims := xt["DisplayClaims"].(map[string]any)["xui"].([]any)[0].(map[string]any)
	auth := fmt.Sprintf("XBL3.0 x=%s;%s", claims["uhs"], xt["Token"])
	xuid := claims["xid"].(string)
	notAfter, _ := time.Parse(time.RFC3339Nano, xt["NotAfter"].(string))
	if s, b, _ := attack99Do(t, srv, "GET", "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag", auth, ""); s != 200 {
		t.Fatalf("fresh XSTS token: %d %s", s, b)
	}
	clk.ns.Store(notAfter.Add(2 * time.Second).UnixNano())
	key := throttle.Key{User: mock.UserHash(xuid), Title: "1234567890", Scope: "profile"}
	before, _ := h.Counts(key)
	for _, p := range []string{"/users/me/profile/settings?settings=Gamertag", "/users//me/profile/settings?settings=Gamertag"} {
		s, b, hd := attack99Do(t, srv, "GET", "profile.xboxlive.com", p, auth, "")
		if s != 401 || !strings.Contains(hd.Get("WWW-Authenticate"), "token_expired") {
			t.Errorf("expired XSTS token at %s: %d %q %s", p, s, hd.Get("WWW-Authenticate"), b)
		}
	}
	after, _ := h.Counts(key)
	if after.Burst.Count != before.Burst.Count {
		t.Errorf("expired token counted: %d -> %d", before.Burst.Count, after.Burst.Count)
	}
	// The RTA upgrade with it.
	req, _ := http.NewRequest("GET", srv.URL+"/connect", nil)
	req.Host = "rta.xboxlive.com"
	req.Header.Set("Authorization", auth)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Sec-WebSocket-Protocol", "rta.xboxlive.com.V2")
	resp, err := attack99Client(srv).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("RTA upgrade with an expired token: %d", resp.StatusCode)
	}
}

// held: MemoryServerStore: "Memory is bounded: a key whose windows have
// both ended is dropped lazily"; Config.MaxKeys "caps the FGRL keys held in
// memory"; the journal keeps "the latest 10,000 within 32 MiB". 10,000
// distinct users making one call each hold a bounded heap per user, and
// their keys go once their windows end.
func TestAttack99RoutesManyUsersBounded(t *testing.T) {
	racebuild.Skip(t, "heap figures: 30,000 users over HTTP, 11.5 s under the detector")
	clk := newAtkClock()
	store := &throttle.MemoryServerStore{}
	h, err := mock.New(mock.Config{Now: clk.now, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const n = 10000
	call := func(base int) {
		var wg sync.WaitGroup
		ch := make(chan int)
		for w := 0; w < 16; w++ {
			wg.Go(func() {
				for i := range ch {
					x := fmt.Sprint(2533274900000000 + base + i)
					req, _ := http.NewRequest("POST", srv.URL+"/users/me/devices/current/titles/current", strings.NewReader(`{"state":"active"}`))
					req.Host = "userpresence.xboxlive.com"
					req.Header.Set("Authorization", mock.Token(x, attack99Title))
					resp, err := attack99Client(srv).Do(req)
					if err != nil {
						t.Error(err)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		for i := 0; i < n; i++ {
			ch <- i
		}
		close(ch)
		wg.Wait()
	}
	call(0) // warm up pools and the journal's ring
	clk.add(time.Hour)
	base := heap()
	call(n)
	grown := int64(heap()) - int64(base)
	t.Logf("heap grew %d B for %d more users (%d B each); keys held %d", grown, n, grown/n, store.Len())
	if grown/n > 16<<10 {
		t.Errorf("heap per user %d B", grown/n)
	}
	// An hour on, the next 10,000 users' keys sweep the ended ones.
	clk.add(time.Hour)
	call(2 * n)
	if l := store.Len(); l > 2*n+n/2 {
		t.Errorf("keys held after three rounds an hour apart: %d (ended keys are not dropped)", l)
	}
	t.Logf("keys held after the third round: %d", store.Len())
}

// held: go doc ./mock ("answers 404 ... to a path ... the service does
// not serve") and the profile read bound: a 1 MB path and 100,000 query
// parameters end, quickly, with an answer, uncounted or bounded.
func TestAttack99RoutesHugePathAndQuery(t *testing.T) {
	h := mock.NewHandler()
	a := mock.Token(attack99A, attack99Title)
	// In-process (no server header bound): the mock's own treatment.
	for _, target := range []string{
		"https://profile.xboxlive.com/users/me/profile/settings/" + strings.Repeat("a", 1<<20),
		"https://profile.xboxlive.com/users/xuid(" + strings.Repeat("9", 1<<20) + ")/profile/settings",
		"https://profile.xboxlive.com/" + strings.Repeat("../", 1<<18) + "users/me/profile/settings",
		"https://profile.xboxlive.com/users/me/profile/settings?" + strings.Repeat("settings=Gamertag&", 100000),
		"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag&" + strings.Repeat("a=b&", 100000),
		"https://userpresence.xboxlive.com/users/me?" + strings.Repeat("%zz&", 100000),
	} {
		req, err := http.NewRequest("GET", target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", a)
		start := time.Now()
		resp, err := h.RoundTrip(req)
		took := time.Since(start)
		if err != nil {
			t.Errorf("%.60s...: %v", target, err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.Logf("%.70s... (%d B): %d in %v", target, len(target), resp.StatusCode, took)
		if took > 5*time.Second {
			t.Errorf("%.60s...: took %v", target, took)
		}
	}
	for _, c := range h.Calls(mock.CallFilter{}) {
		if len(c.URL) > 1<<21 {
			t.Errorf("a call recorded with a URL of %d B", len(c.URL))
		}
	}
	// Over a real server: the same, answered (431/414/404/400), never hung.
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/users/me/profile/settings?settings=Gamertag&"+strings.Repeat("a=b&", 100000), nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", a)
	resp, err := attack99Client(srv).Do(req)
	if err != nil {
		t.Fatalf("100k query parameters over HTTP: %v", err)
	}
	resp.Body.Close()
	t.Logf("100k query parameters over HTTP: %d", resp.StatusCode)
}

// held: ConnLimits.BodyTimeout "closes a connection whose request body
// sends nothing for this long: a header that declares a body which never
// comes, or one that stops half-way": a client stalled mid-body at a
// service, at a sign-in host, at a presence write, does not hold the
// request forever.
func TestAttack99RoutesStalledBodyEnds(t *testing.T) {
	h := mock.NewHandler()
	s := mock.NewUnstartedServer(h)
	s.Conns.BodyTimeout = 300 * time.Millisecond
	s.Start()
	defer s.Close()
	u, _ := url.Parse(s.URL)
	for _, tc := range []struct{ host, path, auth string }{
		{"userpresence.xboxlive.com", "/users/me/devices/current/titles/current", mock.Token(attack99A, attack99Title)},
		{"login.microsoftonline.com", "/consumers/oauth2/v2.0/token", ""},
		{"xsts.auth.xboxlive.com", "/xsts/authorize", ""},
		{"sessiondirectory.xboxlive.com", "/serviceconfigs/" + mock.SCID(attack99Title) + "/sessiontemplates/t/sessions/s", mock.Token(attack99A, attack99Title)},
	} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		method := "POST"
		if strings.HasPrefix(tc.path, "/serviceconfigs") {
			method = "PUT"
		}
		fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n", method, tc.path, tc.host)
		if tc.auth != "" {
			fmt.Fprintf(conn, "Authorization: %s\r\n", tc.auth)
		}
		fmt.Fprintf(conn, "\r\n{\"state\":")
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		start := time.Now()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		took := time.Since(start)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			t.Logf("%s: answered %d after %v", tc.host, resp.StatusCode, took)
		} else {
			t.Logf("%s: %v after %v", tc.host, err, took)
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s %s: the stalled request still open after %v", method, tc.host, took)
		}
		conn.Close()
	}
}
