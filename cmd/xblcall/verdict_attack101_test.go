package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/scaletest"
	"github.com/xblgo/fgrl/mock"
)

// attack101Entry is entry with extra request headers, a cookie, a body and a
// response body (for the secret tests).
func attack101Entry(at float64, url, auth string, status int, retryAfter string, extra map[string]any) map[string]any {
	e := entry(at, url, "", status, retryAfter)
	req := e["request"].(map[string]any)
	hdr := []map[string]string{}
	if auth != "" {
		hdr = append(hdr, map[string]string{"name": "Authorization", "value": auth})
	}
	req["headers"] = hdr
	for k, v := range extra {
		switch k {
		case "reqHeaders":
			req["headers"] = append(hdr, v.([]map[string]string)...)
		case "cookies":
			req["cookies"] = v
		case "postData":
			req["postData"] = v
		case "respContent":
			e["response"].(map[string]any)["content"] = v
		}
	}
	return e
}

// attack101ManyHAR: a trace past every listing bound in every combination:
// 130 users (each its own token) each with 80 failing and 40 warning
// throttled-calls findings, interleaved in time; 40 fallback hosts
// (host:<name> services) with the same pattern for one user; calls
// without a token to 30 hosts answered 429 429 200; 429s from 20 hosts not
// judged; one user polling four services for 900 s (call-frequency
// failures, polling and repeated-calls warnings).
func attack101ManyHAR(t *testing.T) string {
	t.Helper()
	var calls []map[string]any
	pattern := []int{429, 429, 200, 429, 200}
	for i := range 200 { // interleaved: user by user within each step
		for u := range 130 {
			ra := ""
			if pattern[i%5] == 429 {
				ra = "1"
			}
			calls = append(calls, entry(float64(2*i)+float64(u)/1000, "https://profile.xboxlive.com/users/me/profile/settings", strconv.Itoa(1000+u), pattern[i%5], ra))
		}
	}
	for h := range 40 {
		for i := range 100 {
			ra := ""
			if pattern[i%5] == 429 {
				ra = "1"
			}
			calls = append(calls, entry(float64(2*i)+float64(h)/1000, fmt.Sprintf("https://svc%d.xboxlive.com/x", h), "2", pattern[i%5], ra))
		}
	}
	tl := []int{429, 429, 200}
	for h := range 30 {
		for i := range 90 {
			calls = append(calls, entry(float64(2*i)+float64(h)/1000, fmt.Sprintf("https://svc%d.xboxlive.com/anon", h), "", tl[i%3], "1"))
		}
	}
	for h := range 20 {
		calls = append(calls, entry(float64(h), fmt.Sprintf("https://n%d.example.com/x", h), "3", 429, "1"))
	}
	for _, url := range []string{
		"https://profile.xboxlive.com/users/me/profile/settings",
		"https://social.xboxlive.com/users/me/people",
		"https://userpresence.xboxlive.com/users/xuid(1)",
		"https://achievements.xboxlive.com/users/xuid(1)/achievements",
	} {
		for i := range 900 {
			calls = append(calls, entry(float64(i), url, "9", 200, ""))
		}
	}
	return harOf(t, calls)
}

type attack101Rep struct {
	Verdict     string         `json:"verdict"`
	Fails       int            `json:"fails"`
	Warnings    int            `json:"warnings"`
	ByRule      map[string]int `json:"byRule"`
	FailsByRule map[string]int `json:"failsByRule"`
	Findings    []struct {
		Rule  string `json:"rule"`
		Level string `json:"level"`
	} `json:"findings"`
}

func attack101JSON(t *testing.T, args ...string) (int, attack101Rep) {
	t.Helper()
	code, out, errs := xblcall(t, append([]string{"analyze", "--json"}, args...)...)
	var rep attack101Rep
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: exit %d: %v: %.300s", code, err, errs)
	}
	return code, rep
}

