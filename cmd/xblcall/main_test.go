package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
)

var update = flag.Bool("update", false, "rewrite golden files")

// xblcall runs the command with args, in t's environment (withTestEnv), and
// returns its exit status and output.
func xblcall(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, withTestEnv(t))
	return code, out.String(), errb.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestSimulateGolden(t *testing.T) {
	t.Parallel()
	code, out, errs := xblcall(t, "simulate")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "simulate.golden", out)
}

func TestSimulateJSON(t *testing.T) {
	t.Parallel()
	code, out, _ := xblcall(t, "simulate", "--json", "--client", "fgrl")
	var res []struct {
		Client string `json:"client"`
		Rows   []struct {
			Start     int `json:"start"`
			Requests  int `json:"requests"`
			Throttled int `json:"throttled"`
		} `json:"rows"`
		Server429s int `json:"server429s"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res) != 1 || res[0].Server429s != 0 || len(res[0].Rows) == 0 {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestSimulatePatternAndSVG(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pattern := filepath.Join(dir, "p.csv")
	os.WriteFile(pattern, []byte("time,service,user,count,spread\n0,profile,1,40,10\n20,presence/write,1,5\n"), 0o644)
	svg := filepath.Join(dir, "p.svg")
	code, out, errs := xblcall(t, "simulate", "--pattern", pattern, "--client", "all", "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"pattern " + pattern + ": 45 calls",
		"client fgrl, user 1, profile (burst 10 / 15 s, sustain 30 / 300 s):",
		"client fgrl, user 1, presence/write (burst 3 / 15 s, sustain 30 / 300 s):",
		"client naive, every key:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(b, []byte("<svg")) || !bytes.Contains(b, []byte("burst limit 10")) {
		t.Errorf("svg: %v %.200s", err, b)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, "usage: xblcall"},
		{[]string{"frob"}, 2, `unknown command "frob"`},
		{[]string{"simulate", "--client", "curl"}, 2, `unknown client "curl"`},
		{[]string{"simulate", "--nope"}, 2, "unknown flag: --nope"},
		{[]string{"simulate", "--pattern", "/does/not/exist"}, 2, "no such file"},
		{[]string{"simulate", "--service-limits", "/does/not/exist"}, 2, "--service-limits: /does/not/exist: cannot open: no such file"},
		{[]string{"call", "profile.xboxlive.com/users/me/profile/settings"}, 2, "the scheme must be http or https"},
		{[]string{"token"}, 2, "need --xuid and --title"},
		{[]string{"limits", "--revision", "1999"}, 2, `unknown limits revision "1999"`},
		{[]string{"call"}, 2, "need exactly one URL"},
		{[]string{"call", "https://profile.xboxlive.com/"}, 2, "no token"},
		{[]string{"analyze"}, 2, "need a trace"},
		{[]string{"mock", "--retry-after", "later"}, 2, `unknown --retry-after "later"`},
		{[]string{"mock", "--world", "testdata/world-bad.json"}, 2, "--world: testdata/world-bad.json: line 3: accounts[0].friends[0]: no account of the world has this XUID"},
		{[]string{"mock", "--world", "testdata/none.json"}, 2, "--world: testdata/none.json: cannot open: no such file"},
	}
	for _, tt := range tests {
		code, _, errs := xblcall(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.err) || strings.Count(strings.TrimSpace(errs), "\n") > 0 && tt.args != nil {
			t.Errorf("xblcall %v: exit %d, stderr %q; want %d and %q on one line", tt.args, code, errs, tt.code, tt.err)
		}
	}
}

// TestDataFileErrorsExit2: whatever the kind of data file and the flag
// that names it, what is wrong with it exits 2 (exitCode, on the one
// *datafile.Error) and says the file, line and field.
func TestDataFileErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lim := file("limits.json", "{\"rules\": [\n  {\"service\": \"a\", \"burst\": 1}]}")
	rules := file("rules.yaml", "burst:\n  size: 1\n")
	pattern := file("pattern.csv", "0,profile,2533274791234567,1\n5,profile,x,1\n")
	patternJSON := file("pattern.json", "[{\"time\": 0, \"service\": \"profile\", \"user\": \"1\",\n  \"count\": 1, \"cuont\": 2}]")
	world := file("world.yaml", "accounts:\n  - xuid: \"1\"\n    friends: [\"2\"]\n")
	script := file("script.yaml", "rules:\n  - answers:\n      - status: 9\n")
	trace := "../../examples/naive.har"
	for _, tc := range []struct {
		args []string
		want string // the whole of stderr
	}{
		{[]string{"limits", "--file", lim}, "xblcall limits: " + lim + ": line 2: rules[0].hosts: missing"},
		{[]string{"simulate", "--limits", lim}, "xblcall simulate: " + lim + ": line 2: rules[0].hosts: missing"},
		{[]string{"simulate", "--service-limits", lim}, "xblcall simulate: --service-limits: " + lim + ": line 2: rules[0].hosts: missing"},
		{[]string{"analyze", "--limits", lim, trace}, "xblcall analyze: " + lim + ": line 2: rules[0].hosts: missing"},
		{[]string{"mock", "--limits", lim, "--hosts"}, "xblcall mock: " + lim + ": line 2: rules[0].hosts: missing"},
		{[]string{"analyze", "--rules", rules, "--revision", "2020", trace}, "xblcall analyze: --rules: " + rules + ": line 2: burst.size: want at least 2"},
		{[]string{"simulate", "--pattern", pattern}, "xblcall simulate: --pattern: " + pattern + `: line 2: user: "x" is not a XUID (a decimal number that fits in 64 bits, with no leading zero)`},
		{[]string{"simulate", "--pattern", patternJSON}, "xblcall simulate: --pattern: " + patternJSON + ": line 2: [0].cuont: no such field"},
		{[]string{"mock", "--world", world, "--hosts"}, "xblcall mock: --world: " + world + ": line 3: accounts[0].friends[0]: no account of the world has this XUID"},
		{[]string{"mock", "--script", script, "--hosts"}, "xblcall mock: --script: " + script + ": line 3: rules[0].answers[0].status: a status is 200 to 599 (a 1xx is sent ahead of an answer, never as one)"},
		{[]string{"mock", "--script", filepath.Join(dir, "none.yaml"), "--hosts"}, "xblcall mock: --script: " + filepath.Join(dir, "none.yaml") + ": cannot open: no such file or directory"},
	} {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			code, out, errs := xblcall(t, tc.args...)
			if code != 2 || errs != tc.want+"\n" || out != "" {
				t.Errorf("xblcall %q: exit %d, stdout %q\n got %q\nwant %q (exit 2)", tc.args, code, out, errs, tc.want+"\n")
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"call", "limits", "mock", "token", "simulate", "analyze", "login", "logout", "whoami"} {
		for _, args := range [][]string{{"help", name}, {name, "--help"}} {
			code, out, _ := xblcall(t, args...)
			if code != 0 || !strings.Contains(out, "usage: xblcall "+name) || !strings.Contains(out, "Examples:") {
				t.Errorf("xblcall %v: exit %d\n%s", args, code, out)
			}
		}
	}
	if code, out, _ := xblcall(t, "help"); code != 0 || !strings.Contains(out, "simulate") {
		t.Errorf("help: %d %s", code, out)
	}
}

func TestToken(t *testing.T) {
	t.Parallel()
	code, out, _ := xblcall(t, "token", "--xuid", "1", "--title", "2")
	if code != 0 || strings.TrimSpace(out) != mock.Token("1", "2") {
		t.Errorf("token: %d %q", code, out)
	}
	code, out, _ = xblcall(t, "token", "--xuid", "1", "--title", "2", "--json")
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("token --json: exit %d, %v: %q", code, err, out)
	}
	want := map[string]string{"authorization": mock.Token("1", "2"), "userhash": mock.UserHash("1"), "xuid": "1", "title": "2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token --json (-want +got):\n%s", diff)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	code, out, _ := xblcall(t, "limits")
	if code != 0 || !strings.Contains(out, "presence/write") || !strings.Contains(out, "(other hosts)") {
		t.Errorf("limits: %d\n%s", code, out)
	}
	golden(t, "limits-2022.golden", func() string { _, o, _ := xblcall(t, "limits", "--revision", "2022"); return o }())
	for _, rev := range []string{"2020", "2022"} {
		_, out, _ := xblcall(t, "limits", "--revision", rev)
		for _, line := range strings.Split(out, "\n") {
			if len(line) > 100 {
				t.Errorf("limits --revision %s: a line of %d columns, want at most 100: %q", rev, len(line), line)
			}
		}
		if _, wide, _ := xblcall(t, "limits", "--revision", rev, "--wide"); !strings.Contains(wide, "/users/me/devices/current/titles/current") {
			t.Errorf("limits --wide lacks the full paths")
		}
	}
	code, out, _ = xblcall(t, "limits", "--json")
	l, err := limits.Read(strings.NewReader(out))
	if code != 0 || err != nil || len(l.Rules) != len(limits.Default().Rules) {
		t.Errorf("limits --json does not round-trip: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"rules": [{"service": "a", "hosts": ["a"], "burst": -1, "sustain": 1}]}`), 0o644)
	if code, _, errs := xblcall(t, "limits", "--file", bad); code != 2 || !strings.Contains(errs, "rules[0].burst: must not be negative") {
		t.Errorf("bad limits file: %d %q", code, errs)
	}
}

