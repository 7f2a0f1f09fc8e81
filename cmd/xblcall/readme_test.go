package main

import (
	"github.com/xblgo/fgrl/mock"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestReadmeCommands runs the README's CLI block as a new user would: each
// line typed into one bash, as written, with the installed xblcall on PATH
// (built into a directory of its own), from a directory holding the
// repository's examples, in a home of its own and with XBL_CLIENT_ID
// unset. Pipes, && and the shell's own lines (source <(...)) run as bash
// runs them, so a line's status is its last command's: a line must exit as
// its comment says ("exit 1 when red", "exit 2 without one"), or 0.
// Before, the lines ran in-process with a pipe's other end cut off, so
// "| tee analyze.sarif" (exit 0 whatever the verdict) and "--client-id
// $XBL_CLIENT_ID" (unset: a flag without its value, exit 2) passed.
// The lines that serve (mock) or need a running mock (check) are left to
// the blocks and tests that start one.
func TestReadmeCommands(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	bin := installXblcall(t)
	block := readmeBlock(t, "## The CLI")
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples"))
	sh := startShell(t, dir, userEnv(bin, dir))
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if strings.HasPrefix(line, "xblcall mock ") || strings.HasPrefix(line, "xblcall check ") {
			continue
		}
		if strings.Contains(line, "| jq") {
			if _, err := exec.LookPath("jq"); err != nil {
				t.Logf("no jq on PATH: %s", line)
				continue
			}
		}
		start := time.Now()
		code, out := sh.run(t, line, 2*time.Minute)
		t.Logf("%v %s", time.Since(start).Round(time.Millisecond), line)
		if want := documentedExit(line); code != want {
			t.Errorf("%s: exit %d, want %d\n%s", line, code, want, clip(out))
		}
		ran++
	}
	if ran < 14 {
		t.Errorf("ran %d README lines; the block has more", ran)
	}
	for _, file := range []string{"calls.svg", "naive.har", "report.html", "analyze.sarif"} { // what the lines write
		if st, err := os.Stat(filepath.Join(dir, file)); err != nil || st.Size() == 0 {
			t.Errorf("the lines wrote no %s: %v", file, err)
		}
	}
}

// TestReadmeSignInBlock runs the README's sign-in against a mock as
// written, in one bash (but for the port): the installed mock in the
// background, XBLCALL_MOCK exported, login (reaching the mock by it),
// whoami (the mock's gamertag), call, and kill %1,
// after which nothing serves the port: the backgrounded installed binary
// is the mock itself, not a go run holding a child.
func TestReadmeSignInBlock(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	bin, dir, port := installXblcall(t), t.TempDir(), freePort(t)
	block := readmeBlock(t, "Against a mock, no registration is needed")
	sh := startShell(t, dir, userEnv(bin, dir))
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(strings.ReplaceAll(block, "8080", port)), "\n") {
		code, out := sh.run(t, line, time.Minute)
		switch {
		case code != 0:
			t.Errorf("%s: exit %d\n%s", line, code, clip(out))
		case strings.HasSuffix(strings.TrimSpace(line), "&"):
			waitServing(t, "127.0.0.1:"+port)
		case strings.HasPrefix(line, "xblcall call ") && !strings.Contains(out, "MockPlayer"):
			t.Errorf("%s: printed no gamertag:\n%s", line, clip(out))
		}
		ran++
	}
	if ran != 6 {
		t.Errorf("ran %d lines of the block, want 6", ran)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the mock still serves after kill %1")
		}
	}
}

// TestHelpExamples runs the examples of every help page that can run here
// as written (xblcall ARGS; a continued line joined; a pipe's other end, a
// redirect and a comment left out): those of call --mock, limits, simulate,
// analyze and token, from a fresh directory holding the repository's
// examples. A line exits 0, or 1 where its comment says "exit 1" or the
// demo is red (analyze of a naive trace). Examples that serve, sign in, need a running mock or set shell
// variables are left to their own tests.
func TestHelpExamples(t *testing.T) {
	root, _ := filepath.Abs("../..")
	t.Chdir(t.TempDir())
	os.Symlink(filepath.Join(root, "examples"), "examples")
	ran := 0
	cli := newRoot(&env{stdout: io.Discard, stderr: io.Discard})
	for _, name := range []string{"call", "limits", "limits plan", "simulate", "analyze", "token"} {
		cmd, _, err := cli.Find(strings.Fields(name))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(cmd.Example, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "xblcall ") || strings.ContainsAny(line, "$`") {
				continue
			}
			want := 0
			if _, comment, _ := strings.Cut(line, " # "); strings.HasPrefix(comment, "exit 1") {
				want = 1
			}
			for _, part := range strings.Split(line, "&&") {
				part = strings.TrimSpace(part)
				for _, cut := range []string{" | ", " # ", " > "} {
					part, _, _ = strings.Cut(part, cut)
				}
				args := shellWords(t, strings.TrimPrefix(part, "xblcall "))
				if args[0] == "call" && !slices.Contains(args, "--mock") {
					continue // a live service or a running mock
				}
				var code int
				var errs string
				if args[0] == "call" { // the embedded mock, in virtual time: -n 20 waits 15 s for profile's burst window
					synctest.Test(t, func(t *testing.T) { code, _, errs = xblcall(t, args...) })
				} else {
					code, _, errs = xblcall(t, args...)
				}
				red := args[0] == "analyze" // the traces at hand are the naive client's: red
				if code != want && !(red && code == 1) {
					t.Errorf("help %s: %s: exit %d\n%s", name, part, code, clip(errs))
				}
				ran++
			}
		}
	}
	if ran < 15 {
		t.Errorf("ran %d help examples, want them all", ran)
	}
}

