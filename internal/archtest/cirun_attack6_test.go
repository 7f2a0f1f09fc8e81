package archtest

import (
	"os"
	"strings"
	"testing"
)

// A fourth outside attack on CI's verdict (helper attack6118), on bfe66c5's
// fixes: fuzz_all reading `go test -list '^Fuzz' -json ./...` through a
// python3 script, TestRaceSkipsRunWithoutRace's fixpoint over functions,
// methods by name, types and assigned package variables, and recipe.sh's
// narrower denial rule. Same method as cirun_attack*_test.go: the fragment
// attacked is cut out of the real script and run with bash on a throwaway
// module in t.TempDir() (GOPROXY=off); archtest's own check runs through
// check(). A break's test fails on the current code; a "held:" test passes.

// ---------------------------------------------------------------------------
// fuzz_all's JSON listing

// .ci/run, fuzz_all: "every output line carries its package, so what a
// test binary prints itself cannot pass for the go command's result line
// or hide a target; a line that is neither a target nor go test's own
// result for its package fails the run". RELIABILITY.md: "Every parser is
// fuzzed; `.ci/run` runs each target for 500 executions"; the third
// attack's fix: "the targets come from `go test -list -json`: each output
// line carries its package ... and a line that is neither a target nor go
// test's own result for that package fails the run".
//
// Break: the JSON stream is test2json's reading of the binary's output, and
// test2json takes a line beginning "=== NAME  " for its own framing (which
// test is talking) and emits no event for it at all (cmd/internal/test2json:
// `if action == "name" { return }`). A TestMain that writes "=== NAME  "
// without a newline before m.Run (a wrapper that mimics go test -v's
// framing, as the earlier attacks' "ok  \tPKG\t" did) glues it to the first
// target: "=== NAME  FuzzParse" vanishes from the stream, no bad line is
// seen, FuzzParse is never fuzzed, and the good package's target keeps the
// count non-zero: green with a parser failing on every input.
func TestAttack6CIFuzzTargetSwallowedByNameFraming(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, map[string]string{
		"p/p.go": "package p\n",
		"p/p_test.go": "package p\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) {\n\tfmt.Print(\"=== NAME  \")\n\tm.Run()\n}\n\n" + brokenFuzz,
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t), "FUZZTIME=200x")
	if code == 0 {
		t.Fatalf("p.FuzzParse fails on every input; its TestMain printed \"=== NAME  \" before the list, and the fuzzing exits 0 (it never ran it):\n%s", out)
	}
}

// .ci/run, fuzz_all: "every fuzz target of the module in the current
// directory, as go test -list finds them (a new parser's fuzzer joins
// without an edit here)". The testing package's rule for a fuzz target's
// name is Fuzz followed by anything that does not begin with a lower-case
// letter (testing.isTest: `!unicode.IsLower(rune)`); go vet agrees.
//
// Break (a correct change fails CI): the script takes only
// `Fuzz[A-Za-z0-9_]*` for a target, so a sound target named with a letter
// outside ASCII (FuzzÜbersicht, a parser of a German report) is "a line
// that is neither a target nor its result" and the run fails, though go
// test -list printed exactly the target's name and go test -fuzz runs it.
func TestAttack6CIFuzzNonASCIITargetNameFails(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, map[string]string{
		"report/report.go": "package report\n",
		"report/report_test.go": "package report\n\nimport \"testing\"\n\n" +
			"func FuzzÜbersicht(f *testing.F) { f.Add([]byte(\"x\")); f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t), "FUZZTIME=200x")
	if code != 0 || !strings.Contains(out, "fuzz example.com/atkcirun/report FuzzÜbersicht") {
		t.Fatalf("a sound fuzz target named FuzzÜbersicht: the fuzzing exits %d, want 0 with it fuzzed:\n%s", code, out)
	}
}

// .ci/run, fuzz_all: "every fuzz target of the module in the current
// directory, as go test -list finds them"; RELIABILITY.md: "Every parser is
// fuzzed". archtest's TestFuzzTable knows every target from the source, but
// fuzz_all trusts the listing alone.
//
// Break: the listing is what the test binary writes to its standard output
// (testing.listTests: fmt.Println), so a TestMain that points os.Stdout at
// /dev/null (to keep a chatty dependency's banner out of the test log; the
// tests' verdicts still reach go test by the exit status) lists no target:
// the package prints only go test's own "ok" line, which the script takes,
// and its FuzzParse, failing on every input, is never fuzzed: green.
func TestAttack6CIFuzzTargetHiddenByQuietStdout(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, map[string]string{
		"p/p.go": "package p\n",
		"p/p_test.go": "package p\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) {\n\t// the parser's dependency prints a banner: keep the log readable\n" +
			"\tif devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {\n\t\tos.Stdout = devnull\n\t}\n\tos.Exit(m.Run())\n}\n\n" + brokenFuzz,
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t), "FUZZTIME=200x")
	if code == 0 {
		t.Fatalf("p.FuzzParse fails on every input; its TestMain quiets stdout, go test -list lists nothing for p, and the fuzzing exits 0 (it never ran it):\n%s", out)
	}
}

