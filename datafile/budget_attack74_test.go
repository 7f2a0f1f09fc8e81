package datafile_test

import (
	"bytes"
	"errors"
	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
)

var attack74Kind = &datafile.Kind{Name: "atk", MaxBytes: 16 << 20}

// attack74Read reads in into an any and has the check name field.
func attack74Read(t *testing.T, in []byte, field string) *datafile.Error {
	t.Helper()
	var v any
	err := attack74Kind.Read(bytes.NewReader(in), &v, func() error {
		return &datafile.Error{Field: field, Reason: "bad"}
	})
	var e *datafile.Error
	if !errors.As(err, &e) {
		t.Fatalf("%.200q: %v, want a *datafile.Error", in, err)
	}
	return e
}

// attack74Tree writes the JSON of an object at which a field "a.a.a…" has k
// steps left, one member a line. live: the value the field names is in
// it, down a member "a" at each level (recorded in path: the line of each
// "a" on the way, then the value's); every other member is a key of j
// a's ("a.a", "a.a.a"), which the field starts with, leading to an
// object where it goes no further.
func attack74Tree(b *strings.Builder, k int, live bool, path *[]int) {
	line := func() int { return strings.Count(b.String(), "\n") + 1 }
	b.WriteString("{")
	first := true
	sep := func() {
		if !first {
			b.WriteString(",")
		}
		first = false
		b.WriteString("\n")
	}
	low := 1
	if live {
		low = 2
	}
	for j := k - 1; j >= low; j-- {
		sep()
		b.WriteString("\"" + strings.TrimSuffix(strings.Repeat("a.", j), ".") + "\": ")
		attack74Tree(b, k-j, false, nil)
	}
	if live {
		sep()
		*path = append(*path, line())
		b.WriteString("\"a\": ")
		if k == 1 {
			b.WriteString("-1")
		} else {
			attack74Tree(b, k-1, true, path)
		}
	}
	b.WriteString("}")
}

// attack74Chain writes levels objects, each the member "a" of the last, each
// holding first a member "a.a" (an empty object) then "a", each on a
// line of its own, the deepest
// "a" holding -1; path gets the line of each "a".
func attack74Chain(levels int) ([]byte, []int) {
	var b strings.Builder
	var path []int
	for i := range levels {
		if i >= levels-2 {
			// From here "a.a" would complete the field itself: a value
			// the field names as well as the nested one (a dead end no
			// more), so the last levels have none.
			b.WriteString("{\n\"b\": {},\n")
		} else {
			b.WriteString("{\n\"a.a\": {},\n")
		}
		path = append(path, strings.Count(b.String(), "\n")+1)
		b.WriteString("\"a\": ")
	}
	b.WriteString("-1" + strings.Repeat("}", levels))
	return []byte(b.String()), path
}

// TestAttack74BudgetHidesValueOnUnrelatedLine: a field whose value is in the
// file, down a member "a" at each level, next to keys the field also
// starts with ("a.a", "a.a.a") that lead nowhere, tried first since they
// are longer: past the 64 walks, the value is not found, and the line
// given is not that of the value, nor of any member on its way, but of a
// dead end: eight steps (an object of 7 levels of such keys, 128 of
// them, 1.3 KB) give line 64, a member "a" inside the dead end "a.a";
// forty (a chain of "a.a": {} beside each "a", 41 levels) give line 64,
// the 32nd "a.a", an empty object.
//
// Promised (package doc, step 3): "what it finds names a field, and is
// given the line that field is on"; (the brief's reading of locate.go)
// where no value has it, "where the deepest value on the field starts"
// — never a line off the field's way.
func TestAttack74BudgetHidesValueOnUnrelatedLine(t *testing.T) {
	type tc struct {
		name  string
		in    []byte
		field string
		path  []int
	}
	var cases []tc
	{
		var b strings.Builder
		var path []int
		attack74Tree(&b, 8, true, &path)
		cases = append(cases, tc{"tree of 8 steps", []byte(b.String()), strings.TrimSuffix(strings.Repeat("a.", 8), "."), path})
	}
	{
		in, path := attack74Chain(40)
		cases = append(cases, tc{"chain of 40 levels", in, strings.TrimSuffix(strings.Repeat("a.", 40), "."), path})
	}
	for _, c := range cases {
		e := attack74Read(t, c.in, c.field)
		want := c.path[len(c.path)-1]
		if e.Line == want {
			continue
		}
		on := slices.Contains(c.path, e.Line)
		t.Errorf("%s (%d bytes, %d lines): field %q, whose value is on line %d: given line %d (on the value's way: %v; its way: %v)",
			c.name, len(c.in), strings.Count(string(c.in), "\n")+1, c.field, want, e.Line, on, c.path)
	}
}

