package main

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// attack2Mutants loads and mutates a testdata package and returns its mutants'
// statuses by key, without the package's directory.
func attack2Mutants(t *testing.T, dir string) (map[string]string, error) {
	t.Helper()
	p, err := load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := mutate(p, 2, nil)
	got := map[string]string{}
	for _, m := range ms {
		got[strings.TrimPrefix(m.key(), "internal/mutagen/"+strings.TrimPrefix(dir, "./")+"/")] = m.status.String()
	}
	return got, err
}

// main.go: "PKG is a package pattern naming one package; FILE_REGEXP, when
// given, limits the edits to the files whose base names it matches", and
// the command "fails ... when a package's score, the edits killed out of
// those its tests reach, is below -min"; .ci/run names transport that way
// ('./transport=^(gate|classify|assess)\.go$').
//
// A FILE_REGEXP that matches none of the package's files (a typo, or the
// files renamed) mutates nothing: the package reports "0 mutants ...
// score 100.0 %" and the run passes, a gate that tested nothing. It must
// fail closed.
func TestAttack2MutagenFileFilterMatchingNoFileFails(t *testing.T) {
	var out bytes.Buffer
	err := run(options{targets: []string{sample + `=^(smaple|gone)\.go$`}, min: 90, workers: 2}, &out)
	if err == nil {
		t.Errorf("run passed with a FILE_REGEXP matching no file of %s; want a failure; output:\n%s", sample, out.String())
	}
}

// report's own rule: "score := 100.0 // no mutants at all; with mutants,
// none reached scores 0"; RELIABILITY.md: CI "fails ... when a package's
// score (killed out of reached) is under 90 %", and a mutant the compiler
// refuses "is left out and counted as refused, the others run".
//
// A package whose every mutant the compiler refuses (here its one, Up's
// level + 1 under a parameter that shadows the type) has mutants, and none
// of them is tested, yet it scores 100 % ("0 mutants, 0 reached ...; score
// 100.0 %; 1 more the compiler refused") and the run passes.
func TestAttack2MutagenAllMutantsRefusedFails(t *testing.T) {
	var out bytes.Buffer
	err := run(options{targets: []string{"./testdata/attack2refused"}, min: 90, workers: 2}, &out)
	if !strings.Contains(out.String(), "1 more the compiler refused") {
		t.Fatalf("the mutant was not refused; output:\n%s", out.String())
	}
	if err == nil {
		t.Errorf("run passed a package none of whose mutants was tested; want a failure; output:\n%s", out.String())
	}
}

// main.go's flag: -min is "the least score, in percent, each package must
// reach"; the command "fails ... when a package's score ... is below -min".
//
// -min NaN is no percent, and every comparison with it is false: the score
// gate is off, and a package scoring 0 % (its one mutant untested) passes.
// With -min 90 the same package fails, as it should.
func TestAttack2MutagenMinNaNFails(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mutagen")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mutagen := func(min string) (string, error) {
		out, err := exec.Command(bin, "-workers", "2", "-min", min, "./testdata/attack2untested").CombinedOutput()
		return string(out), err
	}
	if out, err := mutagen("90"); err == nil || !strings.Contains(out, "score 0.0 %") {
		t.Fatalf("-min 90: %v, want a failure with score 0.0 %%; output:\n%s", err, out)
	}
	if out, err := mutagen("NaN"); err == nil {
		t.Errorf("-min NaN: the run passed a package scoring 0 %%; want a failure (or -min refused); output:\n%s", out)
	}
}