// "its verdict and counts are of every finding, listed or not" (xblcall
// help analyze); "ByRule counts the findings of each rule, and FailsByRule
// the failing ones among them, listed or not" (analyze.Report); junit "a
// failure per failing finding listed, and one per rule for those counted
// but not listed" (help): every format of a trace past every bound (many
// users, many hosts, tokenless calls, many rules, failures and warnings
// interleaved) exits 1 and accounts for every failure.
func TestAttack101Verdict2EveryBoundEveryFormat(t *testing.T) {
	har := attack101ManyHAR(t)
	code, rep := attack101JSON(t, har)
	sumF, sumAll := 0, 0
	for _, n := range rep.FailsByRule {
		sumF += n
	}
	for _, n := range rep.ByRule {
		sumAll += n
	}
	t.Logf("json: exit %d %s %d fails %d warnings, %d listed, byRule %v failsByRule %v", code, rep.Verdict, rep.Fails, rep.Warnings, len(rep.Findings), rep.ByRule, rep.FailsByRule)
	if code != 1 || rep.Verdict != "red" || rep.Fails <= 5000 || sumF != rep.Fails || sumAll != rep.Fails+rep.Warnings {
		t.Fatalf("--json: exit %d verdict %s fails %d (failsByRule sum %d) warnings %d (byRule sum %d)", code, rep.Verdict, rep.Fails, sumF, rep.Warnings, sumAll)
	}

	code, text, _ := xblcall(t, "analyze", har)
	if want := fmt.Sprintf("verdict RED: %d failures, %d warnings", rep.Fails, rep.Warnings); code != 1 || !strings.Contains(text, want) {
		i := strings.Index(text, "verdict")
		t.Errorf("text: exit %d, want 1 and %q; got %q", code, want, text[max(i, 0):])
	}

	code, ju, _ := xblcall(t, "analyze", "--format", "junit", har)
	var doc attack94JUnitDoc
	if err := xml.Unmarshal([]byte(ju), &doc); err != nil {
		t.Fatal(err)
	}
	fails, warns, listedF, perRule := 0, 0, 0, 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				if n, f, ok := attack94More(c.Failure.Message); ok {
					fails, warns, perRule = fails+f, warns+n-f, perRule+1
				} else {
					fails++
					listedF++
				}
			case c.Skipped != nil:
				if n, f, ok := attack94More(c.Skipped.Message); ok {
					fails, warns = fails+f, warns+n-f
				} else {
					warns++
				}
			}
		}
	}
	if code != 1 || fails != rep.Fails || warns != rep.Warnings || doc.Failures != listedF+perRule {
		t.Errorf("junit: exit %d, counts %d/%d, failures attr %d (listed %d + per rule %d); want 1, %d/%d", code, fails, warns, doc.Failures, listedF, perRule, rep.Fails, rep.Warnings)
	}

	code, sa, _ := xblcall(t, "analyze", "--format", "sarif", har)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID     string         `json:"ruleId"`
				Level      string         `json:"level"`
				Properties map[string]any `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sa), &log); err != nil || len(log.Runs) == 0 {
		t.Fatal(err)
	}
	fails, warns = 0, 0
	for _, r := range log.Runs[0].Results {
		if n, ok := r.Properties["findings"].(float64); ok {
			f, _ := r.Properties["fails"].(float64)
			fails, warns = fails+int(f), warns+int(n)-int(f)
		} else if r.Level == "error" {
			fails++
		} else {
			warns++
		}
	}
	if code != 1 || fails != rep.Fails || warns != rep.Warnings {
		t.Errorf("sarif: exit %d counts %d/%d; want 1, %d/%d", code, fails, warns, rep.Fails, rep.Warnings)
	}

	code, ht, _ := xblcall(t, "analyze", "--format", "html", har)
	f := strings.Count(ht, `<tr class="fail" data-level="fail"`)
	w := strings.Count(ht, `<tr class="warn" data-level="warn"`)
	if i := strings.Index(ht, `id="unlisted"`); i >= 0 {
		if n, uf, ok := attack94More(ht[i:]); ok {
			f, w = f+uf, w+n-uf
		}
	}
	if code != 1 || f != rep.Fails || w != rep.Warnings {
		t.Errorf("html: exit %d counts %d/%d; want 1, %d/%d", code, f, w, rep.Fails, rep.Warnings)
	}

	// --what-if with a limits file: the traces' verdict under those limits,
	// unlisted ones counted.
	lim := filepath.Join(t.TempDir(), "limits.json")
	b, _ := json.Marshal(map[string]any{
		"revision": "atk", "source": "atk",
		"fallback": map[string]any{"service": "unknown", "burst": 10, "sustain": 30},
		"rules": []any{map[string]any{"service": "profile", "hosts": []string{"profile.xboxlive.com"},
			"paths": []string{"/users/"}, "burst": 10, "sustain": 30, "certification": 300}},
	})
	os.WriteFile(lim, b, 0o644)
	lcode, lrep := attack101JSON(t, "--limits", lim, har)
	code, js, errs := xblcall(t, "analyze", "--what-if", "--json", "--limits", lim, har)
	var res struct {
		Before attack101Rep `json:"before"`
		After  attack101Rep `json:"after"`
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatalf("--what-if: exit %d %v %.300s", code, err, errs)
	}
	t.Logf("--limits: %d %s %d/%d; what-if before %s %d/%d after %s %d/%d (%d listed)", lcode, lrep.Verdict, lrep.Fails, lrep.Warnings,
		res.Before.Verdict, res.Before.Fails, res.Before.Warnings, res.After.Verdict, res.After.Fails, res.After.Warnings, len(res.After.Findings))
	if code != lcode || res.Before.Fails != lrep.Fails || res.Before.Warnings != lrep.Warnings || res.Before.Verdict != lrep.Verdict {
		t.Errorf("--what-if --limits: exit %d before %s %d/%d; analyze --limits: exit %d %s %d/%d", code, res.Before.Verdict, res.Before.Fails, res.Before.Warnings, lcode, lrep.Verdict, lrep.Fails, lrep.Warnings)
	}
	sa2 := 0
	for _, n := range res.After.FailsByRule {
		sa2 += n
	}
	if sa2 != res.After.Fails || (res.After.Fails > 0) != (res.After.Verdict == "red") {
		t.Errorf("--what-if after: %s, %d fails, failsByRule sum %d", res.After.Verdict, res.After.Fails, sa2)
	}
	code, wt, _ := xblcall(t, "analyze", "--what-if", "--limits", lim, har)
	if want := fmt.Sprintf("red in the traces (%d failing, %d warnings)", lrep.Fails, lrep.Warnings); code != lcode || !strings.Contains(wt, want) {
		t.Errorf("--what-if text: exit %d, want %d and %q", code, lcode, want)
	}
}

// attack101GreenHAR is a small green trace, as bytes, and the offset its last
// entry starts at.
func attack101GreenHAR(t *testing.T) ([]byte, int) {
	t.Helper()
	calls := []map[string]any{
		entry(0, "https://social.xboxlive.com/users/me/people", "1", 200, ""),
		entry(30, "https://social.xboxlive.com/users/me/people", "1", 200, ""),
		entry(60, "https://profile.xboxlive.com/users/me/profile/settings", "1", 200, ""),
	}
	b, _ := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "entries": calls}})
	last, _ := json.Marshal(calls[2])
	i := bytes.LastIndex(b, last[:20])
	if i < 0 {
		t.Fatal("no last entry")
	}
	return b, i
}

// help analyze: "incomplete: a trace was not read whole: a file cut short,
// or not valid past some entry ... Exit status 2"; "Exit status 2 is also
// a usage or input error: no trace, a file that is no trace, or traces
// holding no calls": a green trace cut at every byte offset of its last
// entry (and of its closing), or with one bad byte in the middle, is never
// green/exit 0.
func TestAttack101Verdict2CutTraceNeverGreen(t *testing.T) {
	b, start := attack101GreenHAR(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "t.har")
	os.WriteFile(p, b, 0o644)
	if code, out, _ := xblcall(t, "analyze", p); code != 0 || !strings.Contains(out, "GREEN") {
		t.Fatalf("whole trace: exit %d %.200s", code, out)
	}
	bad := 0
	for cut := start; cut < len(b); cut++ {
		os.WriteFile(p, b[:cut], 0o644)
		code, out, _ := xblcall(t, "analyze", p)
		if code == 0 || strings.Contains(out, "GREEN") {
			if bad < 5 {
				t.Errorf("cut at %d of %d (%q): exit %d, %.200s", cut, len(b), b[max(cut-15, 0):cut], code, out)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d cuts read as whole", bad)
	}
	// One bad byte in the middle of the trace.
	mid := len(b) / 2
	for _, c := range []byte{0, '"', '{', ']', '}', ',', 0xff, '\n'} {
		for off := mid - 40; off < mid+40; off++ {
			m := bytes.Clone(b)
			m[off] = c
			if bytes.Equal(m, b) {
				continue
			}
			os.WriteFile(p, m, 0o644)
			code, out, _ := xblcall(t, "analyze", p)
			var v struct{ Log json.RawMessage }
			valid := json.Unmarshal(m, &v) == nil
			if !valid && (code == 0 || strings.Contains(out, "GREEN")) {
				t.Errorf("byte %d set to %q (%q): exit %d %.200s", off, c, m[off-10:off+10], code, out)
			}
		}
	}
}

// help analyze: "Exit status 2 is also a usage or input error: no trace, a
// file that is no trace, or traces holding no calls": an empty file,
// /dev/null, an empty directory, a directory of a cut trace, and a FIFO
// whose writer sends a cut trace: never exit 0.
func TestAttack101Verdict2UnreadableInputsNotGreen(t *testing.T) {
	b, start := attack101GreenHAR(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.har")
	os.WriteFile(empty, nil, 0o644)
	emptyDir := filepath.Join(dir, "ed")
	os.Mkdir(emptyDir, 0o755)
	cutDir := filepath.Join(dir, "cd")
	os.Mkdir(cutDir, 0o755)
	os.WriteFile(filepath.Join(cutDir, "a.har"), b[:start+10], 0o644)
	mixDir := filepath.Join(dir, "md")
	os.Mkdir(mixDir, 0o755)
	os.WriteFile(filepath.Join(mixDir, "a.har"), b, 0o644)
	os.WriteFile(filepath.Join(mixDir, "b.har"), b[:start+10], 0o644)
	os.WriteFile(filepath.Join(mixDir, "c.har"), nil, 0o644)
	for name, args := range map[string][]string{
		"empty file":      {empty},
		"/dev/null":       {"/dev/null"},
		"empty dir":       {emptyDir},
		"dir of cut":      {cutDir},
		"dir good+cut":    {mixDir},
		"good + empty":    {filepath.Join(mixDir, "a.har"), empty},
		"good + dir":      {filepath.Join(mixDir, "a.har"), emptyDir},
		"good + devnull":  {filepath.Join(mixDir, "a.har"), "/dev/null"},
		"json empty file": {"--json", empty},
		"junit good+cut":  {"--format", "junit", mixDir},
		"sarif good+cut":  {"--format", "sarif", mixDir},
		"html good+cut":   {"--format", "html", mixDir},
	} {
		code, out, errs := xblcall(t, append([]string{"analyze"}, args...)...)
		if code == 0 || strings.Contains(out, "GREEN") {
			t.Errorf("%s: exit %d: %.200s %.200s", name, code, out, errs)
		}
	}
	for _, data := range [][]byte{b[:start+10], nil, b[:len(b)-1]} {
		fifo := filepath.Join(t.TempDir(), "p.har")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.Write(data)
			f.Close()
		}()
		code, out, errs := xblcall(t, "analyze", fifo)
		wg.Wait()
		if code == 0 || strings.Contains(out, "GREEN") {
			t.Errorf("FIFO of %d bytes: exit %d: %.200s %.200s", len(data), code, out, errs)
		}
	}
}

// attack101RenewServer is a service behind the mock (which signs in): it answers
// the first token it sees 401, and any other (the renewed one) a redirect
// whose Location echoes it (mode "redirect") or a 500 echoing it in a
// header and the body (mode "body"). It records every token it saw.
type attack101RenewServer struct {
	mu    sync.Mutex
	seen  map[string]bool
	first string
	mode  string
	srv   *httptest.Server
}

func attack101StartRenew(t *testing.T) *attack101RenewServer {
	t.Helper()
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBLCALL_MOCK", "")
	h := mock.NewHandler()
	s := &attack101RenewServer{seen: map[string]bool{}, mode: "redirect"}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "atk.xboxlive.com" {
			h.ServeHTTP(w, r)
			return
		}
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), ";")
		s.mu.Lock()
		if s.first == "" {
			s.first = tok
		}
		s.seen[tok] = true
		isFirst, m := tok == s.first, s.mode
		s.mu.Unlock()
		if isFirst {
			w.Header().Set("WWW-Authenticate", "XBL3.0 x="+tok)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"bad token %s"}`, tok)
			return
		}
		if m == "redirect" {
			http.Redirect(w, r, "/r/"+tok+"?t="+tok, http.StatusFound)
			return
		}
		w.Header().Set("X-Echo", tok)
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":"token %s not allowed"}`, tok)
	}))
	t.Cleanup(s.srv.Close)
	if code, out, errs := xblcall(t, "login", "--via", s.srv.URL); code != 0 {
		t.Fatalf("login: exit %d %s %s", code, out, errs)
	}
	return s
}

