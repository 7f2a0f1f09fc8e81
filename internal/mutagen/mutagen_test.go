package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sample = "./testdata/sample"

// mutateSample tests the sample's mutants once for the tests that judge
// them.
func mutateSample(t *testing.T) result {
	t.Helper()
	p, err := load(sample, "")
	if err != nil {
		t.Fatal(err)
	}
	ms, refused, err := mutate(p, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	return result{p.path, p.root, p.mutated(), ms, refused}
}

// TestMutate: every form of the sample compiles as a mutant (the compiler
// refuses none), and each mutant gets the status its tests give it; the
// constant declaration, the array length, the string concatenation and the
// comparison of a named boolean type are not edited. The verdict over them
// follows the accepted list: a survivor fails the run unless accepted; an
// accepted entry that names no mutant fails it too (the list stays exact),
// while one that names a mutant killed this run is only warned of (a test
// that depends on timing may have failed under load); a score below -min
// fails it.
func TestMutate(t *testing.T) {
	r := mutateSample(t)
	if r.refused != 0 {
		t.Errorf("the compiler refused %d mutants, want 0", r.refused)
	}
	got := map[string]string{}
	for _, m := range r.ms {
		got[strings.TrimPrefix(m.key(), "internal/mutagen/testdata/sample/sample.go: ")] = m.status.String()
	}
	want := map[string]string{
		"Less: func Less(a, b int) bool { return a [<] b } -> <=":                "KILLED",
		"Less: func Less(a, b int) bool { return a [<] b } -> >=":                "KILLED",
		"Sum: for i := 0; i [<] len(xs); i++ { -> <=":                            "KILLED",
		"Sum: for i := 0; i [<] len(xs); i++ { -> >=":                            "KILLED",
		"Sum: for i := 0; i < len(xs); i[++] { -> --":                            "KILLED",
		"Sum: s = s [+] xs[i] -> -":                                              "KILLED",
		"Count: m[k][++] -> --":                                                  "KILLED",
		"Neg: func Neg(x int) int { return [-]x } -> +":                          "KILLED",
		"Half: func Half(d time.Duration) time.Duration { return d [/] 2 } -> *": "KILLED",
		"Odd: func Odd(n int) bool { return n%2 [==] 1 } -> !=":                  "KILLED",
		"Odd: func Odd(n int) bool { return n[%]2 == 1 } -> *":                   "KILLED",
		"Max: if a [>] b { -> >=":                                                "SURVIVED",
		"Max: if a [>] b { -> <=":                                                "KILLED",
		"Unused: func Unused(x int) int { return x [+] 1 + table[0] } -> -":      "UNTESTED",
		"Unused: func Unused(x int) int { return x + 1 [+] table[0] } -> -":      "UNTESTED",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mutants (-want +got):\n%s", diff)
	}

	const maxAccepted = "internal/mutagen/testdata/sample/sample.go: Max: if a [>] b { -> >=\n\tequal values: either is the maximum\n"
	const lessAccepted = "internal/mutagen/testdata/sample/sample.go: Less: func Less(a, b int) bool { return a [<] b } -> <=\n\tnot so\n"
	tests := []struct {
		name     string
		accepted string
		min      float64
		fails    []string // texts the failures hold, in order
	}{
		{"the survivor accepted", maxAccepted, 90, nil},
		{"the survivor not accepted", "", 90, []string{"survived: internal/mutagen/testdata/sample/sample.go: Max: if a [>] b { -> >="}},
		{"an acceptance of a mutant killed (warned)", maxAccepted + lessAccepted, 90, nil},
		{"an acceptance of no mutant", maxAccepted + "internal/mutagen/testdata/sample/sample.go: Less: return a [<] b -> <=\n\tnot so\n", 90,
			[]string{"accepted, but no such mutant (its line changed, or went): internal/mutagen/testdata/sample/sample.go: Less:"}},
		{"a score below the least", maxAccepted, 95, []string{"sample: score 92.3 % is below 95 %"}},
	}
	// A package whose tests reach none of its mutants scores 0, not 100.
	untested := result{path: "untested", ms: []*mutant{{status: notReached}}}
	if fails := judge(io.Discard, []result{untested}, nil, options{min: 90}); len(fails) != 1 || !strings.Contains(fails[0], "score 0.0 %") {
		t.Errorf("a package whose tests reach no mutant: failures %q, want a score of 0", fails)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acc, err := parseAccepted(strings.NewReader(tt.accepted), "accepted.txt")
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			fails := judge(&out, []result{r}, acc, options{min: tt.min})
			if len(fails) != len(tt.fails) {
				t.Fatalf("failures %q, want %d; output:\n%s", fails, len(tt.fails), out.String())
			}
			for i, f := range tt.fails {
				if !strings.Contains(fails[i], f) {
					t.Errorf("failure %d = %q, want it to hold %q", i, fails[i], f)
				}
			}
		})
	}
}