// held: the stream's odd but valid forms pass and their targets are fuzzed:
// a target of an external test package (package x_test), a package of the
// same name and target in bench (another module: its own cache and binary),
// a package whose tests print nothing at all (no target, just go test's ok
// line), a package without test files, and a package whose directory name
// holds regexp metacharacters ('+', '.').
func TestAttack6CIFuzzOddButValidPackagesPass(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	fuzz := func(pkg, name string) string {
		return "package " + pkg + "\n\nimport \"testing\"\n\nfunc " + name + "(f *testing.F) { f.Add([]byte(\"x\")); f.Fuzz(func(t *testing.T, b []byte) {}) }\n"
	}
	dir := ciAtkFuzzModule(t, map[string]string{
		"xt/x.go":            "package xt\n",
		"xt/x_test.go":       fuzz("xt_test", "FuzzExternal"),
		"sum/sum.go":         "package sum\n",
		"sum/s_test.go":      fuzz("sum", "FuzzSum"),
		"quiet/q.go":         "package quiet\n",
		"quiet/q_test.go":    "package quiet\n\nimport \"testing\"\n\nfunc TestQuiet(t *testing.T) {}\n",
		"none/n.go":          "package none\n",
		"v1.2+x/v.go":        "package v\n",
		"v1.2+x/v_test.go":   fuzz("v", "FuzzMeta"),
		"bench/xt/x.go":      "package xt\n",
		"bench/xt/x_test.go": fuzz("xt_test", "FuzzExternal"),
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t), "FUZZTIME=100x")
	for _, want := range []string{
		"fuzz example.com/atkcirun/xt FuzzExternal",
		"fuzz example.com/atkcirun/sum FuzzSum",
		"fuzz example.com/atkcirun/v1.2+x FuzzMeta",
		"fuzz example.com/atkcirun/bench/sum FuzzSum",
		"fuzz example.com/atkcirun/bench/xt FuzzExternal",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q", want)
		}
	}
	if code != 0 || t.Failed() {
		t.Fatalf("exit %d, want 0 with every target fuzzed:\n%s", code, out)
	}
}

