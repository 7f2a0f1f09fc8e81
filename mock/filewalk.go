package mock

import (
	"bytes"
	"encoding/json"
)

// A file's JSON is walked, value by value, to tell where a value is and
// what path leads to it: to refuse nesting deeper than maxNesting, and to
// give an error its field and line. Each walk reads the text once, in time
// linear in its length, whatever the text is; a walk never builds a path
// unless asked, so a value costs the same at any depth.

// jsonWalk is a walk through JSON text. It never fails: on text that is
// not JSON it goes on as best it can, so that the depth check can run
// before the decoder has judged the text.
type jsonWalk struct {
	data []byte
	// stack holds the containers of the current value, outermost first.
	stack []jsonFrame
	// at is where the current value starts, or its key in an object;
	// start is where its own text starts.
	at, start int
}

// jsonFrame is a container being walked and its current member.
type jsonFrame struct {
	obj, wantKey bool
	key          []byte // an object's current key, as written, quotes and all
	idx          int    // an array's current index
}

// walk calls visit at the start of every value, in order, until visit
// returns false. It returns how many bytes it read.
func (w *jsonWalk) walk(visit func() bool) int {
	data, keyAt := w.data, 0
	for i := 0; i < len(data); {
		switch data[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
			continue
		case ']', '}':
			if n := len(w.stack); n > 0 {
				w.stack = w.stack[:n-1]
				w.next()
			}
			i++
			continue
		}
		if n := len(w.stack); n > 0 && w.stack[n-1].wantKey {
			end := stringEnd(data, i)
			w.stack[n-1].key, w.stack[n-1].wantKey, keyAt = data[i:end], false, i
			i = end
			continue
		}
		w.at, w.start = i, i
		if n := len(w.stack); n > 0 && w.stack[n-1].obj {
			w.at = keyAt
		}
		if !visit() {
			return i
		}
		switch data[i] {
		case '{':
			w.stack = append(w.stack, jsonFrame{obj: true, wantKey: true})
			i++
		case '[':
			w.stack = append(w.stack, jsonFrame{})
			i++
		case '"':
			i = stringEnd(data, i)
			w.next()
		default:
			for i++; i < len(data) && !endsScalar(data[i]); i++ {
			}
			w.next()
		}
	}
	return len(data)
}

// next moves the innermost container past its current member.
func (w *jsonWalk) next() {
	if n := len(w.stack); n > 0 {
		if w.stack[n-1].obj {
			w.stack[n-1].wantKey = true
		} else {
			w.stack[n-1].idx++
		}
	}
}

// step returns the d-th component of the current value's path: a key in
// an object, an index in an array.
func (w *jsonWalk) step(d int) any {
	if f := w.stack[d]; f.obj {
		return unquote(f.key)
	}
	return w.stack[d].idx
}

// isStep reports whether the d-th component of the current value's path
// is c, without building it.
func (w *jsonWalk) isStep(d int, c any) bool {
	switch f := w.stack[d]; c := c.(type) {
	case int:
		return !f.obj && f.idx == c
	case string:
		if !f.obj {
			return false
		}
		if bytes.IndexByte(f.key, '\\') < 0 { // as written: compare without a copy
			return len(f.key) >= 2 && string(f.key[1:len(f.key)-1]) == c
		}
		return unquote(f.key) == c
	}
	return false
}

// path returns the path of the current value: keys and indices.
func (w *jsonWalk) path() []any {
	p := make([]any, len(w.stack))
	for d := range w.stack {
		p[d] = w.step(d)
	}
	return p
}

// unquote returns the text of a JSON string as written.
func unquote(q []byte) string {
	var s string
	if json.Unmarshal(q, &s) != nil {
		return string(q)
	}
	return s
}

// endsScalar reports whether c ends a number or a literal.
func endsScalar(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ':', ']', '}':
		return true
	}
	return false
}

// stringEnd returns the offset after the string that starts at i.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(data)
}

// tooDeep returns where the first value nested deeper than maxNesting
// starts, or -1.
func (s *source) tooDeep() int {
	w := &jsonWalk{data: s.json}
	deep := -1
	s.scanned += w.walk(func() bool {
		if len(w.stack) >= maxNesting {
			deep = w.start
		}
		return deep < 0
	})
	return deep
}

// offsetOf returns where the value at path starts (its key, in an object),
// or where the deepest value on path starts when path goes further than
// the JSON.
func (s *source) offsetOf(path []any) int {
	w := &jsonWalk{data: s.json}
	best, on := 0, 0 // on: how many of the current value's containers are on path
	s.scanned += w.walk(func() bool {
		switch d := len(w.stack); {
		case d < on: // out of the deepest container on path: nothing later is on it
			return false
		case d > on || d > 0 && !w.isStep(d-1, path[d-1]):
			return true
		case d == len(path):
			best = w.at
			return false
		default:
			best = w.at
			if c := w.data[w.start]; c == '{' || c == '[' {
				on = d + 1
			}
			return true
		}
	})
	return best
}

// pathAt returns the path of the last value that starts before off.
func (s *source) pathAt(off int) []any {
	w := &jsonWalk{data: s.json}
	last := -1
	s.scanned += w.walk(func() bool {
		if w.at < off {
			last = w.at
		}
		return w.at < off
	})
	var p []any
	w = &jsonWalk{data: s.json}
	s.scanned += w.walk(func() bool {
		if w.at == last {
			p = w.path()
		}
		return p == nil
	})
	return p
}

// keyPath returns the path of the first member whose key is name, or nil.
func (s *source) keyPath(name string) []any {
	w := &jsonWalk{data: s.json}
	var p []any
	s.scanned += w.walk(func() bool {
		if n := len(w.stack); n > 0 && w.isStep(n-1, name) {
			p = w.path()
		}
		return p == nil
	})
	return p
}
