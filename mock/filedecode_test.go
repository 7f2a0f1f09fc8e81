package mock

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestNestingBounded: JSON nests at most maxNesting (64) levels, as YAML
// does: the document's value is at depth 1, and a value at 65 is refused
// with its line, in either form.
func TestNestingBounded(t *testing.T) {
	// The body is the sixth level: the document, rules, a rule, answers,
	// an answer, its body.
	const body = 6
	jsonAt := func(v string) string {
		return "{\"rules\": [{\"match\": {}, \"answers\": [{\"body\":\n" + v + "}]}]}"
	}
	yamlAt := func(v string) string {
		return "rules:\n  - match: {}\n    answers:\n      - body:\n          " + v + "\n"
	}
	nest := func(open, inner, close string, levels int) string {
		return strings.Repeat(open, levels) + inner + strings.Repeat(close, levels)
	}
	for _, tc := range []struct {
		name string
		file string
		line int // of the refusal; 0: accepted
	}{
		{"json arrays at 64", jsonAt(nest("[", "", "]", maxNesting-body+1)), 0},
		{"json arrays at 65", jsonAt(nest("[", "", "]", maxNesting-body+2)), 2},
		{"json value at 65", jsonAt(nest("[", "1", "]", maxNesting-body+1)), 2},
		{"json objects at 64", jsonAt(nest(`{"a": `, "{}", "}", maxNesting-body)), 0},
		{"json objects at 65", jsonAt(nest(`{"a": `, "{}", "}", maxNesting-body+1)), 2},
		{"json objects on lines", jsonAt(nest("{\"a\":\n", "1", "}", maxNesting)), maxNesting - body + 3},
		{"yaml flow at 64", yamlAt(nest("[", "", "]", maxNesting-body+1)), 0},
		{"yaml flow at 65", yamlAt(nest("[", "", "]", maxNesting-body+2)), 5},
		{"yaml value at 65", yamlAt(nest("[", "1", "]", maxNesting-body+1)), 5},
		{"yaml mappings at 65", yamlAt(nest("{a: ", "{}", "}", maxNesting-body+1)), 5},
		{"json past encoding/json's own bound", jsonAt(strings.Repeat("[", 20000)), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadScript(strings.NewReader(tc.file))
			if tc.line == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			checkFileError(t, err, FileError{Line: tc.line, Reason: "nested too deep"}, "script")
		})
	}
}

// TestReadingLinear: every hostile file costs memory, and walks through
// its text, in proportion to its length: four times the bytes allocate at
// most six times as much, within a bound per byte (yaml.v3's tree of nodes
// is most of YAML's), and the walks that find an error's line and field
// read each byte a few times at most. Counts, not durations, so that a
// loaded machine cannot make the test fail or pass.
func TestReadingLinear(t *testing.T) {
	const small, large = 16 << 10, 64 << 10
	perByte := map[bool]float64{false: 48, true: 200} // JSON, YAML
	smallFiles := hostileFiles(small)
	for i, f := range hostileFiles(large) {
		t.Run(f.name, func(t *testing.T) {
			f, s := f.made(), smallFiles[i].made()
			a0, a1 := allocated(t, s), allocated(t, f)
			if ratio := float64(a1) / float64(a0) / (float64(len(f.data)) / float64(len(s.data))); ratio > 1.5 {
				t.Errorf("%d bytes allocated %d, %d bytes %d: %.1f times as much a byte", len(s.data), a0, len(f.data), a1, ratio)
			}
			yaml := strings.HasPrefix(f.name, "yaml")
			if got, limit := float64(a1)/float64(len(f.data)), perByte[yaml]; got > limit {
				t.Errorf("allocated %.0f bytes a byte, want at most %.0f", got, limit)
			}
			src, err := f.readSource()
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("%v, want a *FileError", err)
			}
			if src.scanned > 5*len(src.json) {
				t.Errorf("the walks read %d bytes of %d, want at most 5 times the JSON", src.scanned, len(src.json))
			}
		})
	}
}

// allocated returns the bytes reading f allocates, checking that it is
// refused with a FileError.
func allocated(t *testing.T, f hostileFile) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := f.read()
	runtime.ReadMemStats(&after)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("%v, want a *FileError", err)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// TestFileErrorsBounded: an error names a field by its keys, and a key may
// be long or hold escape codes: the field is clipped and escaped, and the
// error stays under 400 bytes.
func TestFileErrorsBounded(t *testing.T) {
	long := strings.Repeat("k\x1b[2J", 20000)
	for _, tc := range []struct {
		name, file, script string
	}{
		{"yaml key named twice", "script", "rules:\n  - match: {}\n    answers:\n      - body:\n" + strings.Repeat("          ? \""+strings.ReplaceAll(long, "\x1b", `\e`)+"\"\n          : 1\n", 2)},
		{"yaml alias under a long key", "script", "rules:\n  - match: {}\n    answers:\n      - body:\n          a: &x 1\n          ? \"" + strings.ReplaceAll(long, "\x1b", `\e`) + "\"\n          : *x\n"},
		{"json unknown long key", "world", `{"accounts": [{"` + strings.ReplaceAll(long, "\x1b", `\u001b`) + `": 1}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := hostileFile{file: tc.file, data: []byte(tc.script)}.read()
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("%v, want a *FileError", err)
			}
			if msg := err.Error(); len(msg) > 400 || strings.ContainsFunc(msg, unicode.IsControl) {
				t.Errorf("error of %d bytes %q, want at most 400 with no control character", len(msg), safeHead(msg))
			}
		})
	}
}

func safeHead(s string) string { return strconv.Quote(s[:min(len(s), 200)]) }

// TestUnknownFieldFound: an unknown field is named where it is a key, not
// where its name first appears as text.
func TestUnknownFieldFound(t *testing.T) {
	file := "{\"accounts\": [{\"xuid\": \"1\", \"gamertag\": \"tier2\"},\n  {\"xuid\": \"2\", \"tier2\": \"x\"}]}"
	_, err := ReadWorld(strings.NewReader(file))
	checkFileError(t, err, FileError{Line: 2, Field: "accounts[1].tier2", Reason: "no such field"}, "world")
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
				var fe *FileError
				if err := f.read(); !errors.As(err, &fe) {
					b.Fatalf("%v, want a *FileError", err)
				}
			}
		})
	}
}
