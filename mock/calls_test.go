package mock

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/internal/racebuild"
)

// TestCalls: the mock records each call it received (user, scope, status,
// the scripted rule that answered, an aborted answer), filters them, and
// forgets them on demand.
func TestCalls(t *testing.T) {
	h := Must(New(Config{Script: scriptFrom(t, "rules:\n  - name: down\n    match: {host: social.xboxlive.com}\n    answers: [{status: 503}, {fault: reset}]\n")}))
	tok := Token(xuid1, title1)
	do(t, h, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", tok, `{"userIds":["1"],"settings":["Gamertag"]}`)
	for range 10 {
		do(t, h, "GET", profileURL, tok, "")
	}
	do(t, h, "GET", "https://social.xboxlive.com/users/me/people", tok, "")
	h.RoundTrip(mustRequest("GET", "https://social.xboxlive.com/users/me/people"))
	type row struct {
		Method, URL, XUID, Scope, Script string
		Status                           int
		Aborted                          bool
	}
	rows := func(f CallFilter) []row {
		var out []row
		for _, c := range h.Calls(f) {
			out = append(out, row{c.Method, c.URL, c.XUID, c.Scope, c.Script, c.Status, c.Aborted})
		}
		return out
	}
	if d := cmp.Diff([]row{
		{"GET", "https://social.xboxlive.com/users/me/people", xuid1, "social", "down", 503, false},
		{"GET", "https://social.xboxlive.com/users/me/people", xuid1, "social", "down", 0, true},
	}, rows(CallFilter{Script: "*"})); d != "" {
		t.Errorf("scripted calls (-want +got)\n%s", d)
	}
	if got := rows(CallFilter{Status: 429}); len(got) != 1 || got[0].Scope != "profile" {
		t.Errorf("429s: %+v", got)
	}
	if got := h.Calls(CallFilter{Method: "POST", Scope: "profile"}); len(got) != 1 || string(got[0].body) != `{"userIds":["1"],"settings":["Gamertag"]}` {
		t.Errorf("the batch call: %+v", got)
	}
	if n := len(h.Calls(CallFilter{Host: "PROFILE.xboxlive.com", PathPrefix: "/users/me/"})); n != 10 {
		t.Errorf("%d profile calls by host and path, want 10", n)
	}
	h.ForgetCalls()
	if n := len(h.Calls(CallFilter{})); n != 0 {
		t.Errorf("%d calls after ForgetCalls", n)
	}
}

// TestCallsBounded: the record keeps the latest calls, at most maxCalls.
func TestCallsBounded(t *testing.T) {
	h := Must(New(Config{LegacyTitles: []string{title1}}))
	for range maxCalls + 5 {
		do(t, h, "GET", profileURL, Token(xuid1, title1), "")
	}
	if n := len(h.Calls(CallFilter{})); n != maxCalls {
		t.Errorf("%d calls held, want %d", n, maxCalls)
	}
}

// TestCallsHAR: what the mock saw, written as HAR, reads back with the
// analyzer's reader: the same calls, no token.
func TestCallsHAR(t *testing.T) {
	h := NewHandler()
	for range 11 {
		do(t, h, "GET", profileURL, Token(xuid1, title1), "")
	}
	var buf bytes.Buffer
	if err := h.WriteHAR(&buf, CallFilter{}); err != nil {
		t.Fatal(err)
	}
	tokenPart := strings.SplitN(Token(xuid1, title1), ";", 2)[1]
	if strings.Contains(buf.String(), tokenPart) {
		t.Fatal("the HAR holds a token")
	}
	var statuses []int
	_, err := analyze.ReadHAR(&buf, func(c *analyze.Call) {
		statuses = append(statuses, c.Status)
		if c.URL != "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag" || !strings.HasPrefix(c.Authorization, "XBL3.0 x="+UserHash(xuid1)+";") {
			t.Errorf("read back: %s %s", c.URL, c.Authorization)
		}
	})
	if err != nil || len(statuses) != 11 || statuses[10] != 429 {
		t.Errorf("read back %v, %v", statuses, err)
	}
}

// TestCheck: no 429s, the analyzer's verdict and call counts, from Go and
// the admin API; code that ignores a 429 fails with the analyzer's finding.
func TestCheck(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	for range 3 {
		do(t, h, "GET", presenceURL, tok, "")
	}
	res, err := h.Check(CheckOptions{No429: true, Certify: true, Expect: []Expectation{{CallFilter{Scope: "presence"}, 3}}})
	if err != nil || !res.OK {
		t.Fatalf("a clean run: %+v, %v", res.Failures, err)
	}
	// The code under test ignores the 429 and calls again at once.
	for range 12 {
		do(t, h, "GET", profileURL, tok, "")
	}
	res, err = h.Check(CheckOptions{No429: true, Certify: true, Expect: []Expectation{{CallFilter{Scope: "presence"}, 4}}})
	if err != nil || res.OK {
		t.Fatalf("a throttled run passed: %v", err)
	}
	text := strings.Join(res.Failures, "\n")
	for _, want := range []string{"429: GET https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag",
		"certification: throttled-calls profile:", "expected 4 calls (scope=presence), saw 3"} {
		if !strings.Contains(text, want) {
			t.Errorf("failures lack %q:\n%s", want, text)
		}
	}
	srv := serveAll(t, h)
	var out CheckResult
	if code := api(t, srv, "POST", "/_fgrl/api/check", `{"no429": true}`, &out); code != 422 || out.OK || len(out.Failures) != 2 {
		t.Errorf("admin check: %d %+v", code, out)
	}
	h.ForgetCalls()
	if code := api(t, srv, "POST", "/_fgrl/api/check", `{"no429": true}`, &out); code != 200 || !out.OK {
		t.Errorf("admin check after forgetting: %d %+v", code, out)
	}
	// Certifying no call is no pass (an outside attack: it was green).
	if code := api(t, srv, "POST", "/_fgrl/api/check", `{"no429": true, "certify": true}`, &out); code != 422 || out.OK ||
		len(out.Failures) != 1 || out.Failures[0] != "certification: no calls to certify" {
		t.Errorf("admin certify after forgetting: %d %+v, want 422 and no calls to certify", code, out)
	}
	var e apiError
	if code := api(t, srv, "POST", "/_fgrl/api/check", `{"no-429": true}`, &e); code != 400 {
		t.Errorf("a bad check: %d %+v", code, e)
	}
	if code := api(t, srv, "GET", "/_fgrl/api/calls?status=abc", "", &e); code != 400 || !strings.Contains(e.Error, "status") {
		t.Errorf("a bad filter: %d %+v", code, e)
	}
	resp, err := srv.Client().Get(srv.URL + "/_fgrl/api/calls.har")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HAR: %v", err)
	}
	resp.Body.Close()
}

