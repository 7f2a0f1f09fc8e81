package archtest

import (
	"strings"
	"testing"
)

// The fuzzing step's checks added on 2026-12-06 (.ci/run's fuzz_all, run
// as the run does it, on scratch modules; RELIABILITY.md "The fuzzing
// step's verdict"): each case is a target that checks nothing, or one the
// step would not fuzz, and the step must fail naming it. The cases come
// from an outside attack (helper 127's scripts t02, t06, t14, t16; its t03
// and t07 are the same checks as t02 and t16, and each case here costs
// two fuzzing runs).
func TestCIFuzzFailsTargetsThatCheckNothingOrAreHidden(t *testing.T) {
	const narrowList = "package p\n\nimport (\n\t\"flag\"\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n" +
		"func TestMain(m *testing.M) {\n\tflag.Parse()\n\tif flag.Lookup(\"test.list\").Value.String() != \"\" {\n\t\tflag.Set(\"test.list\", \"^FuzzA$\")\n\t\tfmt.Println(\"FuzzA\")\n\t}\n\tos.Exit(m.Run())\n}\n\n" +
		"func FuzzA(f *testing.F) { f.Add([]byte(\"x\")); f.Fuzz(func(t *testing.T, b []byte) {}) }\n\n" +
		"func FuzzB(f *testing.F) {\n\tf.Add([]byte(\"x\"))\n\tf.Fuzz(func(t *testing.T, b []byte) {\n\t\tif string(b) != \"x\" {\n\t\t\tt.Fatal(\"broken\")\n\t\t}\n\t})\n}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no seed input", map[string]string{"p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc FuzzNoSeeds(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n"},
			"FuzzNoSeeds: 0 of 0 seed inputs passed"},
		{"a TestMain narrowing the listing and printing a target twice", map[string]string{"p/p_test.go": narrowList},
			"listed twice: p FuzzA"},
		{"a bench target behind a build tag", map[string]string{"bench/sum/tagged_test.go": "//go:build integration\n\npackage sum\n\nimport \"testing\"\n\n" +
			"func FuzzTagged(f *testing.F) { f.Add([]byte(\"x\")); f.Fuzz(func(t *testing.T, b []byte) { t.Fatal(\"broken\") }) }\n"},
			"declared in the test files, not listed (so not fuzzed): sum FuzzTagged"},
		{"a TestMain that exits 0 after a failing input", map[string]string{"p/p_test.go": "package p\n\nimport (\n\t\"os\"\n\t\"strings\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) { m.Run(); os.Exit(0) }\n\n" +
			"func FuzzFails(f *testing.F) {\n\tf.Add([]byte(\"x\"))\n\tf.Fuzz(func(t *testing.T, b []byte) {\n\t\tif !strings.Contains(t.Name(), \"/\") && string(b) != \"x\" {\n\t\t\tt.Fatal(\"broken\")\n\t\t}\n\t})\n}\n"},
			"FuzzFails: a failing input was found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each runs its own processes in a directory of its own
			dir := ciAtkFuzzModule(t, tc.files)
			code, out := ciAtkBash(t, dir, ciAtkFuzzFragment(t), "FUZZTIME=50x") // the verdicts, not the fuzzing's depth
			if code == 0 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want a failure saying %q:\n%s", code, tc.want, out)
			}
		})
	}
}
