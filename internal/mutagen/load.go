package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// pkg is one package to mutate: its non-test files, parsed and type-checked.
type pkg struct {
	path, dir, name string
	root            string // the module's directory
	fset            *token.FileSet
	srcs            []*file
	types           *types.Package
	info            *types.Info
}

// file is one of a package's Go files.
type file struct {
	name string // absolute
	rel  string // from the module's root, with slashes
	src  []byte
	ast  *ast.File
	// mutate reports whether the file's edits are tested (the target's
	// FILE_REGEXP matches it); the others are compiled as they are.
	mutate bool
}

func (p *pkg) mutated() []string {
	var out []string
	for _, f := range p.srcs {
		if f.mutate {
			out = append(out, f.rel)
		}
	}
	return out
}

// load parses and type-checks the package pattern names, marking for
// mutation the files whose base names filter matches (all when empty).
func load(pattern, filter string) (*pkg, error) {
	re, err := regexp.Compile(filter)
	if err != nil {
		return nil, fmt.Errorf("%s: file filter: %w", pattern, err)
	}
	var listed struct {
		ImportPath, Dir, Name string
		Module                *struct{ Dir string }
		GoFiles               []string
	}
	out, err := goCmd("list", "-json=ImportPath,Dir,Name,GoFiles,Module", pattern)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&listed); err != nil {
		return nil, fmt.Errorf("go list %s: %w", pattern, err)
	}
	if dec.More() || listed.Module == nil {
		return nil, fmt.Errorf("%s: want one package of a module", pattern)
	}
	p := &pkg{path: listed.ImportPath, dir: listed.Dir, name: listed.Name, root: listed.Module.Dir, fset: token.NewFileSet()}
	var asts []*ast.File
	for _, name := range listed.GoFiles {
		f := &file{name: filepath.Join(p.dir, name), mutate: re.MatchString(name)}
		if f.src, err = os.ReadFile(f.name); err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(p.root, f.name)
		if err != nil {
			return nil, err
		}
		f.rel = filepath.ToSlash(rel)
		if f.ast, err = parser.ParseFile(p.fset, f.name, f.src, parser.SkipObjectResolution); err != nil {
			return nil, err
		}
		p.srcs = append(p.srcs, f)
		asts = append(asts, f.ast)
	}
	if !slices.ContainsFunc(p.srcs, func(f *file) bool { return f.mutate }) {
		return nil, fmt.Errorf("%s: the file filter %q matches none of its files: nothing to mutate", pattern, filter)
	}
	exports, err := exportData(pattern)
	if err != nil {
		return nil, err
	}
	conf := types.Config{Importer: importer.ForCompiler(p.fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})}
	p.info = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if p.types, err = conf.Check(p.path, p.fset, asts, p.info); err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", p.path, err)
	}
	return p, nil
}

// exportData returns the compiled export data of pattern's dependencies by
// import path, which go list builds.
func exportData(pattern string) (map[string]string, error) {
	out, err := goCmd("list", "-deps", "-export", "-json=ImportPath,Export", pattern)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list -export: %w", err)
		}
		m[p.ImportPath] = p.Export
	}
	return m, nil
}

// goCmd runs the go command and returns its standard output, or an error
// holding its standard error.
func goCmd(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
		}
		return nil, err
	}
	return out, nil
}
