package archtest

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestRaceSkipsRunWithoutRace: a test that behaves otherwise under the race
// detector (.ci/run's tests step runs -race) must run without it too:
// .ci/run's norace list names each one, and its step runs it without -race
// and fails unless it passed. A test is race-dependent when its file is
// built here only without the race tag (go/build's MatchFile: file names
// and build lines, this machine's system and architecture), or when it
// refers, directly or through the module's functions, methods, types,
// variables and constants (and package variables an assignment sets from
// them, as init does), to a name declared in a file built here only with
// race or only without it, or names the build's "-race" setting (which
// runtime/debug.ReadBuildInfo carries). A name declared in
// the function itself (a local variable, a parameter) is not a reference,
// nor is a field's or method's name after a value's dot unless the method
// is one of the module's race-dependent ones. A test missing from the list
// would never be checked as written.
func TestRaceSkipsRunWithoutRace(t *testing.T) {
	type ident struct{ pkg, name string }
	type decl struct {
		node    ast.Node
		pkg     string
		imports map[string]string // a file's import names to paths
		dots    []string          // the paths a file imports with a dot
		test    bool              // a Test function of a test file
		file    raceDep
		rel     string // ./dir of its package
		name    string // a method's is "." + its name
		recv    string // a method's receiver's type name
		nested  bool   // of a nested module (interop, pagetest, bench)
	}
	marked := map[ident]bool{}
	methods := map[string]bool{}            // names of race-dependent methods, in any of the module's packages
	aliases := map[string]map[string]bool{} // a package's names for testing's T, B, F and TB (type T = testing.T)
	var decls []decl
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Concat(packages(t), nestedPackages(t, root)) {
		nested := moduleRoot(root, p.Dir) != root
		code, tests := p.files()
		rel := "./" + strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		names := slices.Concat(code, tests)
		for i, f := range parse(t, p, names, parser.ParseComments) {
			dep := raceDependence(t, p.Dir, names[i])
			// The nested modules (interop, pagetest, bench): .ci/run tests
			// them only with -race, and its norace step runs in the root
			// module; a file of theirs built only with or only without race,
			// or importing racebuild, could never run as written (whatever
			// system it is for).
			if nested && (dep == raceOnly || dep == noRace || importsPath(f, module+"/internal/racebuild")) {
				rel, _ := filepath.Rel(root, filepath.Join(p.Dir, names[i]))
				t.Errorf("%s, in a nested module, depends on the race build: .ci/run tests nested modules only with -race, and its norace step cannot run it", rel)
			}
			if dep == raceNotBuilt {
				continue
			}
			isTest := strings.HasSuffix(names[i], "_test.go")
			imports := map[string]string{}
			var dots []string
			for _, s := range f.Imports {
				ip, _ := strconv.Unquote(s.Path.Value)
				name := path.Base(ip)
				if s.Name != nil {
					name = s.Name.Name
				}
				if name == "." {
					dots = append(dots, ip)
				}
				imports[name] = ip
			}
			add := func(name string, n ast.Node, test bool) {
				recv := ""
				if fn, ok := n.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) > 0 {
					recv = typeName(fn.Recv.List[0].Type)
				}
				decls = append(decls, decl{node: n, pkg: p.ImportPath, imports: imports, dots: dots, test: test, file: dep, rel: rel, name: name, recv: recv, nested: nested})
				if dep != raceNone {
					marked[ident{p.ImportPath, name}] = true
				}
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv != nil {
						add("."+d.Name.Name, d, false)
					} else {
						add(d.Name.Name, d, isTest && isTestName(d.Name.Name))
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.ValueSpec:
							for _, id := range s.Names {
								add(id.Name, s, false)
							}
						case *ast.TypeSpec:
							add(s.Name.Name, s, false)
							if s.Assign.IsValid() && isTestingType(s.Type, imports, nil) {
								if aliases[p.ImportPath] == nil {
									aliases[p.ImportPath] = map[string]bool{}
								}
								aliases[p.ImportPath][s.Name.Name] = true
							}
						}
					}
				}
			}
		}
	}
	// refersIn reports whether n refers to a race-dependent name, for d.
	// local are the names d declares itself; tvars those of them that are
	// a *testing.T, B or F, or a testing.TB (whose methods are testing's:
	// t.Skip is no call of a module's method named Skip).
	var refersIn func(d decl, n ast.Node, local, tvars map[string]bool) bool
	refersIn = func(d decl, n ast.Node, local, tvars map[string]bool) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			if found {
				return false
			}
			switch n := n.(type) {
			// A declaration's own names (a function's, a method's, a
			// parameter's, a field's, a variable's, a type's) are no
			// references: only what it is made of.
			case *ast.FuncDecl:
				found = n.Recv != nil && refersIn(d, n.Recv, local, tvars) || refersIn(d, n.Type, local, tvars) || n.Body != nil && refersIn(d, n.Body, local, tvars)
				return false
			case *ast.Field:
				found = refersIn(d, n.Type, local, tvars)
				return false
			case *ast.ValueSpec:
				found = n.Type != nil && refersIn(d, n.Type, local, tvars)
				for _, v := range n.Values {
					found = found || refersIn(d, v, local, tvars)
				}
				return false
			case *ast.TypeSpec:
				found = refersIn(d, n.Type, local, tvars)
				return false
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && !local[x.Name] {
					if ip, ok := d.imports[x.Name]; ok {
						found = marked[ident{ip, n.Sel.Name}]
						return false
					}
				}
				if x, ok := n.X.(*ast.Ident); ok && tvars[x.Name] {
					return false // testing's own method
				}
				found = methods[n.Sel.Name] || refersIn(d, n.X, local, tvars)
				return false
			case *ast.Ident:
				found = !local[n.Name] && n.Name != d.name && marked[ident{d.pkg, n.Name}]
				for _, ip := range d.dots {
					found = found || !local[n.Name] && marked[ident{ip, n.Name}]
				}
			case *ast.BasicLit: // the build's "-race" setting (runtime/debug.ReadBuildInfo), in either kind of quotes
				v, _ := strconv.Unquote(n.Value)
				found = n.Kind == token.STRING && v == "-"+"race" // spelt in two, or this check would be one
			case *ast.KeyValueExpr: // a field's name in a composite literal is no reference
				found = refersIn(d, n.Value, local, tvars)
				return false
			}
			return true
		})
		return found
	}
	refers := func(d decl) bool {
		return refersIn(d, d.node, localNames(d.node), testingVars(d.node, d.imports, aliases[d.pkg]))
	}
	// assigned: package variables an assignment in a function sets from a
	// race-dependent value (init's skipStacks = race), of its own package
	// or, through an import's name, of another (init's env.Volume = race).
	assigned := func(d decl) (out []ident) {
		fn, ok := d.node.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			return nil
		}
		local, tvars := localNames(fn), testingVars(fn, d.imports, aliases[d.pkg])
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok && as.Tok == token.ASSIGN {
				for i, l := range as.Lhs {
					id := rootIdent(l) // cfg.skipStacks = race marks cfg
					if id == nil || local[id.Name] {
						continue
					}
					target := ident{d.pkg, id.Name}
					if ip, ok := d.imports[id.Name]; ok { // env.Volume = race marks env's Volume
						sel, ok := l.(*ast.SelectorExpr)
						for ok && sel.X != id {
							sel, ok = sel.X.(*ast.SelectorExpr)
						}
						if !ok {
							continue
						}
						target = ident{ip, sel.Sel.Name}
					}
					if marked[target] {
						continue
					}
					rhs := as.Rhs[min(i, len(as.Rhs)-1)]
					if refersIn(d, rhs, local, tvars) {
						out = append(out, target)
					}
				}
			}
			return true
		})
		return out
	}
	for changed := true; changed; { // what refers to a race-dependent name is one
		changed = false
		for _, d := range decls {
			if id := (ident{d.pkg, d.name}); !marked[id] && refers(d) {
				marked[id], changed = true, true
			}
			if marked[ident{d.pkg, d.name}] && d.recv != "" && !methods[d.name[1:]] {
				// A method's name, whatever value it is called on, and its
				// type, whose methods a suite runs by reflection.
				methods[d.name[1:]], marked[ident{d.pkg, d.recv}], changed = true, true, true
			}
			for _, v := range assigned(d) {
				marked[v], changed = true, true
			}
		}
	}
	// A TestMain or an init that depends on the race build may change
	// every test of its package's test binary (an init setting a shared
	// switch through a setter, an atomic, a pointer the check cannot
	// follow): each of them is race-dependent.
	var have []string
	for _, d := range decls {
		if !d.test || d.file == raceOnly || !(d.file == noRace || marked[ident{d.pkg, d.name}] || marked[ident{d.pkg, "TestMain"}] || marked[ident{d.pkg, "init"}]) {
			continue
		}
		if d.nested {
			t.Errorf("%s, a test of a nested module (%s), depends on the race build: .ci/run tests nested modules only with -race, and its norace step cannot run it", d.name, d.pkg)
			continue
		}
		have = append(have, d.rel+"="+d.name)
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
	// The tests of the packages the tests step runs without -race
	// (plain=(...)) ran there, as written.
	plain := ciPlain(t, string(run))
	have = slices.DeleteFunc(have, func(h string) bool { return plain[h[:strings.Index(h, "=")]] })
	slices.Sort(have)
	slices.Sort(listed)
	if diff := cmp.Diff(have, listed); diff != "" {
		t.Errorf("the tests that behave otherwise under -race (-) and .ci/run's norace list (+) differ:\n%s\n"+
			"(a test demanded here that does not skip under -race calls a method named like one of the module's race-dependent methods (%s) on a value this check cannot type: call it on the *testing.T, B, F or testing.TB parameter itself, or rename the module's method)",
			diff, strings.Join(slices.Sorted(maps.Keys(methods)), ", "))
	}
}

