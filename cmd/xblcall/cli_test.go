package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/xblgo/fgrl/analyze"
)

// hint is a command the CLI tells its user to run.
var hint = regexp.MustCompile(`\b(?:run|see) (xblcall help(?: [a-z]+)*)\b`)

// TestEveryHintRuns: every command the CLI's messages tell a user to run
// (a flag error's "run xblcall help limits plan", an unknown command's
// "run xblcall help", the hints written in its source) runs, and exits 0.
func TestEveryHintRuns(t *testing.T) {
	t.Parallel()
	hints := map[string]bool{}
	// The hints a flag error gives, for every command of the tree.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			path := strings.Fields(strings.TrimPrefix(sub.CommandPath(), "xblcall "))
			code, _, stderr := xblcall(t, append(path, "--no-such-flag")...)
			m := hint.FindStringSubmatch(stderr)
			if code != 2 || m == nil {
				t.Errorf("xblcall %s --no-such-flag: exit %d, %q; want exit 2 and a hint", strings.Join(path, " "), code, stderr)
			} else {
				hints[m[1]] = true
			}
			walk(sub)
		}
	}
	walk(newRoot(&env{stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv}))
	if _, _, stderr := xblcall(t, "nosuch"); hint.MatchString(stderr) {
		hints[hint.FindStringSubmatch(stderr)[1]] = true
	} else {
		t.Errorf("an unknown command gives no hint: %q", stderr)
	}
	// The hints written in the source.
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range hint.FindAllStringSubmatch(string(src), -1) {
			hints[m[1]] = true
		}
	}
	if len(hints) < 10 {
		t.Fatalf("found %d hints, want one for each command at least", len(hints))
	}
	for h := range hints {
		if code, out, stderr := xblcall(t, strings.Fields(h)[1:]...); code != 0 || !strings.HasPrefix(out, "usage: xblcall") {
			t.Errorf("the hint %q: exit %d, %q %q", h, code, out, stderr)
		}
	}
}

// TestUnknownCommandExits2: a command that does not exist is an error
// however it is asked for, its help included.
func TestUnknownCommandExits2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"nosuch"}, {"nosuch", "--help"}, {"help", "nosuch"}, {"limits", "nosuch"}} {
		if code, _, stderr := xblcall(t, args...); code != 2 || !strings.Contains(stderr, "unknown command") {
			t.Errorf("xblcall %s: exit %d, %q; want exit 2, unknown command", strings.Join(args, " "), code, stderr)
		}
	}
}

// TestVersion: --version prints the build's version.
func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, _ := xblcall(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "xblcall ") || !strings.HasSuffix(out, "\n") {
		t.Errorf("xblcall --version: exit %d, %q", code, out)
	}
}

// TestUsageFromFlags: a command's usage line is its path, [flags] when it
// has any, and its arguments: the flags are listed from the flag set, never
// written by hand.
func TestUsageFromFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ args, want string }{
		{"help call", "usage: xblcall call [flags] URL\n"},
		{"help limits plan", "usage: xblcall limits plan [flags] SCOPE:EVERY[:COUNT]...\n"},
		{"help logout", "usage: xblcall logout\n"},
	} {
		_, out, _ := xblcall(t, strings.Fields(tc.args)...)
		if first, _, _ := strings.Cut(out, "\n"); first+"\n" != tc.want {
			t.Errorf("xblcall %s: %q, want %q", tc.args, first, tc.want)
		}
	}
}

// TestHelpAnalyzeListsEveryRule: `xblcall help analyze` names every rule a
// report can carry (the list once missed events-burst).
func TestHelpAnalyzeListsEveryRule(t *testing.T) {
	t.Parallel()
	code, out, errs := xblcall(t, "help", "analyze")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, r := range analyze.RuleInfos {
		if !strings.Contains(out, "  "+r.ID+" ") {
			t.Errorf("help analyze does not list the rule %s", r.ID)
		}
	}
}
