package mock

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/analyze"
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
	if code := api(t, srv, "POST", "/_fgrl/api/check", `{"no429": true, "certify": true}`, &out); code != 200 || !out.OK {
		t.Errorf("admin check after forgetting: %d %+v", code, out)
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
			Scope: "profile", Status: 200, userhash: fmt.Sprint("u", i)}
		if i < 2 { // dropped: 429s in a row, the record's oldest
			c.Status, c.RetryAfter, c.userhash = 429, "60", "throttled"
		}
		h.calls.add(c)
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
