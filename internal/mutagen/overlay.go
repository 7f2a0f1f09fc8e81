package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
)

// helperSrc is the file added to a mutated package: the switch, the trace of
// which mutants a test reaches, and the helpers that apply an edit. The
// active mutant comes from MUTAGEN_ACTIVE (0: none); with MUTAGEN_TRACE set,
// the id of each mutant reached is appended to that file once. The trace
// opens at the first mutant reached, not in an init function: a package
// variable's initialiser, or an init function of a file that sorts before
// this one, runs before it.
const helperSrc = `package %s

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

var mutagenActive, _ = strconv.Atoi(os.Getenv("MUTAGEN_ACTIVE"))

var mutagenTrace struct {
	sync.Mutex
	open sync.Once
	f    *os.File
	seen map[int]bool
}

func mutagenOn(k int) bool {
	mutagenTrace.open.Do(func() {
		if name := os.Getenv("MUTAGEN_TRACE"); name != "" {
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				panic(err)
			}
			mutagenTrace.f, mutagenTrace.seen = f, map[int]bool{}
		}
	})
	if mutagenTrace.f != nil {
		mutagenTrace.Lock()
		if !mutagenTrace.seen[k] {
			mutagenTrace.seen[k] = true
			fmt.Fprintln(mutagenTrace.f, k)
		}
		mutagenTrace.Unlock()
	}
	return k == mutagenActive
}

type mutagenNumber interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64 | ~complex64 | ~complex128
}

type mutagenInteger interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

func mutagenADD[T mutagenNumber](k int, a, b T) T {
	if mutagenOn(k) {
		return a - b
	}
	return a + b
}

func mutagenSUB[T mutagenNumber](k int, a, b T) T {
	if mutagenOn(k) {
		return a + b
	}
	return a - b
}

func mutagenMUL[T mutagenNumber](k int, a, b T) T {
	if mutagenOn(k) {
		return a / b
	}
	return a * b
}

func mutagenQUO[T mutagenNumber](k int, a, b T) T {
	if mutagenOn(k) {
		return a * b
	}
	return a / b
}

func mutagenREM[T mutagenInteger](k int, a, b T) T {
	if mutagenOn(k) {
		return a * b
	}
	return a %% b
}

func mutagenNEG[T mutagenNumber](k int, a T) T {
	if mutagenOn(k) {
		return +a
	}
	return -a
}

func mutagenINC[T mutagenNumber](k int, p *T) {
	if mutagenOn(k) {
		*p--
	} else {
		*p++
	}
}

func mutagenDEC[T mutagenNumber](k int, p *T) {
	if mutagenOn(k) {
		*p++
	} else {
		*p--
	}
}
`

// helperName is the base name of the generated file.
const helperName = "mutagen_schema.go"

// render writes f with every point replaced by code that applies one of its
// mutants when the switch names it, and records where each replacement went.
func render(f *file, roots []*point) []byte {
	w := &writer{src: f.src}
	w.span(0, len(f.src), roots)
	return w.b.Bytes()
}

type writer struct {
	src []byte
	b   bytes.Buffer
}

// span writes src[lo:hi] with the points pts (in order, inside it) replaced.
func (w *writer) span(lo, hi int, pts []*point) {
	for _, pt := range pts {
		w.b.Write(w.src[lo:pt.lo])
		w.point(pt)
		lo = pt.hi
	}
	w.b.Write(w.src[lo:hi])
}

// sub writes the operand n of pt, with the points inside it replaced.
func (w *writer) sub(pt *point, n ast.Node) {
	lo, hi := pt.lo+int(n.Pos()-pt.node.Pos()), pt.lo+int(n.End()-pt.node.Pos())
	var inside []*point
	for _, k := range pt.kids {
		if k.lo >= lo && k.hi <= hi {
			inside = append(inside, k)
		}
	}
	w.span(lo, hi, inside)
}