// TestAttack74ExactKeyAfter64PrefixKeys: an object whose members are "1",
// "1.1", … (64 keys, each a shorter start of the next) and, last, the
// key of 65 such parts holding the value a check names: the field is
// exactly a member's name, but the walk keeps only the first 64 members
// the field starts with and never sees it; the line given is another
// key's.
//
// Promised (package doc, step 3): "is given the line that field is on";
// (locateField) "its next step is a member whose name the rest of the
// field starts with ..., the longest first".
func TestAttack74ExactKeyAfter64PrefixKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\"m\": {")
	for n := 1; n <= 65; n++ {
		if n > 1 {
			b.WriteString(",")
		}
		v := "0"
		if n == 65 {
			v = "-1"
		}
		b.WriteString("\n\"" + strings.TrimSuffix(strings.Repeat("1.", n), ".") + "\": " + v)
	}
	b.WriteString("}}")
	field := "m." + strings.TrimSuffix(strings.Repeat("1.", 65), ".")
	e := attack74Read(t, []byte(b.String()), field)
	if e.Line != 66 {
		t.Errorf("field %q, a key of its own on line 66: given line %d", field, e.Line)
	}
}

// held: one name spelt twice (an escape, "a" and "\u0061"; in YAML
// "a" and "\x61", a plain and a quoted 1) is refused as a name twice
// before any check runs, so no two members tie; a key written with escapes
// ("\u0061.b", "a\u002eb") is found by the check's field, which names it
// as decoded. Promised (package doc, step 1): "its syntax (a key named
// twice ...)"; (step 3) "is given the line that field is on".
func TestAttack74EscapedSpellingsNoTie(t *testing.T) {
	for _, in := range []string{
		"{\"m\": {\"a\": 1,\n \"\\u0061\": 2}}",
		"{\"m\": {\"a.b\": 1,\n \"a\\u002eb\": 2}}",
		"m:\n  a: 1\n  \"\\x61\": 2\n",
		"m:\n  1: 1\n  \"1\": 2\n",
		"m:\n  a.b: 1\n  'a.b': 2\n",
	} {
		e := attack74Read(t, []byte(in), "m.a")
		if e.Reason == "bad" || e.Line != 2 && e.Line != 3 {
			t.Errorf("%q: %v (line %d), want refused: a name twice", in, e, e.Line)
		}
	}
	for _, c := range []struct {
		in, field string
		line      int
	}{
		{"{\"m\": {\"a\": {\"x\": 1},\n \"\\u0061.b\": -1}}", "m.a.b", 2},
		{"{\"m\": {\"a\": {\"b\": 1},\n \"a\\u002eb\": {\n\"c\": -1}}}", "m.a.b.c", 3},
		{"{\"m\": {\"a\\u002eb\": {\"x\": 1},\n \"a\": {\"b\": {\n\"c\": -1}}}}", "m.a.b.c", 3},
		{"m:\n  a: {x: 1}\n  \"\\x61.b\": -1\n", "m.a.b", 3},
	} {
		if e := attack74Read(t, []byte(c.in), c.field); e.Line != c.line {
			t.Errorf("%q, field %q on line %d: %v: line %d", c.in, c.field, c.line, e, e.Line)
		}
	}
}