// .ci/mutants-accepted.txt: "go run ./internal/mutagen (see .ci/run) fails
// on a survivor not listed here, and on an entry here that names no mutant
// of a package the run mutates."
//
// An entry whose "file" is a directory or a file that is not Go names no
// mutant, yet passed: judge checked an entry only when its file was
// mutated or is gone from the disk. Such an entry stays in the list
// unnoticed, to accept any mutant that comes to match it later. (An entry
// of a package the run does not mutate is not judged, and says so: a run
// of some of the packages reads the same list.)
func TestAttack2MutagenAcceptedEntryNamingNoMutantFails(t *testing.T) {
	r := mutateSample(t)
	const max = "internal/mutagen/testdata/sample/sample.go: Max: if a [>] b { -> >=\n\tequal values: either is the maximum\n"
	for _, c := range []struct {
		stale string
		fails bool
	}{
		{"internal/mutagen/testdata/sample: Max: if a [>] b { -> >=", true},
		{"internal/mutagen/testdata/sample/greeting.txt: Greet: hello [+] name -> -", true},
		{"internal/mutagen/testdata/attackkeys/attackkeys.go: Nothing: if a [>] b { -> >=", false},
	} {
		acc, err := parseAccepted(strings.NewReader(max+c.stale+"\n\tno such mutant\n"), "accepted.txt")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		fails := judge(&out, []result{r}, acc, options{min: 90})
		failed := strings.Contains(strings.Join(fails, "\n"), c.stale)
		if failed != c.fails {
			t.Errorf("entry %q names no mutant: in the run's failures %v, want %v (failures %q)", c.stale, failed, c.fails, fails)
		}
		if !c.fails && !strings.Contains(out.String(), "not judged, its package is not in this run: "+c.stale) {
			t.Errorf("entry %q of another package: the output does not say it was not judged:\n%s", c.stale, out.String())
		}
	}
}

// An entry naming a Go file of a package the run mutates, but which its
// FILE_REGEXP leaves out (as .ci/run mutates three of the transport's
// files), names no mutant: it fails the run.
func TestAcceptedEntryOfAFileLeftOutFails(t *testing.T) {
	r := mutateSample(t)
	r.files = slices.DeleteFunc(slices.Clone(r.files), func(f string) bool { return !strings.HasSuffix(f, "/sample.go") })
	r.ms = slices.DeleteFunc(slices.Clone(r.ms), func(m *mutant) bool { return !strings.HasSuffix(m.file, "/sample.go") })
	const entry = "internal/mutagen/testdata/sample/more.go: Three: return [3] -> 4"
	acc, err := parseAccepted(strings.NewReader(entry+"\n\twhy\n"), "accepted.txt")
	if err != nil {
		t.Fatal(err)
	}
	fails := judge(io.Discard, []result{r}, acc, options{min: 0})
	if !strings.Contains(strings.Join(fails, "\n"), "the file filter leaves it out): "+entry) {
		t.Errorf("failures %q, want the entry of a file the filter leaves out", fails)
	}
}

// main.go: mutagen "compiles every edit of a package into one test binary,
// each behind a numbered switch the environment sets (mutant schemata)",
// and traceTests runs each test "without a mutant"; RELIABILITY.md: "A
// mutant is a small edit of the code ... the package's own tests kill it
// when one of them fails".
//
// With every switch off the binary must be the code as written. Scale
// returns x * (3 / 2), the integer constant 1, so x; its test passes under
// go test. The schema rewrites the constant 3 / 2 as a call,
// mutagenQUO[float64](k, 3, 2), which divides at run time in float64: 1.5.
// With no mutant on, Scale(2) is 3, and mutagen fails the package: "TestScale
// fails without a mutant, twice".
func TestAttack2MutagenSchemaWithoutMutantIsTheCode(t *testing.T) {
	if out, err := exec.Command("go", "test", "-count=1", "./testdata/attack2baseline").CombinedOutput(); err != nil {
		t.Fatalf("the package's own test fails without mutagen: %v\n%s", err, out)
	}
	if _, err := attack2Mutants(t, "./testdata/attack2baseline"); err != nil {
		t.Errorf("mutate: %v\nwant the tests to pass with no mutant on, as they pass on the code", err)
	}
}

