package datafile

import (
	"bytes"
	"errors"
	"github.com/xblgo/fgrl/internal/racebuild"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestReadingLinear: every hostile file costs memory, and passes through
// its text, in proportion to its length: four times the bytes allocate at
// most six times as much, within a bound per byte (yaml.v3's tree of nodes
// is most of YAML's), and the passes that find an error's line and field
// read each byte a few times at most. Counts, not durations, so that a
// loaded machine cannot make the test fail or pass.
func TestReadingLinear(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	const small, large = 16 << 10, 64 << 10
	perByte := map[bool]float64{false: 48, true: 200} // JSON, YAML
	smallFiles := hostileFiles(small)
	for i, f := range hostileFiles(large) {
		t.Run(f.name, func(t *testing.T) {
			f, s := f.made(), smallFiles[i].made()
			a0, a1 := allocated(t, s.data), allocated(t, f.data)
			if ratio := float64(a1) / float64(a0) / (float64(len(f.data)) / float64(len(s.data))); ratio > 1.5 {
				t.Errorf("%d bytes allocated %d, %d bytes %d: %.1f times as much a byte", len(s.data), a0, len(f.data), a1, ratio)
			}
			yaml := strings.HasPrefix(f.name, "yaml")
			if got, limit := float64(a1)/float64(len(f.data)), perByte[yaml]; got > limit {
				t.Errorf("allocated %.0f bytes a byte, want at most %.0f", got, limit)
			}
			src := &source{json: f.data}
			var d testDoc
			if err := src.read(&testKind, &d, d.check); err == nil {
				t.Fatal("read, want an *Error")
			}
			t.Logf("%.1f bytes allocated a byte; the passes read %.1f times the JSON", float64(a1)/float64(len(f.data)), float64(src.walked)/float64(len(src.json)))
			if src.walked > 4*len(src.json) {
				t.Errorf("the passes read %d bytes of %d, want at most 4 times the JSON", src.walked, len(src.json))
			}
		})
	}
}

// allocated returns the bytes reading data allocates, checking that it is
// refused with an *Error.
func allocated(t *testing.T, data []byte) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var d testDoc
	err := testKind.Read(bytes.NewReader(data), &d, d.check)
	runtime.ReadMemStats(&after)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v, want an *Error", err)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkRefuseHostile reads each hostile file and checks that it is
// refused: files of FGRL_BENCH_FILE_BYTES, else 1 MiB (a smoke run);
// RELIABILITY.md records 16 MiB (16777216), the bound of worlds and
// scripts.
func BenchmarkRefuseHostile(b *testing.B) {
	n := 1 << 20
	if v, err := strconv.Atoi(os.Getenv("FGRL_BENCH_FILE_BYTES")); err == nil && v > 0 {
		n = v
	}
	for _, f := range hostileFiles(n) {
		b.Run(f.name, func(b *testing.B) {
			f := f.made()
			b.ReportAllocs()
			b.SetBytes(int64(len(f.data)))
			for b.Loop() {
				var d testDoc
				var e *Error
				if err := testKind.Read(bytes.NewReader(f.data), &d, d.check); !errors.As(err, &e) {
					b.Fatalf("%v, want an *Error", err)
				}
			}
		})
	}
}

// hostileFile is a file made to cost its reader: deep, long, wide or
// wrong many times over.
type hostileFile struct {
	name string
	gen  func() []byte
	data []byte // gen's, once made
}

// made returns f with its data made.
func (f hostileFile) made() hostileFile {
	f.data = f.gen()
	return f
}

// hostileFiles returns files of about n bytes (at most n, at least n/2)
// of every shape a reader must refuse in time linear in n, each made when
// asked (made), so that a benchmark of one holds only its own.
func hostileFiles(n int) []hostileFile {
	fill := func(head, unit, sep, tail string) func() []byte {
		return func() []byte { return fillBytes(n, head, unit, sep, tail) }
	}
	deep := func(open, inner, close string, depth int) string {
		return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
	}
	// An item whose body holds the units, and a wrong item after it: the
	// error is found after the whole file.
	body := func(unit string) func() []byte {
		return fill(`{"items": [{"id": "1", "body": [`, unit, ",", `]}, {"id": "x"}]}`)
	}
	yamlBody := func(unit string) func() []byte {
		return fill("items:\n  - id: \"1\"\n    body:\n", "      - "+unit+"\n", "", "  - id: x\n")
	}
	// Deeper as the file is longer, within the parsers' own bound of
	// 10000 levels.
	depth := min(n/16, 5000)
	return []hostileFile{
		{name: "json deep arrays, unclosed", gen: fill(`{"items": `, "[", "", "")},
		{name: "json deep arrays", gen: body(deep("[", "", "]", depth))},
		{name: "json deep objects", gen: body(deep(`{"a":`, "1", "}", depth))},
		{name: "json many errors", gen: fill(`{"items": [`, `{"id": "x", "n": "1", "no": 2}`, ",", `]}`)},
		{name: "json error at the end", gen: body(`{"a": [1, "b", {"c": null}]}`)},
		{name: "json empty items", gen: fill(`{"items": [`, "{}", ",", "]}")},
		{name: "json null items", gen: fill(`{"items": [`, "null", ",", "]}")},
		{name: "json huge string", gen: fill(`{"items": [{"id": "`, "1", "", `"}]}`)},
		{name: "json huge escaped string", gen: fill(`{"name": "`, `\u0041`, "", `", "items": [{"id": "x"}]}`)},
		{name: "json huge key", gen: fill(`{"`, "k", "", `": 1}`)},
		{name: "json many keys", gen: func() []byte { return manyKeys(n) }},
		{name: "json long number", gen: fill(`{"items": [{"id": "1", "n": `, "9", "", `}]}`)},
		{name: "json long line", gen: fill(`{"items": [{"id": "1"`, " ", "", `, "n": "x"}]}`)},
		{name: "json many lines", gen: fill(`{"items": [{"id": "1"`, "\n", "", `, "n": "x"}]}`)},
		{name: "json many lines ended by CR", gen: fill(`{"items": [{"id": "1"`, "\r", "", `, "n": "x"}]}`)},
		{name: "yaml deep flow sequences", gen: yamlBody(deep("[", "", "]", depth))},
		{name: "yaml deep flow mappings", gen: yamlBody(deep("{a: ", "1", "}", depth))},
		{name: "yaml deep block sequences", gen: yamlBody(strings.Repeat("- ", depth) + "1")},
		{name: "yaml many errors", gen: fill("items:\n", "  - id: x\n    n: \"1\"\n    no: 2\n", "", "")},
		{name: "yaml error at the end", gen: yamlBody("{a: [1, b, {c: null}]}")},
		{name: "yaml empty items", gen: fill("items:\n", "  - {}\n", "", "")},
		{name: "yaml huge string", gen: fill("items:\n  - id: \"", "1", "", "\"\n")},
		{name: "yaml huge keys", gen: func() []byte { return nestedKeys(n) }},
		{name: "yaml many keys", gen: yamlBody("{a: 1, b: 2, c: 3, d: 4, e: 5, f: 6}")},
		{name: "yaml long line", gen: fill("items:\n  - id: \"1\"\n    body: [", "1", ", ", "]\n  - id: x\n")},
		{name: "yaml many lines", gen: fill("items:\n  - id: \"1\"\n", "#\n", "", "    n: x\n")},
	}
}

// fillBytes is head, k units with sep between them, and tail: the most
// that fits in n bytes (at least one unit).
func fillBytes(n int, head, unit, sep, tail string) []byte {
	k := max(1, (n-len(head)-len(tail))/(len(unit)+len(sep)))
	var b bytes.Buffer
	b.Grow(n)
	b.WriteString(head)
	for i := range k {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(unit)
	}
	b.WriteString(tail)
	return b.Bytes()
}

// manyKeys is an item whose body is an object of distinct keys filling
// about n bytes, and a wrong item after it.
func manyKeys(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items": [{"id": "1", "body": {`)
	for i := 0; b.Len() < n-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strconv.Itoa(i) + `": 1`)
	}
	b.WriteString(`}}, {"id": "x"}]}`)
	return b.Bytes()
}

// nestedKeys is an item whose body nests 50 mappings, each under an
// explicit key of about n/64 bytes, and a wrong item after it.
func nestedKeys(n int) []byte {
	const levels = 50
	key := strings.Repeat("k", n/64)
	var b bytes.Buffer
	b.WriteString("items:\n  - id: \"1\"\n    body:\n")
	for i := range levels {
		indent := strings.Repeat("  ", 3+i)
		b.WriteString(indent + "? " + key + "\n" + indent + ":\n")
	}
	b.WriteString(strings.Repeat("  ", 3+levels) + "1\n  - id: x\n")
	return b.Bytes()
}