// held: arrays of objects with dotted keys, the index written "[1]" and
// ".1" alike, mixed, with the longer key tried first and the shorter
// when the longer leads nowhere (an index past a shorter array, a key
// holding an array where the field goes into an object), in JSON and
// YAML. Promised (package doc, step 3): "is given the line that field is
// on"; (Error.Field) "indices in brackets".
func TestAttack74IndexFormsDottedKeys(t *testing.T) {
	for _, c := range []struct {
		in    string
		line  int
		field []string
	}{
		{"{\"a\": [\n{\"b.c\": 1},\n{\"b\": {\"c\": 1},\n \"b.c\": [0,\n -1]}]}", 5, []string{"a[1].b.c[1]", "a.1.b.c.1", "a.1.b.c[1]", "a[1].b.c.1"}},
		{"{\"a\": [{\"b.c\": [0],\n \"b\": {\"c\": [0,\n -1]}}]}", 3, []string{"a[0].b.c[1]", "a.0.b.c.1"}},
		{"{\"a\": [{\"b.c\": [0],\n \"b\": {\"c\": {\n\"1\": -1}}}]}", 3, []string{"a[0].b.c.1"}},
		// No value has ".x": the deepest values on the field are "c.d" (line 2)
		// and "c" then "d" (line 3), as deep by the field's text: the first
		// is given (locateField: "the first, of several as deep").
		{"{\"a.b\": [[0],\n [0, {\"c.d\": 1,\n \"c\": {\"d\": -1}}]]}", 2, []string{"a.b[1][1].c.d.x", "a.b.1.1.c.d.x"}},
		{"{\"a.b\": [[0],\n [0, {\"c.d\": 1,\n \"c\": {\"d\": -1}}]]}", 2, []string{"a.b[1][1].c.d", "a.b.1.1.c.d"}},
		{"{\"a\": {\"b\": [0]},\n \"a.b\": [0,\n -1]}", 3, []string{"a.b[1]", "a.b.1"}},
		{"a:\n  - b.c: 1\n  - b:\n      c: 1\n    b.c:\n      - 0\n      - -1\n", 7, []string{"a[1].b.c[1]", "a.1.b.c.1"}},
	} {
		for _, f := range c.field {
			if e := attack74Read(t, []byte(c.in), f); e.Line != c.line {
				t.Errorf("%q, field %q on line %d: %v: line %d", c.in, f, c.line, e, e.Line)
			}
		}
	}
}

// attack74WorldJSON and attack74LimitsJSON are datafile's internal test's files
// (atk_walks_test.go), written again here for the kinds' own readers.
func attack74WorldJSON(titles int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"accounts\": [\n    {\n      \"xuid\": \"2533274800000001\",\n      \"gamertag\": \"Big\",\n      \"titles\": [\n")
	for j := range titles {
		if j > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("        {\n          \"titleId\": \"" + strconv.Itoa(1000000+j) + "\",\n")
		b.WriteString("          \"lastPlayed\": \"2024-05-01T10:00:00Z\",\n")
		ach := "1"
		if j == titles-1 {
			ach = "6"
		}
		b.WriteString("          \"achievements\": {\n            \"" + ach + "\": 100\n          },\n")
		b.WriteString("          \"stats\": {\n")
		for s := range 100 {
			if s > 0 {
				b.WriteString(",\n")
			}
			b.WriteString("            \"weapon." + strconv.Itoa(s) + ".kills\": " + strconv.Itoa(s*7))
		}
		b.WriteString("\n          }\n        }")
	}
	b.WriteString("\n      ]\n    }\n  ]\n}\n")
	return []byte(b.String())
}

func attack74LimitsJSON(n int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"revision\": \"2020\",\n  \"source\": \"test\",\n  \"rules\": [\n    {\n      \"service\": \"social\",\n      \"burst\": 10,\n      \"sustain\": 30,\n      \"hosts\": [\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		h := "host" + strconv.Itoa(i) + ".title.example.xboxlive.com"
		if i == n-1 {
			h = "not a host"
		}
		b.WriteString("        \"" + h + "\"")
	}
	b.WriteString("\n      ]\n    }\n  ]\n}\n")
	return []byte(b.String())
}

// held: the world and limits files of TestAttack74PlacementPassesRealisticFiles
// are refused by mock.ReadWorld and limits.Read with the fields that test
// places, on the lines of their values (the time each takes logged, and
// that of the same file without the error). Promised (mock.ReadWorld):
// "What is wrong is a *datafile.Error naming the line and field."
func TestAttack74RealisticFilesFields(t *testing.T) {
	world := attack74WorldJSON(600)
	lim := attack74LimitsJSON(20000)
	for _, c := range []struct {
		name, field, value string
		data               []byte
		read               func([]byte) error
		good               []byte
	}{
		{"world", "accounts[0].titles[599].achievements.6", "\"6\"", world,
			func(b []byte) error { _, err := mock.ReadWorld(bytes.NewReader(b)); return err },
			bytes.Replace(world, []byte("\"6\": 100"), []byte("\"5\": 100"), 1)},
		{"limits", "rules[0].hosts[19999]", "\"not a host\"", lim,
			func(b []byte) error { _, err := limits.Read(bytes.NewReader(b)); return err },
			bytes.Replace(lim, []byte("\"not a host\""), []byte("\"last.example.com\""), 1)},
	} {
		t0 := time.Now()
		err := c.read(c.data)
		bad := time.Since(t0)
		t0 = time.Now()
		if err := c.read(c.good); err != nil {
			t.Fatalf("%s without the error: %v", c.name, err)
		}
		good := time.Since(t0)
		var e *datafile.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want a *datafile.Error", c.name, err)
		}
		want := bytes.Count(c.data[:bytes.LastIndex(c.data, []byte(c.value))], []byte("\n")) + 1
		t.Logf("%s: %d bytes: %v in %v (the same file without the error: %v)", c.name, len(c.data), e, bad, good)
		if e.Field != c.field || e.Line != want {
			t.Errorf("%s: %v: field %q line %d, want %q line %d", c.name, e, e.Field, e.Line, c.field, want)
		}
	}
}

