package archtest

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A second outside attack on CI's verdict (.ci/run and the image scripts),
// on the fixes of e7a55d5. Same method as cirun_attack_test.go: each test
// cuts the fragment it attacks out of the real script (read-only, so a fix
// there is what runs) and runs it with bash on a throwaway tree in
// t.TempDir() (GOPROXY=off); archtest's own check is run as
// arch_attack_test.go's check does, this test binary in a throwaway module
// named like this one. A break's test fails on the current scripts; a
// "held:" test passes.

// ---------------------------------------------------------------------------
// TestRaceSkipsRunWithoutRace and .ci/run's norace list

// attack4RaceModule is a module named like fgrl whose .ci/run is the real one
// and whose packages are sound: every test its norace list names skips
// under -race (ciAtkNoraceFiles) and is listed.
func attack4RaceModule(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	m := map[string]string{
		"go.mod":                  "module github.com/xblgo/fgrl\n\ngo 1.26\n",
		".ci/run":                 ciAtkScript(t, ".ci/run"),
		"internal/archtest/.keep": "",
		"replay/replay.go":        "package replay\n",
		// A constant of the race build in replay itself, as its tests once
		// had, beside internal/racebuild's.
		"replay/race_on_test.go":  attack4Pkg(attack4RaceOn, "replay"),
		"replay/race_off_test.go": attack4Pkg(attack4RaceOff, "replay"),
	}
	maps.Copy(m, ciAtkNoraceFiles(t))
	maps.Copy(m, files)
	return m
}

// attack4StackBody is a stack-size check that fails: what the norace step
// exists to catch.
const attack4StackBody = "\tt.Errorf(\"8530 bytes of stacks a waiting call; want the 4 KiB a goroutine that ran no other call needs\")\n}\n"

const attack4RaceOn = "//go:build race\n\npackage %s\n\nconst race = true\n"
const attack4RaceOff = "//go:build !race\n\npackage %s\n\nconst race = false\n"

func attack4Pkg(s, name string) string { return strings.ReplaceAll(s, "%s", name) }

// held: the sound module passes TestRaceSkipsRunWithoutRace, so a failure
// below is the check's verdict on the edit, not on the setup; and a test
// that reads the race build's constant in its own body, unlisted, is found
// (the case the fix was made for).
func TestAttack4CIRaceCheckBaselineAndDirectUse(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	if failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, nil)); failed {
		t.Fatalf("TestRaceSkipsRunWithoutRace fails on the sound module:\n%s", out)
	}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, map[string]string{
		"direct/d.go":             "package direct\n",
		"direct/race_on_test.go":  attack4Pkg(attack4RaceOn, "direct"),
		"direct/race_off_test.go": attack4Pkg(attack4RaceOff, "direct"),
		"direct/stack_test.go":    "package direct\n\nimport \"testing\"\n\nfunc TestDirectStacks(t *testing.T) {\n\tif race {\n\t\tt.Skip(\"race build\")\n\t}\n" + attack4StackBody,
	}))
	if !failed || !strings.Contains(out, "./direct=TestDirectStacks") {
		t.Fatalf("an unlisted test reading the race constant in its body: failed=%v, want the check to name it:\n%s", failed, out)
	}
}

