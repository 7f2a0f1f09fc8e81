package wiretest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ShapeDiff compares the shape of got with the recorded body want: every
// field of want must be in got with the same JSON type, recursively, and
// every element of an array in got must have the shape of one of the
// recorded elements. A null in want matches any type (the service sends null for
// absent values). Fields only got has are reported too, as "+" lines, so a
// mock cannot invent fields the service does not send. The result reads like
// go-cmp's: "" when the shapes agree, else one line per difference, "-" for
// what the recording has and "+" for what got has.
func ShapeDiff(want, got []byte) string {
	w, err := decode(want)
	if err != nil {
		return "-want is not JSON: " + err.Error()
	}
	g, err := decode(got)
	if err != nil {
		return "+got is not JSON: " + err.Error()
	}
	var d differ
	d.walk("$", w, g)
	return strings.Join(d.lines, "\n")
}

// decode reads one JSON value, keeping numbers as json.Number: a shape
// check cares that a value is a number, not whether it fits a float64.
func decode(b []byte) (any, error) {
	if !json.Valid(b) {
		return nil, errors.New("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

type differ struct{ lines []string }

func (d *differ) add(format string, args ...any) {
	d.lines = append(d.lines, fmt.Sprintf(format, args...))
}

func (d *differ) walk(path string, want, got any) {
	if want == nil {
		return
	}
	if kind(want) != kind(got) {
		d.add("-%s: %s\n+%s: %s", path, kind(want), path, kind(got))
		return
	}
	switch w := want.(type) {
	case map[string]any:
		d.object(path, w, got.(map[string]any))
	case []any:
		d.array(path, w, got.([]any))
	}
}

func (d *differ) object(path string, want, got map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		if !ok {
			d.add("-%s.%s: %s", path, k, kind(want[k]))
			continue
		}
		d.walk(path+"."+k, want[k], g)
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			d.add("+%s.%s: %s", path, k, kind(got[k]))
		}
	}
}

// array checks every element of got against the recorded elements: it must
// have the shape of one of them (a recording lists one element per shape
// the service sends, such as an online and an offline presence record). An
// empty array matches: how many elements there are is a value, not a shape.
func (d *differ) array(path string, want, got []any) {
	for i, g := range got {
		var best []string
		for _, w := range want {
			if w == nil {
				continue
			}
			var e differ
			e.walk(fmt.Sprintf("%s[%d]", path, i), w, g)
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

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
