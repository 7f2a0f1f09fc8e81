package archtest

import (
	"strings"
	"testing"
)

// An outside attack (helper attack12124) on the fixes of 9ec5249 to CI's check
// of the tests that skip under the race detector: TestRaceSkipsRunWithoutRace
// (cirun_test.go) and .ci/run's norace step. Same method as
// racelist_attack10_test.go: a throwaway module in t.TempDir() (GOPROXY=off)
// checked by check() on attack4RaceModule, or the norace step cut from the
// real .ci/run and run with bash. A break's test fails on the current code;
// a "held:" test passes.

const attack12ImpRB = "import (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n"

// cirun_test.go: "A test is race-dependent when ... it refers, directly or
// through the module's functions, methods, types, variables and constants
// (and package variables an assignment sets from them, as init does), to a
// name declared in a file built here only with race". internal/racebuild:
// ".ci/run runs each such test again without the detector (its norace
// list, which internal/archtest keeps equal to the tests that skip here)".
// RELIABILITY.md: "an `init` setting another package's variable from the
// race build (`env.Volume = !racebuild.Enabled`), a helper of that package
// reading it ... the other package's variable is marked".
//
// Break: the same switch set through the other package's API rather than
// by a bare assignment is missed; each test below skips under -race, is
// unlisted, and the check passes:
//
//   - setter: init calls atkenv.SetVolume(!racebuild.Enabled), a setter
//     (a call, not an assignment: the parameter it stores is local);
//   - atomic: init calls atkenv.Sizes.Store(racebuild.Enabled) on an
//     atomic.Bool (a shared switch made safe for parallel tests);
//   - pointer: init assigns through the pointer an accessor returns,
//     atkenv.Config().Soak = !racebuild.Enabled (rootIdent stops at the
//     call: no variable is marked).
func TestAttack12RaceCheckMissesSwitchSetThroughAnAPI(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	test := func(pkg, name, helper, set string) map[string]string {
		return map[string]string{
			pkg + "/x.go": "package " + pkg + "\n",
			pkg + "/volume_test.go": "package " + pkg + "\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/atkenv\"\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
				"// The race detector slows this package's volume tests five times over with nothing to watch.\nfunc init() { " + set + " }\n\n" +
				"func " + name + "(t *testing.T) {\n\tatkenv." + helper + "(t)\n" + attack10Fail,
		}
	}
	files := map[string]string{
		"internal/atkenv/env.go": "// Package atkenv is the tests' shared environment.\npackage atkenv\n\nimport (\n\t\"sync/atomic\"\n\t\"testing\"\n)\n\n" +
			"var volume = true\n\n// SetVolume turns the volume tests on or off.\nfunc SetVolume(on bool) { volume = on }\n\n" +
			"// NeedVolume skips t unless the volume tests run.\nfunc NeedVolume(t testing.TB) {\n\tt.Helper()\n\tif !volume {\n\t\tt.Skip(\"volume tests off\")\n\t}\n}\n\n" +
			"// Sizes is whether the size tests are off (safe for parallel tests).\nvar Sizes atomic.Bool\n\n" +
			"// NeedSizes skips t when the size tests are off.\nfunc NeedSizes(t testing.TB) {\n\tt.Helper()\n\tif Sizes.Load() {\n\t\tt.Skip(\"size tests off\")\n\t}\n}\n\n" +
			"type config struct{ Soak bool }\n\nvar cfg = config{Soak: true}\n\n// Config is the environment's settings, for a package's init to change.\nfunc Config() *config { return &cfg }\n\n" +
			"// NeedSoak skips t unless the soak tests run.\nfunc NeedSoak(t testing.TB) {\n\tt.Helper()\n\tif !cfg.Soak {\n\t\tt.Skip(\"soak tests off\")\n\t}\n}\n",
	}
	for _, m := range []map[string]string{
		test("setter", "TestSetterVolume", "NeedVolume", "atkenv.SetVolume(!racebuild.Enabled)"),
		test("atomicset", "TestAtomicSizes", "NeedSizes", "atkenv.Sizes.Store(racebuild.Enabled)"),
		test("ptrset", "TestPointerSoak", "NeedSoak", "atkenv.Config().Soak = !racebuild.Enabled"),
	} {
		for k, v := range m {
			files[k] = v
		}
	}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, files))
	for _, want := range []string{"./setter=TestSetterVolume", "./atomicset=TestAtomicSizes", "./ptrset=TestPointerSoak"} {
		t.Run(want[2:strings.Index(want, "=")], func(t *testing.T) {
			if !failed || !strings.Contains(out, want) {
				t.Errorf("%s skips under -race and never runs without it; TestRaceSkipsRunWithoutRace failed=%v and does not name it", want, failed)
			}
		})
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", lastLines(out, 15))
	}
}