// .ci/run, the norace step: "PACKAGE=TEST: each test that skips under
// -race (internal/archtest's TestRaceSkipsRunWithoutRace finds them all in
// the code and fails when one is missing here), which must run and pass
// without it." RELIABILITY.md: "`TestRaceSkipsRunWithoutRace` finds every
// test that reads a race build's constant and fails when the list differs".
//
// Break: the check looks only for an identifier declared in a test file
// built with the race tag alone, used in the body of a Test function. Each
// variant below is a test that does not run its check under -race (the
// tests step) and is missing from the norace list (so the step without
// -race never runs it either), yet the check passes: a stack check failing
// on every run is never run by CI.
//
//   - buildtag: the idiom for "not under the race detector", a whole test
//     file `//go:build !race` (the test does not exist under -race);
//   - helper: the skip in a helper, skipUnderRace(t), that the test calls;
//   - codefile: the constant in the package's own race_on.go/race_off.go
//     (not _test.go files): only test files are read;
//   - otherpkg: a constant of another package of the module
//     (internal/atkrace.Enabled);
//   - arch: the race file's constraint `race && amd64` (the stack sizes of
//     one architecture): raceOnly evaluates every tag but race as false, so
//     a file built under -race on the CI's amd64 is not a race file to it.
func TestAttack4CIRaceSkipCheckMissesTests(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	stack := func(pkg, test, pre string) string {
		return "package " + pkg + "\n\nimport \"testing\"\n\nfunc " + test + "(t *testing.T) {\n" + pre + attack4StackBody
	}
	failed, out := check(t, "TestRaceSkipsRunWithoutRace", attack4RaceModule(t, map[string]string{
		"buildtag/b.go":                 "package buildtag\n",
		"buildtag/stack_norace_test.go": "//go:build !race\n\n" + stack("buildtag", "TestBuildTagStacks", ""),

		"helper/h.go":             "package helper\n",
		"helper/race_on_test.go":  attack4Pkg(attack4RaceOn, "helper"),
		"helper/race_off_test.go": attack4Pkg(attack4RaceOff, "helper"),
		"helper/helpers_test.go": "package helper\n\nimport \"testing\"\n\n" +
			"// skipUnderRace skips a test whose figures are the race build's.\nfunc skipUnderRace(t *testing.T) {\n\tt.Helper()\n\tif race {\n\t\tt.Skip(\"the race detector's build\")\n\t}\n}\n",
		"helper/stack_test.go": stack("helper", "TestHelperStacks", "\tskipUnderRace(t)\n"),

		"codefile/race_on.go":    "//go:build race\n\npackage codefile\n\nconst raceEnabled = true\n",
		"codefile/race_off.go":   "//go:build !race\n\npackage codefile\n\nconst raceEnabled = false\n",
		"codefile/stack_test.go": stack("codefile", "TestCodeFileStacks", "\tif raceEnabled {\n\t\tt.Skip(\"race build\")\n\t}\n"),

		"internal/atkrace/race_on.go":  "//go:build race\n\n// Package atkrace says whether this is the race detector's build.\npackage atkrace\n\nconst Enabled = true\n",
		"internal/atkrace/race_off.go": "//go:build !race\n\npackage atkrace\n\nconst Enabled = false\n",
		"otherpkg/o.go":                "package otherpkg\n",
		"otherpkg/stack_test.go": strings.Replace(stack("otherpkg", "TestOtherPkgStacks", "\tif atkrace.Enabled {\n\t\tt.Skip(\"race build\")\n\t}\n"),
			"import \"testing\"", "import (\n\t\"testing\"\n\n\t\"github.com/xblgo/fgrl/internal/atkrace\"\n)", 1),

		"arch/a.go":             "package arch\n",
		"arch/race_on_test.go":  "//go:build race && amd64\n\npackage arch\n\nconst race = true\n",
		"arch/race_off_test.go": "//go:build !race || !amd64\n\npackage arch\n\nconst race = false\n",
		"arch/stack_test.go":    stack("arch", "TestArchStacks", "\tif race {\n\t\tt.Skip(\"race build\")\n\t}\n"),
	}))
	for _, want := range []string{
		"./buildtag=TestBuildTagStacks",
		"./helper=TestHelperStacks",
		"./codefile=TestCodeFileStacks",
		"./otherpkg=TestOtherPkgStacks",
		"./arch=TestArchStacks",
	} {
		t.Run(want[2:strings.Index(want, "=")], func(t *testing.T) {
			if !failed || !strings.Contains(out, want) {
				t.Errorf("%s does not run its check under -race and is not in .ci/run's norace list; TestRaceSkipsRunWithoutRace failed=%v and does not name it", want, failed)
			}
		})
	}
	if t.Failed() {
		t.Logf("the check's output:\n%s", out)
	}
}

// ---------------------------------------------------------------------------
// fuzz_all's go test -list line rule

// RELIABILITY.md (the first CI attack's fix): "a line of `go test -list`
// that is neither a target, a package's result nor `?` (no test files)
// fails the run, quoted". .ci/run: "fuzz_all: every fuzz target of the
// module ... as go test -list finds them".
//
// Break: "a package's result" is any line that begins "ok", and "no test
// files" any line that begins "?". A TestMain that writes a word without a
// newline before m.Run glues it to the first target's name, as "setup: "
// did; "ok: FuzzParse" is taken for a package's result (its package,
// "FuzzParse", with no targets before it) and the target is dropped. Another
// package's target makes the count non-zero: green with a parser that fails
// on every input.
func TestAttack4CIFuzzTargetHiddenByOkLine(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	attack4FuzzHidden(t, "ok: ")
}

