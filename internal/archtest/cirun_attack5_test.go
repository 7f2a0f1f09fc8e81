package archtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A third outside attack on CI's verdict, on the fixes of f275fa9 (the race
// check's fixpoint, fuzz_all's exact result lines, recipe.sh's denial in
// dockerd's final error). Same method as cirun_attack_test.go and
// cirun_attack4_test.go: the fragment attacked is cut out of the real
// script and run with bash on a throwaway tree in t.TempDir()
// (GOPROXY=off); archtest's own check runs as arch_attack_test.go's check
// does. A break's test fails on the current scripts; a "held:" test passes.

// ---------------------------------------------------------------------------
// TestRaceSkipsRunWithoutRace

// cirun_test.go, TestRaceSkipsRunWithoutRace: "A test is race-dependent
// when it is declared in a file built only without the race tag
// (//go:build !race), or when it refers, directly or through the module's
// functions, variables and constants (helpers, another package's exported
// names, non-test files), to a name declared in a file whose build
// constraint holds with race and not without it". .ci/run: "each test that
// skips under -race (internal/archtest's TestRaceSkipsRunWithoutRace finds
// them all in the code and fails when one is missing here)". RELIABILITY.md:
// "the check follows the module's functions, variables and constants to a
// fixpoint".
//
// Break: the fixpoint only holds functions without a receiver and the names
// of var/const specs. Each variant below is a stack check that does not run
// as written under -race, is missing from .ci/run's norace list, and the
// check passes (so CI never runs it without -race):
//
//   - method: the skip in a helper method (s.skipUnderRace(t)), methods
//     are never declarations of the fixpoint;
//   - init: a package variable set from the race constant in init()
//     (skipStacks = race): init is marked, the variable it assigns is not;
//   - typedecl: the race file declares a type (the stack budget as an
//     array type, [16384]byte under race, [4096]byte without), a type
//     declaration is never a declaration of the fixpoint;
//   - buildinfo: runtime/debug.ReadBuildInfo's "-race" setting, which a
//     go test -race binary carries ("-race true", checked here with
//     go1.26.8): no file of the module depends on the race tag at all.
func TestAttack5CIRaceCheckMissesMethodsInitTypesBuildInfo(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	const fail = "\tt.Errorf(\"8530 bytes of stacks a waiting call; want 4 KiB\")\n}\n"
	raceFiles := func(pkg string) map[string]string {
		return map[string]string{
			pkg + "/" + pkg + ".go":   "package " + pkg + "\n",
			pkg + "/race_on_test.go":  attack4Pkg(attack4RaceOn, pkg),
			pkg + "/race_off_test.go": attack4Pkg(attack4RaceOff, pkg),
		}
	}
	files := map[string]string{}
	for _, p := range []string{"method", "initvar"} {
		for k, v := range raceFiles(p) {
			files[k] = v
		}
	}
	files["method/stack_test.go"] = "package method\n\nimport \"testing\"\n\n" +
		"type suite struct{}\n\n// skipUnderRace skips a test whose figures are the race build's.\n" +
		"func (suite) skipUnderRace(t *testing.T) {\n\tt.Helper()\n\tif race {\n\t\tt.Skip(\"the race detector's build\")\n\t}\n}\n\n" +
		"func TestMethodStacks(t *testing.T) {\n\tvar s suite\n\ts.skipUnderRace(t)\n" + fail
	files["initvar/stack_test.go"] = "package initvar\n\nimport \"testing\"\n\nvar skipStacks bool\n\nfunc init() { skipStacks = race }\n\n" +
		"func TestInitStacks(t *testing.T) {\n\tif skipStacks {\n\t\tt.Skip(\"race build\")\n\t}\n" + fail
	files["typedecl/t.go"] = "package typedecl\n"
	files["typedecl/budget_race_test.go"] = "//go:build race\n\npackage typedecl\n\n// stackBudget is a waiting call's stacks under the race detector.\ntype stackBudget [16384]byte\n"
	files["typedecl/budget_norace_test.go"] = "//go:build !race\n\npackage typedecl\n\ntype stackBudget [4096]byte\n"
	files["typedecl/stack_test.go"] = "package typedecl\n\nimport \"testing\"\n\n" +
		"func TestTypeStacks(t *testing.T) {\n\tif got := 8530; got > len(stackBudget{}) {\n\t\tt.Errorf(\"%d bytes of stacks a waiting call; want %d\", got, len(stackBudget{}))\n\t}\n}\n"
	files["buildinfo/b.go"] = "package buildinfo\n"
	files["buildinfo/stack_test.go"] = "package buildinfo\n\nimport (\n\t\"runtime/debug\"\n\t\"testing\"\n)\n\n" +
		"func TestBuildInfoStacks(t *testing.T) {\n\tif bi, ok := debug.ReadBuildInfo(); ok {\n\t\tfor _, s := range bi.Settings {\n" +
		"\t\t\tif s.Key == \"-race\" && s.Value == \"true\" {\n\t\t\t\tt.Skip(\"the race detector's build\")\n\t\t\t}\n\t\t}\n\t}\n" + fail
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, files))
	for _, want := range []string{
		"./method=TestMethodStacks",
		"./initvar=TestInitStacks",
		"./typedecl=TestTypeStacks",
		"./buildinfo=TestBuildInfoStacks",
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

// The same promise, read the other way: the list names the tests that
// "behave otherwise under the race detector" and .ci/run's step runs each
// "which must run and pass without it" ("--- PASS"); TestRaceSkipsRunWithoutRace
// "evaluates each constraint with this machine's system, architecture and
// release tags" (RELIABILITY.md).
//
// Break (a correct change fails CI): two tests the race build does not
// touch are demanded in the norace list.
//
//   - shadow: a test in replay (whose race_on_test.go declares `race`)
//     with a local variable of its own named race (it reads a report for
//     "DATA RACE"): any identifier spelt like a marked name in the package
//     counts, locals, parameters, struct fields and selectors included;
//   - windows: replay/stack_windows_test.go, `//go:build !race`: the file's
//     name limits it to windows, which go honours and the check does not
//     (only //go:build lines are read). On linux the test is never built;
//     listing it makes .ci/run's norace step fail ("did not run and pass
//     without -race"), not listing it fails this check: CI cannot pass.
func TestAttack5CIRaceCheckFalseDemands(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, map[string]string{
		"replay/report_test.go": "package replay\n\nimport (\n\t\"strings\"\n\t\"testing\"\n)\n\n" +
			"func TestReportNamesNoRace(t *testing.T) {\n\treport := \"ok\"\n\tif race := strings.Contains(report, \"DATA RACE\"); race {\n\t\tt.Errorf(\"the report names a race\")\n\t}\n}\n",
		"replay/stack_windows_test.go": "//go:build !race\n\npackage replay\n\nimport \"testing\"\n\n" +
			"func TestWindowsStacks(t *testing.T) {}\n",
	}))
	for _, name := range []string{"TestReportNamesNoRace", "TestWindowsStacks"} {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(out, "./replay="+name) {
				t.Errorf("TestRaceSkipsRunWithoutRace demands ./replay=%s in .ci/run's norace list (failed=%v); it does not depend on the race build here", name, failed)
			}
		})
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// held: the fixpoint reaches a closure assigned to a package variable (var
// skipUnderRace = func(t) { if race ... }), a test of the external test
// package reading an export_test.go constant set from race, and a
// `//go:build !race` line placed after a copyright comment (go honours it
// there; so does the check).
func TestAttack5CIRaceCheckHeldClosureExportCopyright(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	const fail = "\tt.Errorf(\"8530 bytes of stacks a waiting call; want 4 KiB\")\n}\n"
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, map[string]string{
		"closure/c.go":             "package closure\n",
		"closure/race_on_test.go":  attack4Pkg(attack4RaceOn, "closure"),
		"closure/race_off_test.go": attack4Pkg(attack4RaceOff, "closure"),
		"closure/stack_test.go": "package closure\n\nimport \"testing\"\n\n" +
			"var skipUnderRace = func(t *testing.T) {\n\tif race {\n\t\tt.Skip(\"race build\")\n\t}\n}\n\n" +
			"func TestClosureStacks(t *testing.T) {\n\tskipUnderRace(t)\n" + fail,
		"export/e.go":             "package export\n",
		"export/race_on_test.go":  attack4Pkg(attack4RaceOn, "export"),
		"export/race_off_test.go": attack4Pkg(attack4RaceOff, "export"),
		"export/export_test.go":   "package export\n\nconst RaceEnabled = race\n",
		"export/stack_test.go": "package export_test\n\nimport (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/export\"\n)\n\n" +
			"func TestExportStacks(t *testing.T) {\n\tif export.RaceEnabled {\n\t\tt.Skip(\"race build\")\n\t}\n" + fail,
		"copyright/c.go": "package copyright\n",
		"copyright/stack_test.go": "// Copyright 2026 the fgrl authors.\n// SPDX-License-Identifier: MIT\n\n//go:build !race\n\npackage copyright\n\nimport \"testing\"\n\n" +
			"func TestCopyrightStacks(t *testing.T) {\n" + fail,
	}))
	for _, want := range []string{"./closure=TestClosureStacks", "./export=TestExportStacks", "./copyright=TestCopyrightStacks"} {
		if !failed || !strings.Contains(out, want) {
			t.Errorf("%s unlisted: TestRaceSkipsRunWithoutRace failed=%v and does not name it", want, failed)
		}
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// held: a race file with only a `// +build race` line (no //go:build),
// which go1.26 still honours for a `go 1.26` module and the check does not
// read, fails .ci/run's gofmt step (gofmt adds the //go:build line), so it
// cannot land as it is; once gofmt has added the line, the check reads it.
func TestAttack5CIPlusBuildOnlyFailsGofmt(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	run := ciAtkScript(t, ".ci/run")
	frag := "set -euo pipefail\nstep() { echo \"== $1\"; }\ngit init -q .\ngit add -A\n" + ciAtkLines(t, run, "step \"gofmt\"", "fi")
	dir := t.TempDir()
	ciAtkTree(t, dir, map[string]string{
		"go.mod":             "module example.com/plusbuild\n\ngo 1.26\n",
		"p/p.go":             "package p\n",
		"p/race_on_test.go":  "// +build race\n\npackage p\n\nconst race = true\n",
		"p/race_off_test.go": "//go:build !race\n\npackage p\n\nconst race = false\n",
		"p/stack_test.go":    "package p\n\nimport \"testing\"\n\nfunc TestPlusStacks(t *testing.T) {\n\tif race {\n\t\tt.Skip()\n\t}\n}\n",
	})
	code, out := ciAtkBash(t, dir, frag)
	if code == 0 || !strings.Contains(out, "race_on_test.go") {
		t.Fatalf("a `// +build race` file without //go:build: .ci/run's gofmt step exits %d, want it to name the file\n%s", code, out)
	}
}

// ---------------------------------------------------------------------------
// fuzz_all's result lines

// RELIABILITY.md (the second attack's fix): "a result line must be go
// test's exactly (`ok  ⇥PKG⇥…`, `?   ⇥PKG⇥[no test files]`) and name a
// package `go list` lists"; .ci/run: "A package's result is go test's line
// for a package of the module, exactly: what a test binary prints itself
// ... is not."
//
// Break: what a test binary prints itself can be go test's exact form. A
// TestMain that writes its own package's result prefix to stdout without a
// newline ("ok  \tPKG\t": a wrapper that mimics go test's summary, say)
// glues it to the first target: `go test -list` prints
// "ok  \texample.com/atkcirun/p\tFuzzParse", a result line of a listed
// package with no target before it, and FuzzParse is never fuzzed. Another
// package's target makes the count non-zero: green with a parser failing
// on every input. (The line is forged on purpose; no test binary is told
// apart from go test by its text alone.)
func TestAttack5CIFuzzTargetHiddenByExactResultLine(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, map[string]string{
		"p/p.go": "package p\n",
		"p/p_test.go": "package p\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) {\n\tfmt.Print(\"ok  \\texample.com/atkcirun/p\\t\")\n\tm.Run()\n}\n\n" + brokenFuzz,
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t))
	if code == 0 {
		t.Fatalf("p.FuzzParse fails on every input; its TestMain printed go test's own result form before the name, and the fuzzing exits 0 (it never ran it):\n%s", out)
	}
}