func TestCallMock(t *testing.T) {
	t.Parallel()
	code, out, errs := xblcall(t, "call", "--mock", "-i", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag")
	if code != 0 || !strings.Contains(out, "200 OK") || !strings.Contains(out, "\nRateLimit-Policy: ") || !strings.Contains(out, "\nRateLimit: ") || !strings.Contains(out, "MockPlayer") {
		t.Errorf("call: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = xblcall(t, "call", "--mock", "-v", "-d", `{"userIds":["1"],"settings":["Gamertag"]}`,
		"https://profile.xboxlive.com/users/batch/profile/settings")
	tok := mock.Token("2533274791234567", "1234567890")
	if code != 0 || !strings.Contains(errs, "> POST https://profile.xboxlive.com/users/batch/profile/settings") ||
		!strings.Contains(errs, "Authorization: XBL3.0 x="+mock.UserHash("2533274791234567")+";REDACTED") ||
		strings.Contains(errs, tok[strings.Index(tok, ";")+1:]) {
		t.Errorf("call -v: %d\n%s\n%s", code, out, errs)
	}
	code, _, errs = xblcall(t, "call", "--mock", "https://profile.xboxlive.com/nope")
	if code != 1 || !strings.Contains(errs, "HTTP 404 (0x80190194 HTTP_E_STATUS_NOT_FOUND)") {
		t.Errorf("call 404: %d %q", code, errs)
	}
}

func TestCallThrottledReason(t *testing.T) {
	t.Parallel()
	err := describe(&throttleErrForTest)
	if !strings.Contains(err.Error(), "0x801901AD") || !strings.Contains(err.Error(), "refused locally by the budget (no request sent)") {
		t.Errorf("describe: %v", err)
	}
}

func TestMockServes(t *testing.T) {
	t.Parallel()
	logged := testMockServes(t)
	for _, want := range []string{"msg=request method=GET host=social.xboxlive.com path=/users/me/people status=200 scope=social user=",
		"burst=1 burstLimit=", "sustain=1 sustainLimit="} {
		if !strings.Contains(logged, want) {
			t.Errorf("request log lacks %q:\n%s", want, logged)
		}
	}
}

// TestMockLogJSON: --log-format json writes one object a line; off, none.
func TestMockLogJSON(t *testing.T) {
	t.Parallel()
	logged := testMockServes(t, "--log-format", "json")
	var line struct {
		Msg, Host, Scope, User string
		Status, Burst          int
	}
	first, _, _ := strings.Cut(logged, "\n")
	if err := json.Unmarshal([]byte(first), &line); err != nil || line.Msg != "request" || line.Status != 200 || line.Scope != "social" || line.Burst != 1 || line.User != mock.UserHash("1") {
		t.Errorf("first line %q: %+v, %v", first, line, err)
	}
	if logged := testMockServes(t, "--log-format", "off"); strings.Contains(logged, "request") {
		t.Errorf("--log-format off logged %q", logged)
	}
	if code, _, errs := xblcall(t, "mock", "--log-format", "xml"); code != 2 || !strings.Contains(errs, `unknown --log-format "xml"`) {
		t.Errorf("exit %d, %q", code, errs)
	}
}

// TestMockServesRedis: the same, with the counts in Redis.
func TestMockServesRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	testMockServes(t, "--redis", "redis://"+srv.Addr+"/0")
	keys, err := srv.Client().Keys(context.Background(), "fgrl:*").Result()
	if err != nil || len(keys) == 0 {
		t.Errorf("no FGRL keys in Redis: %v, %v", keys, err)
	}
}

// testMockServes serves the mock, calls it once and returns what it wrote
// on stderr.
func testMockServes(t *testing.T, extra ...string) string {
	url, stop := startMock(t, extra...)
	code, body, errs := xblcall(t, "call", "-i", "--token", mock.Token("1", "2"), "-H", "Host: social.xboxlive.com", url+"/users/me/people")
	c, stderr := stop()
	if c != 0 {
		t.Errorf("mock exit %d: %s", c, stderr)
	}
	if code != 0 || !strings.Contains(body, `"totalCount":12`) {
		t.Errorf("call through the served mock: %d\n%s\n%s", code, body, errs)
	}
	return stderr
}

// startMock runs xblcall mock with args on a free loopback port and returns
// the URL it prints and a stop function, which ends it and returns its exit
// status and standard error. The mock is stopped at the end of the test if
// stop was not called.
func startMock(t *testing.T, args ...string) (string, func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	printed := make(chan struct{})
	out := &syncBuffer{printed: printed}
	errb := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"mock", "--addr", "127.0.0.1:0"}, args...), out, errb, withTestEnv(t))
	}()
	select {
	case <-printed:
	case code := <-done:
		cancel()
		t.Fatalf("mock exited %d: %q", code, errb.String())
	}
	var once sync.Once
	var code int
	stop := func() (int, string) {
		once.Do(func() { cancel(); code = <-done })
		return code, errb.String()
	}
	t.Cleanup(func() { stop() })
	s := out.String()
	return strings.Fields(s[strings.Index(s, "http://"):])[0], stop
}

