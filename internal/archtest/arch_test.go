package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/xblgo/fgrl"

// row is one package's line of docs/ARCHITECTURE.md's package table.
type row struct {
	imports, testImports []string
}

// table reads the package table: the rows of the "## Packages" section
// whose first cell is a package in backquotes.
func table(t *testing.T) map[string]row {
	t.Helper()
	f, err := os.Open("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]row{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			t.Fatalf("ARCHITECTURE.md: want 4 cells in %q", line)
		}
		pkg := names(t, cells[0])
		if len(pkg) != 1 {
			t.Fatalf("ARCHITECTURE.md: want one package in the first cell of %q", line)
		}
		if _, dup := rows[pkg[0]]; dup {
			t.Fatalf("ARCHITECTURE.md: %s has two rows", pkg[0])
		}
		rows[pkg[0]] = row{names(t, cells[2]), names(t, cells[3])}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// names reads a cell listing packages: "none", or `a`, `b`.
func names(t *testing.T, cell string) []string {
	cell = strings.TrimSpace(cell)
	if cell == "none" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(cell, ", ") {
		if len(part) < 3 || part[0] != '`' || part[len(part)-1] != '`' {
			t.Fatalf("ARCHITECTURE.md: %q is not a package in backquotes", part)
		}
		out = append(out, part[1:len(part)-1])
	}
	return out
}

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath, Dir           string
	Imports                   []string
	TestImports, XTestImports []string
	GoFiles, TestGoFiles      []string
	XTestGoFiles              []string
	CgoFiles, IgnoredGoFiles  []string // IgnoredGoFiles: those of other systems and build tags
}

// files returns the package's Go files, whatever the system or build tags
// they are for (go list's Imports and TestImports hold only this build's),
// its code's and its tests'.
func (p pkg) files() (code, tests []string) {
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles, p.IgnoredGoFiles) {
		if strings.HasSuffix(f, "_test.go") {
			tests = append(tests, f)
		} else {
			code = append(code, f)
		}
	}
	return code, tests
}

// parse parses the files of p named.
func parse(t *testing.T, p pkg, names []string, mode parser.Mode) []*ast.File {
	t.Helper()
	var out []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, n), nil, mode)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// importsOf returns the paths the files import.
