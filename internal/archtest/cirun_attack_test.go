package archtest

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Attacks on CI's verdict: .ci/run (and the image scripts it calls) as a
// gate that lands a change when it exits 0. Each test cuts a fragment out of
// the real script (read-only, ../../.ci/run or ../../image/*.sh, so a fix
// there is what the test runs), keeps its `set -euo pipefail`, and runs it
// with bash in a tiny module of its own in t.TempDir(): go from PATH, no
// network (GOPROXY=off), no module download. A break's test asserts that the
// fragment fails on the broken change; it fails on the current script.

// ciAtkScript reads a script of the repository, relative to its root.
func ciAtkScript(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ciAtkLines is the lines of src from the first that contains from up to
// the first line after it that starts with to (inclusive).
func ciAtkLines(t *testing.T, src, from, to string) string {
	t.Helper()
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if !strings.Contains(l, from) {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], to) {
				return strings.Join(lines[i:j+1], "\n") + "\n"
			}
		}
		break
	}
	t.Fatalf("no fragment from %q to %q", from, to)
	return ""
}

// ciAtkLinesBefore is the lines of src from the first that contains from
// up to, not including, the first line after it that starts with before.
func ciAtkLinesBefore(t *testing.T, src, from, before string) string {
	t.Helper()
	f := ciAtkLines(t, src, from, before)
	f = strings.TrimSuffix(f, "\n")
	return f[:strings.LastIndex(f, "\n")+1]
}

func ciAtkTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// ciAtkBash runs script with bash in dir; it returns the exit status and
// the output. A fragment that has not ended in 3 minutes hangs: the whole
// tests steps take about 20 s alone, and took 57 s in CI beside the other
// packages' tests.
func ciAtkBash(t *testing.T, dir, script string, env ...string) (int, string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "fragment.sh")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", f)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
	cmd.Env = append(cmd.Env, env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("fragment timed out:\n%s", b.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, b.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), b.String()
	}
	t.Fatal(err)
	return 0, ""
}

// ciAtkFuzzFragment is .ci/run's short fuzzing as the run does it:
// fuzz_all verbatim, started in the background for the module in the
// current directory and then for bench, and its verdict after the wait.
func ciAtkFuzzFragment(t *testing.T) string {
	run := ciAtkScript(t, ".ci/run")
	return "set -euo pipefail\n" +
		ciAtkLines(t, run, "fuzz_all() {", "}") +
		ciAtkLines(t, run, "fuzzlog=$(mktemp)", "fuzzpid=$!") +
		ciAtkLines(t, run, "fuzzed=0", `[ "$fuzzed" = 0 ]`)
}

// ciAtkFuzzModule is a tiny module with one sound fuzz target, a bench
// module beside it with another (the run fuzzes both), and files.
func ciAtkFuzzModule(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	base := map[string]string{
		"go.mod":              "module example.com/atkcirun\n\ngo 1.26\n",
		"good/good.go":        "package good\n",
		"good/good_test.go":   "package good\n\nimport \"testing\"\n\nfunc FuzzGood(f *testing.F) { f.Add([]byte(\"x\")); f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
		"bench/go.mod":        "module example.com/atkcirun/bench\n\ngo 1.26\n",
		"bench/sum/sum.go":    "package sum\n",
		"bench/sum/s_test.go": "package sum\n\nimport \"testing\"\n\nfunc FuzzSum(f *testing.F) { f.Add([]byte(\"x\")); f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
	}
	for k, v := range files {
		base[k] = v
	}
	// RELIABILITY.md's table of the module's targets (not bench's), which
	// .ci/run's fuzzing counts what it fuzzed against, as the real one.
	table := "| target | what it parses | property checked |\n|---|---|---|\n"
	for name, body := range base {
		if !strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "bench/") {
			continue
		}
		pkg := strings.TrimSuffix(regexp.MustCompile(`(?m)^package (\w+)`).FindStringSubmatch(body)[1], "_test")
		for _, m := range regexp.MustCompile(`(?m)^func (Fuzz\S*)\(`).FindAllStringSubmatch(body, -1) {
			table += "| `" + pkg + "." + m[1] + "` | x | y |\n"
		}
	}
	if _, ok := base["RELIABILITY.md"]; !ok {
		base["RELIABILITY.md"] = "# Reliability\n\n" + table + "\nThe end.\n"
	}
	ciAtkTree(t, dir, base)
	return dir
}

