package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A textEdit is one entry of the edits table: a change to a file the Go
// mutators do not reach (a Lua script), and the test that must catch it.
type textEdit struct {
	line     int
	file     string // from the module's root
	old, new string
	run      string // the tests to run (-test.run)
	caughtBy string // a test or subtest that must fail
	note     string
	by       []string // what failed
	err      error
}

// parseEdits reads the edits table: "run: REGEXP" sets the tests for the
// entries after it; an entry is "FILE: OLD -> NEW", OLD found exactly once
// in FILE, with, indented under it, "caught by: TEST" (a test or subtest
// that must fail) and any notes.
func parseEdits(r io.Reader, name string) ([]*textEdit, error) {
	blocks, err := readBlocks(r, name)
	if err != nil {
		return nil, err
	}
	var out []*textEdit
	run := ""
	for _, b := range blocks {
		if re, ok := strings.CutPrefix(b.head, "run: "); ok {
			run = strings.TrimSpace(re)
			continue
		}
		file, change, ok := strings.Cut(b.head, ": ")
		old, new, ok2 := strings.Cut(change, " -> ")
		if !ok || !ok2 || old == "" || run == "" {
			return nil, fmt.Errorf("%s:%d: want FILE: OLD -> NEW after a run: line, got %q", name, b.line, b.head)
		}
		e := &textEdit{line: b.line, file: file, old: old, new: new, run: run}
		var notes []string
		for _, l := range b.body {
			if by, ok := strings.CutPrefix(l, "caught by: "); ok {
				e.caughtBy = strings.TrimSpace(by)
			} else {
				notes = append(notes, l)
			}
		}
		e.note = strings.Join(notes, " ")
		if e.caughtBy == "" {
			return nil, fmt.Errorf("%s:%d: no \"caught by: TEST\" line", name, b.line)
		}
		out = append(out, e)
	}
	return out, nil
}

// runEdits tries each edit of the table in name and returns the edits not
// caught by the test they name. An edit of a file a package embeds in a
// string variable (//go:embed) is applied to that variable as the package
// initialises, so that all the edits of a package share one test binary
// (an edit schema, as for Go mutants); any other edit gets a binary of its
// own.
func runEdits(name string, workers int, w io.Writer) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	edits, err := parseEdits(f, name)
	f.Close()
	if err != nil {
		return nil, err
	}
	out, err := goCmd("list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return nil, err
	}
	root := strings.TrimSpace(string(out))
	tmp, err := os.MkdirTemp("", "mutagen-edits-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	byDir := map[string][]*textEdit{}
	for _, e := range edits {
		byDir[path.Dir(e.file)] = append(byDir[path.Dir(e.file)], e)
	}
	var alone []*textEdit
	for i, dir := range slices.Sorted(maps.Keys(byDir)) {
		bin, schema, err := buildEditSchema(root, dir, byDir[dir], filepath.Join(tmp, "schema"+strconv.Itoa(i)))
		if err != nil {
			return nil, err
		}
		parallel(workers, len(schema), func(k int) {
			e := schema[k]
			out, timeout, err := runBinary(bin, filepath.Join(root, filepath.FromSlash(dir)), []string{"MUTAGEN_EDIT=" + strconv.Itoa(k+1)}, 2*time.Minute, "-test.run", e.run)
			e.record(out, timeout, err)
		})
		for _, e := range byDir[dir] {
			if !slices.Contains(schema, e) && e.err == nil {
				alone = append(alone, e)
			}
		}
	}
	parallel(workers, len(alone), func(i int) {
		alone[i].err = tryEdit(root, filepath.Join(tmp, strconv.Itoa(i)), alone[i])
	})
	var fails []string
	caught := 0
	for _, e := range edits {
		switch {
		case e.err != nil:
			fails = append(fails, fmt.Sprintf("%s:%d: %v", name, e.line, e.err))
		case !slices.Contains(e.by, e.caughtBy):
			fails = append(fails, fmt.Sprintf("%s:%d: %s: %s -> %s: not caught by %s (failed: %s)", name, e.line, e.file, e.old, e.new, e.caughtBy, orNone(e.by)))
		default:
			caught++
		}
	}
	fmt.Fprintf(w, "%s: %d edits, %d caught by the test named\n", name, len(edits), caught)
	return fails, nil
}