// ciPlain is .ci/run's plain=(...) list, the packages its tests step
// tests without -race, as ./dir.
func ciPlain(t *testing.T, run string) map[string]bool {
	t.Helper()
	line := regexp.MustCompile(`(?m)^plain=\(([^)\n]*)\)$`).FindStringSubmatch(run)
	if line == nil {
		t.Fatal(".ci/run has no one-line plain=( ... ) list")
	}
	plain := map[string]bool{}
	for _, p := range strings.Fields(line[1]) {
		plain[p] = true
	}
	return plain
}

// TestPlainPackagesShareNothing: .ci/run's tests step tests the packages
// of its plain=(...) list without the race detector, because it would
// have nothing to watch in them: none of their files, code or tests, has a
// go statement, imports sync or sync/atomic, or calls a Parallel method
// (t.Parallel). The CLI, ./cmd/xblcall, is the one exception, for its own
// reason (.ci/run: its tests drive the packages through processes of its
// own, which the detector does not watch). Every entry must be a package
// of the module.
func TestPlainPackagesShareNothing(t *testing.T) {
	run, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	plain := ciPlain(t, string(run))
	if !plain["./cmd/xblcall"] {
		t.Error(".ci/run's plain=(...) list lacks ./cmd/xblcall, whose tests its comment says run there")
	}
	seen := map[string]bool{}
	for _, p := range packages(t) {
		rel := "./" + strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if !plain[rel] {
			continue
		}
		seen[rel] = true
		if rel == "./cmd/xblcall" {
			continue
		}
		code, tests := p.files()
		names := slices.Concat(code, tests)
		for i, f := range parse(t, p, names, 0) {
			for _, ip := range importsOf([]*ast.File{f}) {
				if ip == "sync" || ip == "sync/atomic" {
					t.Errorf("%s/%s imports %s, yet .ci/run tests %s without -race (plain=(...)): move it to the race-tested packages", rel, names[i], ip, rel)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GoStmt:
					t.Errorf("%s/%s starts a goroutine, yet .ci/run tests %s without -race (plain=(...)): move it to the race-tested packages", rel, names[i], rel)
				case *ast.SelectorExpr:
					if n.Sel.Name == "Parallel" {
						t.Errorf("%s/%s calls Parallel, yet .ci/run tests %s without -race (plain=(...)): move it to the race-tested packages", rel, names[i], rel)
					}
				}
				return true
			})
		}
	}
	for p := range plain {
		if !seen[p] {
			t.Errorf(".ci/run's plain=(...) list names %s, no package of the module", p)
		}
	}
}