// syncBuffer is a goroutine-safe buffer; when printed is not nil it is
// closed once a URL has been written.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	printed chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if s.printed != nil && strings.Contains(s.b.String(), "://") {
		close(s.printed)
		s.printed = nil
	}
	return n, err
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestCallTraceRedactsSignature(t *testing.T) {
	t.Parallel()
	code, _, errs := xblcall(t, "call", "--mock", "-v", "-H", "Signature: very-secret-signature",
		"https://profile.xboxlive.com/users/me/profile/settings")
	if code != 0 || strings.Contains(errs, "very-secret-signature") || !strings.Contains(errs, "Signature: REDACTED") {
		t.Errorf("exit %d, trace:\n%s", code, errs)
	}
}

// TestMockRedisChecks: mock --redis checks Redis at start and says what is
// wrong, instead of serving 503s; --redis-ca needs a rediss:// URL and a PEM
// file.
func TestMockRedisChecks(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, "--requirepass", "secret")
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"wrong password", []string{"--redis", "redis://:wrong@" + srv.Addr + "/0"}, 1, "WRONGPASS"},
		{"nobody listening", []string{"--redis", "redis://127.0.0.1:1/0"}, 1, "cannot use Redis"},
		{"TLS to a plain server", []string{"--redis", "rediss://:secret@" + srv.Addr + "/0"}, 1, "TLS setting"},
		{"CA without TLS", []string{"--redis", "redis://" + srv.Addr, "--redis-ca", notPEM}, 2, "rediss://"},
		{"CA not PEM", []string{"--redis", "rediss://" + srv.Addr, "--redis-ca", notPEM}, 2, "no PEM certificate"},
		{"CA without Redis", []string{"--redis-ca", notPEM}, 2, "--redis-ca needs --redis"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := xblcall(t, append([]string{"mock", "--addr", "127.0.0.1:0"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, tt.code, tt.want)
			}
		})
	}
}

