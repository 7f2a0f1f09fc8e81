package datafile_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/datafile"
)

// attack67Doc is a file whose map's keys are the file's own (stats by name,
// achievements by id), and a map of maps.
type attack67Doc struct {
	M  map[string]int            `json:"m"`
	MM map[string]map[string]int `json:"mm"`
	S  string                    `json:"s"`
}

var attack67Kind = &datafile.Kind{Name: "attack67", MaxBytes: 16 << 20}

// attack67Read reads in and has a check name the first negative value it
// finds by the field a check writes for it: "m."+key, "mm."+key+"."+key2.
func attack67Read(t *testing.T, in []byte) *datafile.Error {
	t.Helper()
	var d attack67Doc
	err := attack67Kind.Read(bytes.NewReader(in), &d, func() error {
		for k, v := range d.M {
			if v < 0 {
				return &datafile.Error{Field: "m." + k, Reason: "negative"}
			}
		}
		for k, inner := range d.MM {
			for k2, v := range inner {
				if v < 0 {
					return &datafile.Error{Field: "mm." + k + "." + k2, Reason: "negative"}
				}
			}
		}
		return nil
	})
	var e *datafile.Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: %v, want a *datafile.Error", in, err)
	}
	return e
}

// TestAttack67CheckFieldKeyAfterItsPrefixKey: a map holding a key ("a",
// "kills", achievement "1") and, after it, a key that is that key and a
// dot or a bracket and more ("a.b", "kills.total", "1.5", "a[1]"): a check
// naming the latter ("m.1.5", as the commit's own example, an achievement
// id 1.5) is given the line of the former, the first member whose name the
// field starts with, up to a '.': the field's walk takes "1" and stops at
// its number. The same holds in YAML. The key with the dot placed before
// its prefix key is found.
//
// Promised (datafile package doc, step 3): "The kind's own check runs;
// what it finds names a field, and is given the line that field is on."
// and (Error.Line) "Line is the line the problem is on".
func TestAttack67CheckFieldKeyAfterItsPrefixKey(t *testing.T) {
	for _, k := range []struct{ short, long string }{
		{"a", "a.b"}, {"kills", "kills.total"}, {"1", "1.5"}, {"a", "a[1]"}, {"x.y", "x.y.z"},
	} {
		for form, in := range map[string]string{
			"json": "{\"m\": {\n \"" + k.short + "\": 1,\n \"" + k.long + "\": -1}}",
			"yaml": "m:\n  \"" + k.short + "\": 1\n  \"" + k.long + "\": -1\n",
		} {
			e := attack67Read(t, []byte(in))
			if e.Line != 3 {
				t.Errorf("%s: key %q on line 3 after key %q on line 2: %v: line %d", form, k.long, k.short, e, e.Line)
			}
		}
	}
	// Achievement ids as YAML writes them by hand, unquoted.
	in := "m:\n  1: 1\n  1.5: -1\n"
	if e := attack67Read(t, []byte(in)); e.Field != "m.1.5" || e.Line != 3 {
		t.Errorf("%q: key 1.5 on line 3: %v: field %q line %d", in, e, e.Field, e.Line)
	}
}

// TestAttack67CheckFieldNestedKeyAfterItsPrefixKey: a map of maps whose outer
// keys are "a" (line 2) and "a.b" (line 3): a check naming "mm.a.b.c" (the
// member "c" of "a.b", on line 3) is given line 2, where "a" starts: the
// walk takes "a", finds no "b.c" in it, and stops there without trying
// "a.b".
//
// Promised (datafile package doc, step 3): "what it finds names a field,
// and is given the line that field is on."
func TestAttack67CheckFieldNestedKeyAfterItsPrefixKey(t *testing.T) {
	in := "{\"mm\": {\n \"a\": {\"x\": 1},\n \"a.b\": {\"c\": -1}}}"
	e := attack67Read(t, []byte(in))
	if e.Field != "mm.a.b.c" {
		t.Fatalf("field %q", e.Field)
	}
	if e.Line != 3 {
		t.Errorf("%q: member c of key \"a.b\" on line 3: %v: line %d", in, e, e.Line)
	}
}

// TestAttack67CheckFieldEmptyKey: a map's empty key "" (which
// map[string]int reads), named by a check as the package writes it
// itself ("m." + "": keys joined by dots), is given the line of the map,
// not of its member: the walk drops the dot and ends before the member.
//
// Promised (datafile package doc, step 3): "what it finds names a field,
// and is given the line that field is on."; (Error.Field) "keys joined by
// dots".
func TestAttack67CheckFieldEmptyKey(t *testing.T) {
	for form, in := range map[string]string{
		"json": "{\"m\": {\n \"x\": 1,\n \"\": -1}}",
		"yaml": "m:\n  x: 1\n  \"\": -1\n",
	} {
		e := attack67Read(t, []byte(in))
		if e.Field != "m." {
			t.Fatalf("%s: field %q", form, e.Field)
		}
		if e.Line != 3 {
			t.Errorf("%s: empty key on line 3: %v: line %d", form, e, e.Line)
		}
	}
}