// brokenFuzz is a parser's fuzz target that fails on every input the
// fuzzer tries: nothing but fuzzing finds it (no seed corpus, so the tests
// step, which runs only the seeds, passes).
const brokenFuzz = "func FuzzParse(f *testing.F) {\n\tf.Fuzz(func(t *testing.T, b []byte) { t.Fatal(\"the parser is broken\") })\n}\n"

// held: a sound module fuzzes green (the baseline the attacks change).
func TestAttack3CIFuzzBaselinePasses(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, nil)
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t))
	if code != 0 || !strings.Contains(out, "fuzz example.com/atkcirun/good FuzzGood") {
		t.Fatalf("exit %d, want 0 with FuzzGood fuzzed:\n%s", code, out)
	}
}

// held: RELIABILITY.md: "Every parser is fuzzed; `.ci/run` runs each
// target for 500 executions". A target that fails when fuzzed fails the
// run, through the background job and the wait (errexit is off inside
// fuzz_all; each step's `|| return` carries the status).
func TestAttack3CIFuzzFailingTargetFails(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, map[string]string{
		"p/p.go":      "package p\n",
		"p/p_test.go": "package p\n\nimport \"testing\"\n\n" + brokenFuzz,
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t))
	if code == 0 || !strings.Contains(out, "the parser is broken") {
		t.Fatalf("a fuzz target failing on every input: exit %d, want its failure:\n%s", code, out)
	}
}

// held: .ci/run, fuzz_all: "list=$(go test -list '^Fuzz' ./...) || return
// # a package whose tests do not build fails the run here".
func TestAttack3CIFuzzTestsNotBuildingFails(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, map[string]string{
		"p/p.go":      "package p\n",
		"p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc FuzzP(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) { undefined() }) }\n",
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t))
	if code == 0 {
		t.Fatalf("a package whose tests do not build: the fuzzing exits 0:\n%s", out)
	}
}

// RELIABILITY.md: "Every parser is fuzzed; `.ci/run` runs each target for
// 500 executions". .ci/run: "fuzz_all: every fuzz target of the module
// ... as go test -list finds them (a new parser's fuzzer joins without an
// edit here)".
//
// Break: fuzz_all takes a target's name only from a line that starts with
// "Fuzz" in go test -list's output, which holds the test binary's own output
// (stdout and stderr) too. A TestMain that writes a word without a newline
// before m.Run ("setup: ") glues itself to the first name: "setup: FuzzParse"
// is no target, so FuzzParse is never fuzzed; another package's target is,
// so "[ "$n" -gt 0 ]" holds and the run is green with a parser that fails on
// every input.
func TestAttack3CIFuzzTargetHiddenByTestOutput(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, map[string]string{
		"p/p.go": "package p\n",
		"p/p_test.go": "package p\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) {\n\tfmt.Fprint(os.Stderr, \"setup: \")\n\tos.Exit(m.Run())\n}\n\n" + brokenFuzz,
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t))
	if code == 0 {
		t.Fatalf("p.FuzzParse fails on every input, yet the fuzzing exits 0 (it never ran it):\n%s", out)
	}
}

// RELIABILITY.md: "Every parser is fuzzed; `.ci/run` runs each target for
// 500 executions". The brief's suspect: "the fuzz count check
// [ "$n" -gt 0 ] passing while targets were skipped".
//
// Break: fuzz_all counts a target as fuzzed when its binary exits 0; a
// target that skips (f.Skip before f.Fuzz: "flaky", a tool or variable the
// fuzz run lacks) exits 0 with "--- SKIP" and no execution, and is counted.
// The run is green with a parser that fails on every input.
func TestAttack3CIFuzzSkippedTargetCounted(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, map[string]string{
		"p/p.go": "package p\n",
		"p/p_test.go": "package p\n\nimport \"testing\"\n\n" +
			"func FuzzParse(f *testing.F) {\n\tf.Skip(\"flaky on CI\")\n\tf.Fuzz(func(t *testing.T, b []byte) { t.Fatal(\"the parser is broken\") })\n}\n",
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t))
	if code == 0 {
		t.Fatalf("p.FuzzParse skipped, no execution, yet counted and the fuzzing exits 0:\n%s", out)
	}
}