// check runs call with args against the service and reports any token it
// saw that the output holds.
func (s *attack101RenewServer) check(t *testing.T, mode, name string, args ...string) {
	t.Helper()
	s.mu.Lock()
	s.first, s.mode = "", mode
	clear(s.seen)
	s.mu.Unlock()
	code, out, errs := xblcall(t, append(append([]string{"call", "--via", s.srv.URL, "--retry-window", "2s"}, args...), "https://atk.xboxlive.com/users/me")...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) < 2 {
		t.Errorf("%s %s: exit %d, only %d tokens seen (no renewal): %.300s %.300s", mode, name, code, len(s.seen), out, errs)
	}
	for tok := range s.seen {
		if len(tok) > 8 && strings.Contains(out+errs, tok) {
			kind := "renewed"
			if tok == s.first {
				kind = "first"
			}
			i := strings.Index(out+errs, tok)
			t.Errorf("%s %s: exit %d: the %s token printed: ...%q...", mode, name, code, kind, (out + errs)[max(i-200, 0):min(i+len(tok)+20, len(out+errs))])
		}
	}
}

// held: call --help: "the stored sign-in (xblcall login), renewed as it
// expires ... Tokens are never printed"; clientError: "the credentials req
// carried (its token, whatever its source) taken out wherever its text
// tells them: net/http's error quotes the last redirect's Location, and a
// service may redirect to a URL that echoes the token". The service
// answers the stored sign-in's token 401; the transport signs in again;
// the service then redirects to a Location echoing the renewed token (in
// path and query), or answers 500 echoing it in a header and the body:
// the printed error, -i, -n's summary and -n --json hold neither token.
func TestAttack101Verdict2RenewedTokenNotPrinted(t *testing.T) {
	s := attack101StartRenew(t)
	for _, m := range []string{"redirect", "body"} {
		s.check(t, m, "plain")
		s.check(t, m, "-i", "-i")
		s.check(t, m, "-n", "-n", "3")
		s.check(t, m, "-n --json", "-n", "3", "--json")
	}
}