// TestSimulateHARErrors: --har records one client, and a path that cannot be
// written fails before the run.
func TestSimulateHARErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--client", "all", "--har", filepath.Join(t.TempDir(), "x.har")}, 2, "one client"},
		{[]string{"--har", filepath.Join(t.TempDir(), "no", "such", "dir", "x.har")}, 2, "--har"},
		{[]string{"--svg", filepath.Join(t.TempDir(), "no", "such", "dir", "x.svg")}, 2, "--svg"},
	} {
		code, out, errs := xblcall(t, append([]string{"simulate"}, tt.args...)...)
		if code != tt.code || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("simulate %v: exit %d, stdout %q, stderr %q; want %d and %q", tt.args, code, out, errs, tt.code, tt.want)
		}
	}
}

// TestCallLikeCurl: stdout is only the body unless -i, flags go before or
// after the URL, a 429 with -i shows its headers and body, retries are lines
// on stderr (silenced by -s), XBL_TOKEN does not override --mock, and a URL
// no retry can fix fails at once.
func TestCallLikeCurl(t *testing.T) {
	t.Parallel()
	profile := "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	t.Run("body only", func(t *testing.T) {
		setenv(t, "XBL_TOKEN", "XBL3.0 x=1;not-a-mock-token")
		code, out, errs := xblcall(t, "call", "--mock", profile)
		if code != 0 || !json.Valid([]byte(out)) {
			t.Errorf("exit %d, stdout %q (want only JSON), stderr %q", code, out, errs)
		}
	})
	t.Run("-i after the URL", func(t *testing.T) {
		code, out, _ := xblcall(t, "call", profile, "--mock", "-i")
		if code != 0 || !strings.HasPrefix(out, "HTTP/1.1 200 OK\n") || !strings.Contains(out, "RateLimit-Policy:") {
			t.Errorf("exit %d, stdout %q", code, out)
		}
	})
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/throttled":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(429)
			io.WriteString(w, `{"version":1,"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate"}`)
		case attempts.Add(1) == 1:
			w.WriteHeader(503)
		default:
			io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	tok := mock.Token("1", "2")
	t.Run("429 with -i", func(t *testing.T) {
		code, out, _ := xblcall(t, "call", "--no-retry", "-i", "--token", tok, srv.URL+"/throttled")
		if code != 1 || !strings.Contains(out, "429") || !strings.Contains(out, "Retry-After: 30") || !strings.Contains(out, `"maxRequests":10`) {
			t.Errorf("exit %d, stdout %q", code, out)
		}
	})
	t.Run("retries on stderr", func(t *testing.T) {
		if testing.Short() {
			t.Skip("waits for one real backoff (2-4 s)")
		}
		attempts.Store(0)
		code, out, errs := xblcall(t, "call", "--token", tok, srv.URL+"/flaky")
		if code != 0 || out != "{}\n" || !strings.Contains(errs, "retry") || !strings.Contains(errs, "status=503") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
		}
		attempts.Store(0)
		if _, _, errs := xblcall(t, "call", "-s", "--no-retry", "--token", tok, srv.URL+"/flaky"); errs != "" && strings.Contains(errs, "retry") {
			t.Errorf("-s stderr %q", errs)
		}
	})
	t.Run("no retry can fix it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { // virtual time: any backoff would show
			start := time.Now()
			code, _, errs := xblcall(t, "call", "--token", tok, "ftp://profile.xboxlive.com/x")
			if code == 0 || time.Since(start) != 0 || !strings.Contains(errs, "scheme") {
				t.Errorf("exit %d after %v, stderr %q; want a failure without a wait", code, time.Since(start), errs)
			}
		})
	})
}