// cirun_test.go: "The nested modules (interop, pagetest, bench): .ci/run
// tests them only with -race, and its norace step runs in the root module;
// a file of theirs that depends on the race build could never run as
// written." RELIABILITY.md: "the check fails on any file of a nested
// module that imports `racebuild` or is built only with or only without
// race". And a test depends on the race build when it refers "directly or
// through the module's functions" to it, "or names the build's "-race"
// setting".
//
// Break: the nested-module walk looks only at a file's build lines and a
// direct import of internal/racebuild. Both tests below, in the interop
// module (which imports fgrl's internal packages already: redistest,
// leakcheck), skip under -race, so CI, which tests interop only with
// -race, never runs them; the check passes:
//
//   - helper: the test calls an SDK helper (internal/volumetest.Heavy) that
//     calls racebuild.Skip;
//   - buildinfo: the test reads the build's "-race" setting itself.
func TestAttack12RaceCheckMissesNestedModuleIndirectSkip(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	files := map[string]string{
		"internal/volumetest/v.go": "// Package volumetest holds the volume tests' helpers.\npackage volumetest\n\n" + attack12ImpRB +
			"// Heavy marks t a volume test: skipped under the race detector.\nfunc Heavy(t testing.TB) {\n\tt.Helper()\n\tracebuild.Skip(t, \"thousands of calls\")\n}\n",
		"interop/go.mod": "module github.com/xblgo/fgrl/interop\n\ngo 1.26\n\nrequire github.com/xblgo/fgrl v0.0.0\n\nreplace github.com/xblgo/fgrl => ../\n",
		"interop/volume_test.go": "package interop\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/volumetest\"\n)\n\n" +
			"func TestInteropVolume(t *testing.T) {\n\tvolumetest.Heavy(t)\n" + attack10Fail,
		"interop/stack_test.go": "package interop\n\nimport (\n\t\"runtime/debug\"\n\t\"testing\"\n)\n\n" +
			"func TestInteropStacks(t *testing.T) {\n\tif bi, ok := debug.ReadBuildInfo(); ok {\n\t\tfor _, s := range bi.Settings {\n" +
			"\t\t\tif s.Key == \"-race\" && s.Value == \"true\" {\n\t\t\t\tt.Skip(\"the race detector's build\")\n\t\t\t}\n\t\t}\n\t}\n" + attack10Fail,
	}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, files))
	for _, c := range []struct{ name, want string }{
		{"helper", "TestInteropVolume, a test of a nested module"},
		{"buildinfo", "TestInteropStacks, a test of a nested module"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !failed || !strings.Contains(out, c.want) {
				t.Errorf("%s skips under -race, and .ci/run runs interop only with -race; TestRaceSkipsRunWithoutRace failed=%v and does not name it", strings.Fields(c.want)[0], failed)
			}
		})
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", lastLines(out, 15))
	}
}