// TestCallsBoundedInBytes: the heap the record of calls holds stays within
// the bytes it counts, and those within maxCallsBytes, whatever the
// requests carry: request lines of 256 KiB with an Authorization of 16 KiB
// (over loopback, so that net/http parses them), or bodies of 20 KiB (cut
// at 16 KiB).
func TestCallsBoundedInBytes(t *testing.T) {
	racebuild.Skip(t, "heap figures over 3,300 calls")
	pad := strings.Repeat("a", 256<<10)
	tests := []struct {
		name string
		n    int
		send func(t *testing.T, h *Handler, srv *httptest.Server, i int)
	}{
		{"huge request lines and Authorization", 300, func(t *testing.T, h *Handler, srv *httptest.Server, i int) {
			// The token after 16,000 spaces: the userhash parsed out of it is
			// a substring of the whole header.
			req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag&pad="+pad, nil)
			req.Host = "profile.xboxlive.com"
			tok := Token(xuid1, title1)
			req.Header.Set("Authorization", "XBL3.0"+strings.Repeat(" ", 16000)+strings.TrimPrefix(tok, "XBL3.0"))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}},
		{"huge bodies", 3000, func(t *testing.T, h *Handler, _ *httptest.Server, i int) {
			// Many short strings, so that the record's redaction, which keeps
			// the whole tokens of a body cut at 16 KiB, keeps nearly 16 KiB.
			body := `{"userIds": ["1"], "settings": ["Gamertag"], "pad": [` + strings.Repeat(`"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", `, 600) + `"a"]}`
			do(t, h, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", Token(strconv.Itoa(2533274790000000+i), title1), body)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHandler()
			srv := httptest.NewServer(h)
			defer srv.Close()
			for i := range tt.n {
				tt.send(t, h, srv, i)
			}
			srv.CloseClientConnections()
			with := heapAfterGC()
			h.journal.mu.Lock()
			counted, held := h.journal.bytes, h.journal.n
			h.journal.mu.Unlock()
			h.ForgetCalls()
			heap := int(with) - int(heapAfterGC())
			t.Logf("%d calls hold %d bytes of heap, counted as %d", held, heap, counted)
			if counted > maxCallsBytes {
				t.Errorf("%d calls counted as %d bytes, over the bound %d", held, counted, maxCallsBytes)
			}
			if slack := 64 << 10; heap > counted+slack {
				t.Errorf("%d calls hold %d bytes of heap, counted as %d", held, heap, counted)
			}
		})
	}
}

// heapAfterGC returns the heap in use once garbage is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestCallsHoldNoSecret signs in every way the mock serves (the device code
// flow, the identity platform's code flow with PKCE, login.live.com's code
// flow with the browser landing on the desktop redirect, a refresh, a
// client secret, the user and XSTS tokens), then calls a service with
// credentials in its headers and query, and exports the record every way:
// Calls, WriteHAR, the admin API's calls and calls.har, the live page's
// overview, the log. No code, token, ticket, secret or state is in any.
func TestCallsHoldNoSecret(t *testing.T) {
	var logs bytes.Buffer
	h := Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	var secrets []string
	secret := func(s ...string) {
		for _, v := range s {
			if len(v) < 8 {
				t.Fatalf("a secret too short to look for: %q", v)
			}
			secrets = append(secrets, v)
		}
	}
	form := "application/x-www-form-urlencoded"

	a := signInFlow(t, h)
	var dc struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	var ms struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	var ut, xsts struct{ Token string }
	for _, x := range []struct {
		b []byte
		v any
	}{{a.deviceCode, &dc}, {a.msToken, &ms}, {a.userToken, &ut}, {a.xsts, &xsts}} {
		if err := json.Unmarshal(x.b, x.v); err != nil {
			t.Fatal(err)
		}
	}
	secret(dc.DeviceCode, dc.UserCode, ms.AccessToken, ms.RefreshToken, ut.Token, xsts.Token)

	// The identity platform's code flow: the code goes to a loopback
	// redirect, the exchange carries it with its verifier.
	verifier := "verifier-SECRET-0123456789-0123456789-0123456789"
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"client_id": {"c"}, "redirect_uri": {"http://localhost:5000/cb"}, "response_type": {"code"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "state": {"state-SECRET-1"}}
	resp := send(t, h, mustRequest("GET", "https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize?"+q.Encode()))
	loc, _ := url.Parse(resp.header.Get("Location"))
	msCode := loc.Query().Get("code")
	if status, b := post(t, h, "https://login.microsoftonline.com/consumers/oauth2/v2.0/token", form, url.Values{"grant_type": {"authorization_code"},
		"client_id": {"c"}, "code": {msCode}, "code_verifier": {verifier}, "redirect_uri": {"http://localhost:5000/cb"}}.Encode()); status != 200 {
		t.Fatalf("the identity platform's code exchange: %d %s", status, b)
	}
	secret(verifier, "state-SECRET-1", msCode)

	// login.live.com: the browser lands on the desktop redirect, a page of
	// login.live.com itself, with the code in its URL.
	_, back := liveAuthorizeAt(t, h, msaClient, redirectURI, "state-SECRET-2")
	code := back.Get("code")
	do(t, h, "GET", redirectURI+"?code="+url.QueryEscape(code)+"&state=state-SECRET-2", "", "")
	_, _, live := liveTokenAt(t, h, url.Values{"grant_type": {"authorization_code"}, "client_id": {msaClient}, "code": {code},
		"redirect_uri": {redirectURI}, "client_secret": {"client-SECRET-3"}})
	_, _, again := liveTokenAt(t, h, url.Values{"grant_type": {"refresh_token"}, "client_id": {msaClient}, "refresh_token": {live.RefreshToken}})
	if userToken(t, h, "t="+again.AccessToken) != 200 {
		t.Fatal("the user token for login.live.com's access token")
	}
	post(t, h, "https://login.live.com/ppsecure/post.srf", form, "login=ada%40example.com&passwd=password-SECRET-4&PPFT=ppft-SECRET-5")
	secret(code, "state-SECRET-2", "client-SECRET-3", live.AccessToken, live.RefreshToken, again.AccessToken, again.RefreshToken,
		"password-SECRET-4", "ppft-SECRET-5")

	// A service call with the XSTS token, a signature, a cookie and a token
	// in its query.
	req := mustRequest("GET", profileURL+"&access_token=query-SECRET-6")
	uhs := UserHash(DefaultAccount.XUID)
	req.Header.Set("Authorization", "XBL3.0 x="+uhs+";"+xsts.Token)
	req.Header.Set("Signature", "signature-SECRET-7")
	req.Header.Set("Cookie", "session=cookie-SECRET-8")
	send(t, h, req)
	secret("query-SECRET-6", "signature-SECRET-7", "cookie-SECRET-8")

	exports := map[string][]byte{"the log": logs.Bytes()}
	exports["Calls"], _ = json.Marshal(h.Calls(CallFilter{}))
	var har bytes.Buffer
	if err := h.WriteHAR(&har, CallFilter{}); err != nil {
		t.Fatal(err)
	}
	exports["WriteHAR"] = har.Bytes()
	srv := serveAll(t, h)
	for _, path := range []string{"/_fgrl/api/calls", "/_fgrl/api/calls.har"} {
		r, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		exports[path], _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	exports["the live page's overview"], _ = json.Marshal(h.Overview(t.Context()))
	for name, b := range exports {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte(url.QueryEscape(s))) {
				t.Errorf("%s holds the secret %.24q...", name, s)
			}
		}
	}
	for _, want := range []string{"grant_type=authorization_code", `oauth20_desktop.srf?code=REDACTED\u0026state=REDACTED`,
		`\"RpsTicket\": \"REDACTED\"`, "access_token=REDACTED", "XBL3.0 x=" + uhs + ";REDACTED"} {
		if !bytes.Contains(har.Bytes(), []byte(want)) {
			t.Errorf("the HAR lacks %q: it should still say what was called", want)
		}
	}
}

