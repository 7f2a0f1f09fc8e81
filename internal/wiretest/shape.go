package wiretest

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xblgo/fgrl/internal/safetext"
)

// ShapeDiff compares the shape of got with the recorded body want: every
// field of want must be in got with the same JSON type, recursively, and
// every element of an array in got must have the shape of one of the
// recorded elements (so an element of an array the recording has empty is
// reported: nothing recorded gives its shape). A null in want matches any
// type (the service sends null for absent values). Fields only got has are
// reported too, as "+" lines, so a mock cannot invent fields the service
// does not send; so are a name given twice in one object (a decoder keeps
// one of them, unseen) and a name that is not valid text (its escapes
// decode to U+FFFD, which would match another such name). The result reads
// like go-cmp's: "" when the shapes agree, else one line per difference,
// "-" for what the recording has and "+" for what got has, the names
// escaped as safetext.Clip escapes them. Its work grows with the bodies'
// sizes times the number of distinct shapes a recorded array holds.
func ShapeDiff(want, got []byte) string {
	var d differ
	w, err := decode(want, "-", &d)
	if err != nil {
		return "-want is not JSON: " + safetext.Clip(err.Error(), 200)
	}
	g, err := decode(got, "+", &d)
	if err != nil {
		return "+got is not JSON: " + safetext.Clip(err.Error(), 200)
	}
	d.walk(nil, w, g)
	return strings.Join(d.lines, "\n")
}

// node is a decoded JSON value: its kind, its fields or elements, and a
// hash of its shape (the kind; an object's names and their values' shapes;
// the set of an array's element shapes).
type node struct {
	kind  string // null, boolean, number, string, array, object
	obj   map[string]*node
	arr   []*node
	shape uint64
}

// path is where a value is, built as the walk goes down and spelt only
// for a line of the diff.
type path struct {
	parent *path
	name   string
	index  int // when name is "" and the parent is an array
}

func (p *path) String() string {
	var parts []*path
	for q := p; q != nil; q = q.parent {
		parts = append(parts, q)
	}
	var b strings.Builder
	b.WriteString("$")
	for i := len(parts) - 1; i >= 0; i-- {
		if q := parts[i]; q.name != "" || q.index < 0 {
			b.WriteString("." + safetext.Clip(q.name, 100))
		} else {
			b.WriteString("[" + strconv.Itoa(q.index) + "]")
		}
	}
	return b.String()
}

// field and element make a child path; a field's index is -1, so that an
// empty name still spells as a field.
func field(p *path, name string) *path { return &path{parent: p, name: name, index: -1} }
func element(p *path, i int) *path     { return &path{parent: p, index: i} }

// decode reads one JSON value, noting on d (with sign) the names given
// twice and the names that are not valid text.
func decode(b []byte, sign string, d *differ) (*node, error) {
	if !json.Valid(b) { // also bounds the nesting (10,000 levels)
		return nil, errors.New("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return value(dec, nil, sign, d)
}

func value(dec *json.Decoder, p *path, sign string, d *differ) (*node, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	h := fnv.New64a()
	n := &node{}
	switch t := t.(type) {
	case json.Delim:
		if t == '{' {
			n.kind, n.obj = "object", map[string]*node{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				name, _ := k.(string)
				fp := field(p, name)
				if _, twice := n.obj[name]; twice {
					d.add(sign + fp.String() + ": named twice")
				}
				if !utf8.ValidString(name) || strings.ContainsRune(name, utf8.RuneError) {
					d.add(sign + fp.String() + ": a name that is not valid text")
				}
				if n.obj[name], err = value(dec, fp, sign, d); err != nil {
					return nil, err
				}
			}
			io.WriteString(h, "{")
			for _, k := range slices.Sorted(maps.Keys(n.obj)) {
				io.WriteString(h, strconv.Quote(k))
				h.Write(strconv.AppendUint(nil, n.obj[k].shape, 16))
			}
		} else {
			n.kind, n.arr = "array", []*node{}
			for i := 0; dec.More(); i++ {
				e, err := value(dec, element(p, i), sign, d)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, e)
			}
			io.WriteString(h, "[")
			shapes := make([]uint64, len(n.arr))
			for i, e := range n.arr {
				shapes[i] = e.shape
			}
			slices.Sort(shapes)
			for _, s := range slices.Compact(shapes) {
				h.Write(strconv.AppendUint(nil, s, 16))
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	case nil:
		n.kind = "null"
	case bool:
		n.kind = "boolean"
	case json.Number:
		n.kind = "number"
	case string:
		n.kind = "string"
	}
	io.WriteString(h, n.kind)
	n.shape = h.Sum64()
	return n, nil
}

type differ struct{ lines []string }

func (d *differ) add(line string) { d.lines = append(d.lines, line) }

func (d *differ) walk(p *path, want, got *node) {
	if want.kind == "null" {
		return
	}
	if want.kind != got.kind {
		at := p.String()
		d.add("-" + at + ": " + want.kind + "\n+" + at + ": " + got.kind)
		return
	}
	switch want.kind {
	case "object":
		d.object(p, want.obj, got.obj)
	case "array":
		d.array(p, want.arr, got.arr)
	}
}

func (d *differ) object(p *path, want, got map[string]*node) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		if !ok {
			d.add("-" + field(p, k).String() + ": " + want[k].kind)
			continue
		}
		d.walk(field(p, k), want[k], g)
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			d.add("+" + field(p, k).String() + ": " + got[k].kind)
		}
	}
}

// array checks every element of got against the recorded elements: it must
// have the shape of one of them (a recording lists one element per shape
// the service sends, such as an online and an offline presence record). An
// empty got matches: how many elements there are is a value, not a shape;
// an element of a recorded empty array has no shape to match. An element
// of a recorded shape is found by its hash (and then walked, once, to be
// sure); any other is walked against each distinct recorded shape, and
// the closest one's differences reported.
func (d *differ) array(p *path, want, got []*node) {
	if len(got) == 0 {
		return
	}
	if len(want) == 0 {
		d.add("+" + element(p, 0).String() + ": " + got[0].kind + " (the recording's array is empty: no element's shape is recorded)")
		return
	}
	byShape := map[uint64]*node{}
	var shapes []*node
	for _, w := range want {
		if _, ok := byShape[w.shape]; !ok && w.kind != "null" {
			byShape[w.shape] = w
			shapes = append(shapes, w)
		}
	}
	if len(shapes) == 0 {
		return // recorded nulls only: a null matches any type
	}
	for i, g := range got {
		ep := element(p, i)
		if w, ok := byShape[g.shape]; ok {
			var e differ
			if e.walk(ep, w, g); len(e.lines) == 0 {
				continue
			}
		}
		var best []string
		for _, w := range shapes {
			var e differ
			e.walk(ep, w, g)
			if best == nil || len(e.lines) < len(best) {
				best = e.lines
			}
			if len(best) == 0 {
				break
			}
		}
		d.lines = append(d.lines, best...)
	}
}