// The same with "?": "? FuzzParse" is taken for a package without test
// files.
func TestAttack4CIFuzzTargetHiddenByQuestionLine(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	attack4FuzzHidden(t, "? ")
}

func attack4FuzzHidden(t *testing.T, prefix string) {
	dir := ciAtkFuzzModule(t, map[string]string{
		"p/p.go": "package p\n",
		"p/p_test.go": "package p\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) {\n\tfmt.Fprint(os.Stderr, " + `"` + prefix + `"` + ")\n\tos.Exit(m.Run())\n}\n\n" + brokenFuzz,
	})
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t))
	if code == 0 {
		t.Fatalf("p.FuzzParse fails on every input; go test -list printed %q before its name, and the fuzzing exits 0 (it never ran it):\n%s", prefix+"FuzzParse", out)
	}
}

// held: FUZZTIME set to a budget that ends before any input runs (1ns: the
// target exits 0 with "gathering baseline coverage: 0/1") fails the
// fuzzing (no "execs: N" or "baseline coverage: N" with N > 0). (Tried by
// hand: a value that is no duration or count, 0x, -5x, " 3000x", makes the
// fuzz binary exit 2, which fails the run too.)
func TestAttack4CIFuzzTimeTooShortFails(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	dir := ciAtkFuzzModule(t, nil)
	code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t), "FUZZTIME=1ns")
	if code == 0 || !strings.Contains(out, "no input was run") {
		t.Fatalf("FUZZTIME=1ns: exit %d, want the fuzzing to fail naming a target that ran no input:\n%s", code, out)
	}
}

// ---------------------------------------------------------------------------
// the fuzzing's session and the exit trap

