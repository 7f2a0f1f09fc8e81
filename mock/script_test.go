package mock

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/throttle"
)

const presenceURL = "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")"

// scriptFrom reads a script (JSON or YAML) or fails the test.
func scriptFrom(t *testing.T, text string) Script {
	t.Helper()
	s, err := ReadScript(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestScriptSequence: a three-answer sequence plays in order, then its
// last answer repeats, or the mock's own behaviour resumes; other requests
// are the mock's; scripted answers are not counted unless asked.
func TestScriptSequence(t *testing.T) {
	h := Must(New(Config{Script: scriptFrom(t, `
rules:
  - name: presence outage
    match: {host: userpresence.xboxlive.com, method: GET, pathPattern: "/users/{user}"}
    answers:
      - {status: 503, headers: {Retry-After: "1"}}
      - {status: 429, headers: {Retry-After: "30"}, body: {limitType: Rate}}
      - {status: 200, body: {xuid: "1", state: Online}}
  - match: {pathPrefix: /users/xuid(2533274799999999)/profile}
    then: mock
    answers: [{status: 500, body: "down"}]
`)}))
	var got []string
	for range 5 {
		r := do(t, h, "GET", presenceURL, Token(xuid1, title1), "")
		got = append(got, r.header.Get("Retry-After")+" "+strings.TrimSpace(r.body)+" "+http.StatusText(r.status))
	}
	for range 2 {
		r := do(t, h, "GET", "https://profile.xboxlive.com/users/xuid(2533274799999999)/profile/settings?settings=Gamertag", Token(xuid1, title1), "")
		got = append(got, http.StatusText(r.status)+" "+r.header.Get("Content-Type"))
	}
	// A YAML body keeps its keys in the order written, as a JSON one does.
	want := []string{"1  Service Unavailable", `30 {"limitType":"Rate"} Too Many Requests`, ` {"xuid":"1","state":"Online"} OK`,
		` {"xuid":"1","state":"Online"} OK`, ` {"xuid":"1","state":"Online"} OK`,
		"Internal Server Error text/plain; charset=utf-8", "OK application/json; charset=utf-8"} // a body without a type: sniffed, as a server does
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	presence, _ := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "presence/read"})
	profile, _ := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "profile"})
	if presence.Sustain.Count != 0 || profile.Sustain.Count != 1 {
		t.Errorf("counted %d presence and %d profile calls, want 0 (scripted) and 1 (the mock's own)", presence.Sustain.Count, profile.Sustain.Count)
	}
}

// TestScriptMatches: each kind of match, and a counted rule refused at the
// limit before its sequence moves on.
func TestScriptMatches(t *testing.T) {
	h := Must(New(Config{Script: scriptFrom(t, `{"rules": [
		{"match": {"method": "POST", "path": "/users/batch/profile/settings", "bodyContains": "\"Bio\""}, "answers": [{"status": 418}]},
		{"match": {"query": {"settings": "Bio"}}, "answers": [{"status": 204}]},
		{"match": {"host": "social.xboxlive.com"}, "count": true, "answers": [{"status": 201}, {"status": 202}]}
	]}`)}))
	tok := Token(xuid1, title1)
	status := func(method, url, body string) int { return do(t, h, method, url, tok, body).status }
	got := []int{
		status("POST", "https://profile.xboxlive.com/users/batch/profile/settings", `{"userIds":["1"],"settings":["Bio"]}`),
		status("POST", "https://profile.xboxlive.com/users/batch/profile/settings", `{"userIds":["1"],"settings":["Gamertag"]}`),
		status("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Bio", ""),
		status("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", ""),
	}
	for range 11 {
		got = append(got, status("GET", "https://social.xboxlive.com/users/me/people", ""))
	}
	want := []int{418, 200, 204, 200, 201, 202, 202, 202, 202, 202, 202, 202, 202, 202, 429}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// TestScriptFaults: latency, a reset, a hang until the client gives up and
// a body cut short, inside a synctest bubble.
func TestScriptFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{Script: scriptFrom(t, `
rules:
  - match: {path: /slow}
    answers: [{latency: 3s, body: {ok: true}}]
  - match: {path: /reset}
    answers: [{fault: reset}]
  - match: {path: /hang}
    answers: [{fault: hang}]
  - match: {path: /cut}
    answers: [{fault: truncate, body: {a: "0123456789"}}]
`)}))
		send := func(path string, timeout time.Duration) (string, time.Duration, error) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", "https://profile.xboxlive.com"+path, nil)
			start := time.Now()
			resp, err := h.RoundTrip(req)
			if err != nil {
				return "", time.Since(start), err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), time.Since(start), err
		}
		if b, took, err := send("/slow", time.Minute); err != nil || took != 3*time.Second || b != `{"ok":true}` {
			t.Errorf("latency: %q after %v, %v; want the body after 3s", b, took, err)
		}
		if _, _, err := send("/reset", time.Minute); err == nil {
			t.Error("reset: answered")
		}
		if _, took, err := send("/hang", 20*time.Second); !errors.Is(err, context.DeadlineExceeded) || took != 20*time.Second {
			t.Errorf("hang: %v after %v, want the client's deadline after 20s", err, took)
		}
		if b, _, err := send("/cut", time.Minute); err == nil || len(b) >= len(`{"a":"0123456789"}`) {
			t.Errorf("truncate: %q, %v; want part of the body and an error", b, err)
		}
	})
}