// BREAK. call --help: "Tokens are never printed, even with -v";
// RELIABILITY.md (attack 59): "`call -v` following a redirect whose
// `Location` echoes the token in its path | the next request line printed
// it | the trace's request line is scrubbed of the credentials too".
//
// The same redirect after a 401 and the stored sign-in's renewal: -v's
// request line for the redirect ("> GET https://atk.xboxlive.com/r/<renewed
// token>?t=<renewed token>") prints the renewed token whole (single call
// and -n -v alike): the trace scrubs the token the call started with, not
// the one the transport renewed it to.
func TestAttack101Verdict2RenewedTokenVerboseRedirect(t *testing.T) {
	s := attack101StartRenew(t)
	s.check(t, "redirect", "-v", "-v")
	s.check(t, "redirect", "-n -v", "-n", "2", "-v")
	s.check(t, "body", "-v", "-v")
}

// held: analyze.Finding.URL: "its method, host and path as judged
// (decoded), never its query"; tokens are never printed (README): tokens in
// a trace's entries (Authorization, Signature, an x-xbl-... header, URL
// queries named access_token and x-xbl-token, cookies, request and answer
// bodies) appear in no analyze output format (text, -v, JSON, JUnit,
// SARIF, HTML, --what-if text/JSON/HTML). Noticed, not judged a break: a
// token written as a URL path segment or a host name label is quoted in
// the findings (the URL promise names the path; RELIABILITY.md notes "no
// promise covers paths").
func TestAttack101Verdict2TraceTokensInNoFormat(t *testing.T) {
	const (
		authTok = "eyJhbGciOiJSUzI1NiJ9AUTHSECRETaaaaaaaaaaaaaaaaaaaa0123"
		sigTok  = "AAAAAQHSIGSECRETbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb="
		xblTok  = "eyJhbGciOiJSUzI1NiJ9XBLHDRSECRETccccccccccccccccccc0123"
		urlTok  = "eyJhbGciOiJSUzI1NiJ9URLPATHSECRETdddddddddddddddddd0123"
		qTok    = "eyJhbGciOiJSUzI1NiJ9QUERYSECRETeeeeeeeeeeeeeeeeeeee0123"
		ckTok   = "eyJhbGciOiJSUzI1NiJ9COOKIESECRETffffffffffffffffffff0123"
		bodyTok = "eyJhbGciOiJSUzI1NiJ9BODYSECRETgggggggggggggggggggggg0123"
		hostTok = "eyjhbgcioijsuzi1nij9hostsecrethhhhhhhhhhhhhhhhhhh0123"
	)
	secrets := []string{authTok, sigTok, xblTok, qTok, ckTok, bodyTok}
	extra := map[string]any{
		"reqHeaders": []map[string]string{
			{"name": "Signature", "value": sigTok},
			{"name": "x-xbl-contract-version", "value": "2"},
			{"name": "x-xbl-device-token", "value": xblTok},
			{"name": "Cookie", "value": "s=" + ckTok},
		},
		"cookies":     []map[string]string{{"name": "s", "value": ckTok}},
		"postData":    map[string]any{"mimeType": "application/json", "text": `{"token":"` + bodyTok + `"}`},
		"respContent": map[string]any{"size": 10, "mimeType": "application/json", "text": `{"token":"` + bodyTok + `"}`},
	}
	var calls []map[string]any
	urls := []string{
		"https://profile.xboxlive.com/users/me/profile/settings/" + urlTok + "?access_token=" + qTok,
		"https://social.xboxlive.com/users/" + urlTok + "/people?x-xbl-token=" + qTok,
		"https://" + hostTok + ".xboxlive.com/x/" + urlTok,
		"https://notjudged.example.com/" + urlTok + "?t=" + qTok,
	}
	for i := range 60 {
		for j, u := range urls {
			st, ra := 429, "1"
			if i%3 == 2 {
				st, ra = 200, ""
			}
			auth := "XBL3.0 x=77;" + authTok
			if j == 1 && i%2 == 0 {
				auth = ""
			}
			calls = append(calls, attack101Entry(float64(i)+float64(j)/10, u, auth, st, ra, extra))
		}
	}
	har := harOf(t, calls)
	htmlFile := filepath.Join(t.TempDir(), "r.html")
	for _, args := range [][]string{
		{}, {"-v"}, {"--json"}, {"--format", "junit"}, {"--format", "sarif"}, {"--format", "html"},
		{"--html", htmlFile}, {"--what-if"}, {"--what-if", "--json"}, {"--what-if", "--html", htmlFile},
	} {
		code, out, errs := xblcall(t, append(append([]string{"analyze"}, args...), har)...)
		side, _ := os.ReadFile(htmlFile)
		os.Remove(htmlFile)
		all := out + errs + string(side)
		if code != 1 {
			t.Logf("%v: exit %d", args, code)
		}
		for _, s := range secrets {
			low := strings.ToLower(all)
			if strings.Contains(low, strings.ToLower(s)) || strings.Contains(low, strings.ToLower(s[18:40])) {
				i := strings.Index(low, strings.ToLower(s[18:40]))
				t.Errorf("%v: secret %.28s... in the output: %q", args, s[18:], all[max(i-120, 0):min(i+60, len(all))])
			}
		}
	}
}

