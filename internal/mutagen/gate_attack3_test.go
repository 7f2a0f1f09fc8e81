package main

import (
	"bytes"
	"flag"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// attack3Mutants loads and mutates a testdata package with every mutant, and
// returns the statuses by key (without the package's directory) and
// mutate's error.
func attack3Mutants(t *testing.T, dir string) (map[string]string, error) {
	t.Helper()
	return attack2Mutants(t, dir)
}

// main.go: mutagen "compiles every edit of a package into one test binary,
// each behind a numbered switch the environment sets (mutant schemata)";
// RELIABILITY.md (the second attack's row): a schema whose code differs
// from the source with every switch off was a break ("with every switch off
// the code was not the code (its own passing test failed under mutagen)"),
// and schema.go's comment: "a helper computing it at run time in the
// context's type is not the code with every switch off".
//
// HalfBit returns os.FileMode(1<<s / 2). The shift is not constant (s is a
// variable), so its untyped 1 takes the type of the context: os.FileMode, a
// uint32, where 1<<32 is 0. os.FileMode is another package's type, so
// typeArg spells none, and the schema's mutagenQUO(k, 1<<s, 2) infers T from
// two untyped operands: int, where 1<<32 is 4294967296. With no mutant on,
// HalfBit(32) is 2147483648, not 0: the package's own passing test fails
// under mutagen.
func TestAttack3MutagenUntypedShiftInForeignTypeIsTheCode(t *testing.T) {
	if out, err := exec.Command("go", "test", "-count=1", "./testdata/attack3shift").CombinedOutput(); err != nil {
		t.Fatalf("the package's own test fails without mutagen: %v\n%s", err, out)
	}
	if got, err := attack3Mutants(t, "./testdata/attack3shift"); err != nil {
		t.Errorf("mutate: %v\nwant the tests to pass with no mutant on, as they pass on the code; mutants %v", err, got)
	}
}

// held: schema.go, "constant expressions are left alone": in x * (3 / 2) the
// outer * (x is a variable) is still mutated, 3 / 2 is not; time.Second * 2,
// iota's arithmetic, a constant condition (high > 1) and a generic
// function's 7 / 2 are left alone, while the non-constant +, - and > are
// mutated; x / (3 / 2), the code itself, survives. With no mutant on every
// test passes.
func TestAttack3MutagenConstantsInPart(t *testing.T) {
	got, err := attack3Mutants(t, "./testdata/attack3const")
	if err != nil {
		t.Fatal(err)
	}
	joined := attack3Keys(got)
	for _, want := range []string{
		"Part: func Part(x float64) float64 { return x [*] (3 / 2) } -> /",
		"Wait: func Wait(d time.Duration) time.Duration { return time.Second*2 [+] d } -> -",
		"Cond: if debug && x [>] 0 { -> >=",
		"Cond: return x [-] 1 -> +",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("no mutant %q; mutants:\n%s", want, joined)
		}
	}
	for _, bad := range []string{"3 [/] 2", "7 [/] 2", "Second[*]2", "high [>] 1", "iota [*]"} {
		if strings.Contains(joined, bad) {
			t.Errorf("a constant expression is mutated (%q); mutants:\n%s", bad, joined)
		}
	}
	const part = "attack3const.go: Part: func Part(x float64) float64 { return x [*] (3 / 2) } -> /"
	if got[part] != "SURVIVED" {
		t.Errorf("%s: %s, want SURVIVED (x / 1 is x)", part, got[part])
	}
}

// held, as the code keeps it: schema.go's points, "so is anything the
// generated code could not express (... arithmetic on a type parameter
// ...)": Gen[T ~int | ~float64](x T) returns x * (7 / 2), and its * has no
// mutant (an outside attack found it left out with nothing saying so; the
// comment now does).
func TestAttack3MutagenGenericArithmeticLeftAlone(t *testing.T) {
	got, err := attack3Mutants(t, "./testdata/attack3const")
	if err != nil {
		t.Fatal(err)
	}
	if joined := attack3Keys(got); strings.Contains(joined, "Gen:") {
		t.Errorf("a mutant in the generic Gen; mutants:\n%s", joined)
	}
}