// record notes which tests failed on the edit.
func (e *textEdit) record(out []byte, timeout bool, err error) {
	switch {
	case timeout:
		e.by = []string{"(timed out)"}
	case err != nil:
		e.by = failures(out)
	}
}

// buildEditSchema builds the test binary of the package in dir (from the
// module's root) with a file that applies edit k of those it returns, the
// edits of files the package embeds in string variables, when
// MUTAGEN_EDIT=k. The file's name sorts first, so its variable is
// initialised before any other of the package's that reads an embedded
// text. Each edit's text must occur once in its file.
func buildEditSchema(root, dir string, edits []*textEdit, tmp string) (string, []*textEdit, error) {
	pkgDir := filepath.Join(root, filepath.FromSlash(dir))
	pkgName, vars, err := embedded(pkgDir)
	if err != nil {
		return "", nil, err
	}
	var schema []*textEdit
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"os\"\n\t\"strings\"\n)\n\nvar mutagenEdit = func() string {\n\tswitch os.Getenv(\"MUTAGEN_EDIT\") {\n", pkgName)
	for _, e := range edits {
		names := vars[path.Base(e.file)]
		if len(names) == 0 {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.file)))
		if err != nil {
			return "", nil, err
		}
		if n := strings.Count(string(src), e.old); n != 1 {
			e.err = fmt.Errorf("%s: %q occurs %d times, want once", e.file, e.old, n)
			continue
		}
		schema = append(schema, e)
		fmt.Fprintf(&b, "\tcase %q:\n", strconv.Itoa(len(schema)))
		for _, v := range names {
			fmt.Fprintf(&b, "\t\t%s = strings.Replace(%s, %s, %s, 1)\n", v, v, strconv.Quote(e.old), strconv.Quote(e.new))
		}
	}
	b.WriteString("\t}\n\treturn \"\"\n}()\n")
	if len(schema) == 0 {
		return "", nil, nil
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", nil, err
	}
	gen := filepath.Join(tmp, "0mutagen_edits.go")
	if err := os.WriteFile(gen, []byte(b.String()), 0o600); err != nil {
		return "", nil, err
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkgDir, "0mutagen_edits.go"): gen}})
	if err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
		return "", nil, err
	}
	bin := filepath.Join(tmp, "pkg.test")
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", bin, "./"+dir)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("building the edits of %s: %v\n%s", dir, err, out)
	}
	return bin, schema, nil
}

// embedded returns the package name of the Go files in dir and, by file
// name, the package-level string variables a //go:embed directive fills
// with that file.
func embedded(dir string) (string, map[string][]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", nil, err
	}
	pkgName := ""
	vars := map[string][]string{}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return "", nil, err
		}
		pkgName = f.Name.Name
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				doc := vs.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				file, ok := embedDirective(doc)
				if typ, isIdent := vs.Type.(*ast.Ident); ok && isIdent && typ.Name == "string" && len(vs.Names) == 1 {
					vars[file] = append(vars[file], vs.Names[0].Name)
				}
			}
		}
	}
	return pkgName, vars, nil
}

// embedDirective returns the one file a //go:embed comment names.
func embedDirective(doc *ast.CommentGroup) (string, bool) {
	if doc == nil {
		return "", false
	}
	for _, c := range doc.List {
		if rest, ok := strings.CutPrefix(c.Text, "//go:embed "); ok {
			if fields := strings.Fields(rest); len(fields) == 1 {
				return fields[0], true
			}
		}
	}
	return "", false
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// tryEdit builds the test binary of e's package with e applied and runs
// e's tests, recording which failed.
func tryEdit(root, tmp string, e *textEdit) error {
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	name := filepath.Join(root, filepath.FromSlash(e.file))
	src, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if n := strings.Count(string(src), e.old); n != 1 {
		return fmt.Errorf("%s: %q occurs %d times, want once", e.file, e.old, n)
	}
	edited := filepath.Join(tmp, filepath.Base(name))
	if err := os.WriteFile(edited, []byte(strings.Replace(string(src), e.old, e.new, 1)), 0o600); err != nil {
		return err
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{name: edited}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
		return err
	}
	bin := filepath.Join(tmp, "pkg.test")
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", bin, "./"+path.Dir(e.file))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building with %s edited: %v\n%s", e.file, err, out)
	}
	e.record(runBinary(bin, filepath.Dir(name), nil, 2*time.Minute, "-test.run", e.run))
	return nil
}
