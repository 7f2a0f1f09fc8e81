package archtest

import (
	"regexp"
	"strings"
	"testing"
)

// An outside attack (helper attack10122) on CI's verdict on the tests that skip
// under the race detector: internal/racebuild (Enabled, Skip), .ci/run's
// norace=( ... ) list and its step, and TestRaceSkipsRunWithoutRace. Same
// method as cirun_attack*_test.go: the fragment attacked is cut out of the
// real .ci/run and run with bash on a throwaway module in t.TempDir()
// (GOPROXY=off); archtest's own check runs through check() on
// attack4RaceModule. A break's test fails on the current code; a "held:"
// test passes.

// attack10NoraceFragment is .ci/run's norace step verbatim (from norace=( to
// the end of its loop) with the list's entries replaced by entries.
func attack10NoraceFragment(t *testing.T, entries ...string) string {
	t.Helper()
	frag := ciAtkLines(t, ciAtkScript(t, ".ci/run"), "norace=(", "done")
	re := regexp.MustCompile(`(?s)^norace=\(\n.*?\n\)\n`)
	if !re.MatchString(frag) {
		t.Fatalf("the norace step does not start with its list:\n%s", frag)
	}
	list := "norace=(\n\t" + strings.Join(entries, "\n\t") + "\n)\n"
	return "set -euo pipefail\n" + re.ReplaceAllLiteralString(frag, list)
}

// attack10WithListed is attack4RaceModule's files with entries added to the
// norace list of its .ci/run (the real one).
func attack10WithListed(t *testing.T, files map[string]string, entries ...string) map[string]string {
	t.Helper()
	m := attack4RaceModule(t, files)
	run := m[".ci/run"]
	const open = "\nnorace=(\n"
	i := strings.Index(run, open)
	if i < 0 {
		t.Fatal(".ci/run has no norace=( ... ) list")
	}
	var add string
	for _, e := range entries {
		add += "\t" + e + "\n"
	}
	m[".ci/run"] = run[:i+len(open)] + add + run[i+len(open):]
	return m
}

const attack10Fail = "\tt.Errorf(\"8530 bytes of stacks a waiting call; want 4 KiB\")\n}\n"

