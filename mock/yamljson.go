package mock

import (
	"encoding/json"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlWriter writes a YAML document as JSON, for the one strict decoder,
// marking the YAML line of every value and key at the offset where it is
// written: the marks take 8 bytes a value, where a map from each field's
// path to its line took the path's length (quadratic in the nesting), and
// the YAML nodes can go as soon as the JSON is written.
type yamlWriter struct {
	json  []byte
	marks []lineMark
	path  []yamlStep // the path to the value being written, for errors
}

// yamlStep is a key (idx < 0) or an index on a path.
type yamlStep struct {
	key string
	idx int
}

// value writes the JSON of n, at depth in the document (the document's own
// value is at 1).
func (w *yamlWriter) value(n *yaml.Node, depth int) *FileError {
	if depth > maxNesting {
		return &FileError{Line: n.Line, Reason: "nested too deep"}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			w.json = append(w.json, "null"...)
			return nil
		}
		return w.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		return &FileError{Line: n.Line, Field: w.field(), Reason: "aliases are not read"}
	}
	w.mark(n.Line)
	switch n.Kind {
	case yaml.SequenceNode:
		w.json = append(w.json, '[')
		for i, c := range n.Content {
			if i > 0 {
				w.json = append(w.json, ',')
			}
			w.path = append(w.path, yamlStep{idx: i})
			if err := w.value(c, depth+1); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
		w.json = append(w.json, ']')
		return nil
	case yaml.MappingNode:
		return w.mapping(n, depth)
	}
	return w.scalar(n)
}

// mapping writes a mapping as an object, refusing a key named twice.
func (w *yamlWriter) mapping(n *yaml.Node, depth int) *FileError {
	seen := make(map[string]bool, len(n.Content)/2)
	w.json = append(w.json, '{')
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		w.path = append(w.path, yamlStep{key: k.Value, idx: -1})
		if seen[k.Value] {
			return &FileError{Line: k.Line, Field: w.field(), Reason: "named twice"}
		}
		seen[k.Value] = true
		if i > 0 {
			w.json = append(w.json, ',')
		}
		w.mark(k.Line) // a member's line is its key's
		w.json = appendJSON(w.json, k.Value)
		w.json = append(w.json, ':')
		if err := w.value(n.Content[i+1], depth+1); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	w.json = append(w.json, '}')
	return nil
}

// scalar writes a scalar as YAML resolves it: a string, a number, true,
// false or null (a time as RFC 3339 text).
func (w *yamlWriter) scalar(n *yaml.Node) *FileError {
	// The common forms are written here: a decoder per scalar would cost
	// more than the rest of the reading together.
	switch tag := n.ShortTag(); {
	case tag == "!!str":
		w.json = appendJSON(w.json, n.Value)
		return nil
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
		return &FileError{Line: n.Line, Field: w.field(), Reason: "not a value"}
	}
	if _, isMap := v.(map[string]any); isMap {
		return &FileError{Line: n.Line, Field: w.field(), Reason: "not a value"}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return &FileError{Line: n.Line, Field: w.field(), Reason: "not a document of JSON's kinds"}
	}
	w.json = append(w.json, b...)
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

// field is the path to the value being written, as an error's field.
func (w *yamlWriter) field() string {
	p := make([]any, len(w.path))
	for i, s := range w.path {
		if p[i] = s.key; s.idx >= 0 {
			p[i] = s.idx
		}
	}
	return fieldText(p)
}

// appendJSON appends s as a JSON string.
func appendJSON(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