// held: keys that are not a prefix up to a '.' or '[' of the key named
// ("ab" before "a", "a.bc" before "a.b"), a key named after a key that is
// a prefix of it with no dot ("a" then "ab"), keys beginning with '.' or
// '[' or holding ']' or escapes (JSON "\u002e", YAML "\x2e"), and a key
// holding a dot placed before its prefix key, are each given their own
// line, in JSON and YAML. Promised (package doc, step 3): "is given the
// line that field is on."
func TestAttack67CheckFieldKeysOwnLine(t *testing.T) {
	for _, c := range []struct{ other, named, spelt string }{
		{"ab", "a", "a"}, {"a.bc", "a.b", "a.b"}, {"a", "ab", "ab"}, {"x", ".a", ".a"}, {"x", "[0]", "[0]"},
		{"x", "a]b", "a]b"}, {"a", "a.b", `a\u002eb`}, {"a.b.c", "a.b", "a.b"}, {"a[", "a[1]", "a[1]"},
	} {
		in := "{\"m\": {\n \"" + c.other + "\": 1,\n \"" + c.spelt + "\": -1}}"
		if c.spelt != c.named { // the escape: JSON only; the other key goes after
			in = "{\"m\": {\n \"b\": 1,\n \"" + c.spelt + "\": -1,\n \"" + c.other + "\": 1}}"
		}
		if e := attack67Read(t, []byte(in)); e.Line != 3 {
			t.Errorf("json %q: %v: line %d, want 3", in, e, e.Line)
		}
		if c.spelt == c.named {
			y := "m:\n  \"" + c.other + "\": 1\n  \"" + c.named + "\": -1\n"
			if e := attack67Read(t, []byte(y)); e.Line != 3 {
				t.Errorf("yaml %q: %v: line %d, want 3", y, e, e.Line)
			}
		}
	}
	// The dotted key first, its prefix key after it.
	in := "{\"m\": {\n \"x\": 1,\n \"a.b\": -1,\n \"a\": 1}}"
	if e := attack67Read(t, []byte(in)); e.Line != 3 {
		t.Errorf("%q: %v: line %d, want 3", in, e, e.Line)
	}
	y := "m:\n  x: 1\n  \"a\\x2eb\": -1\n  a: 1\n"
	if e := attack67Read(t, []byte(y)); e.Line != 3 || e.Field != "m.a.b" {
		t.Errorf("%q: %v: line %d, want 3", y, e, e.Line)
	}
}

// held: placing a check's field takes time in proportion to the file,
// for a field of many dots (a key of hundreds of KiB of "a.") and for a
// map of many members whose names share a long start with the field
// ("b.b.b…q", each compared up to its 'q'): ten times the bytes take at most 30 times the time (the best of
// three). Promised (package doc): "Reading a file takes time and memory
// linear in its length."
func TestAttack67CheckFieldLinearTime(t *testing.T) {
	dots := func(n int) []byte {
		k := strings.Repeat("a.", n/4)
		return []byte("{\"m\": {\"" + k + "\": 1, \"" + k + "a\": -1}}")
	}
	prefixes := func(n int) []byte {
		// keys "bq", "b.bq", "b.b.bq"... share a start with the named
		// key, which is last.
		var b strings.Builder
		b.WriteString("{\"m\": {")
		long := strings.Repeat("b.", 2000) + "z"
		for i := 0; b.Len() < n; i++ {
			b.WriteString("\"" + long[:(i%1000)*2+1] + "q\": 1,\n")
		}
		b.WriteString("\"" + long + "\": -1}}")
		return []byte(b.String())
	}
	for name, gen := range map[string]func(int) []byte{"dots": dots, "prefix keys": prefixes} {
		best := func(in []byte) time.Duration {
			d := time.Duration(1 << 62)
			for range 3 {
				t0 := time.Now()
				if e := attack67Read(t, in); e.Line == 0 {
					t.Fatalf("%s: no line: %v", name, e)
				}
				d = min(d, time.Since(t0))
			}
			return d
		}
		small, large := gen(200<<10), gen(2000<<10)
		d0, d1 := best(small), best(large)
		if float64(d1) > 30*float64(d0)*float64(len(large))/float64(len(small))/10 {
			t.Errorf("%s: %d bytes %v, %d bytes %v", name, len(small), d0, len(large), d1)
		}
	}
}