// cirun_test.go: "A name declared in the function itself (a local
// variable, a parameter) is not a reference, nor is a field's or method's
// name after a value's dot unless the method is one of the module's
// race-dependent ones"; a method called on "a *testing.T, B or F, or a
// testing.TB" is testing's own ("t.Skip is no call of a module's method
// named Skip"). internal/racebuild: the norace list is kept "equal to the
// tests that skip here". The promise read the other way: a correct change
// never fails CI.
//
// Break: with a race-dependent method named Skip in the module (a volume
// helper's v.Skip(t), as attack10's skipmethod case), and racebuild
// dot-imported in one test file, the check demands tests that do not
// behave otherwise under -race:
//
//   - embedded: t.Skip called as e.Skip on a struct embedding *testing.T;
//   - iface: t passed as an interface of the module's, s.Skip(...);
//   - alias: t received as *T, with type T = testing.T;
//   - dotfield: a table test whose case struct has a field named Enabled
//     (racebuild's name) in the dot-importing file: a field's name in a
//     type is taken for the dot-imported constant;
//   - dotmethod: a method named Enabled declared in that file makes every
//     call of a method named Enabled in the module race-dependent
//     (slog's Handler.Enabled in another package).
//
// The first three skip when a tool is missing; listed, the norace step
// fails them: CI cannot pass either way.
//
// Fixed: alias (the package's aliases of testing's types are testing's),
// dotfield and dotmethod (a declaration's own names are no references).
// Held as written down: embedded and iface, a method named like a
// race-dependent one called on a value the check cannot type, count as a
// call of it: the check fails closed (a demand CI shows, rather than a
// test never run as written), and its message says how to write the call
// (on the *testing.T itself) or to rename the module's method.
func TestAttack12RaceCheckFalseDemandsThroughTestingAliasesAndDotNames(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	files := map[string]string{
		"volume/v.go": "package volume\n",
		"volume/volume_test.go": "package volume\n\n" + attack12ImpRB +
			"type volume struct{ n int }\n\n// Skip skips t under the race detector, which slows a volume test five times over.\n" +
			"func (volume) Skip(t *testing.T) {\n\tt.Helper()\n\tracebuild.Skip(t, \"a volume test\")\n}\n\n" +
			"func TestVolumeCalls(t *testing.T) {\n\tv := volume{n: 5000}\n\tv.Skip(t)\n\tif v.n == 0 {\n\t\tt.Error(\"no calls\")\n\t}\n}\n",
		"tool/t.go": "package tool\n",
		"tool/tool_test.go": "package tool\n\nimport (\n\t\"os/exec\"\n\t\"testing\"\n)\n\n" +
			"func haveTool() bool {\n\t_, err := exec.LookPath(\"atk-tool-not-installed\")\n\treturn err == nil\n}\n\n" +
			"type env struct{ *testing.T }\n\nfunc TestEmbeddedTool(t *testing.T) {\n\te := env{t}\n\tif !haveTool() {\n\t\te.Skip(\"no atk-tool on PATH\")\n\t}\n}\n\n" +
			"type skipper interface{ Skip(args ...any) }\n\nfunc needTool(s skipper) {\n\tif !haveTool() {\n\t\ts.Skip(\"no atk-tool on PATH\")\n\t}\n}\n\n" +
			"func TestInterfaceTool(t *testing.T) { needTool(t) }\n\n" +
			"type T = testing.T\n\nfunc needToolT(t *T) {\n\tif !haveTool() {\n\t\tt.Skip(\"no atk-tool on PATH\")\n\t}\n}\n\n" +
			"func TestAliasTool(t *testing.T) { needToolT(t) }\n",
		"dot/d.go": "package dot\n",
		"dot/flags_test.go": "package dot\n\nimport (\n\t\"testing\"\n\n\t. \"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"func TestDotVolume(t *testing.T) {\n\tSkip(t, \"a volume test\")\n}\n\n" +
			"func TestFlags(t *testing.T) {\n\tfor _, c := range []struct {\n\t\tname    string\n\t\tEnabled bool\n\t}{{\"a\", true}, {\"b\", false}} {\n" +
			"\t\tif c.Enabled != (c.name == \"a\") {\n\t\t\tt.Error(c.name)\n\t\t}\n\t}\n}\n\n" +
			"type feature struct{ on bool }\n\n// Enabled reports whether f is on.\nfunc (f feature) Enabled() bool { return f.on }\n\n" +
			"func TestFeature(t *testing.T) {\n\tif (feature{}).Enabled() {\n\t\tt.Error(\"on\")\n\t}\n}\n",
		"logx/l.go": "package logx\n",
		"logx/log_test.go": "package logx\n\nimport (\n\t\"context\"\n\t\"log/slog\"\n\t\"testing\"\n)\n\n" +
			"func TestDebugOffByDefault(t *testing.T) {\n\tif slog.Default().Handler().Enabled(context.Background(), slog.LevelDebug) {\n\t\tt.Error(\"debug on\")\n\t}\n}\n",
	}
	sound := []string{"./volume=TestVolumeCalls", "./dot=TestDotVolume"}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack10WithListed(t, files, sound...))
	cases := []struct{ name, entry string }{
		{"embedded", "./tool=TestEmbeddedTool"},
		{"iface", "./tool=TestInterfaceTool"},
		{"alias", "./tool=TestAliasTool"},
		{"dotfield", "./dot=TestFlags"},
		{"dotmethod", "./logx=TestDebugOffByDefault"},
	}
	var tools []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "embedded" || c.name == "iface" {
				if !strings.Contains(out, "on a value this check cannot type: call it on the *testing.T") {
					t.Errorf("%s: demanded (failing closed), but the check's message does not say how to write the call", c.entry)
				}
				return
			}
			if failed && strings.Contains(out, c.entry) {
				t.Errorf("%s does not behave otherwise under -race, yet TestRaceSkipsRunWithoutRace demands it in the norace list", c.entry)
				if strings.HasPrefix(c.entry, "./tool=") {
					tools = append(tools, c.entry)
				}
			}
		})
	}
	if len(tools) > 0 {
		dir := t.TempDir()
		ciAtkTree(t, dir, attack4RaceModule(t, files))
		code, nout := ciAtkBash(t, dir, attack10NoraceFragment(t, append(attack10Copy(sound), tools...)...))
		t.Logf("listed as demanded (%v), the norace step exits %d:\n%s", tools, code, lastLines(nout, 3))
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", lastLines(out, 15))
	}
}