// ciAtkTestsModule is a tiny module named like fgrl with every package of
// .ci/run's first=(...) list, so that the tests steps run verbatim on it.
func ciAtkTestsModule(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	base := map[string]string{"go.mod": "module github.com/xblgo/fgrl\n\ngo 1.26\n"}
	for _, p := range []string{"mock", "internal/archtest", "throttle/redisstore", "transport", "replay", "proxy", "analyze", "whatif", "client", "datafile", "hresult", "internal/adminaccess", "internal/safetext", "internal/scaletest", "internal/vulngate", "internal/wiretest", "internal/xblid", "ratelimit"} {
		base[p+"/x.go"] = "package " + filepath.Base(p) + "\n"
	}
	base["cmd/xblcall/main.go"] = "package main\n\nfunc main() {}\n"
	base["other/other.go"] = "package other\n"
	base["other/other_test.go"] = "package other\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) {}\n"
	// The tests .ci/run's norace list names, sound.
	maps.Copy(base, ciAtkNoraceFiles(t))
	for k, v := range files {
		base[k] = v
	}
	ciAtkTree(t, dir, base)
	return dir
}

// ciAtkNoraceFiles are, for every test .ci/run's norace list names, a
// package of that path with that test (in PKG/norace_test.go), skipping
// under -race through internal/racebuild (its files the real ones): the
// list's tests, sound, in a throwaway module named like fgrl.
func ciAtkNoraceFiles(t *testing.T) map[string]string {
	t.Helper()
	block := regexp.MustCompile(`(?s)\nnorace=\(\n(.*?)\n\)\n`).FindStringSubmatch(ciAtkScript(t, ".ci/run"))
	if block == nil {
		t.Fatal(".ci/run has no norace=( ... ) list")
	}
	files := map[string]string{}
	for _, f := range []string{"racebuild.go", "race_on.go", "race_off.go"} {
		files["internal/racebuild/"+f] = ciAtkScript(t, "internal/racebuild/"+f)
	}
	for _, line := range strings.Split(block[1], "\n") {
		pkg, test, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "./"), "=")
		if !ok {
			t.Fatalf(".ci/run's norace list: %q is not ./PACKAGE=TEST", line)
		}
		name := path.Base(pkg)
		if pkg == "cmd/xblcall" {
			name = "main"
		}
		file := pkg + "/norace_test.go"
		if files[file] == "" {
			skip := "import (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/racebuild\"\n)\n\nfunc skip(t *testing.T) { racebuild.Skip(t, \"a test of sizes\") }\n"
			if pkg == "internal/racebuild" {
				skip = "import \"testing\"\n\nfunc skip(t *testing.T) { Skip(t, \"a test of sizes\") }\n"
			}
			files[file] = "package " + name + "\n\n" + skip
			if files[pkg+"/x.go"] == "" && pkg != "internal/racebuild" {
				files[pkg+"/x.go"] = "package " + name + "\n"
			}
		}
		files[file] += "\nfunc " + test + "(t *testing.T) { skip(t) }\n"
	}
	return files
}

// ciAtkTestsFragment is .ci/run's tests step verbatim (from first=( to
// the fuzzing's function), with step reduced to its echo.
func ciAtkTestsFragment(t *testing.T) string {
	run := ciAtkScript(t, ".ci/run")
	return "set -euo pipefail\nstep() { echo \"== $1\"; }\n" + ciAtkLinesBefore(t, run, "first=(", "fuzz_all() {")
}

