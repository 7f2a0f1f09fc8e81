package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
)

// The admin token of check and mock ($XBLCALL_ADMIN_TOKEN, --admin-token)
// is printed nowhere (RELIABILITY.md, "The admin token out of the process
// list": "Both now take it from $XBLCALL_ADMIN_TOKEN ... and print it
// nowhere"; check.go: "a server that echoes the request must not print
// the admin token").

// attack105Admin is an admin token as the mock makes one (rand.Text: 26 base32
// characters).
const attack105Admin = "ATKADMINQ7XK2MZP4RVN6WBYCH"

// attack105Shows reports where out shows the admin token: whole, or any 10
// characters of it in a row (a prefix cut at a print bound).
func attack105Shows(out, tok string) string {
	if strings.Contains(out, tok) {
		return "the whole token"
	}
	for i := 0; i+10 <= len(tok); i++ {
		if strings.Contains(out, tok[i:i+10]) {
			return fmt.Sprintf("the %d characters from offset %d of it (%s...)", 10, i, tok[i:i+10])
		}
	}
	return ""
}

// An echoing server (check.go's own case) that puts what it was sent into
// the verdict's report: check's doubt quotes the verdict unredacted.
// Broke before the fix: doubt quoted the verdict unredacted.
func TestAttack105CheckCertifyVerdictEchoesToken(t *testing.T) {
	for _, tok := range []string{attack105Admin, "ATKSHORT12345678"} {
		attack105CheckVerdictEcho(t, tok)
	}
}

func attack105CheckVerdictEcho(t *testing.T, attack105Admin string) {
	setenv(t, adminTokenEnv, attack105Admin)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		b, _ := json.Marshal(map[string]any{"ok": true, "failures": []string{}, "report": map[string]any{"verdict": tok, "calls": 1}})
		w.Write(b)
	}))
	defer srv.Close()
	for _, args := range [][]string{{"--certify"}, {"--certify", "--json"}} {
		code, out, errs := xblcall(t, append([]string{"check", "--mock", srv.URL}, args...)...)
		if where := attack105Shows(out+errs, attack105Admin); where != "" {
			t.Errorf("RELIABILITY.md \"The admin token out of the process list\": check \"print[s] it nowhere\"; check.go: \"a server that echoes the request must not print the admin token\" — check %v (exit %d, a %d-character token) printed %s: stdout %d bytes, stderr: %q",
				args, code, len(attack105Admin), where, len(out), strings.ReplaceAll(errs, attack105Admin, "<ADMIN TOKEN>"))
		}
		if code != 1 {
			t.Errorf("check %v (a %d-character token): exit %d, want 1", args, len(attack105Admin), code)
		}
	}
}

