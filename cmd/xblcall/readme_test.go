package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReadmeCommands runs the README's CLI lines as written (from the
// repository's root, each "go run ./cmd/xblcall ARGS" as xblcall ARGS; a
// line of two joined by && as both), with the exit status each documents:
// 0, or 1 where the line says "exit 1" (for the last command of a line
// joined by &&; the ones before it exit 0); a pipe's other end (| jq) is left
// out. Lines that serve, sign in or need a running mock (mock, login,
// check) and the shell's completion are left to their own tests; every
// other line runs, so none can rot.
func TestReadmeCommands(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := string(b)
	block = block[strings.Index(block, "## The CLI"):]
	block = block[strings.Index(block, "```sh")+5:]
	block = block[:strings.Index(block, "```")]
	root, _ := filepath.Abs("../..")
	t.Chdir(t.TempDir())
	for _, d := range []string{"examples"} { // the files the lines name, under their own names
		os.Symlink(filepath.Join(root, d), d)
	}
	run := regexp.MustCompile(`go run \./cmd/xblcall ([^&#|]*)`)
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if strings.HasPrefix(line, "source ") {
			continue
		}
		want := 0
		if strings.Contains(line, "exit 1") {
			want = 1
		}
		ms := run.FindAllStringSubmatch(line, -1)
		for i, m := range ms {
			args := strings.Fields(m[1])
			switch args[0] {
			case "mock", "login", "check":
				continue
			}
			want := want
			if i < len(ms)-1 {
				want = 0 // a && goes on only after success
			}
			start := time.Now()
			code, errs := xblcallOnce(t, args...)
			t.Logf("%v %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(m[0]))
			if code != want {
				t.Errorf("%s: exit %d, want %d\n%s", strings.TrimSpace(m[0]), code, want, clip(errs))
			}
			ran++
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README lines; the block has more", ran)
	}
}

// TestHelpExamples runs the examples of every help page that can run here
// as written (xblcall ARGS; a continued line joined; a pipe's other end, a
// redirect and a comment left out): those of call --mock, limits, simulate,
// analyze and token, from a fresh directory holding the repository's
// examples. A line exits 0, or 1 where the demo is red (analyze of a naive
// trace). Examples that serve, sign in, need a running mock or set shell
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
			for _, part := range strings.Split(line, "&&") {
				part = strings.TrimSpace(part)
				for _, cut := range []string{" | ", " # ", " > "} {
					part, _, _ = strings.Cut(part, cut)
				}
				args := shellWords(t, strings.TrimPrefix(part, "xblcall "))
				if args[0] == "call" && !slices.Contains(args, "--mock") {
					continue // a live service or a running mock
				}
				code, errs := xblcallOnce(t, args...)
				red := args[0] == "analyze" // the traces at hand are the naive client's: red
				if code != 0 && !(red && code == 1) {
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

// documented holds the outcome of each documented load run so far, so a
// line both the README and a help page give (call -n 200 runs for half a
// minute of real time) runs once.
var documented sync.Map // strings.Join(args, "\x00") -> [2]any{code, stderr}

func xblcallOnce(t *testing.T, args ...string) (int, string) {
	t.Helper()
	if !slices.Contains(args, "-n") { // only a load run is slow; the others write files where they run
		code, _, errs := xblcall(t, args...)
		return code, errs
	}
	k := strings.Join(args, "\x00")
	if v, ok := documented.Load(k); ok {
		r := v.([2]any)
		return r[0].(int), r[1].(string)
	}
	code, _, errs := xblcall(t, args...)
	documented.Store(k, [2]any{code, errs})
	return code, errs
}

// TestReadmeAdminCalls runs every line of README.md and docs/MOCK.md that calls a running mock's
// admin API with curl, as written but for the port, against xblcall mock
// started as the README starts it; the files they send are the
// repository's (world.json: mock/testdata/world.json; script.yaml:
// cmd/xblcall/testdata/rehearsal.yaml). Each must succeed (curl -f: no
// 4xx or 5xx answer).
func TestReadmeAdminCalls(t *testing.T) {
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
