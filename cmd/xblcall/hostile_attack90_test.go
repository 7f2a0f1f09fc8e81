package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack90Evil holds what a terminal must never receive raw: a screen clear, an
// OSC 52 clipboard write ended by BEL, a right-to-left override and a CR
// that overwrites the line.
const attack90Evil = "\x1b[2J\x1b]52;c;SGVsbG8=\x07\u202eX\r"

// attack90Raw reports the first raw terminal control found in s, or "".
func attack90Raw(s string) string {
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\r", "\x7f", "\u009b"} {
		if strings.Contains(s, bad) {
			return fmt.Sprintf("%q", bad)
		}
	}
	return ""
}

// attack90HAR writes a HAR of n GET calls to profile for one user, every
// interval, with a 200 answer, and returns its path. limitsDoc, when not
// nil, is the trace's own limits (_fgrlLimits, as simulate --har writes).
func attack90HAR(t *testing.T, n int, interval time.Duration, limitsDoc any) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"log":{"version":"1.2","creator":{"name":"atk","version":"1"},`)
	if limitsDoc != nil {
		d, err := json.Marshal(limitsDoc)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(`"_fgrlLimits":`)
		b.Write(d)
		b.WriteString(",")
	}
	b.WriteString(`"entries":[`)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"startedDateTime":%q,"time":0,"request":{"method":"GET","url":"https://profile.xboxlive.com/users/xuid(2533274791234567)/profile/settings","httpVersion":"HTTP/1.1","headers":[{"name":"Host","value":"profile.xboxlive.com"},{"name":"Authorization","value":"XBL3.0 x=7119059491948684911;REDACTED"}],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"response":{"status":200,"statusText":"","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"content":{"size":0,"mimeType":"application/json"},"redirectURL":"","headersSize":-1,"bodySize":0},"cache":{},"timings":{"send":0,"wait":0,"receive":0}}`,
			start.Add(time.Duration(i)*interval).Format(time.RFC3339Nano))
	}
	b.WriteString("]}}")
	p := filepath.Join(t.TempDir(), "trace.har")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// attack90Limits is a limits document of profile's 2020 rule whose revision is
// rev.
func attack90Limits(rev string) map[string]any {
	return map[string]any{
		"revision": rev,
		"source":   "atk",
		"fallback": map[string]any{"service": "unknown", "burst": 10, "sustain": 30},
		"rules": []any{map[string]any{"service": "profile", "hosts": []string{"profile.xboxlive.com"},
			"paths": []string{"/users/" + attack90Evil}, "burst": 10, "sustain": 30, "certification": 300}},
	}
}

// BREAK. RELIABILITY.md:489: "every trace-sourced string of a report (host,
// service, user, userhash, XUID, gamertag, URL, a trace's name, the
// limits' revision) is escaped and clipped once"; RELIABILITY.md:229:
// "trace text in the report is escaped and clipped"; RELIABILITY.md:3523
// (a token as "the trace's limits' revision ... printed whole"): "xblcall
// the revision it names (safetext.HideOpaque)".
//
// analyze --trace-limits --what-if of a HAR whose _fgrlLimits revision
// holds a screen clear, an OSC 52 clipboard write, BEL, U+202E and CR
// prints them raw on standard output, in the what-if's first line
// ("(limits REV, virtual time)"); a credential-looking revision is
// printed whole there too (the stderr line "judging by the limits the
// traces name" escapes and hides both). The same with --limits FILE.
func TestAttack90AnalyzeWhatIfRevisionRaw(t *testing.T) {
	t.Parallel()
	const secret = "eyJhbGciOiJSUzI1NiJ9SeCrEtT0kenXyZ0123456789"
	for _, rev := range []string{"rev" + attack90Evil, secret} {
		har := attack90HAR(t, 40, time.Second, attack90Limits(rev))
		code, out, errs := xblcall(t, "analyze", "--trace-limits", "--what-if", har)
		if code != 0 && code != 1 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if r := attack90Raw(out + errs); r != "" {
			t.Errorf("analyze --trace-limits --what-if: %s reached the terminal raw: %.200q", r, out)
		}
		if strings.Contains(out+errs, secret) {
			t.Errorf("analyze --trace-limits --what-if printed the credential-looking revision whole: %.200q", out)
		}
	}
}