// held: an echoing server answering 401/500/422/200 with the token in
// every form Secrets.Add lists (as sent, upper/lower case, URL-escaped,
// JSON \u-escaped) in the body, the failures and a non-JSON answer, under
// plain and --json; a token with a newline, a CR, a NUL, an ESC, a tab
// (net/http refuses it and names no value); an unreachable mock (a closed
// port) and a mock URL that is no URL, the token in the env var, the
// flag and ?token=; an empty $XBLCALL_ADMIN_TOKEN sends no Authorization.
func TestAttack105CheckTokenNeverPrinted(t *testing.T) {
	var mu sync.Mutex
	var got []string
	mode := "json-failure"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		mu.Lock()
		got = append(got, a)
		m := mode
		mu.Unlock()
		tok := strings.TrimPrefix(a, "Bearer ")
		if tok == "" {
			tok = r.URL.Query().Get("token")
		}
		forms := []string{tok, strings.ToLower(tok), url.QueryEscape(tok + "/+="), attack105UEscape(tok)}
		switch m {
		case "json-failure":
			b, _ := json.Marshal(map[string]any{"ok": false, "failures": forms})
			w.WriteHeader(422)
			w.Write(b)
		case "401":
			w.WriteHeader(401)
			io.WriteString(w, "refused "+strings.Join(forms, " "))
		case "500":
			w.WriteHeader(500)
			b, _ := json.Marshal(map[string]any{"error": forms})
			w.Write(b)
		case "ok-echo": // a pass whose failures list is empty and an extra field echoes
			b, _ := json.Marshal(map[string]any{"ok": true, "failures": []string{}, "echo": forms})
			w.Write(b)
		}
	}))
	defer srv.Close()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + closed.Addr().String()
	closed.Close()
	for _, m := range []string{"json-failure", "401", "500", "ok-echo"} {
		mu.Lock()
		mode = m
		mu.Unlock()
		for _, c := range []struct {
			env  string
			args []string
		}{
			{attack105Admin, []string{"--mock", srv.URL, "--no-429"}},
			{attack105Admin, []string{"--mock", srv.URL, "--no-429", "--json"}},
			{"", []string{"--mock", srv.URL, "--no-429", "--admin-token", attack105Admin}},
			{"", []string{"--mock", srv.URL + "/?token=" + attack105Admin, "--certify", "--json"}},
		} {
			setenv(t, adminTokenEnv, c.env)
			code, out, errs := xblcall(t, append([]string{"check"}, c.args...)...)
			if where := attack105Shows(out+errs, attack105Admin); where != "" || code != 1 && m != "ok-echo" {
				t.Errorf("check against a %s echo, env set %v, %d args: exit %d, printed %q", m, c.env != "", len(c.args), code, where)
			}
		}
	}
	for _, bad := range []string{"ATKADMIN\nQ7XK2MZP4RVN6WBYCH", "ATKADMIN\rQ7XK2MZP4RVN6WBYCH", "ATKADMIN\x00Q7XK2MZP4RVN6WBYCH", "ATKADMIN\x1b[2JQ7XK2MZP4RVN6WBYCH", "ATKADMIN\tQ7XK2MZP4RVN6WBYCH\n"} {
		for _, mockURL := range []string{srv.URL, deadURL, "http://[::1/"} {
			setenv(t, adminTokenEnv, bad)
			code, out, errs := xblcall(t, "check", "--mock", mockURL, "--no-429")
			if strings.Contains(out+errs, "Q7XK2MZP4RVN6WBYCH") || strings.Contains(out+errs, "ATKADMIN") || code == 0 {
				t.Errorf("check --mock %s with a token holding a control character (env): exit %d, the token's text printed", mockURL, code)
			}
			setenv(t, adminTokenEnv, "")
			code, out, errs = xblcall(t, "check", "--mock", mockURL, "--no-429", "--admin-token", bad)
			if strings.Contains(out+errs, "Q7XK2MZP4RVN6WBYCH") || strings.Contains(out+errs, "ATKADMIN") || code == 0 {
				t.Errorf("check --mock %s with a token holding a control character (flag): exit %d, the token's text printed", mockURL, code)
			}
		}
	}
	for _, mockURL := range []string{deadURL, deadURL + "/x?token=" + attack105Admin, "http://user:" + attack105Admin + "@" + strings.TrimPrefix(deadURL, "http://")} {
		setenv(t, adminTokenEnv, attack105Admin)
		code, out, errs := xblcall(t, "check", "--mock", mockURL, "--no-429", "--json")
		if where := attack105Shows(out+errs, attack105Admin); where != "" || code == 0 {
			t.Errorf("check against an unreachable mock (%d-byte URL): exit %d, printed %q", len(mockURL), code, where)
		}
	}
	// An empty variable is no token: no Authorization is sent.
	mu.Lock()
	got, mode = nil, "json-failure"
	mu.Unlock()
	setenv(t, adminTokenEnv, "")
	xblcall(t, "check", "--mock", srv.URL, "--no-429")
	mu.Lock()
	if len(got) != 1 || got[0] != "" {
		t.Errorf("check with XBLCALL_ADMIN_TOKEN empty sent Authorization %q, want none", got)
	}
	mu.Unlock()
}

func attack105UEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(`\u00`)
		b.WriteString(strings.ToLower(string("0123456789abcdef"[r>>4])) + string("0123456789abcdef"[r&15]))
	}
	return b.String()
}

// held: the mock started with $XBLCALL_ADMIN_TOKEN (text and JSON request
// logs; and set empty: no token, no banner line) prints it in neither its banner nor its request log, nor keeps it
// in calls.har or the admin API's calls, when clients send it as
// ?token=, as Authorization: Bearer to the admin endpoints and to a
// service host, and in a service call's query under several names.
func TestAttack105MockTokenNotInLogOrRecord(t *testing.T) {
	for _, format := range []string{"text", "json", "empty"} {
		setenv(t, adminTokenEnv, attack105Admin)
		if format == "empty" {
			setenv(t, adminTokenEnv, "")
		}
		ctx, cancel := context.WithCancel(context.Background())
		out := &syncBuffer{}
		var errb syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"mock", "--addr", "127.0.0.1:0", "--log-format", strings.Replace(format, "empty", "text", 1)}, out, &errb, withTestEnv(t))
		}()
		re := regexp.MustCompile(`serving Xbox services at http://([0-9.:]+) `)
		var addr string
		for deadline := time.Now().Add(10 * time.Second); addr == ""; {
			if m := re.FindStringSubmatch(out.String()); m != nil && strings.Contains(out.String(), "metrics http") {
				addr = m[1]
				break
			}
			select {
			case code := <-done:
				t.Fatalf("mock: exit %d: %s", code, errb.String())
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("the mock did not start")
			}
		}
		if given := strings.Contains(out.String(), "admin token"); given != (format != "empty") {
			t.Errorf("mock with $XBLCALL_ADMIN_TOKEN %s: its banner's admin token line shown %v: %q", format, given, out.String())
		}
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
		send := func(method, path, host, auth string) {
			req, _ := http.NewRequest(method, "http://"+addr+path, nil)
			if host != "" {
				req.Host = host
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		for _, p := range []string{"/_fgrl/?token=", "/_fgrl/api/keys?token=", "/metrics?token=", "/_fgrl/api/calls.har?token="} {
			send("GET", p+attack105Admin, "", "")
			send("GET", p+"x", "", "Bearer "+attack105Admin)
		}
		send("GET", "/users/me/profile/settings?settings=Gamertag&token="+attack105Admin+"&admin_token="+attack105Admin, "profile.xboxlive.com", "Bearer "+attack105Admin)
		send("GET", "/users/me/profile/settings?settings=Gamertag", "profile.xboxlive.com", "XBL3.0 x=1;"+attack105Admin)
		send("POST", "/_fgrl/api/check?token="+attack105Admin, "", "Bearer "+attack105Admin)
		var record strings.Builder
		for _, p := range []string{"/_fgrl/api/calls.har", "/_fgrl/api/calls"} {
			resp, err := hc.Get("http://" + addr + p)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			record.Write(b)
		}
		time.Sleep(100 * time.Millisecond) // the last request's log line
		cancel()
		<-done
		if where := attack105Shows(out.String()+errb.String(), attack105Admin); where != "" {
			t.Errorf("mock --help: \"one given is never printed\"; RELIABILITY.md: \"print it nowhere\" — mock (--log-format %s) printed %s of $XBLCALL_ADMIN_TOKEN", format, where)
		}
		if where := attack105Shows(record.String(), attack105Admin); where != "" {
			t.Errorf("RELIABILITY.md: \"print it nowhere\"; mock.newCall: \"It keeps no secret\" — the mock's record (calls.har, /_fgrl/api/calls) holds %s of the admin token", where)
		}
	}
}

