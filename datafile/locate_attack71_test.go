package datafile_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

var attack71Kind = &datafile.Kind{Name: "atk", MaxBytes: 16 << 20}

// attack71Read reads in into an any and has the check name field.
func attack71Read(t *testing.T, in []byte, field string) *datafile.Error {
	t.Helper()
	var v any
	err := attack71Kind.Read(bytes.NewReader(in), &v, func() error {
		return &datafile.Error{Field: field, Reason: "bad"}
	})
	var e *datafile.Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: %v, want a *datafile.Error", in, err)
	}
	return e
}

// TestAttack71LocateNoBacktrack: a field that only one value of the file has
// (a key "a" holding "b.c", next to a key "a.b" holding no "c"; an
// array "a" whose element 0 holds "b", next to a key "a[0]" holding no
// "b"; a key "a.b" holding a number where "a" holds "b" and in it "c") is
// given the line of the longer key, where no such value is, in JSON and
// YAML, whichever key comes first: the walk takes the longest key the
// field starts with and does not try the shorter when the longer leads
// nowhere.
//
// Promised (datafile package doc, step 3): "The kind's own check runs;
// what it finds names a field, and is given the line that field is on."
func TestAttack71LocateNoBacktrack(t *testing.T) {
	for _, c := range []struct {
		in, field string
		line      int // of the one value the field names
	}{
		{"{\"m\": {\n \"a\": {\"b.c\": -1},\n \"a.b\": {\"x\": 1}}}", "m.a.b.c", 2},
		{"{\"m\": {\n \"a\": {\"b\": {\"c\": -1}},\n \"a.b\": {\"x\": 1}}}", "m.a.b.c", 2},
		{"{\"m\": {\n \"a\": {\"b\": {\"c\": -1}},\n \"a.b\": 5}}", "m.a.b.c", 2},
		{"{\"m\": {\n \"a\": [{\"b\": -1}],\n \"a[0]\": {\"x\": 1}}}", "m.a[0].b", 2},
		{"m:\n  a: {\"b.c\": -1}\n  a.b: {x: 1}\n", "m.a.b.c", 2},
		{"{\"m\": {\n \"a.b\": {\"x\": 1},\n \"a\": {\"b.c\": -1}}}", "m.a.b.c", 3},
		// two levels down: "a" then "b.c" then "d", past "a.b" and "b.c.d"
		{"{\"m\": {\n \"a\": {\"b.c\": {\"d\": -1}, \"b\": {\"x\": 1}},\n \"a.b\": {\"x\": 1}}}", "m.a.b.c.d", 2},
	} {
		e := attack71Read(t, []byte(c.in), c.field)
		if e.Line != c.line {
			t.Errorf("%q, field %q (one value in the file so named, on line %d): %v: line %d", c.in, c.field, c.line, e, e.Line)
		}
	}
}

// held: a field whose keys are prefixes of each other in both orders at
// several levels, dotted keys holding arrays and arrays holding dotted
// keys, an empty key at several levels, and a field going further than
// the file (the deepest value on it) are each given their line, in JSON
// and YAML. Promised (package doc, step 3): "is given the line that field
// is on"; (Error.Field) "keys joined by dots, indices in brackets".
func TestAttack71LocatePrefixKeysLevels(t *testing.T) {
	for _, c := range []struct {
		in, field string
		line      int
	}{
		{"{\"a\": {\"b\": 1},\n\"a.b\": {\"c\": 1, \"c.d\": {\n\"e\": 1, \"e.f\": -1}}}", "a.b.c.d.e.f", 3},
		{"{\"a.b\": {\"c.d\": {\"e.f\": 1,\n\"e\": -1}, \"c\": 1}, \"a\": 1}", "a.b.c.d.e", 2},
		{"{\"a\": 1,\n\"a.b\": [1,\n -1]}", "a.b[1]", 3},
		{"{\"a\": 1,\n\"a.b\": [1,\n -1]}", "a.b.1", 3},
		{"{\"a.b[0]\": 1, \"a.b\": [1,\n {\"x.y\":\n -1}]}", "a.b[1].x.y", 2},
		{"{\"a.b\": [1], \"a.b[0]\":\n -1}", "a.b[0]", 1},
		{"{\"a\": {\"\": {\"\": 1,\n \"x\": -1}}}", "a..x", 2},
		{"{\"a\": {\"x\": 1,\n \"\": {\"y\": 1,\n \"\": -1}}}", "a..", 3},
		{"{\"a\": {\"x\": 1,\n \"b\": 5}}", "a.b.c.d", 2},
		{"{\"a\": [1,\n [2,\n 3]]}", "a[1][7]", 2},
		{"{\"a\": [1,\n [2,\n 3]]}", "a[1][1]", 3},
		{"a:\n  b: 1\n  a.b:\n    - 1\n    - x.y: 1\n      x: -1\n", "a.a.b[1].x", 6},
		{"a:\n  \"\":\n    \"\": 1\n    z: -1\n", "a..z", 4},
		{"a:\n  x: 1\n  b: 5\n", "a.b.c.d", 3},
		{"[{\"x\": 1},\n {\"x.y\": 1,\n \"x\": -1}]", "[1].x", 3},
		{"[{\"x\": 1},\n {\"x\": 1,\n \"x.y\": -1}]", "1.x.y", 3},
	} {
		e := attack71Read(t, []byte(c.in), c.field)
		if e.Line != c.line {
			t.Errorf("%q, field %q on line %d: %v: line %d", c.in, c.field, c.line, e, e.Line)
		}
	}
}

// held: YAML anchors, aliases and merge keys are refused with the line
// they are on. Promised (yaml.go, the package's YAML reading): "anchors and
// aliases, merge keys ... is refused rather than rewritten"; (package doc)
// an *Error "naming the file, line and field".
func TestAttack71YAMLAnchorsRefusedWithLine(t *testing.T) {
	for _, in := range []string{
		"m:\n  a: 1\n  b: &x 2\n",
		"m:\n  a: 1\n  <<: {c: 1}\n",
		"m:\n  a: 1\n  &k b: 2\n",
		"m:\n  a: 1\n  b: [1, &x 2, *x]\n",
	} {
		e := attack71Read(t, []byte(in), "m.a")
		if e.Line != 3 || !strings.Contains(e.Reason, "not read") {
			t.Errorf("%q: %v: line %d", in, e, e.Line)
		}
	}
}