// BREAK (the promise is the module's own rule for text that reaches a
// terminal rather than a line of xblcall's help): internal/safetext's
// package doc, "Clip makes text from a server or a trace safe to put in
// an error or on a terminal (control characters, terminal escape
// sequences among them, and invalid UTF-8 are escaped"; limits/load.go
// refuses control characters in service and class "so no control
// character or other script reaches a terminal that reads them".
//
// xblcall limits --file FILE prints the file's revision raw (and, with
// --wide, its paths raw): a limits file, such as one taken out of a
// trace's _fgrlLimits, clears the screen and writes the clipboard.
func TestAttack90LimitsFileRevisionRaw(t *testing.T) {
	t.Parallel()
	b, _ := json.Marshal(attack90Limits("rev" + attack90Evil))
	p := filepath.Join(t.TempDir(), "limits.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"limits", "--file", p}, {"limits", "--file", p, "--wide"}} {
		code, out, errs := xblcall(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		if r := attack90Raw(out + errs); r != "" {
			t.Errorf("%v: %s reached the terminal raw: %.160q", args[1:], r, out)
		}
	}
}

// BREAK. xblcall help call: "Tokens are never printed, even with -v."
//
// A service that redirects to a path echoing the Authorization's token
// (same host: net/http follows and sends the token again) until net/http
// stops after 10 redirects: the error names the last Location, token and
// all, on stderr for one call, and on stdout (the summary's "failed" row,
// --json's firstError) and stderr for a load run.
func TestAttack90CallRedirectErrorPrintsToken(t *testing.T) {
	t.Parallel()
	const tok = "eyJhbGciOiJIUzI1NiJ9SECRETSECRETtokenABCDEF0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, t, _ := strings.Cut(r.Header.Get("Authorization"), ";")
		http.Redirect(w, r, "/r/"+t, http.StatusFound)
	}))
	defer srv.Close()
	setenv(t, "XBLCALL_MOCK", "")
	for _, args := range [][]string{
		{"call", "--token", "XBL3.0 x=123;" + tok, srv.URL + "/x"},
		{"call", "-v", "--token", "XBL3.0 x=123;" + tok, srv.URL + "/x"},
		{"call", "-n", "2", "--token", "XBL3.0 x=123;" + tok, srv.URL + "/x"},
		{"call", "-n", "2", "--json", "--token", "XBL3.0 x=123;" + tok, srv.URL + "/x"},
	} {
		code, out, errs := xblcall(t, args...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1", args[:len(args)-3], code)
		}
		if strings.Contains(out, tok) || strings.Contains(errs, tok) {
			t.Errorf("%v: the token printed:\nstdout %.300q\nstderr %.300q", args[:len(args)-3], out, errs)
		}
	}
	// The same token from XBL_TOKEN (the documented way to keep it out
	// of the process list) fares no better.
	setenv(t, "XBL_TOKEN", "XBL3.0 x=123;"+tok)
	if _, out, errs := xblcall(t, "call", srv.URL+"/x"); strings.Contains(out+errs, tok) {
		t.Errorf("XBL_TOKEN: the token printed: %.300q", errs)
	}
}