// TestIDsAndInterrupt: bad XUIDs and title IDs are usage errors naming the
// flag; a pattern's unknown service lists the valid scopes; an interrupted
// command exits 130.
func TestIDsAndInterrupt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "--xuid", "abc", "--title", "1"}, `--xuid: "abc" is not a XUID`},
		{[]string{"token", "--xuid", "1", "--title", "99999999999"}, `--title: "99999999999" is not a title ID`},
		{[]string{"call", "--mock", "--xuid", "-5", "https://profile.xboxlive.com/x"}, `--xuid: "-5" is not a XUID`},
	} {
		if code, _, errs := xblcall(t, tt.args...); code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errs, tt.want)
		}
	}
	pattern := filepath.Join(t.TempDir(), "p.csv")
	os.WriteFile(pattern, []byte("0,profil,1,1\n"), 0o600)
	if code, _, errs := xblcall(t, "simulate", "--pattern", pattern); code != 2 || !strings.Contains(errs, `--pattern: entry 1: unknown service "profil" (have stats-read, profile,`) {
		t.Errorf("unknown service: exit %d, stderr %q", code, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"simulate"}, &out, &errb, withTestEnv(t)); code != 130 {
		t.Errorf("interrupted simulate: exit %d, want 130 (%s)", code, errb.String())
	}
}