// Superlinear: analyze of a trace of 100k entries, every one failing,
// against 10k: the time grows near 10x (the package's linear-time tests
// allow 25x).
func TestAttack101Verdict2LinearAllFailing(t *testing.T) {
	write := func(n int) string {
		var b bytes.Buffer
		b.WriteString(`{"log":{"version":"1.2","entries":[`)
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			// user i/6: 429 429 429 429 429 429, 1 s apart, per user
			u := i / 6
			fmt.Fprintf(&b, `{"startedDateTime":%q,"request":{"method":"GET","url":"https://profile.xboxlive.com/users/me/profile/settings","headers":[{"name":"Authorization","value":"XBL3.0 x=%d;t"}]},"response":{"status":429,"headers":[{"name":"Retry-After","value":"60"}]}}`,
				start.Add(time.Duration(i%6)*time.Second+time.Duration(u)*time.Millisecond).Format(time.RFC3339Nano), u)
		}
		b.WriteString("]}}")
		p := filepath.Join(t.TempDir(), "t.har")
		os.WriteFile(p, b.Bytes(), 0o644)
		return p
	}
	small, large := write(10_000), write(100_000)
	code, rep := attack101JSON(t, small)
	t.Logf("small: exit %d %s %d fails", code, rep.Verdict, rep.Fails)
	code, rep = attack101JSON(t, large)
	t.Logf("large: exit %d %s %d fails %d warnings", code, rep.Verdict, rep.Fails, rep.Warnings)
	if code != 1 || rep.Fails < 100_000/6 {
		t.Errorf("large: exit %d, %d fails; want 1 and a failure per user", code, rep.Fails)
	}
	g := scaletest.Measure(1, func() { xblcall(t, "analyze", "--json", small) }, func() { xblcall(t, "analyze", "--json", large) })
	t.Logf("growth %s ratio %.1f", g, g.Ratio())
	if g.Ratio() > 25 {
		t.Errorf("10x the entries took %.1fx the time", g.Ratio())
	}
}

