package datafile

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// scan reads the source's JSON through once, token by token, before any of
// it is decoded: jsontext's syntax (a name twice in an object, text that
// is not UTF-8), nesting past MaxNesting, and lists longer than their
// bound. A list is refused at its first member past the bound, so that a
// long list of small values ("{}," three bytes) never becomes a list of
// large Go values, and the read holds nothing but the decoder's state.
func (s *source) scan(root *bound) *Error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(s.json)) // read in place, not copied
	defer func() { s.walked += int(dec.InputOffset()) }()
	kinds := func(d int) jsontext.Kind { // the kind of the container at depth d
		if d > dec.StackDepth() {
			return 0
		}
		k, _ := dec.StackIndex(d)
		return k
	}
	// bounds[d] bounds what the container at depth d holds; nil where no
	// pointer of Lists or Totals goes.
	bounds := []*bound{nil}
	var name string // the last member name read in a bounded object
	for {
		before := dec.InputOffset()
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return s.syntaxError(err, func(d int) jsontext.Kind { return kinds(d + 1) })
		}
		kind, depth := tok.Kind(), dec.StackDepth()
		if kind == '}' || kind == ']' {
			bounds = bounds[:depth+1]
			continue
		}
		in := depth // the depth of the container the token is in
		if kind == '{' || kind == '[' {
			in--
		}
		container, n := dec.StackIndex(in)
		if container == '{' && n%2 == 1 { // a member's name
			if bounds[in] != nil {
				name = tok.String()
			}
			continue
		}
		if in+1 > MaxNesting {
			return s.scanError(dec, before, kinds, fmt.Sprintf("nested too deep: more than %d levels", MaxNesting))
		}
		var b *bound
		switch up := bounds[in]; {
		case in == 0:
			b = root
		case up == nil:
		default:
			members := n // an array's; an object's names and values count apart
			if container == '{' {
				members = (n + 1) / 2
			}
			if up.seen++; up.max > 0 && members > int64(up.max) {
				return s.listError(dec, before, kinds, fmt.Sprintf("more than %d entries", up.max))
			}
			if up.total > 0 && up.seen > up.total {
				return s.listError(dec, before, kinds, fmt.Sprintf("more than %d entries in all the lists like it", up.total))
			}
			if b = up.child("*"); container == '{' {
				b = up.child(name)
			}
		}
		if kind == '{' || kind == '[' {
			bounds = append(bounds[:in+1], b)
		}
	}
}

// scanError is an error at the value the decoder just read, which starts
// after before.
func (s *source) scanError(dec *jsontext.Decoder, before int64, kinds func(int) jsontext.Kind, reason string) *Error {
	at := skipSeparators(s.json, int(before))
	return &Error{Line: s.line(at), Field: fieldOf(dec.StackPointer(), func(d int) jsontext.Kind { return kinds(d + 1) }), Reason: reason}
}

// listError is the error of a list's first member past a bound: the
// list's field, and the member's line.
func (s *source) listError(dec *jsontext.Decoder, before int64, kinds func(int) jsontext.Kind, reason string) *Error {
	at := skipSeparators(s.json, int(before))
	list := dec.StackPointer().Parent() // the pointer names the member just read
	return &Error{Line: s.line(at), Field: fieldOf(list, func(d int) jsontext.Kind { return kinds(d + 1) }), Reason: reason}
}

// skipSeparators returns where the token after off starts: past white
// space and the ',' or ':' before it.
func skipSeparators(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	for off < len(data) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}