// TestCompletion: spf13/cobra's completion scripts, with the values and
// file kinds each flag takes.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if code, out, errs := xblcall(t, "completion", shell); code != 0 || !strings.Contains(out, "xblcall") {
			t.Errorf("completion %s: exit %d, stderr %q", shell, code, errs)
		}
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"si"}, []string{"simulate\treplay a call pattern against the embedded mock in virtual time", ":4"}},
		{[]string{"simulate", "--client", ""}, []string{"naive", "xsapi", "fgrl", "subscribed", "all", ":4"}},
		{[]string{"limits", "--revision", ""}, append(limits.Revisions(), ":4")},
		{[]string{"simulate", "--svg", ""}, []string{"svg", ":8"}},
		{[]string{"analyze", ""}, []string{"har", "saz", ":8"}},
		{[]string{"mock", "--retry-after", ""}, []string{"garbage", "http-date", "huge", "missing", "negative", "seconds", ":4"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, _ := xblcall(t, append([]string{"__complete"}, tt.args...)...)
			if diff := cmp.Diff(tt.want, strings.Split(strings.TrimSpace(out), "\n")); code != 0 || diff != "" {
				t.Errorf("exit %d; completions (-want +got):\n%s", code, diff)
			}
		})
	}
}

// TestUsageSpellsFlags: every flag a usage line names, and every flag an
// example gives an xblcall command, is a flag of that command, spelt the
// same way.
func TestUsageSpellsFlags(t *testing.T) {
	t.Parallel()
	flagRE := regexp.MustCompile(`(?:^|[\s\[|(])(--[a-z][a-z0-9-]*|-[A-Za-z])\b`)
	callRE := regexp.MustCompile(`xblcall ([a-z]+)([^|;)&\n]*)`)
	root := newRoot(&env{stdout: io.Discard, stderr: io.Discard})
	check := func(t *testing.T, name, text string) {
		t.Helper()
		cmd, _, err := root.Find([]string{name})
		if err != nil || cmd == root || cmd.Name() == "help" || cmd.Name() == "completion" {
			return
		}
		fs := cmd.Flags()
		for _, m := range flagRE.FindAllStringSubmatch(text, -1) {
			f := m[1]
			if strings.HasPrefix(f, "--") && fs.Lookup(f[2:]) == nil || !strings.HasPrefix(f, "--") && fs.ShorthandLookup(f[1:]) == nil {
				t.Errorf("%q names %s, which is not a flag of %s", clip(text), f, name)
			}
		}
	}
	for _, cmd := range root.Commands() {
		t.Run(cmd.Name(), func(t *testing.T) {
			check(t, cmd.Name(), cmd.Use)
			examples := strings.ReplaceAll(cmd.Example, "\\\n", " ") // continued lines
			for _, m := range callRE.FindAllStringSubmatch(examples, -1) {
				check(t, m[1], m[2])
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// TestMockStopsWithLivePage: an interrupt ends the mock at once and cleanly
// (exit 0, "stopped") while a live page's event stream is open; the
// stream ends with it.
func TestMockStopsWithLivePage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	printed := make(chan struct{})
	out := &syncBuffer{printed: printed}
	var errb syncBuffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"mock", "--addr", "127.0.0.1:0"}, out, &errb, withTestEnv(t)) }()
	<-printed
	s := out.String()
	url := strings.Fields(s[strings.Index(s, "http://"):])[0]
	resp, err := http.Get(url + "/_fgrl/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	if code := <-done; code != 0 || !strings.Contains(out.String(), "fgrl mock stopped") {
		t.Errorf("exit %d (the shutdown waited for the stream?): %s%s", code, out.String(), errb.String())
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Logf("the stream ended with %v", err)
	}
}

// TestMockAdminToken: a mock listening beyond loopback makes an admin token
// and prints it; --admin-token sets it, and the banner says so without
// printing it, on either port (before, it printed the token given, into a
// container's log). The mock's output holds no secret given on its command
// line.
func TestMockAdminToken(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-given-on-the-command-line"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "127.0.0.1:0"}, ""},
		{[]string{"--addr", "127.0.0.1:0", "--admin-token", secret}, "admin token: the one given (--admin-token or $XBLCALL_ADMIN_TOKEN, not printed)"},
		{[]string{"--addr", "0.0.0.0:0", "--https", "127.0.0.1:0", "--admin-token=" + secret}, "admin token: the one given (--admin-token or $XBLCALL_ADMIN_TOKEN, not printed)"},
		{[]string{"--addr", "0.0.0.0:0"}, "admin token "},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			out := &syncBuffer{}
			var errb syncBuffer
			done := make(chan int)
			go func() { done <- run(ctx, append([]string{"mock"}, tt.args...), out, &errb, withTestEnv(t)) }()
			for !strings.Contains(out.String(), "metrics http") {
				select {
				case code := <-done:
					t.Fatalf("exit %d: %s", code, errb.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			cancel()
			<-done
			if got := strings.Contains(out.String(), "admin token"); got != (tt.want != "") || !strings.Contains(out.String(), tt.want) {
				t.Errorf("printed:\n%s", out.String())
			}
			if strings.Contains(out.String()+errb.String(), secret) {
				t.Errorf("the output holds the --admin-token given:\n%s%s", out.String(), errb.String())
			}
		})
	}
}

// TestMockWorld: --world seeds the mock's Config with the file's world.
func TestMockWorld(t *testing.T) {
	t.Parallel()
	o := new(mockOpts)
	if err := mockFlags(o).Parse([]string{"--world", "../../mock/testdata/world.json"}); err != nil {
		t.Fatal(err)
	}
	c, err := o.config(&env{stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, a := range c.World.Accounts {
		tags = append(tags, a.Gamertag)
	}
	if d := cmp.Diff([]string{"Ada", "Bo", "Cy"}, tags); d != "" {
		t.Errorf("the world's gamertags (-want +got)\n%s", d)
	}
}