// BREAK. analyze package doc: "Calls are grouped per user (the
// Authorization header's userhash) ... Calls without an Authorization
// header (as Chrome exports a HAR by default) are a no-token finding of
// their own, not a user: they count against no user's limits"; help
// analyze: "red: a finding fails: a 300 s span reaches the rule's
// certification figure".
//
// One user polling profile once a second for 900 s is red (call-frequency
// failures) when its Authorization is "XBL3.0 x=9;t". The same calls
// with an Authorization header whose userhash is not all digits
// ("XBL3.0 x=abc;t", which xblauth.Parse accepts: "Parse takes any
// userhash without a space or ';'") are read as calls without an
// Authorization header: judged as tokenless, against no user's limits, no
// call-frequency failure, and the verdict is not red.
func TestAttack101Verdict2NonDigitUserhashFailsOpen(t *testing.T) {
	for _, uh := range []string{"9", "abc", "9a", "123456789012345678901"} {
		var calls []map[string]any
		for i := range 900 {
			calls = append(calls, entry(float64(i), "https://profile.xboxlive.com/users/me/profile/settings", uh, 200, ""))
		}
		code, rep := attack101JSON(t, harOf(t, calls))
		t.Logf("userhash %q: exit %d %s fails %d byRule %v", uh, code, rep.Verdict, rep.Fails, rep.ByRule)
		if code != 1 || rep.Verdict != "red" || rep.FailsByRule["call-frequency"] == 0 {
			t.Errorf("userhash %q (Authorization \"XBL3.0 x=%s;t\"): exit %d, verdict %s, call-frequency failures %d, byRule %v; want red as for x=9",
				uh, uh, code, rep.Verdict, rep.FailsByRule["call-frequency"], rep.ByRule)
		}
	}
}