// TestReadScriptErrors: a script that cannot be is refused with its line
// and field, JSON or YAML.
func TestReadScriptErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       datafile.Error
	}{
		{"no answers", "rules:\n  - match: {path: /x}\n    answers: []\n", datafile.Error{Line: 3, Field: "rules[0].answers", Reason: "a rule needs an answer"}},
		{"status", "rules:\n  - match: {path: /x}\n    answers:\n      - status: 200\n      - status: 99\n", datafile.Error{Line: 5, Field: "rules[0].answers[1].status", Reason: "a status is 200 to 599 (a 1xx is sent ahead of an answer, never as one)"}},
		{"fault", `{"rules": [{"match": {}, "answers": [{"fault": "explode"}]}]}`, datafile.Error{Line: 1, Field: "rules[0].answers[0].fault", Reason: `want "reset", "hang" or "truncate"`}},
		{"latency", "rules:\n  - match: {}\n    answers:\n      - latency: soon\n", datafile.Error{Line: 4, Field: "rules[0].answers[0].latency", Reason: "not a duration"}},
		{"two paths", "rules:\n  - match:\n      path: /a\n      pathPrefix: /b\n    answers: [{}]\n", datafile.Error{Line: 2, Field: "rules[0].match", Reason: "name one of path, pathPrefix and pathPattern"}},
		{"pattern", "rules:\n  - match: {pathPattern: \"users/{x}\"}\n    answers: [{}]\n", datafile.Error{Line: 2, Field: "rules[0].match.pathPattern", Reason: "not a path pattern"}},
		{"then", "rules:\n  - match: {}\n    then: stop\n    answers: [{}]\n", datafile.Error{Line: 3, Field: "rules[0].then", Reason: `want "repeat" or "mock"`}},
		{"unknown field", "rules:\n  - match: {}\n    answer: [{}]\n", datafile.Error{Line: 3, Field: "rules[0].answer", Reason: "no such field"}},
		{"header", "rules:\n  - match: {}\n    answers:\n      - headers: {\"Bad Name\": x}\n", datafile.Error{Line: 4, Field: "rules[0].answers[0].headers", Reason: "a header's name is a token"}},
		{"body file", "rules:\n  - match: {}\n    answers: [{bodyFile: a.json}]\n", datafile.Error{Line: 3, Field: "rules[0].answers[0].bodyFile", Reason: "a body file needs a script read from a file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadScript(strings.NewReader(tc.file))
			checkDataError(t, err, tc.want, "script")
		})
	}
}

