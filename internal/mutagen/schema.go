package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The kinds of edits, as go-gremlins names its default mutators.
const (
	boundary   = "CONDITIONALS_BOUNDARY"
	negation   = "CONDITIONALS_NEGATION"
	arithmetic = "ARITHMETIC_BASE"
	incDec     = "INCREMENT_DECREMENT"
	negatives  = "INVERT_NEGATIVES"
)

// An edit turns an operator into another.
type edit struct {
	kind string
	to   token.Token
}

// edits lists the edits of each binary operator and of ++ and --; a unary
// minus becomes a plus (negatives).
var edits = map[token.Token][]edit{
	token.LSS: {{boundary, token.LEQ}, {negation, token.GEQ}},
	token.LEQ: {{boundary, token.LSS}, {negation, token.GTR}},
	token.GTR: {{boundary, token.GEQ}, {negation, token.LEQ}},
	token.GEQ: {{boundary, token.GTR}, {negation, token.LSS}},
	token.EQL: {{negation, token.NEQ}},
	token.NEQ: {{negation, token.EQL}},
	token.ADD: {{arithmetic, token.SUB}},
	token.SUB: {{arithmetic, token.ADD}},
	token.MUL: {{arithmetic, token.QUO}},
	token.QUO: {{arithmetic, token.MUL}},
	token.REM: {{arithmetic, token.MUL}},
	token.INC: {{incDec, token.DEC}},
	token.DEC: {{incDec, token.INC}},
}

// helpers names the generated function that applies an arithmetic or
// increment edit (see helperSrc).
var helpers = map[token.Token]string{
	token.ADD: "mutagenADD", token.SUB: "mutagenSUB", token.MUL: "mutagenMUL",
	token.QUO: "mutagenQUO", token.REM: "mutagenREM", token.INC: "mutagenINC", token.DEC: "mutagenDEC",
}

// A mutant is one edit at one place.
type mutant struct {
	id        int
	file      string // from the module's root
	line, col int
	kind      string
	from, to  token.Token
	fn        string // the enclosing function
	text      string // the source line, trimmed, the operator in brackets
	nth       int    // its rank among the mutants of fn with the same text and edit
	status    status
	by        string        // what killed it
	took      time.Duration // to run its tests
}

// key names a mutant in a way that survives lines moving: file, function,
// the line's text with the operator marked, and the edit.
func (m *mutant) key() string {
	k := fmt.Sprintf("%s: %s: %s -> %s", m.file, m.fn, m.text, m.to)
	if m.nth > 1 {
		k += " (" + strconv.Itoa(m.nth) + ")"
	}
	return k
}

// where names a mutant for a reader: its position, kind and key.
func (m *mutant) where() string {
	return fmt.Sprintf("%s:%d:%d %s %s: %s -> %s", m.file, m.line, m.col, m.kind, m.fn, m.text, m.to)
}

type status int

const (
	notReached status = iota
	killed
	timedOut
	survived
)

func (s status) String() string {
	return [...]string{"UNTESTED", "KILLED", "TIMEOUT", "SURVIVED"}[s]
}

// The forms a point's replacement takes.
const (
	compare  = iota // func() bool { if mutagenOn(k) { return x OP' y }; return x OP y }()
	call            // mutagenOP[T](k, x, y), mutagenNEG[T](k, x), mutagenINC[T](k, &x)
	ifIncDec        // if mutagenOn(k) { x-- } else { x++ }
)

// A point is an operator in the source that some mutants edit.
type point struct {
	node    ast.Node
	lo, hi  int // the node's bytes in the file
	form    int
	helper  string // form call
	typeArg string // "[T]" or ""
	mutants []*mutant
	kids    []*point // the points inside it, in order
	out     [][2]int // where its replacements went in the overlay
	file    *file
	dropped bool // its replacement did not compile: left as it is
}