// importsPath reports whether f imports ip.
func importsPath(f *ast.File, ip string) bool {
	for _, s := range f.Imports {
		if p, _ := strconv.Unquote(s.Path.Value); p == ip {
			return true
		}
	}
	return false
}

// moduleRoot is the directory of the go.mod that holds dir, at most root.
func moduleRoot(root, dir string) string {
	for d := dir; d != root && strings.HasPrefix(d, root); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return root
}

// isTestName reports whether name is a test's, by testing's rule: Test,
// then nothing or a character that is not a lower-case letter (Testbed is
// a helper's name). TestMain is no test.
func isTestName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Test")
	if !ok || name == "TestMain" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !unicode.IsLower(r)
}

// testingVars are the names of n's parameters (its own and its function
// literals') whose type is testing's T, B or F pointer or its TB
// interface, by the file's name for package testing.
func testingVars(n ast.Node, imports map[string]string, aliases map[string]bool) map[string]bool {
	vars := map[string]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok && ft.Params != nil {
			for _, f := range ft.Params.List {
				if isTestingType(f.Type, imports, aliases) {
					for _, id := range f.Names {
						vars[id.Name] = true
					}
				}
			}
		}
		return true
	})
	return vars
}

// isTestingType reports whether e is testing's T, B or F (or a pointer to
// one) or its TB, by the file's name for package testing, or one of the
// package's aliases of them.
func isTestingType(e ast.Expr, imports map[string]string, aliases map[string]bool) bool {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return aliases[id.Name]
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && imports[x.Name] == "testing" && slices.Contains([]string{"T", "B", "F", "TB"}, sel.Sel.Name)
}

