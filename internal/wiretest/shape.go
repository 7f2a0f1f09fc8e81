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
// reported: nothing recorded gives its shape). A null field in want
// matches any type (the service sends null for absent values); a null
// element matches a null element, and an array recorded with nulls only
// matches any. Fields only got has are reported too, as "+" lines, so a
// mock cannot invent fields the service
// does not send; so are a name given twice in one object (a decoder keeps
// one of them, unseen) and a name that is not valid text (its escapes
// decode to U+FFFD, which would match another such name). The result reads
// like go-cmp's: "" when the shapes agree, else one line per difference,
// "-" for what the recording has and "+" for what got has, the names
// escaped as safetext.Clip escapes them; past 100 differences it counts
// the rest. Its work grows with the bodies' sizes times the number of
// distinct shapes a recorded array holds.
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
	return d.text()
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
					d.add(func() string { return sign + fp.String() + ": named twice" })
				}
				if !utf8.ValidString(name) || strings.ContainsRune(name, utf8.RuneError) {
					d.add(func() string { return sign + fp.String() + ": a name that is not valid text" })
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

// maxLines is how many differences ShapeDiff spells; it counts the rest.
const maxLines = 100

// differ gathers the differences, and remembers how many there are
// between a recorded value and a got one, so that an array's element is
// held to each recorded shape once however deep it lies.
type differ struct {
	lines []string
	more  int
	costs map[[2]*node]int
	sets  map[*node]*elements
}

// add notes a difference, spelling it only while under maxLines.
func (d *differ) add(line func() string) {
	if len(d.lines) >= maxLines {
		d.more++
		return
	}
	d.lines = append(d.lines, safetext.Cut(line(), 2000))
}

func (d *differ) text() string {
	if d.more > 0 {
		d.lines = append(d.lines, "… and "+strconv.Itoa(d.more)+" more differences")
	}
	return strings.Join(d.lines, "\n")
}

// elements is what a recorded array's elements allow: their distinct
// shapes (by hash, and in order), and whether one is null.
type elements struct {
	byShape map[uint64]*node
	shapes  []*node
	null    bool
}

func (d *differ) elementsOf(want *node) *elements {
	if e, ok := d.sets[want]; ok {
		return e
	}
	e := &elements{byShape: map[uint64]*node{}}
	for _, w := range want.arr {
		if w.kind == "null" {
			e.null = true
		} else if _, ok := e.byShape[w.shape]; !ok {
			e.byShape[w.shape] = w
			e.shapes = append(e.shapes, w)
		}
	}
	if d.sets == nil {
		d.sets = map[*node]*elements{}
	}
	d.sets[want] = e
	return e
}

// closest returns the recorded element g differs least from, and by how
// many differences; nil when g matches without one (a null element where
// the recording has one; any element where it has only nulls).
func (d *differ) closest(e *elements, g *node) (*node, int) {
	if g.kind == "null" && e.null || len(e.shapes) == 0 {
		return nil, 0
	}
	if w, ok := e.byShape[g.shape]; ok && d.cost(w, g) == 0 {
		return w, 0
	}
	var best *node
	least := 0
	for _, w := range e.shapes {
		if n := d.cost(w, g); best == nil || n < least {
			best, least = w, n
			if n == 0 {
				break
			}
		}
	}
	return best, least
}

// cost counts the differences between want and got, once for a pair.
func (d *differ) cost(want, got *node) int {
	if want.kind == "null" {
		return 0
	}
	if want.kind != got.kind {
		return 1
	}
	key := [2]*node{want, got}
	if n, ok := d.costs[key]; ok {
		return n
	}
	n := 0
	switch want.kind {
	case "object":
		for k, w := range want.obj {
			if g, ok := got.obj[k]; ok {
				n += d.cost(w, g)
			} else {
				n++
			}
		}
		for k := range got.obj {
			if _, ok := want.obj[k]; !ok {
				n++
			}
		}
	case "array":
		switch {
		case len(got.arr) == 0:
		case len(want.arr) == 0:
			n = 1
		default:
			e := d.elementsOf(want)
			for _, g := range got.arr {
				_, m := d.closest(e, g)
				n += m
			}
		}
	}
	if d.costs == nil {
		d.costs = map[[2]*node]int{}
	}
	d.costs[key] = n
	return n
}

func (d *differ) walk(p *path, want, got *node) {
	if d.cost(want, got) == 0 {
		return
	}
	if want.kind != got.kind {
		d.add(func() string {
			at := p.String()
			return "-" + at + ": " + want.kind + "\n+" + at + ": " + got.kind
		})
		return
	}
	switch want.kind {
	case "object":
		d.object(p, want.obj, got.obj)
	case "array":
		d.array(p, want, got.arr)
	}
}

func (d *differ) object(p *path, want, got map[string]*node) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		if !ok {
			d.add(func() string { return "-" + field(p, k).String() + ": " + want[k].kind })
			continue
		}
		d.walk(field(p, k), want[k], g)
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			d.add(func() string { return "+" + field(p, k).String() + ": " + got[k].kind })
		}
	}
}

// array checks every element of got against the recorded elements: it must
// have the shape of one of them (a recording lists one element per shape
// the service sends, such as an online and an offline presence record). An
// empty got matches: how many elements there are is a value, not a shape;
// an element of a recorded empty array has no shape to match; a null
// element matches where the recording has one, and a recording of nulls
// only matches any. The differences of an element that matches none are
// those from the recorded shape it differs least from.
func (d *differ) array(p *path, want *node, got []*node) {
	if len(want.arr) == 0 {
		d.add(func() string {
			return "+" + element(p, 0).String() + ": " + got[0].kind + " (the recording's array is empty: no element's shape is recorded)"
		})
		return
	}
	e := d.elementsOf(want)
	for i, g := range got {
		if w, n := d.closest(e, g); n > 0 {
			d.walk(element(p, i), w, g)
		}
	}
}