// TestRunEdits: an edit must be caught by the test its entry names, and
// its text found once in its file. An edit of an embedded file is in the
// text the package reads as it initialises (sample's hello); an edit of
// any other file gets a test binary of its own.
func TestRunEdits(t *testing.T) {
	tests := []struct {
		name, edits string
		fails       []string
	}{
		{"an edit caught", "run: ^ExampleGreet$\ninternal/mutagen/testdata/sample/greeting.txt: hello -> jello\n\tcaught by: ExampleGreet\n", nil},
		{"an edit caught by another test than named", "run: .\ninternal/mutagen/testdata/sample/greeting.txt: hello -> jello\n\tcaught by: TestSample\n",
			[]string{"greeting.txt: hello -> jello: not caught by TestSample (failed: ExampleGreet)"}},
		{"an edit of a file not embedded (a binary of its own)", "run: ^TestSample$\ninternal/mutagen/testdata/sample/sample.go: return -x -> return x\n\tcaught by: TestSample\n", nil},
		{"an edit of text not in the file", "run: .\ninternal/mutagen/testdata/sample/greeting.txt: bye -> hi\n\tcaught by: ExampleGreet\n",
			[]string{`"bye" occurs 0 times, want once`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			fails, err := runEdits(write(t, t.TempDir(), "edits.txt", tt.edits), 2, &out)
			if err != nil {
				t.Fatal(err)
			}
			if len(fails) != len(tt.fails) {
				t.Fatalf("failures %q, want %d; output:\n%s", fails, len(tt.fails), out.String())
			}
			for i, f := range tt.fails {
				if !strings.Contains(fails[i], f) {
					t.Errorf("failure %d = %q, want it to hold %q", i, fails[i], f)
				}
			}
		})
	}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	name = filepath.Join(dir, name)
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestParseAccepted(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // keys
		err      string
	}{
		{"entries and comments", "# comment\n\na.go: F: x [<] y -> <=\n\treason\n\tgoes on\nb.go: G: z [+] 1 -> -\n  why\n", []string{"a.go: F: x [<] y -> <=", "b.go: G: z [+] 1 -> -"}, ""},
		{"no reason", "a.go: F: x [<] y -> <=\n", nil, "no reason given"},
		{"listed twice", "a.go: F: x [<] y -> <=\n\tr\na.go: F: x [<] y -> <=\n\tr\n", nil, "listed twice"},
		{"not a key", "a.go x < y\n\tr\n", nil, "want FILE: FUNC: LINE WITH [OP] -> OP"},
		{"a reason first", "\treason\n", nil, "an indented line before any entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acc, err := parseAccepted(strings.NewReader(tt.in), "accepted.txt")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseAccepted = %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range acc {
				got = append(got, a.key)
				if a.reason == "" || a.file == "" {
					t.Errorf("%q: reason %q, file %q", a.key, a.reason, a.file)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEdits(t *testing.T) {
	tests := []struct {
		name, in string
		want     []textEdit
		err      string
	}{
		{"two runs", "run: ^A$\nx.lua: a >= b -> a > b\n\tcaught by: A/sub\n\tthe note\nrun: ^B$\ny.lua: + 1 ->  - 1\n\tcaught by: B\n",
			[]textEdit{{line: 2, file: "x.lua", old: "a >= b", new: "a > b", run: "^A$", caughtBy: "A/sub", note: "the note"},
				{line: 6, file: "y.lua", old: "+ 1", new: " - 1", run: "^B$", caughtBy: "B"}}, ""},
		{"no run line", "x.lua: a -> b\n\tcaught by: A\n", nil, "after a run: line"},
		{"no test named", "run: .\nx.lua: a -> b\n", nil, `no "caught by: TEST" line`},
		{"no arrow", "run: .\nx.lua: a b\n\tcaught by: A\n", nil, "want FILE: OLD -> NEW"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEdits(strings.NewReader(tt.in), "edits.txt")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseEdits = %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var flat []textEdit
			for _, e := range got {
				flat = append(flat, *e)
			}
			if diff := cmp.Diff(tt.want, flat, cmp.AllowUnexported(textEdit{})); diff != "" {
				t.Errorf("edits (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseTables: any text is either refused with an error naming the
// table, or read as entries that each have what the runner needs.
func FuzzParseTables(f *testing.F) {
	f.Add("a.go: F: x [<] y -> <=\n\treason\n")
	f.Add("run: ^A$\nx.lua: a >= b -> a > b\n\tcaught by: A\n")
	f.Add("\t\n#\n: [ -> \n\t")
	f.Fuzz(func(t *testing.T, in string) {
		if acc, err := parseAccepted(strings.NewReader(in), "accepted.txt"); err != nil {
			if !strings.HasPrefix(err.Error(), "accepted.txt:") {
				t.Errorf("error %q does not name the table", err)
			}
		} else {
			for _, a := range acc {
				if a.reason == "" || !strings.Contains(a.key, " -> ") || !strings.Contains(a.key, "[") {
					t.Errorf("entry %+v lacks its edit or its reason", a)
				}
			}
		}
		if edits, err := parseEdits(strings.NewReader(in), "edits.txt"); err == nil {
			for _, e := range edits {
				if e.old == "" || e.run == "" || e.caughtBy == "" {
					t.Errorf("edit %+v lacks what the runner needs", e)
				}
			}
		}
	})
}

// TestAcceptedNotRun: a mutant reached whose key skip names counts as a
// survivor without its tests being run (Less's "<=" is killed when run);
// one no test reaches stays untested; the others run as before.
func TestAcceptedNotRun(t *testing.T) {
	p, err := load(sample, "")
	if err != nil {
		t.Fatal(err)
	}
	const (
		less   = "internal/mutagen/testdata/sample/sample.go: Less: func Less(a, b int) bool { return a [<] b } -> <="
		unused = "internal/mutagen/testdata/sample/sample.go: Unused: func Unused(x int) int { return x [+] 1 + table[0] } -> -"
		sum    = "internal/mutagen/testdata/sample/sample.go: Sum: s = s [+] xs[i] -> -"
	)
	ms, _, err := mutate(p, 2, func(key string) bool { return key == less || key == unused })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range ms {
		got[m.key()] = m.status.String() + " " + m.by
	}
	want := map[string]string{less: "SURVIVED not run", unused: "UNTESTED ", sum: "KILLED TestSample"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	var out bytes.Buffer
	acc, err := parseAccepted(strings.NewReader(less+"\n\tsaid so\n"), "accepted")
	if err != nil {
		t.Fatal(err)
	}
	report(&out, p.path, ms, 0, acc, options{min: 0, verbose: true})
	if !strings.Contains(out.String(), "(accepted, not run)") || !strings.Contains(out.String(), "(1 accepted as equivalent, 1 of them not run)") {
		t.Errorf("the report does not say the accepted mutant was not run:\n%s", out.String())
	}
}
