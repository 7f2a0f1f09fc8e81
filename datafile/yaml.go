package datafile

import (
	"bytes"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"

	"github.com/xblgo/fgrl/internal/safetext"
)

// A YAML file is written as JSON and read as JSON is, so that both forms
// say the same: each value is what yaml.v3 reads it as (a timestamp kept
// as its text, as yaml.v3 reads one into a string), and what JSON has no
// form for is refused rather than rewritten: anchors and aliases, merge
// keys, keys that are not text, tags beyond YAML's core schema (!!binary
// among them), and a second document.

// lineMark says that the JSON from at on was written from YAML line line.
// Both fit in 32 bits: the JSON of a file of MaxYAMLBytes is at most six
// times as long (a character escaped as \u0000).
type lineMark struct{ at, line int32 }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// fromYAML turns the YAML document of data into the source's JSON and
// notes its lines.
func (s *source) fromYAML(data []byte) *Error {
	if err := yamlBreaks(data); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, next yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return &Error{Reason: "empty: no document"}
		}
		return yamlError(err)
	}
	switch err := dec.Decode(&next); {
	case err == io.EOF:
	case err != nil:
		return yamlError(err)
	default:
		return &Error{Line: next.Line, Reason: "more after the document"}
	}
	w := yamlWriter{json: make([]byte, 0, len(data))}
	if err := w.value(&doc); err != nil {
		return err
	}
	s.json, s.yaml, s.marks = w.json, true, w.marks
	return nil
}

// yamlBreaks refuses NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH
// SEPARATOR (U+2029) written as themselves. YAML 1.2 breaks lines at CR and
// LF only, as Error.Line counts them; yaml.v3 also breaks at these three,
// so each would shift the line of every later error, fold a quoted value
// ('x<NEL>y' read as "x y", where JSON keeps the character) or end a plain
// one. Escaped in a double-quoted string (\N, \L, \P) they are read as
// the characters.
func yamlBreaks(data []byte) *Error {
	at, name := -1, ""
	for _, b := range []struct{ seq, name string }{{"\u0085", "NEL (U+0085)"}, {"\u2028", "U+2028"}, {"\u2029", "U+2029"}} {
		if i := bytes.Index(data, []byte(b.seq)); i >= 0 && (at < 0 || i < at) {
			at, name = i, b.name
		}
	}
	if at < 0 {
		return nil
	}
	return &Error{Line: lineOf(data[:at]), Reason: name + " in YAML, which yaml.v3 reads as a line break: escape it in a double-quoted string, or write the file in JSON"}
}

// yamlError is the Error of yaml.v3's error, its line taken from the
// message.
func yamlError(err error) *Error {
	msg := err.Error()
	e := &Error{Reason: "not YAML: " + safetext.Reason(strings.TrimPrefix(msg, "yaml: "), 100)}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Reason = "not YAML: " + safetext.Reason(msg[len(m[0]):], 100)
	}
	return e
}

// yamlWriter writes a YAML document as JSON, marking the YAML line of
// every value and key at the offset where it is written: 8 bytes a value,
// and the YAML nodes can go as soon as the JSON is written.
type yamlWriter struct {
	json  []byte
	marks []lineMark
	path  []string // the path to the value being written, for errors
	index []bool   // whether each step of path is an index
}

// coreTags are the tags of YAML's core schema: the only ones a file may
// name.
var coreTags = []string{"!!str", "!!int", "!!float", "!!bool", "!!null", "!!seq", "!!map"}

// value writes the JSON of n.
func (w *yamlWriter) value(n *yaml.Node) *Error {
	switch {
	case n.Kind == yaml.AliasNode || n.Anchor != "":
		return w.errorAt(n, "anchors and aliases are not read: write the value out")
	case n.Style&yaml.TaggedStyle != 0 && !slices.Contains(coreTags, n.ShortTag()):
		return w.errorAt(n, "a tag other than YAML's core ones ("+safetext.Clip(n.ShortTag(), 40)+") is not read")
	case n.Kind == yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &Error{Reason: "empty: no document"}
		}
		return w.value(n.Content[0])
	}
	w.mark(n.Line)
	switch n.Kind {
	case yaml.SequenceNode:
		w.json = append(w.json, '[')
		for i, c := range n.Content {
			if i > 0 {
				w.json = append(w.json, ',')
			}
			w.push(strconv.Itoa(i), true)
			if err := w.value(c); err != nil {
				return err
			}
			w.pop()
		}
		w.json = append(w.json, ']')
		return nil
	case yaml.MappingNode:
		return w.mapping(n)
	}
	return w.scalar(n)
}