// held: a second run over the same module and build cache passes too:
// whether or not go test prints a package's -list result as "(cached)", it
// is go test's exact form and the targets are fuzzed again.
func TestAttack5CIFuzzSecondRunCachedPasses(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, nil)
	for i := 0; i < 2; i++ {
		code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t), "FUZZTIME=200x")
		if code != 0 || !strings.Contains(out, "fuzz example.com/atkcirun/good FuzzGood") {
			t.Fatalf("run %d: exit %d, want 0 with FuzzGood fuzzed:\n%s", i+1, code, out)
		}
	}
}

// ---------------------------------------------------------------------------
// image/recipe.sh's denial rule

// attack5RecipeFragment is recipe.sh from run=$(mktemp -d ...) through the
// SKIP's fi, verbatim, then a line saying the recipe would run.
func attack5RecipeFragment(t *testing.T) string {
	return "set -euo pipefail\n" + ciAtkLines(t, ciAtkScript(t, "image/recipe.sh"), "run=$(mktemp -d", "fi") + "echo 'the recipe would run here'\n"
}

// image/recipe.sh: "When dockerd cannot start here (its log says it was
// denied privileges for its mounts, cgroups or networks), it says why and
// exits 0: the recipe was not run." RELIABILITY.md: "skipped only when
// dockerd exited and its log names a denial (operation not permitted,
// permission denied, a read-only file system, cgroups, iptables or
// nftables, a failed mount, root required)".
//
// Break (a machine's refusal fails CI, for no reason of the change): the
// denial must now be in a line matching 'failed to start daemon|error
// starting daemon|level=fatal', and its root pattern is "must be run as
// root". Debian's dockerd 20.10.24 (this machine's), started by a user
// other than root, exits 1 having logged only
//
//	level=info msg="Starting up"
//	dockerd needs to be started with root privileges. To run dockerd in rootless mode as an unprivileged user, see https://docs.docker.com/go/rootless/
//
// (checked here: setpriv --reuid=65534 dockerd ...): no fatal line, so
// recipe.sh exits 1, "for no reason of this machine's privileges". When
// this test runs as root with dockerd and setpriv on PATH it runs that
// real dockerd as uid 65534; otherwise a stand-in prints those two lines.
func TestAttack5CIRecipeNonRootDockerdFails(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	shim := t.TempDir()
	real, err1 := exec.LookPath("dockerd")
	setpriv, err2 := exec.LookPath("setpriv")
	dockerd := "#!/bin/sh\nprintf '%s\\n' 'time=\"2026-12-05T20:13:14.568454317Z\" level=info msg=\"Starting up\"' " +
		"'dockerd needs to be started with root privileges. To run dockerd in rootless mode as an unprivileged user, see https://docs.docker.com/go/rootless/' >&2\nexit 1\n"
	if os.Geteuid() == 0 && err1 == nil && err2 == nil {
		dockerd = "#!/bin/sh\nexec " + setpriv + " --reuid=65534 --regid=65534 --clear-groups " + real + " \"$@\"\n"
	}
	ciAtkTree(t, shim, map[string]string{
		"dockerd": dockerd,
		"docker":  "#!/bin/sh\necho 'Cannot connect to the Docker daemon. Is the docker daemon running?' >&2\nexit 1\n",
	})
	code, out := ciAtkBash(t, t.TempDir(), attack5RecipeFragment(t), "PATH="+shim+":"+os.Getenv("PATH"))
	if code != 0 || !strings.Contains(out, "SKIP") {
		t.Fatalf("dockerd run by a user other than root (it needs root: a denial of this machine): recipe.sh exits %d, want 0 with SKIP\n%s", code, out)
	}
}

