package datafile

import (
	"bytes"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/xblgo/fgrl/internal/safetext"
)

// locate returns where the value at path (names and indices, as text)
// starts in the source's JSON (at its name, in an object) and path written
// as a field; where path goes further than the JSON, where the deepest
// value on it starts. It reads the JSON once, up to the value, skipping
// whatever is off the path whole.
func (s *source) locate(path []string) (int, string) {
	// The scan has checked the names: the decoder need not keep them.
	dec := jsontext.NewDecoder(bytes.NewBuffer(s.json), jsontext.AllowDuplicateNames(true))
	defer func() { s.walked += int(dec.InputOffset()) }()
	at, field := 0, make([]byte, 0, 64)
	for i, step := range path {
		kind := dec.PeekKind()
		if kind != '{' && kind != '[' {
			return at, fieldText(appendNames(field, path[i:]))
		}
		if _, err := dec.ReadToken(); err != nil {
			return at, fieldText(appendNames(field, path[i:]))
		}
		var found bool
		if kind == '[' {
			found = s.toIndex(dec, step, &at)
			field = append(append(append(field, '['), step...), ']')
		} else {
			found = s.toName(dec, step, &at)
			field = appendNames(field, path[i:i+1])
		}
		if !found {
			return at, fieldText(appendNames(field, path[i+1:]))
		}
	}
	return at, fieldText(field)
}

// toIndex moves dec, in an array, to its element at index step, and sets
// *at to where it starts; it reports whether there is one.
func (s *source) toIndex(dec *jsontext.Decoder, step string, at *int) bool {
	idx, err := strconv.Atoi(step)
	if err != nil || idx < 0 {
		return false
	}
	for i := 0; ; i++ {
		if k := dec.PeekKind(); k == ']' || k == 0 {
			return false
		}
		if i == idx {
			*at = skipSeparators(s.json, int(dec.InputOffset()))
			return true
		}
		if dec.SkipValue() != nil {
			return false
		}
	}
}

// toName moves dec, in an object, to the value of its member named step,
// and sets *at to where the member's name starts; it reports whether there
// is one.
func (s *source) toName(dec *jsontext.Decoder, step string, at *int) bool {
	for dec.PeekKind() == '"' {
		start := skipSeparators(s.json, int(dec.InputOffset()))
		name, err := dec.ReadToken()
		if err != nil {
			return false
		}
		if name.String() == step {
			*at = start
			return true
		}
		if dec.SkipValue() != nil {
			return false
		}
	}
	return false
}

// appendNames writes names after a field, joined by dots, each cut to
// maxField bytes: a key of a file may be megabytes long.
func appendNames(field []byte, names []string) []byte {
	for _, n := range names {
		if len(field) > 0 {
			field = append(field, '.')
		}
		field = append(field, safetext.Cut(n, maxField)...)
	}
	return field
}

// maxField bounds a field kept in an Error (Error clips what it prints
// further, and escapes it).
const maxField = 1024

// fieldText is a field as an Error keeps it.
func fieldText(field []byte) string { return safetext.Cut(string(field), maxField) }

// fieldOf writes a JSON Pointer as a field: a member of an array (kind
// of the container the i-th step is in is '[') as an index in brackets,
// any other as a name after a dot.
func fieldOf(p jsontext.Pointer, kind func(i int) jsontext.Kind) string {
	var b []byte
	i := 0
	for tok := range p.Tokens() {
		if kind(i) == '[' {
			b = append(append(append(b, '['), tok...), ']')
		} else {
			b = appendNames(b, []string{tok})
		}
		i++
	}
	return fieldText(b)
}

// locateField returns where the value a check's field names starts (at
// its name, in an object); where no value is so named, where the deepest
// value on the field starts (the first, of several as deep). A name may
// hold dots and brackets (a map's key such as "kills.total" or "a[1]"), so
// the field is not split: one pass through the JSON follows each value's
// path as text beside the field's, a name matching where the field's rest
// (past a '.') starts with it up to a '.', a '[' or its end, and an index
// as "[1]" or, past a '.', "1". A field ending in a dot names an empty key.
func (s *source) locateField(field string) int {
	dec := jsontext.NewDecoder(bytes.NewBuffer(s.json), jsontext.AllowDuplicateNames(true))
	defer func() { s.walked += int(dec.InputOffset()) }()
	type frame struct {
		kind  jsontext.Kind
		off   int // how much of the field the container's path is; -1: off it
		index int
	}
	var stack []frame
	at, off := 0, 0 // where the next value's member or element starts, and its path's share of the field
	deepest, deepestAt := 0, 0
	for {
		if off == len(field) {
			return at
		}
		if off > deepest {
			deepest, deepestAt = off, at
		}
		if kind := dec.PeekKind(); off < 0 || kind != '{' && kind != '[' {
			if dec.SkipValue() != nil {
				return deepestAt
			}
		} else {
			if _, err := dec.ReadToken(); err != nil {
				return deepestAt
			}
			stack = append(stack, frame{kind: kind, off: off})
		}
		for {
			if len(stack) == 0 {
				return deepestAt
			}
			top := &stack[len(stack)-1]
			if k := dec.PeekKind(); k == '}' || k == ']' {
				if _, err := dec.ReadToken(); err != nil {
					return deepestAt
				}
				stack = stack[:len(stack)-1]
				continue
			} else if k == 0 {
				return deepestAt
			}
			at = skipSeparators(s.json, int(dec.InputOffset()))
			if top.kind == '{' {
				tok, err := dec.ReadToken()
				if err != nil {
					return deepestAt
				}
				off = matchStep(field, top.off, tok.String(), "")
			} else {
				n := strconv.Itoa(top.index)
				off = matchStep(field, top.off, n, "["+n+"]")
				top.index++
			}
			break
		}
	}
}

// matchStep returns how much of field a step goes to from a value whose
// path is field[:off] (-1: off the field, as the result is when it leaves
// it): a member named name, or an array's element written "[i]" (brackets)
// or as its index name past a '.'.
func matchStep(field string, off int, name, brackets string) int {
	if off < 0 {
		return -1
	}
	rest := field[off:]
	if brackets != "" && strings.HasPrefix(rest, brackets) {
		return off + len(brackets)
	}
	if off > 0 {
		var ok bool
		if rest, ok = strings.CutPrefix(rest, "."); !ok {
			return -1
		}
		off++
	}
	if !strings.HasPrefix(rest, name) || len(name) < len(rest) && rest[len(name)] != '.' && rest[len(name)] != '[' {
		return -1
	}
	return off + len(name)
}

// line returns the line of what starts at off in the source's JSON: for
// YAML, the line it was written from; for JSON, 1 and one for each line
// break before it (a LF, a CRLF or a bare CR), counted once.
func (s *source) line(off int) int {
	if s.yaml {
		i := sort.Search(len(s.marks), func(i int) bool { return int(s.marks[i].at) > off })
		if i == 0 {
			return 0
		}
		return int(s.marks[i-1].line)
	}
	text := s.json[:min(max(off, 0), len(s.json))]
	s.walked += len(text)
	return lineOf(text)
}

// lineOf returns the line that starts after text: 1 and one for each line
// break in it (a LF, a CRLF or a bare CR), counted once.
func lineOf(text []byte) int {
	return 1 + bytes.Count(text, []byte{'\n'}) + bytes.Count(text, []byte{'\r'}) - bytes.Count(text, []byte("\r\n"))
}