// points finds the mutable operators of f and numbers their mutants from
// next. Constant declarations and array lengths, which must stay constant,
// and constant expressions are left alone; so is anything the generated
// code could not express (string concatenation, comparisons of named
// boolean types, arithmetic on a type parameter, arithmetic of untyped
// operands in another package's type, which a helper would compute in
// int).
func (p *pkg) points(f *file, next int) []*point {
	var pts []*point
	fixed := constRanges(f.ast)
	stmtLevel := map[ast.Stmt]bool{} // ++ and -- that stand as statements of a list
	ast.Inspect(f.ast, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			markStmts(stmtLevel, n.List)
		case *ast.CaseClause:
			markStmts(stmtLevel, n.Body)
		case *ast.CommClause:
			markStmts(stmtLevel, n.Body)
		case *ast.LabeledStmt:
			markStmts(stmtLevel, []ast.Stmt{n.Stmt})
		}
		if n == nil || inRanges(fixed, n.Pos()) {
			return true
		}
		if pt := p.point(n, stmtLevel); pt != nil {
			pt.file = f
			pt.lo, pt.hi = p.fset.Position(n.Pos()).Offset, p.fset.Position(n.End()).Offset
			pts = append(pts, pt)
		}
		return true
	})
	fns := funcNames(f.ast)
	for _, pt := range pts {
		from, pos := opOf(pt.node)
		position := p.fset.Position(pos)
		list := edits[from]
		if u, ok := pt.node.(*ast.UnaryExpr); ok {
			list = []edit{{negatives, token.ADD}}
			from = u.Op
		}
		for _, e := range list {
			next++
			pt.mutants = append(pt.mutants, &mutant{
				id: next, file: f.rel, line: position.Line, col: position.Column,
				kind: e.kind, from: from, to: e.to, fn: fns(pos),
				text: marked(f.src, position.Offset, len(from.String())),
			})
		}
	}
	numberRepeats(pts)
	return nest(pts)
}

// point returns the point n is, or nil.
func (p *pkg) point(n ast.Node, stmtLevel map[ast.Stmt]bool) *point {
	if e, ok := n.(ast.Expr); ok && p.info.Types[e].Value != nil {
		// A constant expression is the compiler's arithmetic, exact and by
		// its operands' kinds (3 / 2 is 1 in a float64 context): a helper
		// computing it at run time in the context's type is not the code
		// with every switch off.
		return nil
	}
	switch n := n.(type) {
	case *ast.BinaryExpr:
		switch n.Op {
		case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
			if b, ok := p.info.Types[n].Type.(*types.Basic); !ok || b.Kind() != types.Bool && b.Kind() != types.UntypedBool {
				return nil
			}
			return &point{node: n, form: compare}
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM:
			t := p.info.Types[n].Type
			if !numeric(t) || n.Op == token.REM && !integer(t) {
				return nil
			}
			ta := p.typeArg(t)
			if ta == "" && p.untyped(n.X) && p.untyped(n.Y) {
				return nil // the helper's type would come from untyped operands (int), not the context's
			}
			return &point{node: n, form: call, helper: helpers[n.Op], typeArg: ta}
		}
	case *ast.UnaryExpr:
		if t := p.info.Types[n].Type; n.Op == token.SUB && numeric(t) {
			ta := p.typeArg(t)
			if ta == "" && p.untyped(n.X) {
				return nil
			}
			return &point{node: n, form: call, helper: "mutagenNEG", typeArg: ta}
		}
	case *ast.IncDecStmt:
		if stmtLevel[n] {
			return &point{node: n, form: ifIncDec}
		}
		t := p.info.Types[n.X].Type
		if ix, ok := n.X.(*ast.IndexExpr); ok {
			if _, isMap := p.info.Types[ix.X].Type.Underlying().(*types.Map); isMap {
				return nil // not addressable: m[k]++ outside a statement list
			}
		}
		return &point{node: n, form: call, helper: helpers[n.Tok], typeArg: p.typeArg(t)}
	}
	return nil
}

