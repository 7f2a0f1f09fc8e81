package main

import (
	"bytes"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attackMutate loads and mutates a testdata package, failing the test on an
// error.
func attackMutate(t *testing.T, dir, filter string) (*pkg, []*mutant, int) {
	t.Helper()
	p, err := load(dir, filter)
	if err != nil {
		t.Fatal(err)
	}
	ms, refused, err := mutate(p, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, ms, refused
}

// RELIABILITY.md, "Mutation testing": "CI runs every mutant of the packages
// whose correctness is the product against the tests that reach it, and
// fails when one survives that .ci/mutants-accepted.txt does not list";
// main.go: mutagen "runs each test once to learn which edits it reaches,
// and then runs against each edit only the tests that reach it".
//
// A package-level variable's initialiser, and the init function of a file
// whose name sorts before the generated mutagen_schema.go, run in every
// test's process, before the generated init opens MUTAGEN_TRACE: the trace
// misses them, so they are UNTESTED, never run, and out of the score and
// the gate, though every test reaches them and TestValues kills both.
func TestAttackInitMutantsAreRun(t *testing.T) {
	p, ms, _ := attackMutate(t, "./testdata/attackinit", "")
	got := map[string]string{}
	for _, m := range ms {
		got[strings.TrimPrefix(m.key(), "internal/mutagen/testdata/attackinit/")] = m.status.String()
	}
	for _, k := range []string{
		"a.go: var: var double = base [*] 2 -> /",
		"a.go: init: func init() { next = base [+] 1 } -> -",
		"z.go: Triple: func Triple(x int) int { return x [*] 3 } -> /",
	} {
		if got[k] != "KILLED" {
			t.Errorf("%s: %s, want KILLED (every test reaches it as the package initialises; TestValues fails on it)", k, got[k])
		}
	}
	var out bytes.Buffer
	judge(&out, []result{{p.path, p.root, p.mutated(), ms, 0}}, nil, options{min: 90})
	if !strings.Contains(out.String(), "3 mutants, 3 reached") {
		t.Errorf("report: %s, want all 3 mutants reached", strings.TrimSpace(out.String()))
	}
}

// .ci/mutants-accepted.txt: "go run ./internal/mutagen (see .ci/run) fails
// on a survivor not listed here, and on an entry here that names no
// mutant." An entry whose file went (renamed, or deleted) names no mutant,
// yet the run passes: judge checks entries only for files it mutated, so
// an entry for a file that no longer exists is never checked, whether the
// package is mutated in full or through CI's PKG=REGEXP form (here naming
// the file that went, as '.ci/run' names transport's gate.go, classify.go
// and assess.go).
func TestAttackAcceptedEntryOfGoneFileFails(t *testing.T) {
	const entries = "internal/mutagen/testdata/sample/sample.go: Max: if a [>] b { -> >=\n\tequal values: either is the maximum\n" +
		"internal/mutagen/testdata/sample/gone.go: Max: if a [>] b { -> >=\n\tthe file was renamed; the entry stayed\n"
	accepted := write(t, t.TempDir(), "accepted.txt", entries)
	for _, target := range []string{sample, sample + `=^(sample|gone)\.go$`} {
		t.Run(target, func(t *testing.T) {
			var out bytes.Buffer
			err := run(options{targets: []string{target}, accepted: accepted, min: 90, workers: 2}, &out)
			if err == nil || !strings.Contains(out.String(), "no such mutant") || !strings.Contains(out.String(), "gone.go") {
				t.Errorf("run = %v, want a failure naming the entry for gone.go; output:\n%s", err, out.String())
			}
		})
	}
}

// mutate: "It returns every mutant whose code compiled, with its status,
// and the number whose code the compiler refused"; buildSchema "builds the
// test binary, leaving out the points whose replacement the compiler
// refuses". Up's parameter named level shadows the type level, so its
// mutant's helper call mutagenADD[level](...) does not compile; the build
// error names the overlay's temporary file (/tmp/mutagen-*/0-attackshadow.go),
// which culprits cannot place, so the whole package fails to build instead
// of that one point being left out (and Down's mutant is never tested).
func TestAttackRefusedMutantLeftOut(t *testing.T) {
	p, err := load("./testdata/attackshadow", "")
	if err != nil {
		t.Fatal(err)
	}
	ms, refused, err := mutate(p, 2, nil)
	if err != nil {
		t.Fatalf("mutate: %v\nwant the refused point left out", err)
	}
	if refused != 1 {
		t.Errorf("refused %d, want 1 (Up's level + 1)", refused)
	}
	for _, m := range ms {
		if m.fn == "Down" && m.status != killed {
			t.Errorf("%s: %s, want KILLED", m.key(), m.status)
		}
	}
}

// held: mutant.key "names a mutant in a way that survives lines moving",
// and numberRepeats "ranks mutants whose keys would otherwise be equal".
// One line's text repeated in methods of different receivers with one name
// (plain and generic, with one and two type parameters), in two closures of
// one function, in two init functions and in two package-level closures
// gives every mutant a key of its own: receivers are told apart by name,
// the rest by rank.
func TestAttackKeysUnique(t *testing.T) {
	p, err := load("./testdata/attackkeys", "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	n := 0
	for _, f := range p.srcs {
		walk(p.points(f, 0), func(pt *point) {
			for _, m := range pt.mutants {
				n++
				k := m.key()
				if seen[k] {
					t.Errorf("two mutants share the key %q", k)
				}
				seen[k] = true
			}
		})
	}
	if n != 24 {
		t.Errorf("%d mutants, want 24", n)
	}
	for _, k := range []string{
		"A.Cmp: return x [<] y -> <=", "B.Cmp: return x [<] y -> <=", "Set.Cmp: return x [<] y -> <=", "List.Cmp: return x [<] y -> <=",
		"Pair: return x [<] y -> <= (2)", "init: lo[++] -> -- (2)", "var: return x [<] y -> >= (2)",
	} {
		if !seen["internal/mutagen/testdata/attackkeys/attackkeys.go: "+k] {
			t.Errorf("no mutant with the key %q", k)
		}
	}
}

// held: an accepted entry is "the line mutagen prints after "survived:"";
// trailing blanks and CRLF line ends are ignored, and any other spelling
// (another case, a rank the mutant does not have) fails the run twice
// over: the survivor is not listed, and the entry names no mutant; with a
// leading ./ too (the entry names the file of a package the run mutates,
// and no mutant). None lets the survivor through.
func TestAttackAcceptedSpellings(t *testing.T) {
	r := mutateSample(t)
	const key = "internal/mutagen/testdata/sample/sample.go: Max: if a [>] b { -> >="
	tests := []struct {
		name, entry string
		fails       int
	}{
		{"as printed", key + "\n\twhy\n", 0},
		{"trailing blanks", key + " \t \n\twhy\n", 0},
		{"CRLF line ends", key + "\r\n\twhy\r\n", 0}, // bufio.ScanLines drops the \r
		{"another case", strings.Replace(key, "Max", "max", 1) + "\n\twhy\n", 2},
		{"a rank it has not", key + " (2)\n\twhy\n", 2},
		{"a leading ./", "./" + key + "\n\twhy\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acc, err := parseAccepted(strings.NewReader(tt.entry), "accepted.txt")
			if err != nil {
				t.Fatal(err)
			}
			fails := judge(io.Discard, []result{r}, acc, options{min: 0})
			if len(fails) != tt.fails {
				t.Errorf("failures %q, want %d", fails, tt.fails)
			}
			if tt.fails > 0 && !strings.Contains(strings.Join(fails, "\n"), "survived: "+key) {
				t.Errorf("failures %q do not name the survivor", fails)
			}
		})
	}
}

// held: lines moving do not hand an accepted entry to another mutant
// unnoticed. With two "if a [>] b {" in one function, the second accepted
// as "(2)", a new line of the same text put before them (a survivor,
// not equivalent) takes rank 1 and pushes the accepted one to rank 3: the
// entry now names the killed mutant (not run, counted a survivor), but the
// new survivor and the old one at rank 3 are both unlisted and fail the
// run; swapping the two old lines fails it too.
func TestAttackMovedLinesFail(t *testing.T) {
	mk := func(status status) *mutant {
		return &mutant{file: "x.go", fn: "F", text: "if a [>] b {", to: token.GEQ, status: status}
	}
	acc, err := parseAccepted(strings.NewReader("x.go: F: if a [>] b { -> >= (2)\n\tequal values\n"), "accepted.txt")
	if err != nil {
		t.Fatal(err)
	}
	versions := []struct {
		name  string
		ms    []*mutant // in source order
		fails int
	}{
		{"before", []*mutant{mk(killed), mk(survived)}, 0},
		{"a new line first", []*mutant{mk(survived), mk(survived), mk(survived)}, 2}, // rank 2 not run: a survivor
		{"the two swapped", []*mutant{mk(survived), mk(survived)}, 1},
	}
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			for _, a := range acc {
				a.used = false
			}
			numberRepeats([]*point{{mutants: v.ms}})
			fails := judge(io.Discard, []result{{"x", "", []string{"x.go"}, v.ms, 0}}, acc, options{min: 0})
			if len(fails) != v.fails {
				t.Errorf("failures %q, want %d", fails, v.fails)
			}
		})
	}
}

// held: the accepted list is read from a file; a missing one fails the run
// rather than accepting nothing silently.
func TestAttackAcceptedFileMissing(t *testing.T) {
	err := run(options{targets: []string{sample}, accepted: filepath.Join(t.TempDir(), "none.txt"), min: 90, workers: 2}, io.Discard)
	if err == nil || !os.IsNotExist(err) {
		t.Errorf("run = %v, want the missing file's error", err)
	}
}
