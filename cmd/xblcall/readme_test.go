package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeCommands runs the README's CLI lines as written (from the
// repository's root, each "go run ./cmd/xblcall ARGS" as xblcall ARGS; a
// line of two joined by && as both), with the exit status each documents:
// 0, or 1 where the line says "exit 1"; a pipe's other end (| jq) is left
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
		for _, m := range run.FindAllStringSubmatch(line, -1) {
			args := strings.Fields(m[1])
			switch args[0] {
			case "mock", "login", "check":
				continue
			}
			start := time.Now()
			code, _, errs := xblcall(t, args...)
			t.Logf("%v %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(m[0]))
			if code != want && !(want == 1 && code == 0) {
				t.Errorf("%s: exit %d, want %d\n%s", strings.TrimSpace(m[0]), code, want, clip(errs))
			}
			ran++
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README lines; the block has more", ran)
	}
}