// held: .ci/run's tests step takes every package but first=(...) from
// `rest=$(go list ./... | grep ...)`: when go list fails the assignment's
// status (pipefail) stops the run (errexit at the top level), rather than
// the tests running on the first=(...) packages alone. A `go` whose list
// subcommand fails shows it: the steps exit non-zero having run no test
// (the module's packages have tests, so a run that went on would print
// go test's result lines; no run of the sound module first, whose full
// steps cost 20 s of CPU: TestAttack3CIStackTestRenamedNeverRuns fails
// for its one named test, which says the rest of the module passes).
func TestAttack3CIGoListFailureStopsTests(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkTestsModule(t, nil)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	shim := t.TempDir()
	ciAtkTree(t, shim, map[string]string{"go": "#!/bin/sh\nif [ \"$1\" = list ]; then echo 'go: cannot list' >&2; exit 1; fi\nexec " + goBin + " \"$@\"\n"})
	code, out := ciAtkBash(t, dir, ciAtkTestsFragment(t), "PATH="+shim+":"+os.Getenv("PATH"))
	if code == 0 || !strings.Contains(out, "go: cannot list") || regexp.MustCompile(`(?m)^(ok  |FAIL|---)`).MatchString(out) {
		t.Fatalf("go list failing: the tests steps exit %d; want a failure at the listing, before any test ran:\n%s", code, out)
	}
}

// .ci/run: step "tests of stack sizes, which the race detector's build
// changes (they skip under -race)"; replay/runner_test.go,
// TestWaitingCallsKeepSmallStacks: "the race detector's instrumentation
// makes every frame larger ... (.ci/run runs this test without it too)".
//
// Break: the step without -race picks the test by its name,
// `-run 'TestWaitingCallsKeepSmallStacks'`, and go test exits 0 when -run
// matches nothing ("no tests to run"). A change that renames the test (or
// adds another stack test skipping under -race) and lets the stacks grow:
// under -race the test skips its size check, without -race it does not
// run. Green. Here replay's stack test, renamed
// TestWaitingCallsHoldSmallStacks, fails its size check without -race.
func TestAttack3CIStackTestRenamedNeverRuns(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkTestsModule(t, map[string]string{
		"replay/race_on_test.go":  "//go:build race\n\npackage replay\n\nconst race = true\n",
		"replay/race_off_test.go": "//go:build !race\n\npackage replay\n\nconst race = false\n",
		"replay/norace_test.go": "package replay\n\nimport \"testing\"\n\n" +
			"func TestWaitingCallsHoldSmallStacks(t *testing.T) {\n\tif race {\n\t\tt.Skip(\"the stacks' sizes are those of the race detector's build\")\n\t}\n" +
			"\tt.Errorf(\"8530 bytes of stacks a waiting call; want the 4 KiB a goroutine that ran no other call needs\")\n}\n",
	})
	// The step without -race, verbatim: the race step, in which the test
	// skips, cost a dozen race-linked test binaries here (20 s of the 30
	// this test took) and adds nothing to the verdict.
	code, out := ciAtkBash(t, dir, "set -euo pipefail\n"+ciAtkLines(t, ciAtkScript(t, ".ci/run"), "norace=(", "done"))
	if code == 0 || !strings.Contains(out, "github.com/xblgo/fgrl/replay: TestWaitingCallsKeepSmallStacks did not run and pass without -race") ||
		!strings.Contains(out, "PASS github.com/xblgo/fgrl/analyze TestLongGroupsKeepLittleRoom") {
		t.Fatalf("a stack test failing without -race, skipping under it: the step without -race exits %d; want it to name the test, the other listed tests passing:\n%s", code, out)
	}
}

