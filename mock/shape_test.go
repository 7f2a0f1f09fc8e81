package mock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// maxHandlerMethods bounds mock.Handler's methods, exported and not
// (issue 40; 97 before).
const maxHandlerMethods = 40

// packageFiles parses the package's own files, tests left out.
func packageFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	return files
}

// receiverOf returns the type name of a method's receiver, "" for a
// function.
func receiverOf(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestHandlerMethodsBounded: Handler has at most maxHandlerMethods
// methods, as `grep -h '^func (h \*Handler)' mock/*.go | grep -c .`
// counts them.
func TestHandlerMethodsBounded(t *testing.T) {
	n := 0
	for _, f := range packageFiles(t) {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && receiverOf(fn) == "Handler" {
				n++
			}
		}
	}
	t.Logf("Handler has %d methods", n)
	if n > maxHandlerMethods || n == 0 {
		t.Errorf("Handler has %d methods, want 1 to %d", n, maxHandlerMethods)
	}
}

// TestServicesHoldNothingOfTheCore: the files where the services answer
// (the methods of each service services returns, and of the sign-in
// service) name nothing of the core: not the Handler, its configuration,
// the pipeline's exchange or the journal. A service answers from its
// routes and the world alone.
func TestServicesHoldNothingOfTheCore(t *testing.T) {
	svcTypes := []string{reflect.TypeOf(signIn{}).Name()}
	for _, s := range services(&world{}) {
		svcTypes = append(svcTypes, reflect.TypeOf(s).Name())
	}
	core := []string{"Handler", "config", "Config", "exchange", "journal", "Call"}
	files := packageFiles(t)
	var svcFiles []string
	for name, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && slices.Contains(svcTypes, receiverOf(fn)) && !slices.Contains(svcFiles, name) {
				svcFiles = append(svcFiles, name)
			}
		}
	}
	slices.Sort(svcFiles)
	t.Logf("services answer in %v", svcFiles)
	if len(svcFiles) < len(svcTypes)/2 {
		t.Fatalf("services answer in %d files: the test finds too few", len(svcFiles))
	}
	for _, name := range svcFiles {
		ast.Inspect(files[name], func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && slices.Contains(core, id.Name) {
				t.Errorf("%s names %s, of the core", name, id.Name)
			}
			return true
		})
	}
}
