package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// mutate builds p's mutants into one test binary, learns which tests reach
// each, and runs those tests against each mutant but those whose key skip
// reports (nil: none), which count as survivors without running. It
// returns every mutant whose code compiled, with its status, and the
// number whose code the compiler refused.
func mutate(p *pkg, workers int, skip func(key string) bool) ([]*mutant, int, error) {
	tmp, err := os.MkdirTemp("", "mutagen-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(tmp)
	files := map[string]*rendered{}
	next := 0
	for _, f := range p.srcs {
		if !f.mutate {
			continue
		}
		r := &rendered{file: f, roots: p.points(f, next)}
		walk(r.roots, func(pt *point) {
			r.points = append(r.points, pt)
			for _, m := range pt.mutants {
				next = max(next, m.id)
			}
		})
		files[f.rel] = r
	}
	bin := filepath.Join(tmp, "pkg.test")
	if err := buildSchema(p, files, tmp, bin); err != nil {
		return nil, 0, err
	}
	var ms []*mutant
	refused := 0
	for _, r := range files {
		for _, pt := range r.points {
			if pt.dropped {
				refused += len(pt.mutants)
			} else {
				ms = append(ms, pt.mutants...)
			}
		}
	}
	slices.SortFunc(ms, func(a, b *mutant) int { return a.id - b.id })
	tests, err := traceTests(bin, p.dir, tmp, workers)
	if err != nil {
		return nil, 0, err
	}
	parallel(workers, len(ms), func(i int) { runMutant(bin, p.dir, ms[i], tests, skip) })
	return ms, refused, nil
}

func walk(pts []*point, f func(*point)) {
	for _, pt := range pts {
		f(pt)
		walk(pt.kids, f)
	}
}

// buildSchema writes the overlay and builds the test binary, leaving out
// the points whose replacement the compiler refuses, one round at a time.
func buildSchema(p *pkg, files map[string]*rendered, tmp, bin string) error {
	replace := map[string]string{filepath.Join(p.dir, helperName): filepath.Join(tmp, helperName)}
	if err := os.WriteFile(replace[filepath.Join(p.dir, helperName)], fmt.Appendf(nil, helperSrc, p.name), 0o600); err != nil {
		return err
	}
	for round := 0; ; round++ {
		for i, r := range mapValues(files) {
			for _, pt := range r.points {
				pt.out = nil
			}
			r.src = render(r.file, r.roots)
			name := filepath.Join(tmp, strconv.Itoa(i)+"-"+filepath.Base(r.file.name))
			if err := os.WriteFile(name, r.src, 0o600); err != nil {
				return err
			}
			replace[r.file.name], r.overlay = name, name
		}
		overlay, err := json.Marshal(map[string]any{"Replace": replace})
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
			return err
		}
		cmd := exec.Command("go", "test", "-c", "-vet=off", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", bin, p.path)
		cmd.Dir = p.root
		out, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		bad, placed := culprits(out, files, p.root)
		if !placed || len(bad) == 0 || round == 20 {
			return fmt.Errorf("building the mutants of %s: %v\n%s", p.path, err, out)
		}
		for _, pt := range bad {
			pt.dropped = true
		}
	}
}

// mapValues returns m's values in the order of their keys.
func mapValues[V any](m map[string]V) []V {
	var out []V
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// A test is one top-level test, example or fuzz target of the binary: how
// long it took without mutants, and the mutants it reached.
type test struct {
	name    string
	took    time.Duration
	reached map[int]bool
}

// traceTests lists the binary's tests and runs each alone, without a
// mutant, to learn what it reaches. Each must pass.
func traceTests(bin, dir, tmp string, workers int) ([]*test, error) {
	out, _, err := runBinary(bin, dir, nil, time.Minute, "-test.list", ".")
	if err != nil {
		return nil, fmt.Errorf("listing the tests: %v\n%s", err, out)
	}
	var tests []*test
	for _, name := range strings.Fields(string(out)) {
		if strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Example") || strings.HasPrefix(name, "Fuzz") {
			tests = append(tests, &test{name: name})
		}
	}
	errs := make([]error, len(tests))
	parallel(workers, len(tests), func(i int) {
		t := tests[i]
		trace := filepath.Join(tmp, "trace-"+strconv.Itoa(i))
		for try := 1; ; try++ {
			start := time.Now()
			out, _, err := runBinary(bin, dir, []string{"MUTAGEN_TRACE=" + trace}, 10*time.Minute, "-test.run", "^"+t.name+"$")
			t.took = time.Since(start)
			if err == nil {
				break
			}
			if try == 2 { // once more, for a test that depends on timing under load
				errs[i] = fmt.Errorf("%s fails without a mutant, twice: %v\n%s", t.name, err, out)
				return
			}
		}
		t.reached, errs[i] = readTrace(trace)
	})
	return tests, errors.Join(errs...)
}

func readTrace(name string) (map[int]bool, error) {
	reached := map[int]bool{}
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return reached, nil // reached nothing
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, err := strconv.Atoi(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", name, err)
		}
		reached[id] = true
	}
	return reached, sc.Err()
}

// runMutant runs the tests that reach m against it, each alone and the
// quickest first, until one fails or outlives three times its own time
// (plus a second, for a test that hangs on the mutant). A mutant reached
// whose key skip reports survives without running (notRun).
func runMutant(bin, dir string, m *mutant, tests []*test, skip func(key string) bool) {
	start := time.Now()
	defer func() { m.took = time.Since(start) }()
	var reaching []*test
	for _, t := range tests {
		if t.reached[m.id] {
			reaching = append(reaching, t)
		}
	}
	if len(reaching) == 0 {
		m.status = notReached
		return
	}
	m.status = survived
	if skip != nil && skip(m.key()) {
		m.by = notRun
		return
	}
	slices.SortStableFunc(reaching, func(a, b *test) int { return int(a.took - b.took) })
	env := []string{"MUTAGEN_ACTIVE=" + strconv.Itoa(m.id)}
	for _, t := range reaching {
		out, timeout, err := runBinary(bin, dir, env, 3*t.took+time.Second, "-test.run", "^"+t.name+"$")
		switch {
		case timeout:
			m.status, m.by = timedOut, "timed out in "+t.name
			return
		case err != nil:
			m.status, m.by = killed, firstFailure(out, t.name)
			return
		}
	}
}

// notRun is the by of a survivor counted without running its tests.
const notRun = "not run"

// failLine matches the line go test prints for a failed test or subtest.
var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

// failures returns the tests and subtests out reports as failed.
func failures(out []byte) []string {
	var names []string
	for _, m := range failLine.FindAllSubmatch(out, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// firstFailure names the deepest subtest of test that out reports failed,
// or test.
func firstFailure(out []byte, test string) string {
	if f := failures(out); len(f) > 0 {
		return f[len(f)-1]
	}
	if bytes.Contains(out, []byte("panic: ")) {
		return "a panic in " + test
	}
	return test
}

// runBinary runs a test binary in dir with env added and returns its
// output, whether it ran out of time, and its error. The process group is
// killed at the end, so that servers a test started do not outlive it.
func runBinary(bin, dir string, env []string, timeout time.Duration, args ...string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	err := cmd.Run()
	killGroup(cmd)
	return out.Bytes(), ctx.Err() != nil, err
}

// parallel calls do(0) to do(n-1) on up to workers goroutines.
func parallel(workers, n int, do func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := range next {
				do(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