// internal/racebuild: "Skip skips t under the race detector ... .ci/run
// runs each such test again without the detector (its norace list, which
// internal/archtest keeps equal to the tests that skip here)". .ci/run:
// "TestRaceSkipsRunWithoutRace finds them all in the code and fails when
// one is missing here". cirun_test.go: "A test is race-dependent when ...
// it refers, directly or through the module's functions, methods, types,
// variables and constants (and package variables an assignment sets from
// them, as init does), to a name declared in a file built here only with
// race or only without it, or names the build's "-race" setting".
//
// Break: each variant is a check that skips under -race (so the tests step
// never runs it as written), is missing from the norace list, and
// TestRaceSkipsRunWithoutRace passes: CI never runs it without -race, and
// the failing check lands green.
//
//   - dotimport: racebuild imported with a dot (allowed in test files:
//     staticcheck's ST1001 leaves test files alone) and Skip(t, ...)
//     called bare: a bare name is looked up in the test's own package only;
//   - initother: init sets another package's variable from the race build
//     (atkenv.Volume = !racebuild.Enabled, a shared test-environment
//     package's switch that its NeedVolume reads): the assignment marks the
//     import's name as if it were a variable of the test's package, never
//     atkenv.Volume, so atkenv.NeedVolume is not race-dependent;
//   - rawliteral: the build's -race setting named as a raw string
//     (s.Key == `-race`): only the literal spelt "-race" is matched;
//   - interop: a test of the interop module (module
//     github.com/xblgo/fgrl/interop, which may import fgrl's internal
//     packages, and which .ci/run tests only with -race: `(cd interop &&
//     ... go test -race -count=1 ./...)`) calling racebuild.Skip: nested
//     modules are not read at all, and no norace entry can name it (the
//     step's go test runs in the root module).
func TestAttack10RaceCheckMissesDotImportForeignInitRawLiteralNestedModule(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	files := map[string]string{
		"dot/d.go": "package dot\n",
		"dot/stack_test.go": "package dot\n\nimport (\n\t\"testing\"\n\n\t. \"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"func TestDotStacks(t *testing.T) {\n\tSkip(t, \"stack sizes\")\n" + attack10Fail,

		"internal/atkenv/env.go": "// Package atkenv is the tests' shared environment.\npackage atkenv\n\nimport \"testing\"\n\n" +
			"// Volume is whether the volume tests run; a package's tests may turn it off.\nvar Volume = true\n\n" +
			"// NeedVolume skips t unless the volume tests run.\nfunc NeedVolume(t testing.TB) {\n\tt.Helper()\n\tif !Volume {\n\t\tt.Skip(\"volume tests off\")\n\t}\n}\n",
		"initother/i.go": "package initother\n",
		"initother/volume_test.go": "package initother\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/atkenv\"\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"// The race detector slows a volume test five times over with nothing to watch.\nfunc init() { atkenv.Volume = !racebuild.Enabled }\n\n" +
			"func TestInitOtherVolume(t *testing.T) {\n\tatkenv.NeedVolume(t)\n" + attack10Fail,

		"rawlit/r.go": "package rawlit\n",
		"rawlit/stack_test.go": "package rawlit\n\nimport (\n\t\"runtime/debug\"\n\t\"testing\"\n)\n\n" +
			"func TestRawLiteralStacks(t *testing.T) {\n\tif bi, ok := debug.ReadBuildInfo(); ok {\n\t\tfor _, s := range bi.Settings {\n" +
			"\t\t\tif s.Key == `-race` && s.Value == \"true\" {\n\t\t\t\tt.Skip(\"the race detector's build\")\n\t\t\t}\n\t\t}\n\t}\n" + attack10Fail,

		"interop/go.mod": "module github.com/xblgo/fgrl/interop\n\ngo 1.26\n\nrequire github.com/xblgo/fgrl v0.0.0\n\nreplace github.com/xblgo/fgrl => ../\n",
		"interop/volume_test.go": "package interop\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"func TestInteropVolume(t *testing.T) {\n\tracebuild.Skip(t, \"thousands of calls\")\n" + attack10Fail,
	}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, files))
	for _, want := range []string{
		"./dot=TestDotStacks",
		"./initother=TestInitOtherVolume",
		"./rawlit=TestRawLiteralStacks",
		"interop/volume_test.go, in a nested module",
	} {
		name := "interop"
		if i := strings.Index(want, "="); i > 0 {
			name = want[2:i]
		}
		t.Run(name, func(t *testing.T) {
			if !failed || !strings.Contains(out, want) {
				t.Errorf("%s skips under -race and never runs without it; TestRaceSkipsRunWithoutRace failed=%v and does not name it", want, failed)
			}
		})
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// .ci/run, the norace step: "each test that skips under -race ..., which
// must run and pass without it" ("--- PASS"); it fails "did not run and
// pass without -race" otherwise. TestRaceSkipsRunWithoutRace demands in the
// list every test it finds race-dependent. The promise read the other way:
// a correct change never fails CI.
//
// Break: three correct changes are demanded in the list (not listing them
// fails the check) and, listed, fail the norace step, which never sees
// them pass: CI cannot pass either way.
//
//   - raceonly: a test of the race build itself, skipped without it
//     (`if !racebuild.Enabled { t.Skip(...) }`, checking racebuild's own
//     word that under the detector "sync.Pool drop[s] items at random"):
//     it reads Enabled, so it is demanded, though it checks nothing without
//     -race. Held as written down: .ci/run's norace list says such a test
//     goes in a file of its own with //go:build race, which the check
//     rightly leaves out; this case is that form, and must not be demanded.
//   - testbed: a helper of a test file named Testbed (lower case after
//     "Test": go test and vet take it for no test) that calls
//     racebuild.Skip: every "Test..." function is taken for a test.
//   - skipmethod: a volume helper's method named Skip (v.Skip(t), which
//     calls racebuild.Skip) makes every call of a method named Skip in the
//     module race-dependent, t.Skip included: a test that skips when a tool
//     is missing (as cmd/xblcall/nodepreload_test.go does, "no node on
//     PATH") is demanded, and skips in the norace step.
func TestAttack10RaceCheckFalseDemandsFailCIEitherWay(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	imp := "import (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n"
	files := map[string]string{
		"raceonly/r.go": "package raceonly\n",
		"raceonly/pool_test.go": "//go:build race\n\npackage raceonly\n\nimport (\n\t\"sync\"\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"// TestRaceBuildPoolDrops: racebuild's word that the detector's build makes sync.Pool drop items at random.\n" +
			"func TestRaceBuildPoolDrops(t *testing.T) {\n\tif !racebuild.Enabled {\n\t\tt.Skip(\"a property of the race detector's build\")\n\t}\n" +
			"\tvar p sync.Pool\n\tfor i := 0; i < 10000; i++ {\n\t\tp.Put(new(int))\n\t\tif p.Get() == nil {\n\t\t\treturn\n\t\t}\n\t}\n\tt.Error(\"sync.Pool kept every item\")\n}\n",

		"bed/b.go": "package bed\n",
		"bed/bed_test.go": "package bed\n\n" + imp +
			"type bed struct{ calls int }\n\n// Testbed is a volume test's bed, skipped under the race detector.\n" +
			"func Testbed(t *testing.T) *bed {\n\tt.Helper()\n\tracebuild.Skip(t, \"a volume test\")\n\treturn &bed{calls: 5000}\n}\n\n" +
			"func TestBedVolume(t *testing.T) {\n\tif b := Testbed(t); b.calls == 0 {\n\t\tt.Error(\"no calls\")\n\t}\n}\n",

		"volume/v.go": "package volume\n",
		"volume/volume_test.go": "package volume\n\n" + imp +
			"type volume struct{ n int }\n\n// Skip skips t under the race detector, which slows a volume test five times over.\n" +
			"func (volume) Skip(t *testing.T) {\n\tt.Helper()\n\tracebuild.Skip(t, \"a volume test\")\n}\n\n" +
			"func TestVolumeCalls(t *testing.T) {\n\tv := volume{n: 5000}\n\tv.Skip(t)\n\tif v.n == 0 {\n\t\tt.Error(\"no calls\")\n\t}\n}\n",
		"tool/t.go": "package tool\n",
		"tool/tool_test.go": "package tool\n\nimport (\n\t\"os/exec\"\n\t\"testing\"\n)\n\n" +
			"func TestWithAtkTool(t *testing.T) {\n\tif _, err := exec.LookPath(\"atk-tool-not-installed\"); err != nil {\n\t\tt.Skip(\"no atk-tool on PATH\")\n\t}\n}\n",
	}
	// The sound entries: the tests that do skip under -race.
	sound := []string{"./bed=TestBedVolume", "./volume=TestVolumeCalls"}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack10WithListed(t, files, sound...))
	if !failed {
		t.Logf("the check passes with only %v added: nothing false is demanded", sound)
	}
	dir := t.TempDir()
	ciAtkTree(t, dir, attack4RaceModule(t, files))
	for _, c := range []struct{ name, entry string }{
		{"raceonly", "./raceonly=TestRaceBuildPoolDrops"},
		{"testbed", "./bed=Testbed"},
		{"skipmethod", "./tool=TestWithAtkTool"},
	} {
		t.Run(c.name, func(t *testing.T) {
			demanded := failed && strings.Contains(out, c.entry)
			if !demanded {
				return // not demanded: nothing for CI to fail on
			}
			code, nout := ciAtkBash(t, dir, attack10NoraceFragment(t, append(attack10Copy(sound), c.entry)...))
			if code != 0 {
				t.Errorf("%s, a correct test, is demanded in the norace list (TestRaceSkipsRunWithoutRace fails without it), and listed the norace step fails (exit %d):\n%s", c.entry, code, lastLines(nout, 3))
			}
		})
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

func attack10Copy(s []string) []string { return append([]string(nil), s...) }

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// .ci/run, the norace step: each listed test "must run and pass without
// it"; the step runs `go test -count=1 -v -run '^(...)$' PKG` and looks for
// "^--- PASS: TEST " in the output. A correct change never fails CI.
//
// Break: go test -v writes the test binary's own output and testing's
// "--- PASS" line to one stream, and testing starts no new line of its
// own: a volume test that prints a progress mark without a newline (".",
// a dot a thousand calls, on standard output or standard error) ends with
// "...--- PASS: TestVolumeProgress (0.00s)". The test ran and passed, go
// test exits 0, and the step fails: "did not run and pass without -race".
func TestAttack10NoraceStepFailsAPassingTestThatPrintsProgress(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := t.TempDir()
	ciAtkTree(t, dir, map[string]string{
		"go.mod":    "module github.com/xblgo/fgrl\n\ngo 1.26\n",
		"mock/m.go": "package mock\n",
		"mock/volume_test.go": "package mock\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\n" +
			"func TestVolumeProgress(t *testing.T) {\n\tfor i := 0; i < 3000; i++ {\n\t\tif i%1000 == 0 {\n\t\t\tfmt.Print(\".\") // progress: a thousand calls\n\t\t}\n\t}\n}\n",
	})
	code, out := ciAtkBash(t, dir, attack10NoraceFragment(t, "./mock=TestVolumeProgress"))
	if code != 0 {
		t.Fatalf("a listed test that runs and passes (go test exits 0) fails the norace step, exit %d:\n%s", code, out)
	}
}

// held: the ways to call racebuild.Skip or read racebuild.Enabled the brief
// names are found (each named by the check while unlisted), and a test that
// merely mentions race, or an unused helper of a test file that calls
// Skip, is not demanded: an alias import; a method value (f :=
// racebuild.Skip); a helper in another package of the module; a generic
// helper of another package; a test of an external _test package; Skip in
// a subtest's closure; a func literal stored in a package variable's struct
// field; t.Run with a Skip-wrapping func; TestMain reading Enabled (every test
// of its package).
func TestAttack10RaceCheckHeldWaysToSkip(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	imp := func(extra string) string {
		return "import (\n\t\"testing\"\n\n\t" + extra + "\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n"
	}
	files := map[string]string{
		"internal/atkhelp/h.go": "// Package atkhelp holds the tests' helpers.\npackage atkhelp\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"func Volume(t testing.TB) { racebuild.Skip(t, \"volume\") }\n\nfunc Sized[T any](t testing.TB) { racebuild.Skip(t, \"sizes\") }\n",
		"w/w.go": "package w\n",
		"w/alias_test.go": "package w\n\n" + imp("rb ") +
			"func TestAlias(t *testing.T) {\n\trb.Skip(t, \"x\")\n}\n",
		"w/ways_test.go": "package w\n\n" + imp("") +
			"func TestMethodValue(t *testing.T) {\n\tf := racebuild.Skip\n\tf(t, \"x\")\n}\n\n" +
			"func TestSubtest(t *testing.T) {\n\tt.Run(\"a\", func(t *testing.T) { racebuild.Skip(t, \"x\") })\n}\n\n" +
			"var env = struct{ pre func(testing.TB, string) }{pre: func(t testing.TB, why string) { racebuild.Skip(t, why) }}\n\n" +
			"func TestField(t *testing.T) {\n\tenv.pre(t, \"x\")\n}\n\n" +
			"func heavy(f func(*testing.T)) func(*testing.T) {\n\treturn func(t *testing.T) { racebuild.Skip(t, \"x\"); f(t) }\n}\n\n" +
			"func TestRunWrapped(t *testing.T) {\n\tt.Run(\"a\", heavy(func(t *testing.T) {}))\n}\n\n" +
			"// unused skips under -race but no test calls it.\nfunc unused(t *testing.T) { racebuild.Skip(t, \"x\") }\n\n" +
			"var _ = unused\n\n" +
			"func TestMentionsRace(t *testing.T) {\n\trace := \"DATA RACE\"\n\tt.Log(\"no race here, not under -race either:\", race)\n}\n",
		"w/helper_test.go": "package w\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/atkhelp\"\n)\n\n" +
			"func TestOtherPackage(t *testing.T) { atkhelp.Volume(t) }\n\nfunc TestGeneric(t *testing.T) { atkhelp.Sized[int](t) }\n",
		"w/x_test.go": "package w_test\n\n" + imp("") + "func TestExternal(t *testing.T) { racebuild.Skip(t, \"x\") }\n",
		"tm/t.go":     "package tm\n",
		"tm/main_test.go": "package tm\n\nimport (\n\t\"os\"\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"// TestMain runs none of the package's volume tests under the race detector.\nfunc TestMain(m *testing.M) {\n\tif racebuild.Enabled {\n\t\tos.Exit(0)\n\t}\n\tos.Exit(m.Run())\n}\n\nfunc TestUnderMain(t *testing.T) {}\n",
	}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, files))
	if !failed {
		t.Fatalf("every variant unlisted, the check passes:\n%s", out)
	}
	for _, want := range []string{
		"./w=TestAlias", "./w=TestMethodValue", "./w=TestSubtest", "./w=TestField", "./w=TestRunWrapped",
		"./w=TestOtherPackage", "./w=TestGeneric", "./w=TestExternal", "./tm=TestUnderMain",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%s skips under -race, is unlisted, and the check does not name it", want)
		}
	}
	for _, not := range []string{"./w=TestMentionsRace", "=unused", "./tm=TestMain"} {
		if strings.Contains(out, not) {
			t.Errorf("the check demands %s, which does not behave otherwise under -race", not)
		}
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// held: .ci/run's norace loop groups by the exact package and matches the
// exact test: with ./p and ./p/q (one path a prefix of the other) and
// TestA beside TestAB (one name a prefix of the other) listed, a sound
// module passes; TestA skipping in ./p while TestAB passes fails ("--- PASS:
// TestAB" is no "--- PASS: TestA "); TestA failing in ./p/q while ./p's
// passes fails; a listed test that does not exist fails; a test whose
// subtests pass but which itself fails after them fails.
func TestAttack10NoraceStepHeldPrefixes(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := t.TempDir()
	test := func(pkg, name, env string) string {
		return "\nfunc " + name + "(t *testing.T) {\n\tt.Run(\"sub\", func(t *testing.T) {})\n\tswitch os.Getenv(\"ATK\") {\n" +
			"\tcase \"skip-" + env + "\":\n\t\tt.Skip(\"skipped\")\n\tcase \"fail-" + env + "\":\n\t\tt.Error(\"failed\")\n\t}\n}\n"
	}
	head := func(pkg string) string { return "package " + pkg + "\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n" }
	ciAtkTree(t, dir, map[string]string{
		"go.mod":        "module github.com/xblgo/fgrl\n\ngo 1.26\n",
		"p/p.go":        "package p\n",
		"p/p_test.go":   head("p") + test("p", "TestA", "pA") + test("p", "TestAB", "pAB"),
		"p/q/q.go":      "package q\n",
		"p/q/q_test.go": head("q") + test("q", "TestA", "qA"),
	})
	list := []string{"./p=TestA", "./p=TestAB", "./p/q=TestA"}
	if code, out := ciAtkBash(t, dir, attack10NoraceFragment(t, list...)); code != 0 {
		t.Fatalf("the sound module: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		env  string
		list []string
	}{
		{"skip-pA", list},
		{"fail-qA", list},
		{"", append(attack10Copy(list), "./p/q=TestMissing")},
		{"fail-pAB", list},
	} {
		if code, out := ciAtkBash(t, dir, attack10NoraceFragment(t, c.list...), "ATK="+c.env); code == 0 {
			t.Errorf("ATK=%q, list %v: the norace step exits 0:\n%s", c.env, c.list, out)
		}
	}
}