func importsOf(files []*ast.File) []string {
	var out []string
	for _, f := range files {
		for _, s := range f.Imports {
			out = append(out, strings.Trim(s.Path.Value, "`\""))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// packages returns the module's packages: those go list finds, and the
// directories of Go files it leaves out because this build excludes every
// one of them (a package for another system), with all their files as
// IgnoredGoFiles. Directories of other modules, testdata and those whose
// names start with "." or "_" are none of the module's, as for go list.
func packages(t *testing.T) []pkg {
	t.Helper()
	ps := list(t, module+"/...")
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Dir] = true
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(dir string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); dir != root && err == nil {
			return filepath.SkipDir
		}
		if seen[dir] {
			return nil
		}
		goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(goFiles) == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, dir)
		p := pkg{ImportPath: module + "/" + filepath.ToSlash(rel), Dir: dir}
		for _, f := range goFiles {
			p.IgnoredGoFiles = append(p.IgnoredGoFiles, filepath.Base(f))
		}
		ps = append(ps, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func list(t *testing.T, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	var ps []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// internal returns the module's packages among paths, relative to the module.
func internal(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rel, ok := strings.CutPrefix(p, module+"/"); ok {
			out = append(out, rel)
		}
	}
	return out
}

// TestPackageTable: docs/ARCHITECTURE.md's table names every package of
// the module, and only those, and every import of the module's packages,
// their tests' included, is one the table allows.
func TestPackageTable(t *testing.T) {
	rows := table(t)
	var have []string
	for _, p := range packages(t) {
		name := strings.TrimPrefix(p.ImportPath, module+"/")
		have = append(have, name)
		r, ok := rows[name]
		if !ok {
			continue
		}
		codeFiles, testFiles := p.files()
		for _, imp := range internal(importsOf(parse(t, p, codeFiles, parser.ImportsOnly))) {
			if !slices.Contains(r.imports, imp) {
				t.Errorf("%s imports %s: docs/ARCHITECTURE.md does not allow it", name, imp)
			}
		}
		tests := internal(importsOf(parse(t, p, testFiles, parser.ImportsOnly)))
		for _, imp := range tests {
			if imp != name && !slices.Contains(r.imports, imp) && !slices.Contains(r.testImports, imp) {
				t.Errorf("%s's tests import %s: docs/ARCHITECTURE.md does not allow it", name, imp)
			}
		}
	}
	var documented []string
	for name := range rows {
		documented = append(documented, name)
	}
	slices.Sort(have)
	slices.Sort(documented)
	if diff := cmp.Diff(have, documented); diff != "" {
		t.Errorf("the module's packages (-) and docs/ARCHITECTURE.md's table (+) differ:\n%s", diff)
	}
}

// TestLeanImports: a program that uses only the transport and the mock
// imports no metrics, tracing or browser library.
func TestLeanImports(t *testing.T) {
	heavy := []string{"github.com/prometheus/", "go.opentelemetry.io/", "github.com/chromedp/"}
	seen := map[string]bool{}
	for _, p := range list(t, "-deps", module+"/transport", module+"/mock") {
		for _, h := range heavy {
			if strings.HasPrefix(p.ImportPath, h) && !seen[h] {
				seen[h] = true
				t.Errorf("importing transport and mock imports %s (%s)", h, p.ImportPath)
			}
		}
	}
}

// TestAnalyzerStandsAlone: the analyzer, and everything under it, judges
// traffic by the limits data and the trace analyzer's rules alone: it
// imports neither the transport nor the mock (the what-if, which runs
// both, sits above it in package whatif), nor any package that does.
func TestAnalyzerStandsAlone(t *testing.T) {
	for _, p := range list(t, "-deps", module+"/analyze/...") {
		for _, banned := range []string{module + "/transport", module + "/mock", module + "/replay", module + "/client"} {
			if p.ImportPath == banned || strings.HasPrefix(p.ImportPath, banned+"/") {
				t.Errorf("go list -deps ./analyze/... holds %s", p.ImportPath)
			}
		}
	}
}

// TestOneDurationEncoding: no JSON the module writes or reads carries a
// duration as integer nanoseconds: every duration field is a
// throttle.Duration ("1.5s"), so no struct tag names a key ending in Ns.
func TestOneDurationEncoding(t *testing.T) {
	tag := regexp.MustCompile("json:\"[A-Za-z]*Ns[\",]")
	for _, p := range list(t, module+"/...") {
		for _, f := range slices.Concat(p.GoFiles, p.TestGoFiles, p.XTestGoFiles) {
			src, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if loc := tag.Find(src); loc != nil {
				t.Errorf("%s/%s: %s: a duration in integer nanoseconds", p.ImportPath, f, loc)
			}
		}
	}
}

// TestFuzzTable: RELIABILITY.md's table of fuzz targets names every fuzz
// target of the module's test files (whatever the system or build tags
// they are for), as package.FuzzName, and no other.
func TestFuzzTable(t *testing.T) {
	var have []string
	for _, p := range packages(t) {
		name := p.ImportPath[strings.LastIndex(p.ImportPath, "/")+1:]
		_, testFiles := p.files()
		for _, f := range parse(t, p, testFiles, 0) {
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && isFuzzTarget(fn) {
					have = append(have, name+"."+fn.Name.Name)
				}
			}
		}
	}
	doc, err := os.ReadFile("../../RELIABILITY.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	in, done := false, false // in the table of fuzz targets (the first headed "| target |"): from its header to its last row
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case done:
		case strings.HasPrefix(line, "| target |"):
			in = true
		case !strings.HasPrefix(line, "|"):
			done = in
		case in && strings.HasPrefix(line, "| `"):
			cell := strings.Split(line, "|")[1]
			for _, m := range fuzzName.FindAllStringSubmatch(cell, -1) {
				listed = append(listed, m[1])
			}
		}
	}
	slices.Sort(have)
	slices.Sort(listed)
	if diff := cmp.Diff(have, listed); diff != "" {
		t.Errorf("the fuzz targets in the test files (-) and RELIABILITY.md's table (+) differ:\n%s", diff)
	}
}

// isFuzzTarget reports whether fn is one go test runs as a fuzz target: a
// function named Fuzz (then not a lower-case letter) of one *testing.F.
func isFuzzTarget(fn *ast.FuncDecl) bool {
	rest, ok := strings.CutPrefix(fn.Name.Name, "Fuzz")
	if !ok || fn.Recv != nil || rest != "" && unicode.IsLower([]rune(rest)[0]) || fn.Type.Params.NumFields() != 1 {
		return false
	}
	star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}

var fuzzName = regexp.MustCompile("`(\\w+\\.Fuzz\\w*)`")