// held: a package whose listing fails in any way the go command reports
// (two package names in a directory, an import no module provides, an
// import cycle, a syntax error) fails the fuzzing: go1.26's -json gives each
// a "fail" event even though the pipeline's status (pipefail is off in the
// fuzzing's `bash -c`) is not read.
func TestAttack6CIFuzzListingFailuresFail(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	for name, files := range map[string]map[string]string{
		"two names": {"e/a.go": "package e\n", "e/b.go": "package other\n"},
		"no module": {"e/a.go": "package e\n\nimport _ \"example.com/nothere/x\"\n"},
		"cycle":     {"e/a.go": "package e\n\nimport _ \"example.com/atkcirun/f\"\n", "f/a.go": "package f\n\nimport _ \"example.com/atkcirun/e\"\n"},
		"syntax":    {"e/a.go": "package e\n\nfunc (\n"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out := ciAtkBash(t, ciAtkFuzzModule(t, files), ciAtkFuzzFragment(t), "FUZZTIME=50x")
			if code == 0 {
				t.Fatalf("a package that does not load: the fuzzing exits 0:\n%s", out)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// TestRaceSkipsRunWithoutRace

// cirun_test.go, TestRaceSkipsRunWithoutRace: "A test is race-dependent
// when ... it refers, directly or through the module's functions, methods,
// types, variables and constants (and package variables an assignment sets
// from them, as init does), to a name declared in a file built here only
// with race or only without it". .ci/run: "each test that skips under -race
// (internal/archtest's TestRaceSkipsRunWithoutRace finds them all in the
// code and fails when one is missing here)".
//
// Break: each variant below is a stack check that does not run as written
// under -race, is missing from .ci/run's norace list, and the check passes
// (CI never runs it without -race):
//
//   - suite: a suite of test methods run by reflection, as testify's
//     suite.Run does (here a ten-line runner in the module): the method
//     (s *stackSuite) TestStacks skips under race and is marked, but
//     nothing marks the type whose methods it is, so TestStackSuite, which
//     only names the type, is not race-dependent to the check;
//   - othermethod: the skip in a method of a shared helper package's type
//     (internal/atkharness.Harness.SkipUnderRace, its race constant in a
//     non-test file, as a helper package must have it): a method after a
//     value's dot is looked up by name in the test's own package only;
//   - field: init sets a field of a package variable from the race
//     constant (cfg.skipStacks = race): only a bare identifier on an
//     assignment's left is followed.
func TestAttack6CIRaceCheckMissesSuitesForeignMethodsFields(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	const fail = "\tt.Errorf(\"8530 bytes of stacks a waiting call; want 4 KiB\")\n"
	files := map[string]string{
		"internal/atksuite/suite.go": "// Package atksuite runs a value's Test methods as subtests, as testify's suite.Run.\npackage atksuite\n\n" +
			"import (\n\t\"reflect\"\n\t\"strings\"\n\t\"testing\"\n)\n\n" +
			"func Run(t *testing.T, s interface{ SetT(*testing.T) }) {\n\tv := reflect.ValueOf(s)\n\tfor i := 0; i < v.NumMethod(); i++ {\n" +
			"\t\tm := v.Type().Method(i)\n\t\tif !strings.HasPrefix(m.Name, \"Test\") {\n\t\t\tcontinue\n\t\t}\n" +
			"\t\tt.Run(m.Name, func(t *testing.T) {\n\t\t\ts.SetT(t)\n\t\t\tv.Method(i).Call(nil)\n\t\t})\n\t}\n}\n",
		"suite/s.go":             "package suite\n",
		"suite/race_on_test.go":  attack4Pkg(attack4RaceOn, "suite"),
		"suite/race_off_test.go": attack4Pkg(attack4RaceOff, "suite"),
		"suite/stack_test.go": "package suite\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/atksuite\"\n)\n\n" +
			"type stackSuite struct{ t *testing.T }\n\nfunc (s *stackSuite) SetT(t *testing.T) { s.t = t }\n\n" +
			"func (s *stackSuite) TestStacks() {\n\tt := s.t\n\tif race {\n\t\tt.Skip(\"the race detector's build\")\n\t}\n" + fail + "}\n\n" +
			"func TestStackSuite(t *testing.T) { atksuite.Run(t, &stackSuite{}) }\n",

		"internal/atkharness/race_on.go":  "//go:build race\n\npackage atkharness\n\nconst race = true\n",
		"internal/atkharness/race_off.go": "//go:build !race\n\npackage atkharness\n\nconst race = false\n",
		"internal/atkharness/harness.go": "// Package atkharness is the tests' shared harness.\npackage atkharness\n\nimport \"testing\"\n\n" +
			"type Harness struct{}\n\n// SkipUnderRace skips a test whose figures are the race build's.\n" +
			"func (Harness) SkipUnderRace(t *testing.T) {\n\tt.Helper()\n\tif race {\n\t\tt.Skip(\"the race detector's build\")\n\t}\n}\n",
		"othermethod/o.go": "package othermethod\n",
		"othermethod/stack_test.go": "package othermethod\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/atkharness\"\n)\n\n" +
			"func TestForeignMethodStacks(t *testing.T) {\n\tvar h atkharness.Harness\n\th.SkipUnderRace(t)\n" + fail + "}\n",

		"field/f.go":             "package field\n",
		"field/race_on_test.go":  attack4Pkg(attack4RaceOn, "field"),
		"field/race_off_test.go": attack4Pkg(attack4RaceOff, "field"),
		"field/stack_test.go": "package field\n\nimport \"testing\"\n\nvar cfg struct{ skipStacks bool }\n\nfunc init() { cfg.skipStacks = race }\n\n" +
			"func TestFieldStacks(t *testing.T) {\n\tif cfg.skipStacks {\n\t\tt.Skip(\"race build\")\n\t}\n" + fail + "}\n",
	}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, files))
	for _, want := range []string{
		"./suite=TestStackSuite",
		"./othermethod=TestForeignMethodStacks",
		"./field=TestFieldStacks",
	} {
		t.Run(want[2:strings.Index(want, "=")], func(t *testing.T) {
			if !failed || !strings.Contains(out, want) {
				t.Errorf("%s does not run its check as written under -race and is not in .ci/run's norace list; TestRaceSkipsRunWithoutRace failed=%v and does not name it", want, failed)
			}
		})
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// The same promise; .ci/run's norace step runs each listed test "which must
// run and pass without it" and fails unless "--- PASS: NAME" is printed.
//
// Break (a correct change cannot pass CI): a package whose TestMain skips
// the whole package under race (`if race { os.Exit(0) }`: its stack
// figures are the race build's) is read as a test: the check demands
// ./mainrace=TestMain, which go test -run '^TestMain$' never runs or
// passes (the norace step fails "did not run and pass"), while the
// package's test, TestPackageStacks, which never runs under -race, is not
// demanded (listing it fails the check instead).
func TestAttack6CIRaceCheckTestMainDemanded(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, map[string]string{
		"mainrace/m.go":             "package mainrace\n",
		"mainrace/race_on_test.go":  attack4Pkg(attack4RaceOn, "mainrace"),
		"mainrace/race_off_test.go": attack4Pkg(attack4RaceOff, "mainrace"),
		"mainrace/main_test.go": "package mainrace\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"// TestMain runs none of the package's tests under race: their figures are the race build's.\n" +
			"func TestMain(m *testing.M) {\n\tif race {\n\t\tos.Exit(0)\n\t}\n\tos.Exit(m.Run())\n}\n",
		"mainrace/stack_test.go": "package mainrace\n\nimport \"testing\"\n\nfunc TestPackageStacks(t *testing.T) {}\n",
	}))
	if strings.Contains(out, "./mainrace=TestMain") {
		t.Errorf("TestRaceSkipsRunWithoutRace (failed=%v) demands ./mainrace=TestMain in the norace list, which the norace step can never run and pass", failed)
	}
	if !failed || !strings.Contains(out, "./mainrace=TestPackageStacks") {
		t.Errorf("TestPackageStacks never runs under -race (TestMain exits first) and is not demanded (failed=%v)", failed)
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// held: a skip in a method promoted from an embedded type of the same
// package (S{}.skipUnderRace(t) through S{base}), in a generic helper
// (skipIf[int](t)), and through an interface's method of that name, are
// each found.
func TestAttack6CIRaceCheckHeldEmbeddedGenericInterface(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	const fail = "\tt.Errorf(\"8530 bytes of stacks a waiting call; want 4 KiB\")\n}\n"
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, map[string]string{
		"held/h.go":             "package held\n",
		"held/race_on_test.go":  attack4Pkg(attack4RaceOn, "held"),
		"held/race_off_test.go": attack4Pkg(attack4RaceOff, "held"),
		"held/helpers_test.go": "package held\n\nimport \"testing\"\n\n" +
			"type base struct{}\n\nfunc (base) skipUnderRace(t *testing.T) {\n\tif race {\n\t\tt.Skip()\n\t}\n}\n\n" +
			"type S struct{ base }\n\nfunc skipIf[T any](t *testing.T) {\n\tif race {\n\t\tt.Skip()\n\t}\n}\n\n" +
			"type skipper interface{ skipUnderRace(*testing.T) }\n",
		"held/stack_test.go": "package held\n\nimport \"testing\"\n\n" +
			"func TestEmbeddedStacks(t *testing.T) {\n\tS{}.skipUnderRace(t)\n" + fail +
			"func TestGenericStacks(t *testing.T) {\n\tskipIf[int](t)\n" + fail +
			"func TestInterfaceStacks(t *testing.T) {\n\tvar s skipper = S{}\n\ts.skipUnderRace(t)\n" + fail,
	}))
	for _, want := range []string{"./held=TestEmbeddedStacks", "./held=TestGenericStacks", "./held=TestInterfaceStacks"} {
		if !failed || !strings.Contains(out, want) {
			t.Errorf("%s unlisted: TestRaceSkipsRunWithoutRace failed=%v and does not name it", want, failed)
		}
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// ---------------------------------------------------------------------------
// image/recipe.sh's denial rule

// held: image/recipe.sh: "Any other failure exits 1, a dockerd that refused
// its own command line". A misspelt storage driver (`--storage-driver
// devicemapperr`; this machine's Debian dockerd 20.10.24, as root, ends with
// "failed to start daemon: error initializing graphdriver: driver not
// supported", checked here with --storage-driver devicemapper) and a data
// root the change misplaced under /proc ("mkdir /proc/atkroot: no such file
// or directory", its last line and no fatal one) each exit 1, not SKIP.
func TestAttack6CIRecipeOwnMistakesFail(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	for name, last := range map[string]string{
		"driver":   "failed to start daemon: error initializing graphdriver: driver not supported",
		"dataroot": "mkdir /proc/atkroot: no such file or directory",
	} {
		t.Run(name, func(t *testing.T) {
			shim := t.TempDir()
			ciAtkTree(t, shim, map[string]string{
				"dockerd": "#!/bin/sh\nprintf '%s\\n' 'time=\"2026-12-05T20:39:20.101Z\" level=info msg=\"Starting up\"' " +
					"'time=\"2026-12-05T20:39:20.102Z\" level=info msg=\"loading plugin \\\"io.containerd.monitor.v1.cgroups\\\"...\" type=io.containerd.monitor.v1' '" + last + "' >&2\nexit 1\n",
				"docker": "#!/bin/sh\nexit 1\n",
			})
			code, out := ciAtkBash(t, t.TempDir(), attack5RecipeFragment(t), "PATH="+shim+":"+os.Getenv("PATH"))
			if code == 0 || strings.Contains(out, "SKIP") {
				t.Fatalf("dockerd refusing the recipe's own setting (%q): exit %d, want 1\n%s", last, code, out)
			}
		})
	}
}
