package mock

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzJSONWalk: a walk reads any input once and ends; on JSON it visits
// every value the decoder sees, each at its own path: offsetOf finds it
// where the walk did, pathAt finds the path back, keyPath finds a member
// by its key, and the depth check refuses exactly the documents nested
// deeper than maxNesting.
func FuzzJSONWalk(f *testing.F) {
	f.Add([]byte(`{"accounts": [{"xuid": "1", "friends": ["2", "3"]}, {"xuid": "2", "a\"b": {"c\\d": [1, true, null]}}]}`))
	f.Add([]byte(`[[[[[[]]]]], {"": {"": 1}}, "x\u0041\\", -1.5e3]`))
	f.Add([]byte(`{"a": [1, {"b": "unclosed`))
	f.Add(bytes.Repeat([]byte("["), 100))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &source{json: data}
		deep := s.tooDeep()
		if s.scanned > len(data) {
			t.Fatalf("the depth check read %d bytes of %d", s.scanned, len(data))
		}
		if !json.Valid(data) {
			return
		}
		if want := depthOf(t, data) > maxNesting; (deep >= 0) != want {
			t.Fatalf("tooDeep = %d, want a refusal: %v", deep, want)
		}
		if deep >= 0 {
			return
		}
		w := &jsonWalk{data: data}
		values := 0
		w.walk(func() bool {
			values++
			p := w.path()
			if got := s.offsetOf(p); got != w.at {
				t.Fatalf("offsetOf(%v) = %d, want %d", p, got, w.at)
			}
			if got := s.pathAt(w.at + 1); !cmp.Equal(got, p) {
				t.Fatalf("pathAt(%d) = %v, want %v", w.at+1, got, p)
			}
			if n := len(p); n > 0 {
				if name, ok := p[n-1].(string); ok {
					if got := s.keyPath(name); len(got) == 0 || got[len(got)-1] != name {
						t.Fatalf("keyPath(%q) = %v", name, got)
					}
				}
			}
			return values < 200
		})
		if want := tokenValues(t, data); values < 200 && values != want {
			t.Fatalf("walked %d values, the decoder sees %d", values, want)
		}
	})
}

// depthOf returns how deep valid JSON nests, by the decoder's tokens: the
// document's value is at 1.
func depthOf(t *testing.T, data []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		default:
			deepest = max(deepest, depth+1)
		}
	}
}

// tokenValues counts the values of valid JSON, by the decoder's tokens:
// every token but a closing one and an object's keys.
func tokenValues(t *testing.T, data []byte) int {
	t.Helper()
	type frame struct{ obj, key bool } // key: an object's next token is a key
	var open []frame
	dec := json.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			open = open[:len(open)-1]
			continue
		}
		if k := len(open); k > 0 && open[k-1].obj {
			if open[k-1].key = !open[k-1].key; !open[k-1].key {
				continue // a key
			}
		}
		n++
		if d, ok := tok.(json.Delim); ok {
			open = append(open, frame{obj: d == '{', key: d == '{'})
		}
	}
}