// nestedPackages are the directories of Go files of the modules nested in
// root (a directory with a go.mod of its own below it), each as a package
// whose import path is its module's path and its place in it.
func nestedPackages(t *testing.T, root string) []pkg {
	t.Helper()
	byDir := map[string]*pkg{}
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.Dir(p)
		mod := moduleRoot(root, dir)
		if !strings.HasSuffix(name, ".go") || mod == root {
			return nil
		}
		q := byDir[dir]
		if q == nil {
			b, err := os.ReadFile(filepath.Join(mod, "go.mod"))
			if err != nil {
				return err
			}
			m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(b)
			if m == nil {
				return fmt.Errorf("%s: no module line", filepath.Join(mod, "go.mod"))
			}
			rel, _ := filepath.Rel(mod, dir)
			q = &pkg{Dir: dir, ImportPath: path.Join(string(m[1]), filepath.ToSlash(rel))}
			byDir[dir] = q
			dirs = append(dirs, dir)
		}
		if strings.HasSuffix(name, "_test.go") {
			q.TestGoFiles = append(q.TestGoFiles, name)
		} else {
			q.GoFiles = append(q.GoFiles, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []pkg
	for _, d := range dirs {
		out = append(out, *byDir[d])
	}
	return out
}

// typeName is the name of a receiver's type: T, *T, T[P], *T[P].
func typeName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// rootIdent is the variable an assignment's left side sets: v, v.f.g,
// v[i], *v.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x
		default:
			return nil
		}
	}
}

// localNames are the names a function declares itself: its receiver,
// parameters and results, and its := and var declarations and range
// variables (a name declared anywhere in it counts as local throughout:
// a test that both shadows and uses a race-dependent name is rare).
func localNames(n ast.Node) map[string]bool {
	local := map[string]bool{}
	fields := func(l *ast.FieldList) {
		if l == nil {
			return
		}
		for _, f := range l.List {
			for _, id := range f.Names {
				local[id.Name] = true
			}
		}
	}
	fn, ok := n.(*ast.FuncDecl)
	if !ok {
		return local
	}
	fields(fn.Recv)
	fields(fn.Type.Params)
	fields(fn.Type.Results)
	if fn.Body == nil {
		return local
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						local[id.Name] = true
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						local[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				local[id.Name] = true
			}
		case *ast.FuncLit:
			fields(n.Type.Params)
			fields(n.Type.Results)
		}
		return true
	})
	return local
}

// raceDep is how a file's inclusion in a build depends on the race tag.
type raceDep int

const (
	raceNone     raceDep = iota
	raceOnly             // built here only with race
	noRace               // built here only without race
	raceNotBuilt         // built here neither way (another system's)
)

// raceDependence asks go/build whether the file name in dir is built on
// this machine with the race tag and without it (its name's system and
// architecture, its build lines, //go:build or // +build).
func raceDependence(t *testing.T, dir, name string) raceDep {
	t.Helper()
	with, without := build.Default, build.Default
	with.BuildTags = append(slices.Clone(with.BuildTags), "race")
	in, err := with.MatchFile(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	out, err := without.MatchFile(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case in && out:
		return raceNone
	case in:
		return raceOnly
	case out:
		return noRace
	}
	return raceNotBuilt
}
