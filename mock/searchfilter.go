package mock

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// A search handle query's filter, the OData-like language MPSD reads
// (XSAPI Include/xsapi-c/multiplayer_c.h, XblMultiplayerGetSearchHandlesAsync):
// comparisons with eq, ne, ge, gt, le and lt joined by and and or (and
// binds tighter; parentheses group), on Strings/NAME (a quoted string),
// Numbers/NAME (a number) and Tags/NAME (eq or ne a quoted tag: whether the
// handle has it), and MemberXuids/any(d:d eq 'X') or OwnerXuids/any(d:d eq
// 'X'). Keywords and field kinds ignore case, as do string values and tags.

// Bounds of a filter.
const (
	maxFilterBytes = 2048
	maxFilterDepth = 32
)

// filter is a parsed filter: it reports whether a handle matches.
type filter func(h *searchHandle) bool

// parseFilter parses a filter; "" matches every handle.
func parseFilter(s string) (filter, error) {
	if strings.TrimSpace(s) == "" {
		return func(*searchHandle) bool { return true }, nil
	}
	if len(s) > maxFilterBytes {
		return nil, fmt.Errorf("the filter is longer than %d bytes", maxFilterBytes)
	}
	p := &filterParser{s: s}
	f, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.skip(); p.i < len(p.s) {
		return nil, p.fail("and, or or the end")
	}
	return f, nil
}

type filterParser struct {
	s string
	i int
}

func (p *filterParser) fail(want string) error {
	return fmt.Errorf("filter: at byte %d: want %s", p.i, want)
}

func (p *filterParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// word reads a keyword (letters only) if the next one is kw, ignoring case.
func (p *filterParser) word(kw string) bool {
	p.skip()
	end := p.i + len(kw)
	if end > len(p.s) || !strings.EqualFold(p.s[p.i:end], kw) || (end < len(p.s) && isNameByte(p.s[end])) {
		return false
	}
	p.i = end
	return true
}

func (p *filterParser) or(depth int) (filter, error) {
	if depth > maxFilterDepth {
		return nil, errors.New("filter: nested too deep")
	}
	left, err := p.and(depth)
	for err == nil && p.word("or") {
		var right filter
		if right, err = p.and(depth); err == nil {
			l := left
			left = func(h *searchHandle) bool { return l(h) || right(h) }
		}
	}
	return left, err
}

func (p *filterParser) and(depth int) (filter, error) {
	left, err := p.term(depth)
	for err == nil && p.word("and") {
		var right filter
		if right, err = p.term(depth); err == nil {
			l := left
			left = func(h *searchHandle) bool { return l(h) && right(h) }
		}
	}
	return left, err
}

func (p *filterParser) term(depth int) (filter, error) {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		f, err := p.or(depth + 1)
		if p.skip(); err == nil && (p.i >= len(p.s) || p.s[p.i] != ')') {
			err = p.fail(`")"`)
		}
		p.i++
		return f, err
	}
	kind, name, err := p.field()
	if err != nil {
		return nil, err
	}
	switch kind {
	case "memberxuids", "ownerxuids":
		return p.anyXUID(kind, name)
	}
	op, err := p.op()
	if err != nil {
		return nil, err
	}
	p.skip()
	if kind == "numbers" {
		return p.number(name, op)
	}
	v, err := p.str()
	if err != nil {
		return nil, err
	}
	if kind == "tags" {
		if op != "eq" && op != "ne" {
			return nil, errors.New("filter: tags compare with eq or ne only")
		}
		return func(h *searchHandle) bool { return h.hasTag(v) == (op == "eq") }, nil
	}
	return func(h *searchHandle) bool {
		got, ok := h.stringAttr(name)
		return ok && compare(strings.Compare(strings.ToLower(got), strings.ToLower(v)), op)
	}, nil
}

// field reads Kind/Name.
func (p *filterParser) field() (kind, name string, err error) {
	p.skip()
	start := p.i
	for p.i < len(p.s) && isNameByte(p.s[p.i]) {
		p.i++
	}
	kind = strings.ToLower(p.s[start:p.i])
	switch kind {
	case "strings", "numbers", "tags", "memberxuids", "ownerxuids":
	default:
		p.i = start
		return "", "", p.fail("Strings/, Numbers/, Tags/, MemberXuids/ or OwnerXuids/")
	}
	if p.i >= len(p.s) || p.s[p.i] != '/' {
		return "", "", p.fail(`"/"`)
	}
	p.i++
	start = p.i
	for p.i < len(p.s) && isNameByte(p.s[p.i]) {
		p.i++
	}
	if name = p.s[start:p.i]; name == "" {
		return "", "", p.fail("a name")
	}
	return kind, name, nil
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))
}

func (p *filterParser) op() (string, error) {
	for _, op := range []string{"eq", "ne", "ge", "gt", "le", "lt"} {
		if p.word(op) {
			return op, nil
		}
	}
	return "", p.fail("eq, ne, ge, gt, le or lt")
}

// str reads a quoted string (” stands for a quote).
func (p *filterParser) str() (string, error) {
	if p.i >= len(p.s) || p.s[p.i] != '\'' {
		return "", p.fail("a quoted string")
	}
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		if p.s[p.i] == '\'' {
			if p.i+1 < len(p.s) && p.s[p.i+1] == '\'' {
				b.WriteByte('\'')
				p.i++
				continue
			}
			p.i++
			return b.String(), nil
		}
		b.WriteByte(p.s[p.i])
	}
	return "", p.fail("the string's closing quote")
}

func (p *filterParser) number(name, op string) (filter, error) {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[p.i]) >= 0 {
		p.i++
	}
	v, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		p.i = start
		return nil, p.fail("a number")
	}
	return func(h *searchHandle) bool {
		got, ok := h.SearchAttributes.Numbers[name]
		return ok && compare(cmpFloat(got, v), op)
	}, nil
}

// anyXUID reads (d:d eq 'X') after MemberXuids/any or OwnerXuids/any.
func (p *filterParser) anyXUID(kind, name string) (filter, error) {
	if !strings.EqualFold(name, "any") {
		return nil, p.fail("any(d:d eq 'XUID')")
	}
	rest := strings.ToLower(strings.ReplaceAll(p.s[p.i:], " ", ""))
	if !strings.HasPrefix(rest, "(d:deq'") {
		return nil, p.fail("(d:d eq 'XUID')")
	}
	for p.i < len(p.s) && p.s[p.i] != '\'' {
		p.i++
	}
	x, err := p.str()
	if p.skip(); err == nil && (p.i >= len(p.s) || p.s[p.i] != ')') {
		err = p.fail(`")"`)
	}
	p.i++
	if err != nil {
		return nil, err
	}
	owners := kind == "ownerxuids"
	return func(h *searchHandle) bool { return h.hasXUID(x, owners) }, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compare applies op to a comparison's result (-1, 0, 1).
func compare(c int, op string) bool {
	switch op {
	case "eq":
		return c == 0
	case "ne":
		return c != 0
	case "gt":
		return c > 0
	case "ge":
		return c >= 0
	case "lt":
		return c < 0
	}
	return c <= 0 // le
}
