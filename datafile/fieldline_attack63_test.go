package datafile_test

import (
	"bytes"
	"errors"
	"github.com/xblgo/fgrl/internal/racebuild"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

// attack63MapDoc has a map whose keys are the file's: stats by name, say.
type attack63MapDoc struct {
	M map[string]int `json:"m"`
	S string         `json:"s"`
}

var attack63MapKind = &datafile.Kind{Name: "atkmap", MaxBytes: 16 << 20}

func attack63ReadMap(in []byte) (*datafile.Error, error) {
	var d attack63MapDoc
	err := attack63MapKind.Read(bytes.NewReader(in), &d, func() error {
		for k, v := range d.M {
			if v < 0 {
				return &datafile.Error{Field: "m." + k, Reason: "negative"}
			}
		}
		return nil
	})
	var e *datafile.Error
	if err != nil && !errors.As(err, &e) {
		panic(err)
	}
	return e, err
}

// TestAttack63CheckFieldOfKeyWithDotLosesItsLine: a check that names a map's
// member whose key holds a '.' or a '[' ("m.a.b" for key "a.b", as
// mock's world check names "achievements."+id) is given the line of the
// map, line 1, not the line of the member, line 4; a key without one is
// placed right. The file's own keys decide it, in JSON and YAML alike.
//
// Promised (datafile package doc, step 3): "The kind's own check runs;
// what it finds names a field, and is given the line that field is on."
// (Error.Line: "Line is the line the problem is on").
func TestAttack63CheckFieldOfKeyWithDotLosesItsLine(t *testing.T) {
	for _, key := range []string{"ab", "a.b", "a[1]", "kills.total"} {
		for form, in := range map[string]string{
			"yaml": "m:\n  x: 1\n  y: 2\n  \"" + key + "\": -1\n",
			"json": "{\"m\": {\n \"x\": 1,\n \"y\": 2,\n \"" + key + "\": -1}}",
		} {
			e, err := attack63ReadMap([]byte(in))
			if e == nil {
				t.Fatalf("%s %q: read", form, key)
			}
			if e.Line != 4 {
				t.Errorf("%s, key %q on line 4: %v: line %d", form, key, err, e.Line)
			}
		}
	}
}

// held: a key named twice is refused however the second is spelt: YAML
// quoting (plain, single, double, a \x or \u escape, an explicit "? "
// key, a !!str tag) and JSON escapes (\u0073, "\/"-free forms);
// a key in another case or in another Unicode normalisation is no field
// and refused as unknown. Promised (package doc): "a key named twice" is
// refused in step 1, and step 2 "refusing unknown fields (a name matches
// a field exactly, case included)".
func TestAttack63KeySpellingsRefused(t *testing.T) {
	for _, in := range []string{
		"s: x\n's': y\n",
		"s: x\n\"s\": y\n",
		"s: x\n\"\\x73\": y\n",
		"s: x\n\"\\u0073\": y\n",
		"s: x\n? s\n: y\n",
		"s: x\n!!str s: y\n",
		"m: {a: 1, \"a\": 2}\n",
		"m:\n  \u00e9: 1\n  \"\\u00e9\": 2\n",
		`{"s": "x", "\u0073": "y"}`,
		`{"m": {"\u00e9": 1, "\u00E9": 2}}`,
		`{"m": {"a": 1}, "\u006d": {}}`,
	} {
		e, err := attack63ReadMap([]byte(in))
		if e == nil || e.Reason != "named twice" {
			t.Errorf("%q: %v, want named twice", in, err)
		}
	}
	for _, in := range []string{"S: x\n", "s\u0301: x\n", `{"S": "x"}`, `{"\u017f": "x"}`, "\"s \": x\n"} {
		e, err := attack63ReadMap([]byte(in))
		if e == nil || e.Reason != "no such field" {
			t.Errorf("%q: %v, want no such field", in, err)
		}
	}
}

// held: reading hostile shapes the package's own linear test has not
// (YAML comments between flow items, quoted escapes, folded plain lines,
// block literals, tags on every item, big numbers in hex; JSON keys
// spelt with escapes, deep siblings at MaxNesting-2) allocates in
// proportion to the file: ten times the bytes allocate at most 13 times
// as much. Promised (package doc): "Reading a file takes time and memory
// linear in its length."
func TestAttack63ReadingLinearMoreShapes(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	fill := func(n int, head, unit, tail string) []byte {
		return []byte(head + strings.Repeat(unit, max(1, (n-len(head)-len(tail))/len(unit))) + tail)
	}
	escapedKeys := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"m": {`)
		for i := 0; b.Len() < n-32; i++ {
			b.WriteString(`"\u006b` + strconv.Itoa(i) + `": 1,`)
		}
		b.WriteString(`"z": -1}, "q": 1}`)
		return []byte(b.String())
	}
	deep := strings.Repeat("[", 61) + strings.Repeat("]", 61) + ","
	shapes := map[string]func(int) []byte{
		"yaml flow comments":     func(n int) []byte { return fill(n, "q: [\n", "1, # c\n", "]\n") },
		"yaml single quotes":     func(n int) []byte { return fill(n, "s: '", "''", "'\nq: 1\n") },
		"yaml double escapes":    func(n int) []byte { return fill(n, "s: \"", "\\x41", "\"\nq: 1\n") },
		"yaml folded plain":      func(n int) []byte { return fill(n, "s: x\n", "  x\n", "q: 1\n") },
		"yaml block literal":     func(n int) []byte { return fill(n, "s: |\n", "  line\n", "q: 1\n") },
		"yaml tagged items":      func(n int) []byte { return fill(n, "q: [", "!!str x, ", "1]\n") },
		"yaml big hex":           func(n int) []byte { return fill(n, "q: 0x", "f", "\n") },
		"yaml deep siblings":     func(n int) []byte { return fill(n, "q: [", deep, "1]\n") },
		"json escaped keys":      escapedKeys,
		"json deep siblings":     func(n int) []byte { return fill(n, `{"q": [`, deep, `1]}`) },
		"json surrogate escapes": func(n int) []byte { return fill(n, `{"s": "`, `\ud83d\ude00`, `", "q": 1}`) },
	}
	alloc := func(data []byte) uint64 {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		if e, err := attack63ReadMap(data); e == nil {
			t.Fatalf("read (%v), want an error", err)
		}
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	for name, gen := range shapes {
		small, large := gen(64<<10), gen(640<<10)
		a0, a1 := alloc(small), alloc(large)
		ratio := float64(a1) / float64(a0) / (float64(len(large)) / float64(len(small)))
		if ratio > 1.3 {
			t.Errorf("%s: %d bytes allocate %d, %d bytes %d: %.2f times as much a byte", name, len(small), a0, len(large), a1, ratio)
		}
	}
}
