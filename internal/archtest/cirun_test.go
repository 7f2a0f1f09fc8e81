package archtest

import (
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRaceSkipsRunWithoutRace: a test that behaves otherwise under the race
// detector (.ci/run's tests step runs -race) must run without it too:
// .ci/run's norace list names each one, and its step runs it without -race
// and fails unless it passed. A test is race-dependent when it is declared
// in a file built only without the race tag (//go:build !race), or when it
// refers, directly or through the module's functions, variables and
// constants (helpers, another package's exported names, non-test files),
// to a name declared in a file whose build constraint holds with race and
// not without it (or the other way) on this machine's system and
// architecture. A test missing from the list would never be checked as
// written.
func TestRaceSkipsRunWithoutRace(t *testing.T) {
	type ident struct{ pkg, name string }
	type decl struct {
		node    ast.Node
		pkg     string
		imports map[string]string // a file's import names to paths
		test    bool              // a Test function of a test file
		file    raceDep
		rel     string // ./dir of its package
		name    string
	}
	marked := map[ident]bool{}
	var decls []decl
	for _, p := range packages(t) {
		code, tests := p.files()
		rel := "./" + strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for i, f := range parse(t, p, slices.Concat(code, tests), parser.ParseComments) {
			isTest := i >= len(code)
			dep := raceDependence(f)
			imports := map[string]string{}
			for _, s := range f.Imports {
				ip, _ := strconv.Unquote(s.Path.Value)
				name := path.Base(ip)
				if s.Name != nil {
					name = s.Name.Name
				}
				imports[name] = ip
			}
			add := func(name string, n ast.Node, test bool) {
				decls = append(decls, decl{node: n, pkg: p.ImportPath, imports: imports, test: test, file: dep, rel: rel, name: name})
				if dep != raceNone {
					marked[ident{p.ImportPath, name}] = true
				}
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						add(d.Name.Name, d, isTest && strings.HasPrefix(d.Name.Name, "Test"))
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						if v, ok := s.(*ast.ValueSpec); ok {
							for _, id := range v.Names {
								add(id.Name, v, false)
							}
						}
					}
				}
			}
		}
	}
	refers := func(d decl) bool {
		found := false
		ast.Inspect(d.node, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok {
					if ip, ok := d.imports[x.Name]; ok && marked[ident{ip, n.Sel.Name}] {
						found = true
					}
				}
			case *ast.Ident:
				if marked[ident{d.pkg, n.Name}] && n.Name != d.name {
					found = true
				}
			}
			return !found
		})
		return found
	}
	for changed := true; changed; { // what refers to a race-dependent name is one
		changed = false
		for _, d := range decls {
			if id := (ident{d.pkg, d.name}); !marked[id] && refers(d) {
				marked[id], changed = true, true
			}
		}
	}
	var have []string
	for _, d := range decls {
		if d.test && d.file != raceOnly && (d.file == noRace || marked[ident{d.pkg, d.name}]) {
			have = append(have, d.rel+"="+d.name)
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
		t.Errorf("the tests that behave otherwise under -race (-) and .ci/run's norace list (+) differ:\n%s", diff)
	}
}

// raceDep is how a file's build constraint depends on the race tag.
type raceDep int

const (
	raceNone raceDep = iota
	raceOnly         // built only with race
	noRace           // built only without race
)

// raceDependence evaluates f's build constraint with this machine's
// system, architecture, compiler and release tags, with and without race.
func raceDependence(f *ast.File) raceDep {
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
				return raceNone
			}
			tags := map[string]bool{runtime.GOOS: true, runtime.GOARCH: true, runtime.Compiler: true, "unix": runtime.GOOS != "windows" && runtime.GOOS != "plan9"}
			for _, r := range build.Default.ReleaseTags {
				tags[r] = true
			}
			with := expr.Eval(func(tag string) bool { return tag == "race" || tags[tag] })
			without := expr.Eval(func(tag string) bool { return tag != "race" && tags[tag] })
			switch {
			case with && !without:
				return raceOnly
			case without && !with:
				return noRace
			}
			return raceNone
		}
	}
	return raceNone
}
