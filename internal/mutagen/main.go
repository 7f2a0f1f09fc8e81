// Command mutagen is CI's mutation testing: it makes small edits to a
// package's code (a comparison's boundary or sense, an arithmetic operator, a
// sign, an increment: go-gremlins' default mutators), runs the package's own
// tests against each edit, and fails when an edit survives that the accepted
// list does not name as equivalent, or when a package's score, the edits
// killed out of those its tests reach, is below -min. Edits to other files
// (the Redis store's Lua scripts) come from a table, and each must be caught
// by the test the table names.
//
// Usage:
//
//	go run ./internal/mutagen [flags] PKG[=FILE_REGEXP]...
//
// PKG is a package pattern naming one package; FILE_REGEXP, when given,
// limits the edits to the files whose base names it matches.
//
// Why not go-gremlins: it builds and links a test binary for every edit,
// about 0.7 s each here, and runs a package's whole suite against it: two
// minutes for throttle alone and far more for redisstore, whose suite takes
// 14 s. mutagen compiles every edit of a package into one test binary, each
// behind a numbered switch the environment sets (mutant schemata), runs each
// test once to learn which edits it reaches, and then runs against each edit
// only the tests that reach it, quickest first.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.accepted, "accepted", "", "the accepted equivalent mutants (a file); none when empty")
	flag.StringVar(&o.edits, "edits", "", "a table of edits to non-Go files, each of which a named test must catch")
	flag.Float64Var(&o.min, "min", 90, "the least score, in percent, each package must reach")
	flag.IntVar(&o.workers, "workers", runtime.NumCPU(), "test binaries run at once")
	flag.BoolVar(&o.verbose, "v", false, "list every mutant, not only the survivors")
	flag.BoolVar(&o.all, "all", false, "run the accepted equivalents' tests too (without it, they count as survivors unrun)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mutagen [flags] PKG[=FILE_REGEXP]...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 && o.edits == "" {
		flag.Usage()
		os.Exit(2)
	}
	o.targets = flag.Args()
	start := time.Now()
	err := run(o, os.Stdout)
	fmt.Printf("mutagen: %.0f s\n", time.Since(start).Seconds())
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutagen:", err)
		os.Exit(1)
	}
}

type options struct {
	targets  []string
	accepted string
	edits    string
	min      float64
	workers  int
	verbose  bool
	all      bool // run the accepted equivalents too
}

// run tests every target, then every edit of the table, and returns an
// error naming what failed.
func run(o options, w io.Writer) error {
	if !(o.min >= 0 && o.min <= 100) { // NaN too: no score is below it
		return fmt.Errorf("-min %v is not a percent from 0 to 100", o.min)
	}
	var acc []*acceptance
	if o.accepted != "" {
		var err error
		if acc, err = readAccepted(o.accepted); err != nil {
			return err
		}
	}
	var results []result
	for _, target := range o.targets {
		pattern, filter, _ := strings.Cut(target, "=")
		p, err := load(pattern, filter)
		if err != nil {
			return err
		}
		var skip func(string) bool
		if !o.all {
			skip = func(key string) bool { return match(acc, key) != nil }
		}
		ms, refused, err := mutate(p, o.workers, skip)
		if err != nil {
			return fmt.Errorf("%s: %w", p.path, err)
		}
		results = append(results, result{p.path, p.root, p.mutated(), ms, refused})
	}
	failures := judge(w, results, acc, o)
	if o.edits != "" {
		fails, err := runEdits(o.edits, o.workers, w)
		if err != nil {
			return err
		}
		failures = append(failures, fails...)
	}
	if len(failures) > 0 {
		fmt.Fprintln(w)
		for _, f := range failures {
			fmt.Fprintln(w, "FAIL:", f)
		}
		return fmt.Errorf("%d failures", len(failures))
	}
	return nil
}

// result is one package's mutants, tested.
type result struct {
	path    string
	root    string   // the module's directory
	files   []string // the files mutated
	ms      []*mutant
	refused int // mutants whose code the compiler refused
}