// mapping writes a mapping as an object; its keys are text. A key named
// twice is left to the JSON's read, which refuses it.
func (w *yamlWriter) mapping(n *yaml.Node) *Error {
	w.json = append(w.json, '{')
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		switch {
		case k.Kind == yaml.AliasNode || k.Anchor != "":
			return w.errorAt(k, "anchors and aliases are not read: write the value out")
		case k.Kind != yaml.ScalarNode:
			return w.errorAt(k, "a key is text, not a list or a mapping")
		case k.ShortTag() == "!!merge":
			return w.errorAt(k, "merge keys (<<) are not read: write the members out")
		case k.Style&yaml.TaggedStyle != 0 && !slices.Contains(coreTags, k.ShortTag()):
			return w.errorAt(k, "a tag other than YAML's core ones ("+safetext.Clip(k.ShortTag(), 40)+") is not read")
		}
		if i > 0 {
			w.json = append(w.json, ',')
		}
		w.mark(k.Line) // a member's line is its key's
		w.push(k.Value, false)
		if err := w.appendString(k); err != nil {
			return err
		}
		w.json = append(w.json, ':')
		if err := w.value(n.Content[i+1]); err != nil {
			return err
		}
		w.pop()
	}
	w.json = append(w.json, '}')
	return nil
}

// scalar writes a scalar as yaml.v3 reads it: a string (a timestamp as its
// text), a number, true, false or null.
func (w *yamlWriter) scalar(n *yaml.Node) *Error {
	// The common forms are written here: a decoder per scalar would cost
	// more than the rest of the reading together.
	switch tag := n.ShortTag(); {
	case tag == "!!str", tag == "!!timestamp":
		return w.appendString(n)
	case tag == "!!null":
		w.json = append(w.json, "null"...)
		return nil
	case tag == "!!bool" && (n.Value == "true" || n.Value == "false"):
		w.json = append(w.json, n.Value...)
		return nil
	case tag == "!!int" && plainDecimal(n.Value):
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			w.json = strconv.AppendInt(w.json, i, 10)
			return nil
		}
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return w.errorAt(n, "not a value")
	}
	switch v.(type) {
	case bool, int, int64, uint64, float64:
	default:
		return w.errorAt(n, "not a value")
	}
	if f, ok := v.(float64); ok {
		// A float in exponent form, which JSON reads as a float too: 1.0
		// is refused where a whole number belongs, in YAML as in JSON,
		// rather than rewritten as 1.
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return w.errorAt(n, "not a value JSON can hold")
		}
		w.json = strconv.AppendFloat(w.json, f, 'e', -1, 64)
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return w.errorAt(n, "not a value JSON can hold")
	}
	w.json = append(w.json, b...)
	return nil
}

// appendString writes a scalar's text as a JSON string.
func (w *yamlWriter) appendString(n *yaml.Node) *Error {
	q, err := jsontext.AppendQuote(w.json, n.Value)
	if err != nil {
		return w.errorAt(n, "not UTF-8")
	}
	w.json = q
	return nil
}

// plainDecimal reports whether s is an integer in decimal digits with no
// sign but '-' and no leading zero, which YAML reads as base 10.
func plainDecimal(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || d[0] == '0' && len(d) > 1 {
		return false
	}
	return strings.Trim(d, "0123456789") == ""
}

// mark notes that what is written next comes from line.
func (w *yamlWriter) mark(line int) {
	w.marks = append(w.marks, lineMark{at: int32(len(w.json)), line: int32(line)})
}

func (w *yamlWriter) push(step string, index bool) {
	w.path, w.index = append(w.path, step), append(w.index, index)
}

func (w *yamlWriter) pop() { w.path, w.index = w.path[:len(w.path)-1], w.index[:len(w.index)-1] }

// errorAt is an error at n, at the path being written.
func (w *yamlWriter) errorAt(n *yaml.Node, reason string) *Error {
	var b []byte
	for i, step := range w.path {
		if w.index[i] {
			b = append(append(append(b, '['), step...), ']')
		} else {
			b = appendNames(b, w.path[i:i+1])
		}
	}
	return &Error{Line: n.Line, Field: fieldText(b), Reason: reason}
}
