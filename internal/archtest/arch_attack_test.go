package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The promises (arch_test.go and docs/ARCHITECTURE.md):
//
//	TestPackageTable: docs/ARCHITECTURE.md's table names every package of
//	the module, and only those, and every import of the module's packages,
//	their tests' included, is one the table allows.
//
//	TestFuzzTable: RELIABILITY.md's table of fuzz targets names every fuzz
//	target of the module's test files, as package.FuzzName, and no other.
//
// docs/ARCHITECTURE.md: "`internal/archtest` fails when the module's
// packages and this table differ, when an import is not allowed here, or
// when it cannot load the packages." RELIABILITY.md: "The table lists every
// fuzz target of the module (`internal/archtest` checks it against the test
// files)."
//
// Each attack builds a small module named like this one in a temporary
// directory (docs/ARCHITECTURE.md, RELIABILITY.md, packages) and runs the
// check itself, this test binary with -test.run, in its internal/archtest,
// where the check reads ../../docs/ARCHITECTURE.md and ../../RELIABILITY.md
// and lists github.com/xblgo/fgrl/... . A verdict is the check's exit.

const attackTable = "# Architecture\n\n## Packages\n\n| package | owns | imports | tests may also import |\n|---|---|---|---|\n" +
	"| `a` | a | `b` | none |\n" +
	"| `b` | b | none | none |\n" +
	"| `c` | c | none | none |\n\n## Other\n"

const attackFuzz = "# Reliability\n\n## Bad input\n\n| target | what | property |\n|---|---|---|\n" +
	"| `a.FuzzA` | a | a |\n\n## Other\n"

func attackModule() map[string]string {
	return map[string]string{
		"go.mod":                  "module github.com/xblgo/fgrl\n\ngo 1.26\n",
		"docs/ARCHITECTURE.md":    attackTable,
		"RELIABILITY.md":          attackFuzz,
		"a/a.go":                  "package a\n\nimport _ \"github.com/xblgo/fgrl/b\"\n",
		"a/a_test.go":             "package a\n\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
		"b/b.go":                  "package b\n",
		"c/c.go":                  "package c\n",
		"internal/archtest/.keep": "",
	}
}

// check runs the named check of this package on a module of files and
// says whether it failed.
func check(t *testing.T, test string, files map[string]string) (failed bool, out string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Dir = filepath.Join(dir, "internal", "archtest")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return err != nil, b.String()
}

// firstLine is the check's first line of output about the verdict.
func firstLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "arch_test.go") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func with(files map[string]string, kv ...string) map[string]string {
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(files, kv[i])
		} else {
			files[kv[i]] = kv[i+1]
		}
	}
	return files
}

// held: the baseline module passes both checks, so a failure below is the
// check's verdict on the edit, not on the setup.
func TestAttackArchBaselinePasses(t *testing.T) {
	for _, test := range []string{"TestPackageTable", "TestFuzzTable"} {
		if failed, out := check(t, test, attackModule()); failed {
			t.Fatalf("%s fails on the baseline module:\n%s", test, out)
		}
	}
}

// held: the package table check fails on a package without a row, a row
// without a package, an import the row does not allow, and a test import
// neither list allows.
func TestAttackPackageTableFailsClosed(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"package without a row":   with(attackModule(), "d/d.go", "package d\n"),
		"row without a package":   with(attackModule(), "docs/ARCHITECTURE.md", strings.Replace(attackTable, "\n\n## Other", "\n| `ghost` | g | none | none |\n\n## Other", 1)),
		"import not allowed":      with(attackModule(), "b/b.go", "package b\n\nimport _ \"github.com/xblgo/fgrl/c\"\n"),
		"test import not allowed": with(attackModule(), "b/b_test.go", "package b\n\nimport _ \"github.com/xblgo/fgrl/c\"\n"),
	} {
		failed, out := check(t, "TestPackageTable", files)
		if !failed {
			t.Errorf("%s: TestPackageTable passed:\n%s", name, out)
		} else if !strings.Contains(out, "arch_test.go") {
			t.Errorf("%s: TestPackageTable failed, but not by its own verdict:\n%s", name, out)
		}
		t.Logf("%s: %s", name, firstLine(out))
	}
}

