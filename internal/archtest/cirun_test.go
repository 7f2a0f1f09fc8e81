package archtest

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRaceSkipsRunWithoutRace: a test that reads a package's build-tagged
// race constant (set in a file for the race detector's build, such as
// replay's race_on_test.go) behaves otherwise under -race, the tests step
// of .ci/run, typically skipping; .ci/run's norace list names each one,
// and its step runs it without -race and fails unless it passed. A test
// missing from the list would never be checked as written.
func TestRaceSkipsRunWithoutRace(t *testing.T) {
	var have []string
	for _, p := range packages(t) {
		_, testFiles := p.files()
		files := parse(t, p, testFiles, parser.ParseComments)
		names := map[string]bool{} // identifiers declared in the race build's files
		for _, f := range files {
			if !raceOnly(f) {
				continue
			}
			for _, d := range f.Decls {
				ast.Inspect(d, func(n ast.Node) bool {
					switch s := n.(type) {
					case *ast.ValueSpec:
						for _, id := range s.Names {
							names[id.Name] = true
						}
					case *ast.FuncDecl:
						names[s.Name.Name] = true
					}
					return true
				})
			}
		}
		if len(names) == 0 {
			continue
		}
		rel := "./" + strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, f := range files {
			if raceOnly(f) {
				continue
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
					continue
				}
				uses := false
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && names[id.Name] {
						uses = true
					}
					return !uses
				})
				if uses {
					have = append(have, rel+"="+fn.Name.Name)
				}
			}
		}
	}
	run, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)\nnorace=\(\n(.*?)\n\)\n`).FindSubmatch(run)
	if block == nil {
		t.Fatal(".ci/run has no norace=( ... ) list")
	}
	var listed []string
	for _, line := range strings.Split(string(block[1]), "\n") {
		listed = append(listed, strings.TrimSpace(line))
	}
	slices.Sort(have)
	slices.Sort(listed)
	if diff := cmp.Diff(have, listed); diff != "" {
		t.Errorf("the tests that read a race build's constant (-) and .ci/run's norace list (+) differ:\n%s", diff)
	}
}

// raceOnly reports whether f is built only with the race tag: its build
// constraint holds with race and not without.
func raceOnly(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			with := expr.Eval(func(tag string) bool { return tag == "race" })
			without := expr.Eval(func(string) bool { return false })
			return with && !without
		}
	}
	return false
}