// BREAK. xblcall help analyze: "red: a finding fails: a 300 s span
// reaches the rule's certification figure (printed per service in the
// CERT column ...) ... Exit status 1."
//
// A title polling profile once a second for 13 minutes (800 calls: 300
// in every 300 s, profile's certification figure) is red by that rule,
// and the table's FAIL column says so (2), but more than 50 burst
// windows come first for the group: the per-group-and-rule cap of 50
// listed findings (call-frequency for both) drops the certification
// failures from the list, and the verdict counts listed findings only:
// "verdict YELLOW: 0 failures", exit 0, --json "fails": 0, JUnit no
// failure. At 600 calls (40 burst windows) the same trace is red.
func TestAttack90AnalyzeCertificationFailureLostPastFiftyBurstWindows(t *testing.T) {
	t.Parallel()
	short := attack90HAR(t, 600, time.Second, nil)
	if code, out, _ := xblcall(t, "analyze", short); code != 1 || !strings.Contains(out, "verdict RED") {
		t.Fatalf("600 calls a second apart: exit %d, want 1 (red); %s", code, attack90LastLine(out))
	}
	long := attack90HAR(t, 800, time.Second, nil)
	code, out, _ := xblcall(t, "analyze", long)
	if code != 1 || !strings.Contains(out, "verdict RED") {
		t.Errorf("800 calls a second apart (300 in each 300 s, the certification figure): exit %d, %q; want exit 1, red (the table: %q)",
			code, attack90LastLine(out), attack90TableRow(out))
	}
	_, js, _ := xblcall(t, "analyze", "--json", long)
	var rep struct {
		Verdict string `json:"verdict"`
		Fails   int    `json:"fails"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || rep.Verdict != "red" || rep.Fails == 0 {
		t.Errorf("--json: verdict %q, fails %d (%v); want red", rep.Verdict, rep.Fails, err)
	}
	_, junit, _ := xblcall(t, "analyze", "--format", "junit", long)
	if !strings.Contains(junit, "<failure") {
		t.Errorf("--format junit: no failure for a trace that fails certification")
	}
}

func attack90LastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func attack90TableRow(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "profile") && strings.Contains(l, "userhash") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// BREAK. xblcall help analyze: "--html string  also write a
// self-contained HTML report to this file". (-o refuses a FIFO: "not a
// regular file"; --html takes one, for a reader such as gzip.)
//
// --html naming a FIFO that no reader has open: the report goes into the
// pipe (opened read-write, so the open does not wait), the pipe is
// closed with no reader and the report is gone; the run exits 0 as if it
// had written it, and saying nothing. A shell's "> fifo" would wait for
// a reader; -o refuses.
func TestAttack90AnalyzeHTMLIntoReaderlessFIFOLost(t *testing.T) {
	t.Parallel()
	har := attack90HAR(t, 3, 10*time.Second, nil)
	if code, out, errs := xblcall(t, "analyze", har); code != 0 {
		t.Fatalf("the trace is not green: exit %d %s %s", code, out, errs)
	}
	fifo := filepath.Join(t.TempDir(), "report.html")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan int, 1)
	var out, errb syncBuffer
	go func() {
		done <- run(context.Background(), []string{"analyze", "--html", fifo, har}, &out, &errb, withTestEnv(t))
	}()
	select {
	case code := <-done:
		// Ended before any reader came: a reader now gets nothing.
		var got []byte
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			got, _ = io.ReadAll(f)
			f.Close()
		}
		if code == 0 && !bytes.Contains(got, []byte("<html")) {
			t.Errorf("--html FIFO with no reader: exit 0, stderr %q, and the report is gone (a reader opening it now gets %d bytes); want it refused (as -o does) or kept for a reader",
				errb.String(), len(got))
		}
	case <-time.After(10 * time.Second):
		// Waiting for a reader, as a shell's redirection would: be one.
		f, err := os.Open(fifo)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		f.Close()
		<-done
		if !bytes.Contains(got, []byte("<html")) {
			t.Errorf("the reader got %d bytes, no report", len(got))
		}
	}
}

// held: xblcall help login: "The tokens are stored in the user's config
// directory (fgrl/signin.json, mode 0600) and never printed." A login
// through the mock leaves signin.json 0600 in a fgrl directory it made
// 0700; login, whoami, whoami --json and call -i -v against the mock print
// neither the stored refresh and access tokens nor the XSTS token.
func TestAttack90SignInFileModesAndNoTokenPrinted(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBLCALL_MOCK", "")
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	var all strings.Builder
	code, out, errs := xblcall(t, "login", "--via", srv.URL)
	if code != 0 {
		t.Fatalf("login: exit %d %s %s", code, out, errs)
	}
	all.WriteString(out + errs)
	dir := filepath.Join(configDirOf(t), "fgrl")
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "signin.json"): 0o600} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	_, st := attack9Stored(t)
	for _, args := range [][]string{{"whoami"}, {"whoami", "--json"},
		{"call", "-i", "-v", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}} {
		code, out, errs := xblcall(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
		all.WriteString(out + errs)
	}
	for _, s := range []string{st.Microsoft.RefreshToken, st.Microsoft.AccessToken} {
		if strings.Contains(all.String(), s) {
			t.Errorf("a stored token printed")
		}
	}
	if strings.Contains(all.String(), "XBL3.0 x=") && !strings.Contains(all.String(), ";REDACTED") {
		t.Errorf("an XSTS token printed: %.300q", all.String())
	}
}

// held: xblcall help call: "The token comes from --token; else --mock
// mints one ...; else the XBL_TOKEN variable" (README's container recipe
// passes it as -e XBL_TOKEN): the token kept out of the process list by
// XBL_TOKEN reaches the service, and -i -v prints it redacted only.
func TestAttack90TokenFromEnvironmentWorksAndStaysHidden(t *testing.T) {
	t.Parallel()
	h := mock.NewHandler()
	tok := mock.Token("2533274791234567", "1234567890")
	_, secret, _ := strings.Cut(tok, ";")
	srv := httptest.NewServer(h)
	defer srv.Close()
	setenv(t, "XBL_TOKEN", tok)
	setenv(t, "XBLCALL_MOCK", "")
	code, out, errs := xblcall(t, "call", "-i", "-v", "--via", srv.URL, "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag")
	if code != 0 || !strings.Contains(out, "MockPlayer") {
		t.Fatalf("XBL_TOKEN: exit %d %s %s", code, out, errs)
	}
	if strings.Contains(out+errs, secret) {
		t.Errorf("the token printed: %.300q", errs)
	}
}

// held: xblcall help call: "-i puts the status line and headers before
// it"; RELIABILITY.md:229: "every CLI error is escaped too". A service
// answering 500 with a reason phrase, header names and values holding
// invalid UTF-8 and U+202E (net/http refuses the other controls there),
// and a Retry-After with them: -i's lines and -v's trace on stderr, and
// the error, hold no raw control. (The body goes to stdout as it came:
// "Standard output carries only the answer's body".)
func TestAttack90CallHostileHeadersEscaped(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 500 Bad\u202eReason\xff\r\n" +
			"X-Evil: v\u202e\xff\xfe\u0085w\r\n" +
			"Retry-After: 1\u202e\xff\r\n" +
			"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
		buf.Flush()
	}))
	defer srv.Close()
	setenv(t, "XBLCALL_MOCK", "")
	code, out, errs := xblcall(t, "call", "-i", "-v", "--no-retry", "--token", "XBL3.0 x=1;abc", srv.URL+"/x")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	head, _, _ := strings.Cut(out, "\n\n")
	if r := attack90Raw(head + errs); r != "" {
		t.Errorf("%s raw:\nheaders %q\nstderr %q", r, head, errs)
	}
	for _, s := range []string{head, errs} {
		if !attack90ValidUTF8(s) {
			t.Errorf("invalid UTF-8 printed: %q", s)
		}
	}
}

func attack90ValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }

// held: README "exit statuses (2 for usage and input errors, 130 when
// interrupted)"; xblcall help: "Exit status: 0 success, 1 failure (a red
// analysis too), 2 usage or input error, 130 interrupted."; help call "1
// for any other answer or failure". Bad flags, durations, counts,
// unknown commands, and services that refuse (connection refused, 403,
// 429) end with the documented status, and none takes over 30 s.
func TestAttack90ExitStatuses(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/429") {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			return
		}
		w.WriteHeader(403)
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	setenv(t, "XBLCALL_MOCK", "")
	setenv(t, "XBL_TOKEN", "")
	prof := "https://profile.xboxlive.com/users/me/profile/settings"
	for _, tc := range []struct {
		want int
		args []string
	}{
		{2, []string{"nosuch"}},
		{2, []string{"nosuch", "--help"}},
		{2, []string{"help", "nosuch"}},
		{2, []string{"call", "--nosuch", prof}},
		{2, []string{"call", "--mock", "--retry-window", "5", prof}},
		{2, []string{"call", "--mock", "--retry-window", "-1s", prof}},
		{2, []string{"call", "--mock", "--timeout", "1e400h", prof}},
		{2, []string{"call", "--mock", "--attempt-timeout", "6m", prof}},
		{2, []string{"call", "--mock", "-n", "0", prof}},
		{2, []string{"call", "--mock", "-n", "2", "--rate", "NaN", prof}},
		{2, []string{"call", "--mock", "-X", "GE T", prof}},
		{2, []string{"call", "--mock", "ftp://profile.xboxlive.com/"}},
		{2, []string{"call", "--mock"}},
		{2, []string{"call", "--mock", "-d", "@/nonexistent/atk", prof}},
		{2, []string{"call", prof}}, // no token anywhere
		{2, []string{"limits", "--revision", "1999"}},
		{2, []string{"mock", "--addr", "127.0.0.1:99999"}},
		{2, []string{"mock", "--addr", "127.0.0.1:0", "--latency", "-1s"}},
		{2, []string{"analyze"}},
		{2, []string{"analyze", "/nonexistent/atk.har"}},
		{2, []string{"token", "--xuid", "x", "--title", "1"}},
		{2, []string{"simulate", "--client", "nosuch"}},
		{1, []string{"call", "--token", "XBL3.0 x=1;abc", "--no-retry", closedURL + "/x"}},
		{1, []string{"call", "--token", "XBL3.0 x=1;abc", srv.URL + "/x"}},
		{1, []string{"call", "--token", "XBL3.0 x=1;abc", "--no-retry", srv.URL + "/429"}},
		{1, []string{"whoami"}},
		{0, []string{"call", "--mock", prof}},
	} {
		start := time.Now()
		code, _, errs := xblcall(t, tc.args...)
		if code != tc.want {
			t.Errorf("%q: exit %d, want %d (%s)", tc.args, code, tc.want, strings.TrimSpace(errs))
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%q took %v", tc.args, d)
		}
	}
}

// held: xblcall help analyze "-o: write the report (--format's) to this
// file instead of standard output, once the traces are read"; mock's
// --ca-out, --partner-cert (writeFileAtomic's doc: "only a regular file,
// or a link to one (or to nothing yet), is" replaced). A FIFO, a
// directory and /dev/full (through a link) are refused with exit 2 at
// once; a link to another file never has its target truncated (the link
// itself is replaced).
func TestAttack90OutputPathsSpecialFiles(t *testing.T) {
	t.Parallel()
	har := attack90HAR(t, 3, 10*time.Second, nil)
	outputs := [][]string{
		{"analyze", har, "-o"},
		{"mock", "--addr", "127.0.0.1:0", "--ca-out"},
		{"mock", "--addr", "127.0.0.1:0", "--partner-cert"},
	}
	for _, kind := range []string{"fifo", "dir", "devfull", "symlink"} {
		for _, args := range outputs {
			dir := t.TempDir()
			p := filepath.Join(dir, "out")
			target := filepath.Join(dir, "target")
			switch kind {
			case "fifo":
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					t.Skip(err)
				}
			case "dir":
				os.Mkdir(p, 0o700)
			case "devfull":
				if err := os.Symlink("/dev/full", p); err != nil {
					t.Skip(err)
				}
			case "symlink":
				os.WriteFile(target, []byte("precious"), 0o644)
				if err := os.Symlink(target, p); err != nil {
					t.Skip(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second) // a mock runs until interrupted
			var out, errb syncBuffer
			start := time.Now()
			code := run(ctx, append(append([]string{}, args...), p), &out, &errb, withTestEnv(t))
			cancel()
			d := time.Since(start)
			switch kind {
			case "symlink":
				if b, _ := os.ReadFile(target); string(b) != "precious" {
					t.Errorf("%v LINK: the link's target now holds %.40q", args, b)
				}
			default:
				if code != 2 || d > 2*time.Second {
					t.Errorf("%v %s: exit %d after %v (%s); want 2 at once", args, kind, code, d, strings.TrimSpace(errb.String()))
				}
			}
		}
	}
}

// held: RELIABILITY.md:229 "every CLI error is escaped too" and clipped
// (oneLine: 2000 bytes). A 10 MB flag value, URL, header and path end
// with exit 2 at once, the error on one line of at most a few kB.
func TestAttack90HugeFlagValues(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("\x1b[2J", 10<<20/4)
	prof := "https://profile.xboxlive.com/users/me/profile/settings"
	setenv(t, "XBLCALL_MOCK", "")
	for _, args := range [][]string{
		{"call", "--mock", "--timeout", big, prof},
		{"call", "--mock", "-H", big, prof},
		{"call", "--mock", prof + "?" + big},
		{"call", "--token", "XBL3.0 x=1;abc", "--via", "http://" + big, prof},
		{"limits", "--revision", big},
		{"analyze", big},
		{big},
	} {
		start := time.Now()
		code, out, errs := xblcall(t, args...)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%.20q: took %v", args, d)
		}
		if code != 2 && code != 1 {
			t.Errorf("%.20q: exit %d", args, code)
		}
		if len(out)+len(errs) > 8<<10 || attack90Raw(out+errs) != "" || strings.Count(errs, "\n") > 1 {
			t.Errorf("%.20q: %d bytes printed: %.200q", args, len(out)+len(errs), errs)
		}
	}
}

// held: -d @FILE of a 1 GB file (sparse) is read no further than the
// 16 MiB body bound and refused at once, not read whole into memory.
func TestAttack90HugeDataFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Skip(err)
	}
	f.Close()
	start := time.Now()
	code, out, errs := xblcall(t, "call", "--mock", "-d", "@"+p, "https://profile.xboxlive.com/users/batch/profile/settings")
	if code == 0 || time.Since(start) > 10*time.Second || len(out) > 0 {
		t.Errorf("-d @1GB: exit %d after %v, stdout %d bytes, stderr %q", code, time.Since(start), len(out), errs)
	}
}