// shellWords splits a command line as a shell does for plain words and
// '...' or "..." quoting (no expansion).
func shellWords(t *testing.T, s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %q", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// TestReadmeAdminCalls runs every line of README.md and docs/MOCK.md that calls a running mock's
// admin API with curl, as written but for the port, against xblcall mock
// started as the README starts it; the files they send are the
// repository's (world.json: mock/testdata/world.json; script.yaml:
// cmd/xblcall/testdata/rehearsal.yaml). Each must succeed (curl -f: no
// 4xx or 5xx answer).
func TestReadmeAdminCalls(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl on PATH")
	}
	var b []byte
	for _, doc := range []string{"../../README.md", "../../docs/MOCK.md"} {
		d, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, d...), '\n')
	}
	dir := t.TempDir()
	for name, src := range map[string]string{"world.json": "../../mock/testdata/world.json", "script.yaml": "testdata/rehearsal.yaml"} {
		data, _ := os.ReadFile(src)
		os.WriteFile(filepath.Join(dir, name), data, 0o600)
	}
	base, _ := startMock(t, "--log-format", "off")
	// The code under test's one call, which the lines check and certify (a
	// mock that saw none certifies nothing).
	if code, _, errs := xblcall(t, "call", "--token", mock.Token("1", "2"), "-H", "Host: social.xboxlive.com", base+"/users/me/people"); code != 0 {
		t.Fatalf("a call to the mock: exit %d: %s", code, errs)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	ran := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "curl ") || !strings.Contains(line, "http://127.0.0.1:8080/_fgrl/") {
			continue
		}
		line, _, _ = strings.Cut(line, " # ")
		args := shellWords(t, strings.ReplaceAll(strings.TrimPrefix(line, "curl "), "http://127.0.0.1:8080", base))
		cmd := exec.Command(curl, append([]string{"-sS", "-f", "-o", os.DevNull}, args...)...) // -f: a 4xx or 5xx fails
		cmd.Dir = dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v %s", line, err, msg)
		}
		ran++
	}
	if ran < 12 {
		t.Errorf("ran %d README admin lines, want them all", ran)
	}
}

// TestReadmeInstallBlock runs the README's set-up as written, in one bash,
// for a user whose PATH lacks Go's bin directory (a GOPATH of its own; the
// module cache stays the machine's): go install, the export PATH line,
// then xblcall help, which must find the xblcall go install put there.
// Before, the README said nothing of PATH, and xblcall was not found.
func TestReadmeInstallBlock(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	goenv := strings.Fields(string(out))
	home, gopath := t.TempDir(), t.TempDir()
	var path []string // the PATH of a fresh machine: no Go bin directory but the toolchain's
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir != filepath.Join(goenv[2], "bin") {
			path = append(path, dir)
		}
	}
	env := append(userEnv("", home), "GOPATH="+gopath, "GOMODCACHE="+goenv[0], "GOCACHE="+goenv[1])
	env = append(env, "PATH="+strings.Join(path, string(os.PathListSeparator)))
	root, _ := filepath.Abs("../..")
	sh := startShell(t, root, env)
	if code, _ := sh.run(t, "command -v xblcall", time.Minute); code == 0 {
		t.Skip("an xblcall is on PATH outside Go's bin directory")
	}
	block := readmeBlock(t, "install the CLI once and call it by name")
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if code, out := sh.run(t, line, 5*time.Minute); code != 0 {
			t.Errorf("%s: exit %d\n%s", line, code, clip(out))
		}
		ran++
	}
	if code, out := sh.run(t, "command -v xblcall", time.Minute); code != 0 || strings.TrimSpace(out) != filepath.Join(gopath, "bin", "xblcall") {
		t.Errorf("xblcall is %q (exit %d), want the one go install put in %s", strings.TrimSpace(out), code, gopath)
	}
	if ran != 3 {
		t.Errorf("ran %d lines of the block, want 3", ran)
	}
}