// Break. "every import of the module's packages, their tests' included, is
// one the table allows": go list's Imports, TestImports and XTestImports
// hold only the files the current GOOS, GOARCH and no build tags select.
// Package b's row allows no import; a file of b for Windows, or a test
// file behind a build tag (an integration test), imports c, and the check
// passes on Linux, where CI runs it.
func TestAttackPackageTableSeesEveryFile(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"a file for another GOOS":   with(attackModule(), "b/b_windows.go", "package b\n\nimport _ \"github.com/xblgo/fgrl/c\"\n"),
		"a test behind a build tag": with(attackModule(), "b/b_integration_test.go", "//go:build integration\n\npackage b\n\nimport _ \"github.com/xblgo/fgrl/c\"\n"),
	} {
		if failed, out := check(t, "TestPackageTable", files); !failed {
			t.Errorf("%s imports a package the table does not allow: TestPackageTable passed\n%s", name, out)
		}
	}
}

// held: the fuzz table check fails on a target without a row and on a row
// without a target.
func TestAttackFuzzTableFailsClosed(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"target without a row": with(attackModule(), "b/b_test.go", "package b\n\nimport \"testing\"\n\nfunc FuzzB(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n"),
		"row without a target": with(attackModule(), "RELIABILITY.md", strings.Replace(attackFuzz, "\n\n## Other", "\n| `b.FuzzGone` | b | b |\n\n## Other", 1)),
	} {
		failed, out := check(t, "TestFuzzTable", files)
		if !failed {
			t.Errorf("%s: TestFuzzTable passed:\n%s", name, out)
		} else if !strings.Contains(out, "arch_test.go") {
			t.Errorf("%s: TestFuzzTable failed, but not by its own verdict:\n%s", name, out)
		}
		t.Logf("%s: %s", name, firstLine(out))
	}
}

// Break. "names every fuzz target of the module's test files ... and no
// other". The check finds targets with the pattern
// `^func (Fuzz\w+)\(f \*testing\.F\)` and reads every table row of
// RELIABILITY.md:
//   - a target whose parameter is not named f (go test runs FuzzB(ff
//     *testing.F) as a fuzz target) needs no row;
//   - a target in a test file behind a build tag needs no row;
//   - a target commented out (a block comment) still needs its row, and a
//     row naming it, a target that does not exist, passes;
//   - a target named only in another table of RELIABILITY.md (here a
//     table of attacks, whose first cell names it) passes though the table
//     of fuzz targets has no row for it.
func TestAttackFuzzTableSeesEveryTarget(t *testing.T) {
	target := func(sig string) string {
		return "package b\n\nimport \"testing\"\n\n" + sig + " { f.Fuzz(func(t *testing.T, b []byte) {}) }\n"
	}
	for name, files := range map[string]map[string]string{
		"a target whose parameter is ff": with(attackModule(), "b/b_test.go",
			"package b\n\nimport \"testing\"\n\nfunc FuzzB(ff *testing.F) { ff.Fuzz(func(t *testing.T, b []byte) {}) }\n"),
		"a target behind a build tag": with(attackModule(), "b/b_test.go", "//go:build fuzzing\n\n"+target("func FuzzB(f *testing.F)")),
		"a row for a target commented out": with(attackModule(),
			"b/b_test.go", "package b\n\n/*\nfunc FuzzGone(f *testing.F) {}\n*/\n",
			"RELIABILITY.md", strings.Replace(attackFuzz, "\n\n## Other", "\n| `b.FuzzGone` | b | b |\n\n## Other", 1)),
		"a target named only in another table": with(attackModule(),
			"b/b_test.go", target("func FuzzB(f *testing.F)"),
			"RELIABILITY.md", attackFuzz+"\n| case | before | now |\n|---|---|---|\n| `b.FuzzB` found a crash | crashed | fixed |\n"),
	} {
		if failed, out := check(t, "TestFuzzTable", files); !failed {
			t.Errorf("%s: TestFuzzTable passed\n%s", name, out)
		}
	}
}