// untyped reports whether e takes its type from its context: a constant,
// or a shift of one by a variable (1 << s is computed in the type the
// expression around it gives it, os.FileMode's uint32 say).
func (p *pkg) untyped(e ast.Expr) bool {
	e = ast.Unparen(e)
	if p.info.Types[e].Value != nil {
		return true
	}
	b, ok := e.(*ast.BinaryExpr)
	return ok && (b.Op == token.SHL || b.Op == token.SHR) && p.untyped(b.X)
}

// typeArg spells t for an explicit instantiation of a helper, so that
// untyped constants take the type their context gives them; "" when t
// cannot be spelled here (inference then decides).
func (p *pkg) typeArg(t types.Type) string {
	t = types.Default(t)
	if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		return ""
	}
	spellable := true
	s := types.TypeString(t, func(other *types.Package) string {
		if other == p.types {
			return ""
		}
		spellable = false // a type of another package needs an import the file may lack
		return other.Name()
	})
	if !spellable {
		return ""
	}
	return "[" + s + "]"
}

func numeric(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsNumeric != 0
}

func integer(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

func markStmts(m map[ast.Stmt]bool, list []ast.Stmt) {
	for _, s := range list {
		m[s] = true
	}
}

// constRanges returns the spans that must stay constant: constant
// declarations and array lengths.
func constRanges(f *ast.File) [][2]token.Pos {
	var r [][2]token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			if n.Tok == token.CONST {
				r = append(r, [2]token.Pos{n.Pos(), n.End()})
			}
		case *ast.ArrayType:
			if n.Len != nil {
				r = append(r, [2]token.Pos{n.Len.Pos(), n.Len.End()})
			}
		}
		return true
	})
	return r
}

func inRanges(r [][2]token.Pos, pos token.Pos) bool {
	for _, s := range r {
		if pos >= s[0] && pos < s[1] {
			return true
		}
	}
	return false
}

// opOf returns a point's operator and its position.
func opOf(n ast.Node) (token.Token, token.Pos) {
	switch n := n.(type) {
	case *ast.BinaryExpr:
		return n.Op, n.OpPos
	case *ast.UnaryExpr:
		return n.Op, n.OpPos
	case *ast.IncDecStmt:
		return n.Tok, n.TokPos
	}
	panic("mutagen: not a point")
}

// funcNames returns a function naming the declaration that holds a
// position: F, T.M, or "var" for package-level initialisers.
func funcNames(f *ast.File) func(token.Pos) string {
	return func(pos token.Pos) string {
		for _, d := range f.Decls {
			if pos < d.Pos() || pos >= d.End() {
				continue
			}
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				return "var"
			}
			if fd.Recv == nil || len(fd.Recv.List) == 0 {
				return fd.Name.Name
			}
			return recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
		}
		return "?"
	}
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

// marked returns the line of src holding offset, trimmed, with the n bytes
// of the operator at offset in brackets.
func marked(src []byte, offset, n int) string {
	start := bytes.LastIndexByte(src[:offset], '\n') + 1
	end := len(src)
	if i := bytes.IndexByte(src[offset:], '\n'); i >= 0 {
		end = offset + i
	}
	line := string(src[start:offset]) + "[" + string(src[offset:offset+n]) + "]" + string(src[offset+n:end])
	return strings.TrimSpace(line)
}

// numberRepeats ranks mutants whose keys would otherwise be equal (the same
// line text in one function, such as two "if err [!=] nil {").
func numberRepeats(pts []*point) {
	seen := map[string]int{}
	for _, pt := range pts {
		for _, m := range pt.mutants {
			seen[m.key()]++
			m.nth = seen[m.key()]
		}
	}
}

// nest arranges points, in source order, as a forest by containment.
func nest(pts []*point) []*point {
	slices.SortStableFunc(pts, func(a, b *point) int {
		if a.lo != b.lo {
			return a.lo - b.lo
		}
		return b.hi - a.hi
	})
	var roots, stack []*point
	for _, pt := range pts {
		for len(stack) > 0 && stack[len(stack)-1].hi <= pt.lo {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			roots = append(roots, pt)
		} else {
			parent := stack[len(stack)-1]
			parent.kids = append(parent.kids, pt)
		}
		stack = append(stack, pt)
	}
	return roots
}