func attack3Keys(got map[string]string) string {
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, "\n")
}

// held: main.go's flag, -min is "the least score, in percent, each package
// must reach"; run refuses what is not "a percent from 0 to 100". "+Inf",
// "-Inf", "100.5", "-1" are refused; "90.0", "-0", "0x1.68p6"
// (90) and "1e2" are percents and taken.
func TestAttack3MutagenMinSpellings(t *testing.T) {
	for _, c := range []struct {
		min     float64
		refused bool
	}{
		{parseMin(t, "+Inf"), true}, {parseMin(t, "-Inf"), true}, {parseMin(t, "100.5"), true},
		{parseMin(t, "-1"), true}, {parseMin(t, "-0"), false}, {parseMin(t, "90.0"), false},
		{parseMin(t, "0x1.68p6"), false}, {parseMin(t, "1e2"), false},
	} {
		var out bytes.Buffer
		err := run(options{min: c.min, workers: 1}, &out)
		refused := err != nil && strings.Contains(err.Error(), "is not a percent")
		if refused != c.refused {
			t.Errorf("-min %v: refused %v (%v), want %v", c.min, refused, err, c.refused)
		}
	}
}

func parseMin(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	fs := flag.NewFlagSet("mutagen", flag.ContinueOnError)
	fs.Float64Var(&f, "min", 90, "as main's flag") // main: flag.Float64Var(&o.min, "min", 90, ...)
	if err := fs.Parse([]string{"-min", s}); err != nil {
		t.Fatalf("-min %s: %v", s, err)
	}
	return f
}

// held: an accepted entry spelt with "./", a "/./" or a doubled slash in its
// path, with backslashes, with a "../" that leaves the module, or for the
// package's _test.go file names no mutant, and fails the run (none is
// waved through as "not judged"); a trailing space is trimmed and the entry
// matches its mutant.
func TestAttack3MutagenAcceptedPathSpellings(t *testing.T) {
	r := mutateSample(t)
	const max = "internal/mutagen/testdata/sample/sample.go: Max: if a [>] b { -> >="
	for _, stale := range []string{
		"./" + max,
		strings.Replace(max, "sample/sample.go", "sample/./sample.go", 1),
		strings.Replace(max, "testdata/sample", "testdata//sample", 1),
		strings.ReplaceAll(max[:strings.Index(max, ":")], "/", `\`) + max[strings.Index(max, ":"):],
		"../fgrl/" + max,
		strings.Replace(max, "sample.go", "sample_test.go", 1),
	} {
		acc, err := parseAccepted(strings.NewReader(stale+"\n\tno such mutant\n"), "accepted.txt")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		fails := judge(&out, []result{r}, acc, options{min: 0})
		if !strings.Contains(strings.Join(fails, "\n"), stale) {
			t.Errorf("entry %q: not among the failures %q; output:\n%s", stale, fails, out.String())
		}
	}
	acc, err := parseAccepted(strings.NewReader(max+" \t\n\twhy\n"), "accepted.txt")
	if err != nil {
		t.Fatal(err)
	}
	fails := judge(&bytes.Buffer{}, []result{r}, acc, options{min: 0})
	if slices.ContainsFunc(fails, func(f string) bool { return strings.Contains(f, "no such mutant") }) || !acc[0].used {
		t.Errorf("entry with a trailing space: used %v, failures %q", acc[0].used, fails)
	}
}

// held: a FILE_REGEXP matching only the package's _test.go file, or only a
// file this system's build leaves out (attack3shift's plan9only.go is //go:build plan9),
// matches none of the files mutated: the run fails.
func TestAttack3MutagenFileFilterTestOrExcludedFile(t *testing.T) {
	for _, target := range []string{sample + `=^sample_test\.go$`, "./testdata/attack3shift=^plan9only\\.go$"} {
		var out bytes.Buffer
		if err := run(options{targets: []string{target}, min: 90, workers: 2}, &out); err == nil {
			t.Errorf("%s: run passed; want a failure; output:\n%s", target, out.String())
		}
	}
}