// attack74Deep is a JSON file of 61 nested objects, each the member "k" of the
// last, the deepest holding members filling about n bytes and, last, "x":
// every walk of a check naming "k.k…k.x" reads the whole file. It
// returns the file and the field.
func attack74Deep(n int) ([]byte, string) {
	const depth = 60
	var b strings.Builder
	b.Grow(n + 1024)
	b.WriteString(strings.Repeat("{\"k\":\n", depth) + "{")
	for i := 0; b.Len() < n; i++ {
		b.WriteString("\"p" + strconv.Itoa(i) + "\": [1, {\"q\": 2}],\n")
	}
	b.WriteString("\"x\": -1}" + strings.Repeat("}", depth))
	return []byte(b.String()), strings.Repeat("k.", depth) + "x"
}

// held: a file built to have every one of the walks read it whole (61
// nested objects, all the bytes in the deepest) is placed in time and
// memory in proportion to its length: 10 times the bytes take at most
// 30 times the time (the best of two) and allocate at most twice the
// file more than the read alone; the line is the value's. The time
// against that of the read without a check is logged. Promised (package
// doc): "Reading a file takes time and memory linear in its length."
func TestAttack74MostWalksLinearTime(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	run := func(n int) (time.Duration, time.Duration, int64, int) {
		in, field := attack74Deep(n)
		want := bytes.Count(in, []byte("\n")) + 1
		best, base := time.Duration(1<<62), time.Duration(1<<62)
		var extra int64
		for range 2 {
			var v any
			var m0, m1, m2 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			t0 := time.Now()
			if err := attack74Kind.Read(bytes.NewReader(in), &v, nil); err != nil {
				t.Fatal(err)
			}
			base = min(base, time.Since(t0))
			runtime.ReadMemStats(&m1)
			plain := m1.TotalAlloc - m0.TotalAlloc
			runtime.GC()
			runtime.ReadMemStats(&m1)
			t0 = time.Now()
			e := attack74Read(t, in, field)
			best = min(best, time.Since(t0))
			runtime.ReadMemStats(&m2)
			extra = int64(m2.TotalAlloc-m1.TotalAlloc) - int64(plain)
			if e.Line != want {
				t.Fatalf("%d bytes: %v: line %d, want %d", len(in), e, e.Line, want)
			}
		}
		return best, base, extra, len(in)
	}
	d0, b0, a0, n0 := run(1 << 20 / 10) // 8 MiB when helper 188 ran it
	d1, b1, a1, n1 := run(1 << 20)
	t.Logf("%d bytes: %v (no check %v, %d bytes more allocated); %d bytes: %v (no check %v, %d bytes more allocated)", n0, d0, b0, a0, n1, d1, b1, a1)
	if a1 > 2*int64(n1) {
		t.Errorf("placing the field allocated %d bytes more than the read alone for %d bytes", a1, n1)
	}
	// The time, judged by scaletest.Measure: both sizes in turn, on the
	// wall and CPU clocks (CI runs this beside its fuzzing: 32x for 10x
	// by the best of two above, the read without a check 16x, 2026-12-07).
	small, field := attack74Deep(1 << 20 / 10)
	large, _ := attack74Deep(1 << 20)
	if g := scaletest.Measure(3, func() { attack74Read(t, small, field) }, func() { attack74Read(t, large, field) }); g.Ratio() > 30*float64(len(large))/float64(len(small))/10 {
		t.Errorf("%d and %d bytes: %v: more than 30 times the time for 10 times the bytes", len(small), len(large), g)
	}
}
