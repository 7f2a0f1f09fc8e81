package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A textEdit is one entry of the edits table: a change to a file the Go
// mutators do not reach (a Lua script), and the test that must catch it.
type textEdit struct {
	line     int
	file     string // from the module's root
	old, new string
	run      string // the tests to run (-test.run)
	caughtBy string // a test or subtest that must fail
	note     string
	by       []string // what failed
	err      error
}

// parseEdits reads the edits table: "run: REGEXP" sets the tests for the
// entries after it; an entry is "FILE: OLD -> NEW", OLD found exactly once
// in FILE, with, indented under it, "caught by: TEST" (a test or subtest
// that must fail) and any notes.
func parseEdits(r io.Reader, name string) ([]*textEdit, error) {
	blocks, err := readBlocks(r, name)
	if err != nil {
		return nil, err
	}
	var out []*textEdit
	run := ""
	for _, b := range blocks {
		if re, ok := strings.CutPrefix(b.head, "run: "); ok {
			run = strings.TrimSpace(re)
			continue
		}
		file, change, ok := strings.Cut(b.head, ": ")
		old, new, ok2 := strings.Cut(change, " -> ")
		if !ok || !ok2 || old == "" || run == "" {
			return nil, fmt.Errorf("%s:%d: want FILE: OLD -> NEW after a run: line, got %q", name, b.line, b.head)
		}
		e := &textEdit{line: b.line, file: file, old: old, new: new, run: run}
		var notes []string
		for _, l := range b.body {
			if by, ok := strings.CutPrefix(l, "caught by: "); ok {
				e.caughtBy = strings.TrimSpace(by)
			} else {
				notes = append(notes, l)
			}
		}
		e.note = strings.Join(notes, " ")
		if e.caughtBy == "" {
			return nil, fmt.Errorf("%s:%d: no \"caught by: TEST\" line", name, b.line)
		}
		out = append(out, e)
	}
	return out, nil
}

// runEdits applies each edit of the table in name to a test binary of its
// own and runs the tests; it returns the edits that were not caught by the
// test they name.
func runEdits(name string, workers int, w io.Writer) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	edits, err := parseEdits(f, name)
	f.Close()
	if err != nil {
		return nil, err
	}
	root, err := goCmd("list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mutagen-edits-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	parallel(workers, len(edits), func(i int) {
		edits[i].err = tryEdit(strings.TrimSpace(string(root)), filepath.Join(tmp, strconv.Itoa(i)), edits[i])
	})
	var fails []string
	caught := 0
	for _, e := range edits {
		switch {
		case e.err != nil:
			fails = append(fails, fmt.Sprintf("%s:%d: %v", name, e.line, e.err))
		case !slices.Contains(e.by, e.caughtBy):
			fails = append(fails, fmt.Sprintf("%s:%d: %s: %s -> %s: not caught by %s (failed: %s)", name, e.line, e.file, e.old, e.new, e.caughtBy, orNone(e.by)))
		default:
			caught++
		}
	}
	fmt.Fprintf(w, "%s: %d edits, %d caught by the test named\n", name, len(edits), caught)
	return fails, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// tryEdit builds the test binary of e's package with e applied and runs
// e's tests, recording which failed.
func tryEdit(root, tmp string, e *textEdit) error {
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	name := filepath.Join(root, filepath.FromSlash(e.file))
	src, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if n := strings.Count(string(src), e.old); n != 1 {
		return fmt.Errorf("%s: %q occurs %d times, want once", e.file, e.old, n)
	}
	edited := filepath.Join(tmp, filepath.Base(name))
	if err := os.WriteFile(edited, []byte(strings.Replace(string(src), e.old, e.new, 1)), 0o600); err != nil {
		return err
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{name: edited}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
		return err
	}
	bin := filepath.Join(tmp, "pkg.test")
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", bin, "./"+path.Dir(e.file))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building with %s edited: %v\n%s", e.file, err, out)
	}
	out, timeout, err := runBinary(bin, filepath.Dir(name), nil, 2*time.Minute, "-test.run", e.run)
	if timeout {
		e.by = []string{"(timed out)"}
	} else if err != nil {
		e.by = failures(out)
	}
	return nil
}