// TestCheckFailsClosed: when the record of calls dropped calls made in the
// window a check certifies (it keeps the latest 10,000), the verdict is
// incomplete and the check fails, though the calls it still holds pass;
// since a time after the dropped calls, it passes. Before, the two 429s in
// a row dropped from the record were never judged: it passed.
func TestCheckFailsClosed(t *testing.T) {
	h := NewHandler()
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for i := range maxCalls + 2 {
		c := Call{Time: t0.Add(time.Duration(i) * time.Second), Method: "GET", host: "profile.xboxlive.com", uri: "/users/me/profile/settings",
			Scope: "profile", Status: 200, userhash: fmt.Sprint(100000 + i)}
		if i < 2 { // dropped: 429s in a row, the record's oldest
			c.Status, c.RetryAfter, c.userhash = 429, "60", "99"
		}
		h.journal.keep(c)
	}
	res, err := h.Check(CheckOptions{Certify: true})
	if err != nil || res.OK || res.Report.Verdict != analyze.Incomplete || len(res.Failures) != 1 ||
		!strings.HasPrefix(res.Failures[0], "certification: incomplete: the record keeps the latest 10000 calls") {
		t.Errorf("calls dropped: %v, %+v; want a failure, the verdict incomplete", err, res.Failures)
	}
	res, err = h.Check(CheckOptions{Certify: true, Since: t0.Add(2 * time.Second)})
	if err != nil || !res.OK || res.Report.Verdict != analyze.Green {
		t.Errorf("since the dropped calls: %v, %+v", err, res.Failures)
	}
}