// RELIABILITY.md: "A mutant is a small edit of the code (`<` to `<=`, ...,
// `+` to `-`, ...); the package's own tests kill it when one of them
// fails", and a survivor not accepted fails the run.
//
// Grow's mutant x [*] (3 / 2) -> / is x / (3 / 2): x / 1, x, the code
// itself, so no test can fail on it; it must survive. In the schema the
// constant 3 / 2 is computed at run time as 1.5, so the mutant returns x /
// 1.5 and TestGrow (Grow(4) >= 4) "kills" it: a free kill that raises the
// score and hides a survivor from the gate.
func TestAttack2MutagenConstantEditFreeKill(t *testing.T) {
	x := 4.0
	if x/(3/2) != x || x*(3/2) != x {
		t.Fatal("the edit is not the code itself")
	}
	got, err := attack2Mutants(t, "./testdata/attack2freekill")
	if err != nil {
		t.Fatal(err)
	}
	const k = "attack2freekill.go: Grow: func Grow(x float64) float64 { return x [*] (3 / 2) } -> /"
	if got[k] != "SURVIVED" {
		t.Errorf("%s: %s, want SURVIVED (x / (3 / 2) is x; no test can fail on it); all: %v", k, got[k], got)
	}
}

// held: a test that reaches a mutant and then skips (t.Skip) passes: the
// mutant survives; a skip is no kill.
func TestAttack2MutagenSkippedTestIsNoKill(t *testing.T) {
	got, err := attack2Mutants(t, "./testdata/attack2skip")
	if err != nil {
		t.Fatal(err)
	}
	const k = "attack2skip.go: Inc: func Inc(x int) int { return x [+] 1 } -> -"
	if got[k] != "SURVIVED" {
		t.Errorf("%s: %s, want SURVIVED; all: %v", k, got[k], got)
	}
}

// held: main.go, the command "runs the package's own tests against each
// edit"; a package whose test file does not compile fails the run (the
// compiler's error, in the _test.go file, is not placed on a mutant and
// left out), rather than passing with no test run.
func TestAttack2MutagenTestsThatDoNotBuildFail(t *testing.T) {
	var out bytes.Buffer
	err := run(options{targets: []string{"./testdata/attack2nobuild"}, min: 0, workers: 2}, &out)
	if err == nil || !strings.Contains(err.Error(), "building the mutants") {
		t.Errorf("run = %v, want the build's failure; output:\n%s", err, out.String())
	}
}

// held: parseEdits, "OLD found exactly once in FILE", and main.go, each edit
// "must be caught by the test the table names": a run: line matching no
// test, a caught-by test that does not exist, a file or a directory that
// does not exist, and an OLD text found twice each fail the run; none is
// counted caught.
func TestAttack2MutagenEditsFailClosed(t *testing.T) {
	const edits = "run: ^TestNoSuchTest$\n" +
		"internal/mutagen/testdata/sample/greeting.txt: hello -> jello\n\tcaught by: TestNoSuchTest\n" +
		"run: .\n" +
		"internal/mutagen/testdata/sample/greeting.txt: hello -> jello\n\tcaught by: TestNoSuchTest\n" +
		"internal/mutagen/testdata/sample/gone.lua: a -> b\n\tcaught by: TestSample\n" +
		"internal/mutagen/testdata/nosuchdir/gone.lua: a -> b\n\tcaught by: TestSample\n" +
		"internal/mutagen/testdata/sample/sample.go: return -> return 0 +\n\tcaught by: TestSample\n"
	var out bytes.Buffer
	fails, err := runEdits(write(t, t.TempDir(), "edits.txt", edits), 2, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(fails) != 5 || !strings.Contains(out.String(), "5 edits, 0 caught") {
		t.Errorf("%d failures, want 5 (none caught): %q; output:\n%s", len(fails), fails, out.String())
	}
	for _, f := range fails {
		t.Log(f)
	}
}
