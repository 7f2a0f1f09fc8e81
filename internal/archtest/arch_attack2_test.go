package archtest

import (
	"strings"
	"testing"
)

// attack2Target is a test file of package b holding one fuzz target sig.
func attack2Target(pkg, sig string) string {
	return "package " + pkg + "\n\nimport \"testing\"\n\n" + sig + " { f.Fuzz(func(t *testing.T, b []byte) {}) }\n"
}

// attack2FuzzRow adds a row to the table of fuzz targets.
func attack2FuzzRow(name string) string {
	return strings.Replace(attackFuzz, "\n\n## Other", "\n| `"+name+"` | b | b |\n\n## Other", 1)
}

// RELIABILITY.md: "The table lists every fuzz target of the module
// (`internal/archtest` checks it against the test files)"; TestFuzzTable:
// "RELIABILITY.md's table of fuzz targets names every fuzz target of the
// module's test files ... as package.FuzzName, and no other";
// RELIABILITY.md (434b143's row): "reads rows only from the table of fuzz
// targets".
//
// Every table of RELIABILITY.md whose header starts "| target |" is read as
// the table of fuzz targets: a target with no row in the table of fuzz
// targets passes when a later table, say one of attacks on targets
// ("| target | attack | result |"), names it in its first cell.
func TestAttack2FuzzTableSecondTargetTable(t *testing.T) {
	files := with(attackModule(),
		"b/b_test.go", attack2Target("b", "func FuzzB(f *testing.F)"),
		"RELIABILITY.md", attackFuzz+"\n## Attacks\n\n| target | attack | result |\n|---|---|---|\n| `b.FuzzB` | a long input | held |\n")
	if failed, out := check(t, "TestFuzzTable", files); !failed {
		t.Errorf("TestFuzzTable passed: b.FuzzB has no row in the table of fuzz targets, only in a table of attacks\n%s", out)
	}
}

// isFuzzTarget's doc: a fuzz target is "a function named Fuzz (then not a
// lower-case letter) of one *testing.F", so a function named exactly Fuzz
// is one (go test runs it: its rule is the same), and TestFuzzTable wants
// it listed "as package.FuzzName". But the rows are read with
// "`(\w+\.Fuzz\w+)`", which wants a letter after Fuzz: the row `b.Fuzz`
// is never read, and the table can never agree with the code. The check
// fails a module whose table lists its every target.
func TestAttack2FuzzTableTargetNamedFuzz(t *testing.T) {
	files := with(attackModule(),
		"b/b_test.go", attack2Target("b", "func Fuzz(f *testing.F)"),
		"RELIABILITY.md", attack2FuzzRow("b.Fuzz"))
	if failed, out := check(t, "TestFuzzTable", files); failed {
		t.Errorf("TestFuzzTable failed though its table lists b.Fuzz, the package's one new target:\n%s", firstLine(out))
	}
}

// held: a target in package b_test is b's (needs the row b.FuzzB, and
// passes with it); a method FuzzB with a receiver, Fuzzy (a lower-case
// letter after Fuzz) and FuzzC(t *testing.T) are no targets and need no
// row (a row for one fails).
func TestAttack2FuzzTableTargetKinds(t *testing.T) {
	xtest := attack2Target("b_test", "func FuzzB(f *testing.F)")
	if failed, out := check(t, "TestFuzzTable", with(attackModule(), "b/b_test.go", xtest)); !failed {
		t.Errorf("a target in package b_test without a row passed\n%s", out)
	}
	if failed, out := check(t, "TestFuzzTable", with(attackModule(), "b/b_test.go", xtest, "RELIABILITY.md", attack2FuzzRow("b.FuzzB"))); failed {
		t.Errorf("a target in package b_test with its row failed: %s", firstLine(out))
	}
	notTargets := "package b\n\nimport \"testing\"\n\ntype T struct{}\n\n" +
		"func (T) FuzzB(f *testing.F) {}\n\nfunc Fuzzy(f *testing.F) {}\n\nfunc FuzzC(t *testing.T) {}\n"
	if failed, out := check(t, "TestFuzzTable", with(attackModule(), "b/b_test.go", notTargets)); failed {
		t.Errorf("no target, no row: failed: %s", firstLine(out))
	}
	for _, row := range []string{"b.Fuzzy", "b.FuzzB"} {
		if failed, _ := check(t, "TestFuzzTable", with(attackModule(), "b/b_test.go", notTargets, "RELIABILITY.md", attack2FuzzRow(row))); !failed {
			t.Errorf("a row %s for no target passed", row)
		}
	}
}

// held: docs/ARCHITECTURE.md, "`internal/archtest` fails when ... an import
// is not allowed here". A `//go:build ignore` program in c's directory
// importing a (not allowed for c) fails the check, as 434b143 chose
// ("whatever its system or build tags"); an ignored file, or a test file
// behind a tag, whose import block does not parse fails it too, naming the
// file and the syntax error rather than crashing (a syntax error after the
// imports is not read: the check parses imports only); a directory with only a test file, importing what its table row
// does not allow, is a package the check sees and judges.
func TestAttack2PackageTableOddFiles(t *testing.T) {
	for name, c := range map[string]struct {
		files map[string]string
		want  string
	}{
		"an ignored program importing a":             {with(attackModule(), "c/gen.go", "//go:build ignore\n\npackage main\n\nimport _ \"github.com/xblgo/fgrl/a\"\n\nfunc main() {}\n"), "c imports a"},
		"an ignored file whose imports do not parse": {with(attackModule(), "c/gen.go", "//go:build ignore\n\npackage main\n\nimport (\n\t_ \"fmt\"\n"), "gen.go:"},
		"a generated test file that does not parse":  {with(attackModule(), "c/z_test.go", "//go:build never\n\npackage c\n\nimport (\n"), "z_test.go:"},
		"a directory of tests only": {with(attackModule(),
			"docs/ARCHITECTURE.md", strings.Replace(attackTable, "\n\n## Other", "\n| `d` | d | none | none |\n\n## Other", 1),
			"d/d_test.go", "package d\n\nimport (\n\t\"testing\"\n\n\t_ \"github.com/xblgo/fgrl/a\"\n)\n\nfunc TestD(t *testing.T) {}\n"), "d's tests import a"},
	} {
		failed, out := check(t, "TestPackageTable", c.files)
		if !failed || !strings.Contains(out, c.want) {
			t.Errorf("%s: failed %v, want a failure naming %q:\n%s", name, failed, c.want, out)
		}
	}
}

// docs/ARCHITECTURE.md: "`internal/archtest` fails when the module's
// packages and this table differ, when an import is not allowed here";
// RELIABILITY.md (434b143): "archtest parses every Go file of a package for
// its imports and fuzz targets, whatever its system or build tags".
//
// A package all of whose files are for another system (w/w_windows.go,
// importing a; w/w_windows_test.go holding FuzzW) is a package of the
// module on Windows. Here the check passes with w in neither table and its
// import of a unjudged: `go list ./...` leaves out a directory whose every
// file this build excludes, so its files are never parsed.
func TestAttack2OtherSystemOnlyPackageSeen(t *testing.T) {
	files := with(attackModule(),
		"w/w_windows.go", "package w\n\nimport _ \"github.com/xblgo/fgrl/a\"\n",
		"w/w_windows_test.go", attack2Target("w", "func FuzzW(f *testing.F)"))
	for _, test := range []string{"TestPackageTable", "TestFuzzTable"} {
		if failed, out := check(t, test, files); !failed {
			t.Errorf("%s passed a module whose package w (Windows only) is in no table\n%s", test, out)
		}
	}
}