// TestAnswersBoundedInAll: a script holds at most 10,000 answers in all
// its rules (each at most 1,000): a file is refused at the first answer
// past them, before it is decoded, and a Script made in Go by SetScript.
func TestAnswersBoundedInAll(t *testing.T) {
	rule := `{"answers": [` + strings.TrimSuffix(strings.Repeat(`{"status": 200},`, maxScriptAnswers), ",") + `]}`
	file := `{"rules": [` + strings.TrimSuffix(strings.Repeat(rule+",\n", maxAnswersInAll/maxScriptAnswers+1), ",\n") + `]}`
	_, err := ReadScript(strings.NewReader(file))
	checkDataError(t, err, datafile.Error{Line: 11, Field: "rules[10].answers", Reason: "more than 10000 entries in all the lists like it"}, "script")
	var s Script
	for range maxAnswersInAll/maxScriptAnswers + 1 {
		s.Rules = append(s.Rules, ScriptRule{Answers: make([]ScriptAnswer, maxScriptAnswers)})
	}
	err = NewHandler().SetScript(s)
	checkDataError(t, err, datafile.Error{Field: "rules[10].answers", Reason: "more than 10000 answers in all the rules"}, "script")
}

// TestLoadScript: a script file's body files become its answers' bodies;
// a missing one is refused.
func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "people.json"), []byte(`{"people": []}`), 0o600)
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("rules:\n  - match: {path: /x}\n    answers: [{bodyFile: people.json}]\n"), 0o600)
	s, err := LoadScript(filepath.Join(dir, "s.yaml"))
	if err != nil || string(s.Rules[0].Answers[0].Body) != `{"people": []}` {
		t.Fatalf("%+v, %v", s, err)
	}
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("rules:\n  - match: {path: /x}\n    answers: [{bodyFile: none.json}]\n"), 0o600)
	if _, err := LoadScript(filepath.Join(dir, "bad.yaml")); err == nil || !strings.Contains(err.Error(), "rules[0].answers[0].bodyFile: cannot open") {
		t.Errorf("a missing body file: %v", err)
	}
}

// TestBodyFileStaysInTheScriptsDirectory: a body file is named relative to
// the script's directory, and must be in it. LoadScript joined the name to
// the directory as it was, so "../" climbed out of it: a script taken from
// elsewhere (a fixture, a bug report) run with xblcall mock --script served
// any file the user could read (~/.ssh, a sign-in file's refresh token,
// /proc/self/environ) as an answer's body, to anyone who reached the mock.
func TestBodyFileStaysInTheScriptsDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"scripts", "scripts/sub", "private"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(dir, "private", "secret")
	os.WriteFile(secret, []byte("refresh-token-of-the-user"), 0o600)
	os.WriteFile(filepath.Join(dir, "scripts", "sub", "ok.json"), []byte(`{"ok": true}`), 0o600)
	if err := os.Symlink(secret, filepath.Join(dir, "scripts", "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, bodyFile string
		ok             bool
	}{
		{"parent directory", "../private/secret", false},
		{"down and back up", "sub/../../private/secret", false},
		{"an absolute path", secret, false},
		{"a link out of the directory", "link", false},
		{"down and back up, staying in", "sub/../sub/ok.json", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := filepath.Join(dir, "scripts", "s.yaml")
			os.WriteFile(script, []byte("rules:\n  - answers: [{bodyFile: \""+tc.bodyFile+"\"}]\n"), 0o600)
			s, err := LoadScript(script)
			if tc.ok {
				if err != nil || string(s.Rules[0].Answers[0].Body) != `{"ok": true}` {
					t.Errorf("%+v, %v; want the body read", s, err)
				}
				return
			}
			checkDataError(t, err, datafile.Error{Line: 2, Field: "rules[0].answers[0].bodyFile", Reason: "cannot open"}, script)
		})
	}
}