// .ci/run, the norace step: "Each listed test must pass: go test's JSON
// events say so (test2json reads the binary's framing, which a test's own
// output, a progress dot without a newline or a line of its own spelt
// "--- PASS", cannot move or forge)." RELIABILITY.md: the step "fails
// unless go test's own events say each one passed".
//
// Break: test2json takes a line for framing until it has seen testing's
// first marked line (needMarker starts false), and always takes a line
// that starts with ^V (0x16). A listed test that skips, in a package
// whose TestMain prints a line spelt "--- PASS: TestMainForged (0.00s)"
// before m.Run (a setup's log, say), or that prints "\x16--- PASS: ..."
// itself, gets a "pass" event; the python script adds it to the passed
// set and never takes it back on the later "skip": the step exits 0 for
// tests that never ran as written.
func TestAttack12NoraceStepForgedPassLines(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	for _, c := range []struct{ name, file string }{
		{"testmain", "package mock\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) {\n\tfmt.Println(\"--- PASS: TestMainForged (0.00s)\")\n\tos.Exit(m.Run())\n}\n\n" +
			"func TestMainForged(t *testing.T) { t.Skip(\"under the race detector: a volume test\") }\n"},
		{"marker", "package mock\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\n" +
			"func TestMarkerForged(t *testing.T) {\n\tfmt.Print(\"\\x16--- PASS: TestMarkerForged (0.00s)\\n\")\n\tt.Skip(\"under the race detector: a volume test\")\n}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ciAtkTree(t, dir, map[string]string{
				"go.mod":         "module github.com/xblgo/fgrl\n\ngo 1.26\n",
				"mock/m.go":      "package mock\n",
				"mock/f_test.go": c.file,
			})
			test := "TestMainForged"
			if c.name == "marker" {
				test = "TestMarkerForged"
			}
			if code, out := ciAtkBash(t, dir, attack10NoraceFragment(t, "./mock="+test)); code == 0 {
				t.Errorf("./mock=%s skips, and the norace step exits 0:\n%s", test, lastLines(out, 3))
			}
		})
	}
}