func (w *writer) point(pt *point) {
	start := w.b.Len()
	defer func() { pt.out = append(pt.out, [2]int{start, w.b.Len()}) }()
	if pt.dropped {
		w.span(pt.lo, pt.hi, pt.kids)
		return
	}
	switch n := pt.node.(type) {
	case *ast.BinaryExpr:
		if pt.form == compare {
			w.b.WriteString("func() bool { ")
			for _, m := range pt.mutants {
				fmt.Fprintf(&w.b, "if mutagenOn(%d) { return ", m.id)
				w.binary(pt, n, m.to)
				w.b.WriteString(" }; ")
			}
			w.b.WriteString("return ")
			w.binary(pt, n, n.Op)
			w.b.WriteString(" }()")
			break
		}
		fmt.Fprintf(&w.b, "%s%s(%d, ", pt.helper, pt.typeArg, pt.mutants[0].id)
		w.sub(pt, n.X)
		w.b.WriteString(", ")
		w.sub(pt, n.Y)
		w.b.WriteString(")")
	case *ast.UnaryExpr:
		fmt.Fprintf(&w.b, "%s%s(%d, ", pt.helper, pt.typeArg, pt.mutants[0].id)
		w.sub(pt, n.X)
		w.b.WriteString(")")
	case *ast.IncDecStmt:
		if pt.form == ifIncDec {
			fmt.Fprintf(&w.b, "if mutagenOn(%d) { ", pt.mutants[0].id)
			w.sub(pt, n.X)
			fmt.Fprintf(&w.b, "%s } else { ", pt.mutants[0].to)
			w.sub(pt, n.X)
			fmt.Fprintf(&w.b, "%s }", n.Tok)
			break
		}
		fmt.Fprintf(&w.b, "%s%s(%d, &(", pt.helper, pt.typeArg, pt.mutants[0].id)
		w.sub(pt, n.X)
		w.b.WriteString("))")
	}
}

func (w *writer) binary(pt *point, n *ast.BinaryExpr, op token.Token) {
	w.b.WriteString("(")
	w.sub(pt, n.X)
	fmt.Fprintf(&w.b, ") %s (", op)
	w.sub(pt, n.Y)
	w.b.WriteString(")")
}

// compileError matches a compiler error's position: file, line, column.
var compileError = regexp.MustCompile(`(?m)^(?:\./)?([^\s:]+\.go):(\d+):(\d+): `)

// culprits returns the points whose replacement holds a compiler error in
// out (the build's standard error), the innermost for each error, and
// whether every error was placed. rendered holds each file's overlay by its
// module-relative name.
func culprits(out []byte, files map[string]*rendered, dir string) ([]*point, bool) {
	var found []*point
	all := true
	for _, m := range compileError.FindAllSubmatch(out, -1) {
		r := byName(files, string(m[1]), dir)
		if r == nil {
			all = false
			continue
		}
		line, _ := strconv.Atoi(string(m[2]))
		col, _ := strconv.Atoi(string(m[3]))
		off := offset(r.src, line, col)
		var best *point
		bestLen := 0
		for _, pt := range r.points {
			for _, o := range pt.out {
				if off >= o[0] && off < o[1] && !pt.dropped && (best == nil || o[1]-o[0] < bestLen) {
					best, bestLen = pt, o[1]-o[0]
				}
			}
		}
		if best == nil {
			all = false
			continue
		}
		found = append(found, best)
	}
	return found, all
}

// rendered is a file as the overlay holds it, with its points (all of them,
// nested ones included).
type rendered struct {
	file    *file
	src     []byte
	roots   []*point
	points  []*point
	overlay string // the file the overlay puts in the source's place
}

// byName finds the file a compiler error names: by the overlay's file put
// in its place (the compiler names that one, relative to dir, the build's
// directory, when that is shorter), by module-relative name, or by its
// ending.
func byName(files map[string]*rendered, name, dir string) *rendered {
	var found *rendered
	abs := filepath.Clean(name)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, abs)
	}
	for _, r := range files {
		if abs == r.overlay { // filepath.Join's: clean
			return r
		}
	}
	for rel, r := range files {
		if rel == name || len(name) < len(rel) && rel[len(rel)-len(name)-1] == '/' && rel[len(rel)-len(name):] == name ||
			len(name) > len(rel) && name[len(name)-len(rel)-1] == '/' && name[len(name)-len(rel):] == rel {
			if found != nil {
				return nil
			}
			found = r
		}
	}
	return found
}

// offset converts a 1-based line and byte column into an offset in src.
func offset(src []byte, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return len(src)
		}
		off += i + 1
	}
	return off + col - 1
}