// attack4PidGone waits up to 5 s for pid to be gone (or a zombie).
func attack4PidGone(pid int) bool {
	for i := 0; i < 50; i++ {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// held: .ci/run: "A session of its own (setsid), so that a run that fails
// first stops all of it, the test binaries too (times, the exit trap)."
// The trap and the fuzzing's launch verbatim; fuzz_all stands in for one
// that has a test binary running (a grandchild, here sleep); then a step
// fails. The run exits 1 and the grandchild is gone.
func TestAttack4CITrapKillsFuzzSession(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	run := ciAtkScript(t, ".ci/run")
	pidfile := filepath.Join(t.TempDir(), "pid")
	frag := "set -euo pipefail\n" + ciAtkLines(t, run, "steps=() step_start", "trap times EXIT") +
		"fuzz_all() { sleep 300 & echo $! >\"$PIDFILE\"; wait; }\n" +
		ciAtkLines(t, run, "fuzzlog=$(mktemp)", "fuzzpid=$!") +
		"for _ in $(seq 100); do [ -s \"$PIDFILE\" ] && break; sleep 0.1; done\n" +
		"step \"mutation testing\"\nfalse\n"
	dir := t.TempDir() // the fuzzing counts its targets against RELIABILITY.md's table
	ciAtkTree(t, dir, map[string]string{"RELIABILITY.md": "| target | what | property |\n|---|---|---|\n| `p.FuzzP` | x | y |\n"})
	code, out := ciAtkBash(t, dir, frag, "PIDFILE="+pidfile)
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("the stand-in fuzzing never started: %v\n%s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	gone := attack4PidGone(pid)
	if !gone {
		syscall.Kill(pid, syscall.SIGKILL) // ours: the sleep this test started
	}
	if code == 0 || !gone {
		t.Fatalf("a step failing while the fuzzing runs: exit %d (want non-zero), its test binary gone: %v\n%s", code, gone, out)
	}
}

// held: the wait reports a fuzzing session killed by a signal (the OOM
// killer, say) as a failure: setsid -w's status for a child that did not
// exit normally is not 0.
func TestAttack4CIFuzzSessionKilledFails(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	run := ciAtkScript(t, ".ci/run")
	frag := "set -euo pipefail\nstep() { echo \"== $1\"; }\n" +
		"fuzz_all() { kill -9 $$; }\n" +
		ciAtkLines(t, run, "fuzzlog=$(mktemp)", "fuzzpid=$!") +
		ciAtkLines(t, run, "fuzzed=0", `[ "$fuzzed" = 0 ]`) + "echo green\n"
	code, out := ciAtkBash(t, t.TempDir(), frag)
	if code == 0 || strings.Contains(out, "green") {
		t.Fatalf("the fuzzing's session killed: exit %d, want non-zero:\n%s", code, out)
	}
}

// ---------------------------------------------------------------------------
// image/recipe.sh's denial patterns

// image/recipe.sh: "When dockerd cannot start here (its log says it was
// denied privileges for its mounts, cgroups or networks), it says why and
// exits 0: the recipe was not run. Any other failure exits 1, a dockerd
// that refused its own command line or never answered too."
//
// Break: the patterns are read anywhere in dockerd's whole log, and the
// word "cgroup" is in every log of a dockerd that got as far as starting
// its containerd: containerd logs `loading plugin
// "io.containerd.monitor.v1.cgroups"...` at info level. A dockerd that
// refuses its own command line after that (a storage driver misspelt in
// recipe.sh's dockerd line) exits 1 having logged "cgroups": SKIP, exit 0.
// Checked with this machine's Debian dockerd 20.10.24 (containerd
// 1.6.20): `dockerd ... --storage-driver overlay3` exits 1, its log of 92
// lines ends "failed to start daemon: error initializing graphdriver:
// driver not supported" and its line 40 is the plugin line. The fake
// dockerd below prints an excerpt of that log, in order.
func TestAttack4CIRecipeSkipsOnLateDockerdFailure(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	frag := "set -euo pipefail\n" + ciAtkLines(t, ciAtkScript(t, "image/recipe.sh"), "run=$(mktemp -d", "fi") + "echo 'the recipe would run here'\n"
	log := []string{
		`time="2026-12-05T19:52:37.895147869Z" level=info msg="Starting up"`,
		`time="2026-12-05T19:52:37.898834292Z" level=info msg="libcontainerd: started new containerd process" pid=15645`,
		`time="2026-12-05T19:52:38.015951125Z" level=info msg="starting containerd" revision="1.6.20~ds1-1+deb12u3" version="1.6.20~ds1"`,
		`time="2026-12-05T19:52:38.046440500Z" level=info msg="loading plugin \"io.containerd.runtime.v1.linux\"..." type=io.containerd.runtime.v1`,
		`time="2026-12-05T19:52:38.046921101Z" level=info msg="loading plugin \"io.containerd.runtime.v2.task\"..." type=io.containerd.runtime.v2`,
		`time="2026-12-05T19:52:38.047183278Z" level=info msg="loading plugin \"io.containerd.monitor.v1.cgroups\"..." type=io.containerd.monitor.v1`,
		`time="2026-12-05T19:52:38.047640825Z" level=info msg="loading plugin \"io.containerd.service.v1.tasks-service\"..." type=io.containerd.service.v1`,
		`time="2026-12-05T19:52:38.079078697Z" level=info msg="stopping healthcheck following graceful shutdown" module=libcontainerd`,
		`time="2026-12-05T19:52:38.085553451Z" level=info msg="[core] Channel Connectivity change to CONNECTING" module=grpc`,
		`failed to start daemon: error initializing graphdriver: driver not supported`,
	}
	var sh strings.Builder
	sh.WriteString("#!/bin/sh\n")
	for _, l := range log {
		sh.WriteString("printf '%s\\n' '" + l + "' >&2\n")
	}
	sh.WriteString("exit 1\n")
	shim := t.TempDir()
	ciAtkTree(t, shim, map[string]string{
		"dockerd": sh.String(),
		"docker":  "#!/bin/sh\necho 'Cannot connect to the Docker daemon. Is the docker daemon running?' >&2\nexit 1\n",
	})
	code, out := ciAtkBash(t, t.TempDir(), frag, "PATH="+shim+":"+os.Getenv("PATH"))
	if code == 0 {
		t.Fatalf("dockerd refusing its --storage-driver (after its containerd logged its cgroups plugin): recipe.sh exits 0\n%s", out)
	}
}

// ---------------------------------------------------------------------------
// image/check.sh

// attack4FakeXblcall is a stand-in for cmd/xblcall that does what check.sh
// asks of the image's binary: mock --hosts, proxy on loopback (its live
// page line, its CA), proxy off loopback refused with exit 2.
const attack4FakeXblcall = `package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	a := os.Args[1:]
	if len(a) >= 2 && a[0] == "mock" && a[1] == "--hosts" {
		fmt.Println("127.0.0.1 profile.xboxlive.com\n127.0.0.1 login.live.com")
		return
	}
	if len(a) >= 3 && a[0] == "proxy" {
		if !strings.HasPrefix(a[2], "127.0.0.1") {
			os.Exit(2)
		}
		for i := range a {
			if a[i] == "--ca-out" {
				os.WriteFile(a[i+1], []byte("-----BEGIN CERTIFICATE-----\n"), 0o644)
			}
		}
		fmt.Println("xblcall proxy: live page http://127.0.0.1:1/_fgrl/")
		time.Sleep(time.Hour)
	}
	os.Exit(1)
}
`

// image/check.sh: "Checks an image tarball that build.sh made: its config
// (user, entrypoint, ports) and that the binary in its layer runs".
// image/build.sh: "The image holds one static binary (/usr/local/bin/
// xblcall) ... runs as user 65532 (not root)". .ci/run runs it as "the
// mock's container image, built daemonless (crane), and the binary in its
// layer run".
//
// Break: check.sh runs the binary as the user running CI (root), never as
// the image's user, and checks the binary's owner but not its mode. build.sh
// makes the layer from what go build and mkdir -p wrote, whose modes are
// the machine's umask: under umask 027 (a hardened runner's; CIS
// recommends it) /usr, /usr/local, /usr/local/bin and xblcall are 0750,
// root's, and the image's user 65532 can neither reach nor run the binary
// (the container exits "permission denied"). check.sh passes that image.
// Here build.sh's own lines (mkdir, go build, the two tars) make the layer
// under umask 027 from a stand-in cmd/xblcall; the manifest and config are
// written as crane writes them; check.sh runs whole.
func TestAttack4CIImageBinaryUnrunnableByImageUser(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	root := t.TempDir()
	ciAtkTree(t, root, map[string]string{
		"go.mod":              "module example.com/fakexblcall\n\ngo 1.26\n",
		"cmd/xblcall/main.go": attack4FakeXblcall,
	})
	check, err := filepath.Abs(filepath.Join("..", "..", "image", "check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	build := ciAtkLines(t, ciAtkScript(t, "image/build.sh"), `mkdir -p "$work/root/usr/local/bin"`, "tar --owner=65532")
	frag := "set -euo pipefail\numask \"$UMASK\"\nwork=$(mktemp -d)\ntrap 'rm -rf \"$work\"' EXIT\n" + build + `umask 022
if [ -n "${STRIP:-}" ]; then # the layer as a build under umask 027 made it before build.sh set its modes
	python3 - "$work/layer.tar" <<'PY'
import sys, tarfile
src = tarfile.open(sys.argv[1])
members = [(m, src.extractfile(m).read() if m.isfile() else None) for m in src]
src.close()
with tarfile.open(sys.argv[1], "w") as out:
    for m, data in members:
        if m.name.strip("./").startswith("usr"):
            m.mode &= 0o750
        out.addfile(m, __import__("io").BytesIO(data) if data is not None else None)
PY
fi
mkdir "$work/image"
cp "$work/layer.tar" "$work/image/layer.tar"
python3 - "$work/image" <<'PY'
import json, sys
d = sys.argv[1]
json.dump({"architecture": "amd64", "os": "linux", "config": {"User": "65532:65532",
    "Entrypoint": ["/usr/local/bin/xblcall", "mock"], "ExposedPorts": {"8080/tcp": {}, "8443/tcp": {}}}},
    open(d + "/config.json", "w"))
json.dump([{"Config": "config.json", "RepoTags": ["xblcall-mock:latest"], "Layers": ["layer.tar"]}], open(d + "/manifest.json", "w"))
PY
python3 - "$work/layer.tar" <<'PY'
import sys, tarfile
for m in tarfile.open(sys.argv[1]):
    print("layer: %s %o %d" % (m.name, m.mode, m.uid))
PY
tar -C "$work/image" -cf "$work/img.tar" .
if [ "$(id -u)" = 0 ]; then # the container's view: the image's user 65532:65532 runs the entrypoint
	mkdir "$work/x" && tar -C "$work/x" -xf "$work/layer.tar" && chmod 755 "$work" "$work/x"
	python3 - "$work/x/usr/local/bin/xblcall" <<'PY'
import os, subprocess, sys
def drop():
    os.setgroups([]); os.setgid(65532); os.setuid(65532)
try:
    subprocess.run([sys.argv[1], "mock", "--hosts"], preexec_fn=drop, check=True, capture_output=True)
    print("as the image's user: runs")
except Exception as e:
    print("as the image's user:", e)
PY
fi
bash "$CHECK" "$work/img.tar"
`
	// held: under the usual umask 022 the image's user can run the binary,
	// and the setup passes check.sh.
	if code, out := ciAtkBash(t, root, frag, "UMASK=022", "CHECK="+check); code != 0 || os.Geteuid() == 0 && !strings.Contains(out, "as the image's user: runs") {
		t.Fatalf("umask 022: check.sh exits %d on the stand-in image (want 0, and the image's user able to run it)\n%s", code, out)
	}
	// build.sh now sets the layer's modes: under umask 027 the image's
	// user can still run the binary, and check.sh passes it.
	if code, out := ciAtkBash(t, root, frag, "UMASK=027", "CHECK="+check); code != 0 || os.Geteuid() == 0 && !strings.Contains(out, "as the image's user: runs") {
		t.Fatalf("umask 027: check.sh exits %d (want 0, and the image's user able to run the binary)\n%s", code, out)
	}
	// A layer whose modes are those umask 027 left (0750, root's): check.sh
	// fails it.
	code, out := ciAtkBash(t, root, frag, "UMASK=027", "STRIP=1", "CHECK="+check)
	if code == 0 || !strings.Contains(out, "the image's user cannot") {
		t.Fatalf("umask 027: /usr/local/bin/xblcall and its directories 0750 root's, the image runs as 65532:65532, which cannot run it; check.sh exits 0\n%s", out)
	}
}

// image/check.sh: "Static: an ELF file with no interpreter and no dynamic
// section among its program headers". RELIABILITY.md: "a static build
// passes and a cgo one fails". image/build.sh: "The image holds one static
// binary".
//
// Break (a correct build failed): a static-PIE binary (go build
// -buildmode=pie -ldflags '-linkmode=external -extldflags=-static-pie',
// the hardened static build: ASLR for the image's one binary) needs no
// loader and no library (it runs chrooted in an empty directory, as in the
// image's empty base: checked here when root), but it carries a
// PT_DYNAMIC for its own relocation: check.sh calls it "a dynamically
// linked binary". What it means by static is "no PT_INTERP" (a loader the
// image lacks).
func TestAttack4CIImageStaticPieRejected(t *testing.T) {
	t.Parallel() // each runs its own processes in a directory of its own
	frag := "set -euo pipefail\n" + ciAtkLines(t, ciAtkScript(t, "image/check.sh"), `python3 - "$work/usr/local/bin/xblcall" <<'PY'`, "PY") + "echo static\n"
	work := t.TempDir()
	ciAtkTree(t, work, map[string]string{"src/go.mod": "module example.com/spie\n\ngo 1.26\n", "src/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"ran\") }\n"})
	bin := filepath.Join(work, "usr/local/bin/xblcall")
	b := exec.Command("go", "build", "-buildmode=pie", "-ldflags=-linkmode=external -extldflags=-static-pie", "-o", bin, ".")
	b.Dir = filepath.Join(work, "src")
	b.Env = append(os.Environ(), "CGO_ENABLED=1", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := b.CombinedOutput(); err != nil {
		t.Skipf("no static-pie build here (gcc and a static libc): %v\n%s", err, out)
	}
	if os.Geteuid() == 0 {
		empty := t.TempDir()
		if err := os.Link(bin, filepath.Join(empty, "xblcall")); err != nil {
			data, _ := os.ReadFile(bin)
			os.WriteFile(filepath.Join(empty, "xblcall"), data, 0o755)
		}
		c := exec.Command("/xblcall")
		c.SysProcAttr = &syscall.SysProcAttr{Chroot: empty}
		out, err := c.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ran" {
			t.Fatalf("the static-pie binary in an empty root: %v %q (want it to run)", err, out)
		}
	}
	if code, out := ciAtkBash(t, work, frag, "work="+work); code != 0 {
		t.Fatalf("a static-pie binary (runs with no loader, no library): check.sh's static check exits %d\n%s", code, out)
	}
}