// judge reports every package's mutants and returns what fails the run:
// survivors not accepted, scores below o.min, and accepted entries that
// name no mutant: of the files mutated, or of a file gone (renamed or
// deleted), whatever the run mutated.
func judge(w io.Writer, results []result, acc []*acceptance, o options) []string {
	var failures, files, dirs []string
	root := "" // the module's, when a result knows it
	for _, r := range results {
		files = append(files, r.files...)
		for _, f := range r.files {
			dirs = append(dirs, path.Dir(f))
		}
		root = cmp.Or(r.root, root)
		failures = append(failures, report(w, r.path, r.ms, r.refused, acc, o)...)
	}
	for _, a := range acc {
		switch {
		case a.used:
		case slices.Contains(files, a.file):
			failures = append(failures, "accepted, but no such mutant (its line changed, or went): "+a.key)
		case !strings.HasSuffix(a.file, ".go"):
			failures = append(failures, "accepted, but no such mutant: its file is no Go file: "+a.key)
		case root != "" && gone(filepath.Join(root, filepath.FromSlash(a.file))):
			failures = append(failures, "accepted, but no such mutant: its file is gone (renamed, or deleted): "+a.key)
		case slices.Contains(dirs, path.Dir(a.file)):
			failures = append(failures, "accepted, but no such mutant: the run mutates its package but not its file (the file filter leaves it out): "+a.key)
		case len(results) > 0:
			fmt.Fprintln(w, "NOTE: not judged, its package is not in this run: "+a.key)
		}
	}
	return failures
}

// gone reports whether no file is at name.
func gone(name string) bool {
	_, err := os.Stat(name)
	return errors.Is(err, fs.ErrNotExist)
}

// report prints a package's mutants and returns what fails it.
func report(w io.Writer, path string, ms []*mutant, refused int, acc []*acceptance, o options) []string {
	var nKilled, nTimedOut, nLived, nAccepted, nNotRun int
	var fails []string
	for _, m := range ms {
		a := match(acc, m.key())
		if a != nil && m.status != survived {
			// A test that depends on timing can fail under load: not a
			// failure of the run, but the entry may no longer be needed.
			fmt.Fprintf(w, "WARNING: accepted as equivalent, yet %s this run (by %s): %s\n", m.status, m.by, m.key())
		}
		switch m.status {
		case killed:
			nKilled++
		case timedOut:
			nKilled++
			nTimedOut++
		case survived:
			nLived++
			if a != nil {
				nAccepted++
				if m.by == notRun {
					nNotRun++
				}
			} else {
				fails = append(fails, "survived: "+m.key())
			}
			if o.verbose || a == nil {
				fmt.Fprintf(w, "%-8s %s%s (%.1f s)\n", m.status, m.where(), acceptedMark(a, m), m.took.Seconds())
			}
			continue
		}
		if o.verbose {
			fmt.Fprintf(w, "%-8s %s %s (%.1f s)\n", m.status, m.where(), m.by, m.took.Seconds())
		}
	}
	score := 100.0 // no mutants at all; with mutants (the compiler's refused among them), none reached scores 0
	if len(ms)+refused > 0 {
		score = 100 * float64(nKilled) / float64(max(nKilled+nLived, 1))
	}
	fmt.Fprintf(w, "%s: %d mutants, %d reached by its tests: %d killed (%d by a timeout), %d survived (%d accepted as equivalent, %d of them not run); score %.1f %%",
		path, len(ms), nKilled+nLived, nKilled, nTimedOut, nLived, nAccepted, nNotRun, score)
	if refused > 0 {
		fmt.Fprintf(w, "; %d more the compiler refused", refused)
	}
	fmt.Fprintln(w)
	if score < o.min {
		fails = append(fails, fmt.Sprintf("%s: score %.1f %% is below %.0f %%", path, score, o.min))
	}
	return fails
}

func acceptedMark(a *acceptance, m *mutant) string {
	switch {
	case a == nil:
		return ""
	case m.by == notRun:
		return " (accepted, not run)"
	}
	return " (accepted)"
}
