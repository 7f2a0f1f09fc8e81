package datafile

import (
	"bytes"
	"slices"
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
	return s.toIndexAt(dec, 0, step, at)
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
// value on the field starts. A name may hold dots and brackets (a map's key
// such as "kills.total" or "a[1]"), so the field is not split first: in an
// object its next step is a member whose name the rest of the field starts
// with, up to a '.', a '[' or its end, the longest first, and a shorter
// one when the longer leads to no value; in an array, an index ("[1]", or
// "1" after a dot). A field ending in a dot names an empty key. The walks
// tried are bounded (maxWalks), so a file of keys that are each other's
// prefixes is read a bounded number of times.
func (s *source) locateField(field string) int {
	w := fieldWalk{s: s, budget: maxWalks, deepest: -1}
	if at, ok := w.from(0, field, field != "", 0, 0); ok {
		return at
	}
	return w.at
}

// maxWalks bounds the values locateField reads into.
const maxWalks = 64

// fieldWalk is one locateField: its budget of walks, and the deepest
// value it reached.
type fieldWalk struct {
	s       *source
	budget  int
	deepest int
	at      int
}

// from walks rest (more: a step is left, perhaps an empty key) from the
// value that starts at base, whose member or element starts at at, depth
// steps down the field; it returns where the value the whole field names
// starts, and whether there is one.
func (w *fieldWalk) from(base int, rest string, more bool, at, depth int) (int, bool) {
	if !more {
		return at, true
	}
	if depth > w.deepest {
		w.deepest, w.at = depth, at
	}
	if w.budget <= 0 {
		return 0, false
	}
	w.budget--
	s := w.s
	dec := jsontext.NewDecoder(bytes.NewBuffer(s.json[base:]), jsontext.AllowDuplicateNames(true))
	kind := dec.PeekKind()
	if kind != '[' && kind != '{' {
		return 0, false
	}
	if _, err := dec.ReadToken(); err != nil {
		return 0, false
	}
	if kind == '[' {
		idx, after := cutIndex(rest)
		var next int
		ok := s.toIndexAt(dec, base, idx, &next)
		s.walked += int(dec.InputOffset())
		if !ok {
			return 0, false
		}
		after, more = nextStep(after)
		return w.from(next, after, more, next, depth+1)
	}
	members := s.prefixMembers(dec, base, rest)
	s.walked += int(dec.InputOffset())
	for _, m := range members {
		after, more := nextStep(rest[m.n:])
		if a, ok := w.from(m.value, after, more, m.start, depth+1); ok {
			return a, true
		}
	}
	return 0, false
}

// nextStep returns a field's rest after a step: past the dot that ends
// it, more saying a step follows (one ending in a dot names an empty key).
func nextStep(rest string) (string, bool) {
	if r, ok := strings.CutPrefix(rest, "."); ok {
		return r, true
	}
	return rest, rest != ""
}

// member is an object's member whose name a field's rest starts with: where
// its name and its value start, and the name's length.
type member struct{ start, value, n int }

// prefixMembers reads an object of the JSON from base (dec past its '{')
// for the members whose names rest starts with, up to a '.', a '[' or
// rest's end, and returns them longest first (in the file's order among
// equals).
func (s *source) prefixMembers(dec *jsontext.Decoder, base int, rest string) []member {
	var ms []member
	for dec.PeekKind() == '"' {
		start := skipSeparators(s.json, base+int(dec.InputOffset()))
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		if name := tok.String(); strings.HasPrefix(rest, name) && (len(name) == len(rest) || rest[len(name)] == '.' || rest[len(name)] == '[') && len(ms) < maxWalks {
			ms = append(ms, member{start, skipSeparators(s.json, base+int(dec.InputOffset())), len(name)})
		}
		if dec.SkipValue() != nil {
			break
		}
	}
	slices.SortStableFunc(ms, func(a, b member) int { return b.n - a.n })
	return ms
}

// cutIndex cuts an array's index off the front of a field's rest: "[1]…"
// or "1…" (up to a '.' or a '[').
func cutIndex(rest string) (idx, after string) {
	if r, ok := strings.CutPrefix(rest, "["); ok {
		idx, after, _ = strings.Cut(r, "]")
		return idx, after
	}
	end := strings.IndexAny(rest, ".[")
	if end < 0 {
		end = len(rest)
	}
	return rest[:end], rest[end:]
}

// toIndexAt moves dec, in an array of the JSON from base, to its element
// at index step, and sets *at to where it starts in the JSON; it reports
// whether there is one.
func (s *source) toIndexAt(dec *jsontext.Decoder, base int, step string, at *int) bool {
	idx, err := strconv.Atoi(step)
	if err != nil || idx < 0 {
		return false
	}
	for i := 0; ; i++ {
		if k := dec.PeekKind(); k == ']' || k == 0 {
			return false
		}
		if i == idx {
			*at = skipSeparators(s.json, base+int(dec.InputOffset()))
			return true
		}
		if dec.SkipValue() != nil {
			return false
		}
	}
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