// held: the check finds the ways around (b) and (f) that go through a
// variable, a variable's initializer or a module type's method, and is not
// fooled by the nested-module walk's edge cases:
//   - cfgfield: init sets atkenv.Cfg.Volume = !racebuild.Enabled, a
//     helper reads Cfg.Volume;
//   - initializer: another package's var Volume = !racebuild.Enabled, read
//     through an accessor;
//   - paramt: a helper's parameter named t of a module type whose Skip
//     wraps racebuild.Skip (t.Skip is not taken for testing's);
//   - a local variable named Enabled in a file dot-importing racebuild is
//     no reference (not demanded);
//   - a nested module's file built only on another system that imports
//     racebuild, and a module nested two deep, are each named.
func TestAttack12RaceCheckHeldVariablesParamsAndNestedEdges(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	files := map[string]string{
		"internal/atkenv/env.go": "// Package atkenv is the tests' shared environment.\npackage atkenv\n\nimport \"testing\"\n\n" +
			"// Cfg is the environment's settings.\nvar Cfg = struct{ Volume bool }{Volume: true}\n\n" +
			"// NeedVolume skips t unless the volume tests run.\nfunc NeedVolume(t testing.TB) {\n\tt.Helper()\n\tif !Cfg.Volume {\n\t\tt.Skip(\"volume tests off\")\n\t}\n}\n",
		"internal/atkenv2/env.go": "// Package atkenv2 is another shared environment.\npackage atkenv2\n\n" + attack12ImpRB +
			"// Volume is whether the volume tests run.\nvar Volume = !racebuild.Enabled\n\n// VolumeOn reports Volume.\nfunc VolumeOn() bool { return Volume }\n\n" +
			"// NeedVolume skips t unless the volume tests run.\nfunc NeedVolume(t testing.TB) {\n\tt.Helper()\n\tif !VolumeOn() {\n\t\tt.Skip(\"volume tests off\")\n\t}\n}\n",
		"h/h.go": "package h\n",
		"h/cfg_test.go": "package h\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/atkenv\"\n\t\"github.com/xblgo/fgrl/internal/atkenv2\"\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"func init() { atkenv.Cfg.Volume = !racebuild.Enabled }\n\n" +
			"func TestCfgField(t *testing.T) {\n\tatkenv.NeedVolume(t)\n}\n\n" +
			"func TestInitializer(t *testing.T) {\n\tatkenv2.NeedVolume(t)\n}\n\n" +
			"type vt struct{ tb testing.TB }\n\n// Skip skips under the race detector.\nfunc (v vt) Skip() { racebuild.Skip(v.tb, \"volume\") }\n\n" +
			"func heavy(t vt) { t.Skip() }\n\nfunc TestParamT(t *testing.T) { heavy(vt{t}) }\n",
		"d/d.go": "package d\n",
		"d/local_test.go": "package d\n\nimport (\n\t\"os\"\n\t\"testing\"\n\n\t. \"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\n" +
			"func TestDotSkip(t *testing.T) { Skip(t, \"volume\") }\n\n" +
			"func TestLocalEnabled(t *testing.T) {\n\tEnabled := os.Getenv(\"ATK_FEATURE\") != \"\"\n\tif Enabled {\n\t\tt.Log(\"feature on\")\n\t}\n}\n",
		"interop/go.mod": "module github.com/xblgo/fgrl/interop\n\ngo 1.26\n",
		"interop/win_test.go": "//go:build windows\n\npackage interop\n\n" + attack12ImpRB +
			"func TestWindowsVolume(t *testing.T) { racebuild.Skip(t, \"volume\") }\n",
		"interop/deep/go.mod":    "module github.com/xblgo/fgrl/interop/deep\n\ngo 1.26\n",
		"interop/deep/d_test.go": "//go:build !race\n\npackage deep\n\nimport \"testing\"\n\nfunc TestDeep(t *testing.T) {}\n",
	}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, files))
	if !failed {
		t.Fatalf("every variant unlisted, the check passes:\n%s", out)
	}
	for _, want := range []string{
		"./h=TestCfgField", "./h=TestInitializer", "./h=TestParamT", "./d=TestDotSkip",
		"interop/win_test.go, in a nested module", "interop/deep/d_test.go, in a nested module",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: the check does not name it", want)
		}
	}
	if strings.Contains(out, "./d=TestLocalEnabled") {
		t.Errorf("the check demands ./d=TestLocalEnabled, whose Enabled is a local variable")
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// held: the norace step's python, by go test's JSON events: a test listed
// twice passes once it passes; a package path with '+' (which awk's -v and
// a regular expression treat specially) is matched exactly; a JSON event
// printed by a test to standard output is its output, not an event (a
// skipping test that forges {"Action":"pass",...} still fails the step);
// a listed package that does not build without race fails the step with
// go test's "[build failed]" line and no traceback (the compiler's own
// message is in build-output events, which the script does not print:
// noted in the report, not asserted).
func TestAttack12NoraceStepHeldDuplicatesPlusPathsForgedJSONBuildFailure(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := t.TempDir()
	ciAtkTree(t, dir, map[string]string{
		"go.mod":           "module github.com/xblgo/fgrl\n\ngo 1.26\n",
		"a+b/x.go":         "package ab\n",
		"a+b/x_test.go":    "package ab\n\nimport \"testing\"\n\nfunc TestPlus(t *testing.T) {}\n",
		"ab/x.go":          "package ab\n",
		"ab/x_test.go":     "package ab\n\nimport \"testing\"\n\nfunc TestPlus(t *testing.T) { t.Skip(\"not the +'s\") }\n",
		"forge/x.go":       "package forge\n",
		"forge/x_test.go":  "package forge\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc TestForgeJSON(t *testing.T) {\n\tfmt.Println(`{\"Action\":\"pass\",\"Package\":\"github.com/xblgo/fgrl/forge\",\"Test\":\"TestForgeJSON\"}`)\n\tt.Skip(\"skipped\")\n}\n",
		"broken/x.go":      "package broken\n",
		"broken/x_test.go": "//go:build !race\n\npackage broken\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { var n int = \"atk-not-an-int\"; _ = n }\n",
	})
	if code, out := ciAtkBash(t, dir, attack10NoraceFragment(t, "./a+b=TestPlus", "./a+b=TestPlus")); code != 0 {
		t.Errorf("./a+b=TestPlus listed twice, passing: the norace step exits %d:\n%s", code, lastLines(out, 3))
	}
	if code, out := ciAtkBash(t, dir, attack10NoraceFragment(t, "./ab=TestPlus")); code == 0 {
		t.Errorf("./ab=TestPlus skips, and the norace step exits 0:\n%s", lastLines(out, 3))
	}
	if code, out := ciAtkBash(t, dir, attack10NoraceFragment(t, "./forge=TestForgeJSON")); code == 0 {
		t.Errorf("./forge=TestForgeJSON skips after printing a pass event, and the norace step exits 0:\n%s", lastLines(out, 3))
	}
	code, out := ciAtkBash(t, dir, attack10NoraceFragment(t, "./broken=TestBroken"))
	if code == 0 || strings.Contains(out, "Traceback") {
		t.Errorf("a listed package that does not build: the norace step exits %d (traceback: %v):\n%s", code, strings.Contains(out, "Traceback"), out)
	}
	t.Logf("a listed package that does not build; the step's output (exit %d):\n%s", code, out)
}