// TestScriptHeadersAreWhatNetHTTPWrites: a header's name is an RFC 9110
// token and its value holds no control character but tab, and no two
// names differ only in case. The check refused a few separators in a name
// and line breaks and NUL in a value, so a name with a control character
// or a non-ASCII letter passed (net/http then drops the header without a
// word), and so did a value with other control characters (written as it
// is, so that a Go client fails the whole answer: "malformed MIME header
// line"); of two names in two cases net/http wrote either.
func TestScriptHeadersAreWhatNetHTTPWrites(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		ok         bool
	}{
		{"control character in a name", `{"rules": [{"answers": [{"headers": {"X-\u0001": "v"}}]}]}`, false},
		{"non-ASCII name", `{"rules": [{"answers": [{"headers": {"Xé": "v"}}]}]}`, false},
		{"control characters in a value", `{"rules": [{"answers": [{"headers": {"X-A": "a\u0001\u007fb"}}]}]}`, false},
		{"a line break in a value", `{"rules": [{"answers": [{"headers": {"X-A": "a\r\nSet-Cookie: x"}}]}]}`, false},
		{"one name in two cases", `{"rules": [{"answers": [{"headers": {"Retry-After": "1", "retry-after": "9"}}]}]}`, false},
		{"a method that is no token", `{"rules": [{"match": {"method": "GE T"}, "answers": [{}]}]}`, false},
		{"every token character, a tab and non-ASCII text", `{"rules": [{"answers": [{"headers": {"X-!#$%&'*+-.^_` + "`" + `|~09az": "a\tb é"}}]}]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadScript(strings.NewReader(tc.text))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var e *datafile.Error
			if !errors.As(err, &e) || !strings.HasPrefix(e.Field, "rules[0]") {
				t.Errorf("accepted as %+v (%v), want a *datafile.Error: not a header net/http writes", s.Rules, err)
			}
		})
	}
}

// TestAdminScript: the admin API sets, shows and removes a script; a bad
// one is refused with its line and changes nothing.
func TestAdminScript(t *testing.T) {
	h := NewHandler()
	srv := serveAll(t, h)
	call := func(method, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+"/_fgrl/"+"api/script", strings.NewReader(body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	good := "rules:\n  - match: {host: profile.xboxlive.com}\n    answers: [{status: 503}]\n"
	if code, body := call("PUT", good); code != 200 || !strings.Contains(body, `"status":503`) {
		t.Fatalf("PUT: %d %s", code, body)
	}
	if code, body := call("PUT", "rules:\n  - match: {}\n    answers: [{status: 9}]\n"); code != 400 || !strings.Contains(body, "line 3: rules[0].answers[0].status") {
		t.Errorf("a bad script: %d %s", code, body)
	}
	if r := do(t, h, "GET", profileURL, Token(xuid1, title1), ""); r.status != 503 {
		t.Errorf("after a refused script: %d, want the first script's 503", r.status)
	}
	if code, _ := call("DELETE", ""); code != 204 {
		t.Errorf("DELETE: %d", code)
	}
	// No script is a script of no rules, as Script says: before, a list
	// of none after DELETE, and in a new mock, was null.
	if code, body := call("GET", ""); code != 200 || body != `{"rules":[]}` {
		t.Errorf("GET after DELETE: %d %s, want {\"rules\":[]}", code, body)
	}
	if r := do(t, h, "GET", profileURL, Token(xuid1, title1), ""); r.status != 200 {
		t.Errorf("after DELETE: %d, want the mock's 200", r.status)
	}
}

// FuzzReadScript: any input is refused with a short *datafile.Error or read
// into a script that SetScript takes and that writes back as itself.
func FuzzReadScript(f *testing.F) {
	f.Add([]byte("rules:\n  - match: {pathPattern: \"/users/{user}\", query: {a: b}}\n    answers: [{status: 429, latency: 1s, body: {x: 1}}]\n"))
	f.Add([]byte(`{"rules": [{"match": {"path": "/x"}, "then": "mock", "answers": [{"fault": "hang"}, {"body": "text"}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadScript(bytes.NewReader(b))
		if err != nil {
			var fe *datafile.Error
			if !errors.As(err, &fe) || len(err.Error()) > 400 {
				t.Fatalf("error %T %q", err, err)
			}
			return
		}
		if err := NewHandler().SetScript(s); err != nil {
			t.Fatalf("a script ReadScript took: %v", err)
		}
	})
}
