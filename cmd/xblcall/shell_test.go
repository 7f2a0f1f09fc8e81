package main

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// installXblcall returns a directory (for PATH) holding xblcall built as
// go install would build it: built once per test binary (each build links a
// 40 MB binary; the README and help tests all need one), read-only to them.
func installXblcall(t *testing.T) string {
	t.Helper()
	bin, err := builtXblcall()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// builtXblcall builds xblcall once; TestMain removes its directory.
var builtXblcall = sync.OnceValues(func() (string, error) {
	bin, err := os.MkdirTemp("", "xblcall-bin-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "xblcall"), ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v %s", err, out)
	}
	return bin, nil
})

// TestMain runs the tests, then removes the xblcall they shared.
func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := builtXblcall(); err == nil && bin != "" {
		os.RemoveAll(bin)
	}
	os.Exit(code)
}

// userEnv is a new user's environment for README lines: the installed
// xblcall first on PATH, a home and config directory of their own under
// dir (a sign-in is stored there), and no XBL_CLIENT_ID or XBL_TOKEN.
func userEnv(bin, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "PATH", "HOME", "XDG_CONFIG_HOME", "XBL_CLIENT_ID", "XBL_TOKEN":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"))
}

// shell is one bash reading lines as a user types them: a job a line
// starts with & stays its own until the shell's kill %1 or the end. Its
// standard output and error are one pipe, in order.
type shell struct {
	cmd    *exec.Cmd
	in     *os.File
	out    *bufio.Reader
	marker string // printed with the status after each line
}

// startShell starts bash in dir with env; it ends with the test.
func startShell(t *testing.T, dir string, env []string) *shell {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &shell{cmd: exec.Command("bash", "--norc", "--noprofile"), in: inW, out: bufio.NewReaderSize(outR, 1<<20), marker: "__status_" + rand.Text() + "="}
	s.cmd.Dir, s.cmd.Env, s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = dir, env, inR, outW, outW
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() {
		fmt.Fprintln(s.in, "kill $(jobs -p) 2>/dev/null; exit")
		s.in.Close()
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
		}
		outR.Close()
	})
	return s
}

// run types line and returns its exit status and what it printed (a
// background job's output too, as a terminal shows it), within timeout.
func (s *shell) run(t *testing.T, line string, timeout time.Duration) (int, string) {
	t.Helper()
	if _, err := fmt.Fprintf(s.in, "%s\n__status=$?; echo; echo %s$__status\n", line, s.marker); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	type result struct {
		code int
		out  string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var b strings.Builder
		for {
			l, err := s.out.ReadString('\n')
			if i := strings.Index(l, s.marker); i >= 0 {
				b.WriteString(l[:i])
				code, _ := strconv.Atoi(strings.TrimSpace(l[i+len(s.marker):]))
				done <- result{code, b.String(), nil}
				return
			}
			b.WriteString(l)
			if err != nil {
				done <- result{-1, b.String(), err}
				return
			}
		}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("%s: the shell ended: %v\n%s", line, r.err, clip(r.out))
		}
		return r.code, r.out
	case <-time.After(timeout):
		t.Fatalf("%s: still running after %v", line, timeout)
		return 0, ""
	}
}

// documentedExit is the exit status a README line's comment gives ("exit
// 1 when red"), or 0.
func documentedExit(line string) int {
	_, comment, _ := strings.Cut(line, " # ")
	if m := regexp.MustCompile(`\bexit (\d)\b`).FindStringSubmatch(comment); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}