// image/recipe.sh: "Any other failure exits 1, a dockerd that refused its
// own command line or never answered too." RELIABILITY.md: "the denial must
// be in the error dockerd ended with".
//
// Break: "cgroup" is a denial wherever it is in that final error, and the
// word is in dockerd's refusals of its own cgroup options. A change that
// adds `--exec-opt native.cgroupdriver=systemdd` (misspelt) to recipe.sh's
// dockerd line: Debian's dockerd 20.10.24 exits 1 with
// "failed to start daemon: native.cgroupdriver option systemdd not
// supported" (checked on this machine as root), and recipe.sh says SKIP,
// exit 0: the recipe never runs, green. The stand-in prints the start of
// that log and its last line.
func TestAttack5CIRecipeSkipsOnOwnCgroupFlag(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	frag := attack5RecipeFragment(t)
	if !strings.Contains(frag, `--pidfile "$run/docker.pid"`) {
		t.Fatal("recipe.sh's dockerd line has changed")
	}
	frag = strings.Replace(frag, `--pidfile "$run/docker.pid"`, `--pidfile "$run/docker.pid" --exec-opt native.cgroupdriver=systemdd`, 1)
	shim := t.TempDir()
	ciAtkTree(t, shim, map[string]string{
		"dockerd": "#!/bin/sh\ncase \"$*\" in *native.cgroupdriver=systemdd*) ;; *) echo 'the stand-in expects the misspelt option' >&2; exit 3 ;; esac\n" +
			"printf '%s\\n' 'time=\"2026-12-05T20:13:10.101Z\" level=info msg=\"Starting up\"' " +
			"'time=\"2026-12-05T20:13:10.102Z\" level=info msg=\"libcontainerd: started new containerd process\" pid=1' " +
			"'time=\"2026-12-05T20:13:10.947Z\" level=info msg=\"[core] Channel Connectivity change to SHUTDOWN\" module=grpc' " +
			"'failed to start daemon: native.cgroupdriver option systemdd not supported' >&2\nexit 1\n",
		"docker": "#!/bin/sh\necho 'Cannot connect to the Docker daemon. Is the docker daemon running?' >&2\nexit 1\n",
	})
	code, out := ciAtkBash(t, t.TempDir(), frag, "PATH="+shim+":"+os.Getenv("PATH"))
	if code == 0 {
		t.Fatalf("dockerd refusing recipe.sh's own misspelt cgroup driver option: recipe.sh exits 0\n%s", out)
	}
}

// held: a real denial in dockerd's final error (a container without the
// privilege to create the NAT chain: "iptables ... Permission denied")
// still skips.
func TestAttack5CIRecipeIptablesDenialSkips(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	shim := t.TempDir()
	ciAtkTree(t, shim, map[string]string{
		"dockerd": "#!/bin/sh\nprintf '%s\\n' 'time=\"2026-12-05T20:13:10.101Z\" level=info msg=\"Starting up\"' " +
			"'failed to start daemon: Error initializing network controller: error obtaining controller instance: failed to create NAT chain DOCKER: iptables failed: iptables -t nat -N DOCKER: Permission denied (you must be root)' >&2\nexit 1\n",
		"docker": "#!/bin/sh\nexit 1\n",
	})
	code, out := ciAtkBash(t, t.TempDir(), attack5RecipeFragment(t), "PATH="+shim+":"+os.Getenv("PATH"))
	if code != 0 || !strings.Contains(out, "SKIP") {
		t.Fatalf("an iptables denial in dockerd's final error: exit %d, want 0 with SKIP\n%s", code, out)
	}
}