// .ci/run: "Runs on a fresh clone on a fresh machine; installs what it
// needs." image/build.sh: "The image holds one static binary"; check.sh
// checks it. Its check was
//
//	file "$work/usr/local/bin/xblcall" 2>/dev/null | grep -q 'statically linked' || ldd "$work/usr/local/bin/xblcall" 2>&1 | grep -q 'not a dynamic executable'
//
// Break (failed for reasons outside the change): `file` was not among the
// tools .ci/run's first step checks or installs (a Debian base image has
// none), and the fallback could never pass: glibc's ldd prints "not a
// dynamic executable" for a static binary and exits 1, which pipefail made
// the pipeline's status. check.sh now reads the ELF program headers itself
// (python3, which the tools step installs): here, on a PATH without file,
// a static build passes and a dynamic one fails.
func TestAttack3CIImageStaticCheckWithoutFile(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	frag := "set -euo pipefail\n" + ciAtkLines(t, ciAtkScript(t, "image/check.sh"), `python3 - "$work/usr/local/bin/xblcall" <<'PY'`, "PY") + "echo static\n"
	build := func(cgo string) string {
		work := t.TempDir()
		ciAtkTree(t, work, map[string]string{"src/go.mod": "module example.com/static\n\ngo 1.26\n", "src/main.go": "package main\n\nimport \"net\"\n\nfunc main() { net.Dial(\"tcp\", \"\") }\n"})
		b := exec.Command("go", "build", "-o", filepath.Join(work, "usr/local/bin/xblcall"), ".")
		b.Dir = filepath.Join(work, "src")
		b.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
		if out, err := b.CombinedOutput(); err != nil {
			t.Skipf("go build with CGO_ENABLED=%s: %v\n%s", cgo, err, out)
		}
		return work
	}
	// The machine without file: every other command on PATH.
	bin := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.Name() == "file" {
				continue
			}
			os.Symlink(filepath.Join(d, e.Name()), filepath.Join(bin, e.Name())) // the first on PATH wins
		}
	}
	static := build("0")
	if code, out := ciAtkBash(t, static, frag, "work="+static, "PATH="+bin); code != 0 {
		t.Fatalf("a static binary, on a machine without file: check.sh's static check exits %d\n%s", code, out)
	}
	dynamic := build("1")
	if code, out := ciAtkBash(t, dynamic, frag, "work="+dynamic, "PATH="+bin); code == 0 {
		t.Fatalf("a dynamically linked binary (cgo's net): check.sh's static check exits 0\n%s", out)
	}
}

// image/recipe.sh: "When dockerd cannot start here (no privileges for its
// mounts, cgroups or networks), it says why and exits 0: the recipe was not
// run. Any other failure exits 1." .ci/run calls it as "says why and goes
// on only when dockerd cannot start here".
//
// Break: the skip is taken whenever `docker version` does not answer, for
// any reason dockerd stopped: a change that breaks the recipe's own dockerd
// line (a misspelt flag, a data root it cannot use) lands green with
// "SKIP". Here dockerd refuses its command line ("unknown flag") and docker
// finds no daemon; the fragment from run=$(mktemp ...) through the SKIP's fi
// exits 0.
func TestAttack3CIRecipeSkipsOnAnyDockerdFailure(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	frag := "set -euo pipefail\n" + ciAtkLines(t, ciAtkScript(t, "image/recipe.sh"), "run=$(mktemp -d", "fi") + "echo 'the recipe would run here'\n"
	shim := t.TempDir()
	ciAtkTree(t, shim, map[string]string{
		"dockerd": "#!/bin/sh\necho 'unknown flag: --data-rot' >&2\necho \"See 'dockerd --help'.\" >&2\nexit 125\n",
		"docker":  "#!/bin/sh\necho 'Cannot connect to the Docker daemon. Is the docker daemon running?' >&2\nexit 1\n",
	})
	code, out := ciAtkBash(t, t.TempDir(), frag, "PATH="+shim+":"+os.Getenv("PATH"))
	if code == 0 {
		t.Fatalf("dockerd refusing its own command line: recipe.sh exits 0\n%s", out)
	}
}

// held: .ci/run's EXIT trap (times) prints the steps' times and keeps the
// failing status: a step that fails still fails the run.
func TestAttack3CITrapKeepsFailure(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	run := ciAtkScript(t, ".ci/run")
	frag := "set -euo pipefail\n" + ciAtkLines(t, run, "steps=() step_start", "trap times EXIT") + "step \"a step that fails\"\nfalse\n"
	code, out := ciAtkBash(t, t.TempDir(), frag)
	if code == 0 || !strings.Contains(out, "failed: exit 1") {
		t.Fatalf("exit %d, want 1 and the trap's \"failed: exit 1\":\n%s", code, out)
	}
}