// held: the admin endpoints (as the mock command builds them) refusing a
// peer off this machine that sends a wrong token (one character off the
// right one) as Bearer and as ?token=, and admitting the right one: the
// refusal's answer and its log line (text and JSON) hold neither token.
func TestAttack105AdminRefusalLogsNoToken(t *testing.T) {
	h, err := mock.New(mock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	wrong := attack105Admin[:len(attack105Admin)-1] + "Z"
	for _, json := range []bool{false, true} {
		var logb bytes.Buffer
		var lh slog.Handler = slog.NewTextHandler(&logb, nil)
		if json {
			lh = slog.NewJSONHandler(&logb, nil)
		}
		handler := admin.WithServices(h, admin.Config{Token: attack105Admin, Logger: slog.New(lh)})
		var answers strings.Builder
		for _, c := range []struct{ target, auth string }{
			{"/_fgrl/api/keys?token=" + wrong, ""},
			{"/_fgrl/api/keys", "Bearer " + wrong},
			{"/_fgrl/api/keys", "Bearer " + wrong + "\t"},
			{"/_fgrl/api/calls.har?token=" + wrong + "&token=" + attack105Admin, ""},
			{"/metrics?token=" + wrong, "Basic " + wrong},
			{"/_fgrl/?token=" + attack105Admin, ""},
		} {
			req := httptest.NewRequest("GET", "http://127.0.0.1:8080"+c.target, nil) // RemoteAddr 192.0.2.1: off this machine
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != 401 && rec.Code != 403 && !strings.Contains(c.target, "/_fgrl/?") {
				t.Errorf("%s with a wrong token answered %d", c.target, rec.Code)
			}
			if !strings.Contains(c.target, "/_fgrl/?") {
				answers.WriteString(rec.Body.String())
			}
		}
		for _, tok := range []string{attack105Admin, wrong} {
			if where := attack105Shows(logb.String()+answers.String(), tok); where != "" {
				t.Errorf("admin.Config Logger: \"logs each refused request at level Warn, with its peer\" — the log or a refusal holds %s of a token", where)
			}
		}
		if !strings.Contains(logb.String(), "admin request refused") {
			t.Errorf("no refusal logged: %q", logb.String())
		}
	}
}

// An echoing server that writes the token in its JSON answer with every
// character \u-escaped (valid JSON that any reader decodes to the token):
// check --json prints the answer as it came, and a JSON reader of check's
// output (jq) gets the token back.
// Broke before the fix: --json printed the answer as it came.
func TestAttack105CheckJSONEscapedEcho(t *testing.T) {
	setenv(t, adminTokenEnv, attack105Admin)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		var esc strings.Builder
		for _, c := range tok {
			fmt.Fprintf(&esc, `\u%04x`, c)
		}
		w.WriteHeader(422)
		io.WriteString(w, `{"ok":false,"failures":["refused `+esc.String()+`"]}`)
	}))
	defer srv.Close()
	code, out, errs := xblcall(t, "check", "--mock", srv.URL, "--no-429", "--json")
	var v struct{ Failures []string }
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("check --json printed no JSON (exit %d): %v", code, err)
	}
	if where := attack105Shows(strings.Join(v.Failures, "\n")+errs, attack105Admin); where != "" {
		t.Errorf("RELIABILITY.md \"The admin token out of the process list\": check \"print[s] it nowhere\"; check.go: \"redact is s without the admin token ... in any form a server may echo it (xblauth.Secrets: as given, URL- or JSON-escaped)\" — check --json (exit %d) printed the token \\u-escaped: its JSON output decodes to %s", code, where)
	}
}
