package wiretest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode"
)

// The promise every test here holds ShapeDiff to is its godoc (shape.go):
//
//	ShapeDiff compares the shape of got with the recorded body want: every
//	field of want must be in got with the same JSON type, recursively, and
//	every element of an array in got must have the shape of one of the
//	recorded elements. [...] Fields only got has are reported too, as "+"
//	lines, so a mock cannot invent fields the service does not send.
//
// and the package doc: "a shape diff that compares a JSON body with a
// recorded one by field names, nesting and JSON types".

// Break. "every element of an array in got must have the shape of one of the
// recorded elements": a recorded empty array has no element whose shape a
// got element could have, yet any element passes. The recordings hold such
// arrays (GetFriends: presenceDetails, watermarks, linkedAccounts,
// preferredPlatforms), and since a got element is matched against whichever
// recorded element fits best, the first friend's "presenceDetails": [] lets
// the mock send presence details of any shape, although the second friend
// records their shape.
func TestAttackShapeDiffEmptyRecordedArrayAcceptsAnyElement(t *testing.T) {
	t.Run("synthetic", func(t *testing.T) {
		for _, c := range [][2]string{
			{`{"a":[]}`, `{"a":[{"x":1}]}`},
			{`[]`, `[1,"x",{}]`},
		} {
			if d := ShapeDiff([]byte(c[0]), []byte(c[1])); d == "" {
				t.Errorf("ShapeDiff(%s, %s) = \"\": elements no recorded element has the shape of passed", c[0], c[1])
			}
		}
	})
	t.Run("GetFriends presenceDetails", func(t *testing.T) {
		x, err := Load("GetFriends")
		if err != nil {
			t.Fatal(err)
		}
		body := string(x.Answer)
		// The second friend's presence details: a field the service never
		// sends, and PresenceText a number instead of a string.
		i := strings.Index(body, `"IsBroadcasting": false,`)
		if i < 0 {
			t.Fatal("recording changed: no IsBroadcasting")
		}
		got := body[:i] + `"Bogus": 1, ` + body[i:]
		got = strings.Replace(got, `"PresenceText": "Home"`, `"PresenceText": 7`, 1)
		if d := ShapeDiff(x.Answer, []byte(got)); d == "" {
			t.Errorf("ShapeDiff(GetFriends, a body whose presenceDetails has an invented field and a number for PresenceText) = \"\"")
		}
	})
}

// Break. "every field of want must be in got with the same JSON type" and
// "compares ... by field names": a body naming "a" twice, first as a string,
// passes against a recording whose "a" is a number (the decoder keeps only
// the last; a strict reader such as go-json-experiment/json, the project's
// own data-file decoder, refuses the body outright).
func TestAttackShapeDiffDuplicateNameHidesWrongType(t *testing.T) {
	if d := ShapeDiff([]byte(`{"a":1}`), []byte(`{"a":"x","a":1}`)); d == "" {
		t.Error(`ShapeDiff({"a":1}, {"a":"x","a":1}) = "": a field of another type, named twice, passed`)
	}
}

// Break. "compares ... by field names": two different field names compare
// equal when both decode to U+FFFD (lone surrogate escapes, invalid UTF-8).
// JSON names are compared by their text; "\ud800" and "\udbff" are not the
// same name.
func TestAttackShapeDiffDistinctNamesCollide(t *testing.T) {
	for _, c := range [][2]string{
		{`{"\ud800":1}`, `{"\udbff":1}`},
		{"{\"\xff\":1}", "{\"\xfe\":1}"},
		{`{"\ufffd":1}`, `{"\ud800":1}`},
	} {
		if d := ShapeDiff([]byte(c[0]), []byte(c[1])); d == "" {
			t.Errorf("ShapeDiff(%q, %q) = \"\": a renamed field passed", c[0], c[1])
		}
	}
}

// Break. docs/ARCHITECTURE.md: "`internal/safetext` | bounding text, the
// one place: `Clip` and `Quote` for terminals and errors"; safetext's
// godoc: "Clip makes text from a server or a trace safe to put in an error
// or on a terminal (control characters, terminal escape sequences among
// them, and invalid UTF-8 are escaped". ShapeDiff's text is what the
// client's and the mock's tests print on failure (t.Errorf), yet a field
// name of the body reaches it raw: an ESC [2J clears the terminal of the
// one reading the failure.
func TestAttackShapeDiffEscapesBodyText(t *testing.T) {
	d := ShapeDiff([]byte(`{"a":1}`), []byte(`{"a":1,"x\u001b[2J\u0007":1}`))
	if d == "" {
		t.Fatal("extra field not reported")
	}
	for _, line := range strings.Split(d, "\n") {
		if strings.IndexFunc(line, unicode.IsControl) >= 0 {
			t.Errorf("ShapeDiff's line %q holds a raw control character", line)
		}
	}
}

func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// distinct is an array of n objects of n different shapes, each with a
// list beside its one distinct field.
func distinct(n int) []byte {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"c":[{"z":1},{"z":1},{"z":1},{"z":1},{"z":1},{"z":1},{"z":1},{"z":1}],"k%d":1}`, i)
	}
	b.WriteString("]")
	return []byte(b.String())
}

func nested(depth int) []byte {
	return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
}

// Break. RELIABILITY.md, "## Bad input never panics, hangs or grows memory":
// "Every parser is fuzzed", with `wiretest.FuzzShapeDiff` (JSON shape
// comparison) in its table. ShapeDiff's work grows with the square of the
// body: an array of n differently shaped elements is walked n*n/2 times
// (each got element against every recorded one before its match), and a
// nesting of depth d builds and keeps a path string per level, d*d bytes.
// Measured: 38 KB of such elements allocate 228 MB and take 0.8 s (77 KB:
// 3.1 s; 1.7 MB: 3.5 minutes); 20 KB of nested arrays allocate 162 MB.
// Doubling the input must not much more than double what is allocated.
func TestAttackShapeDiffGrowsLinearly(t *testing.T) {
	for _, c := range []struct {
		name         string
		small, twice []byte
	}{
		{"distinct elements", distinct(100), distinct(200)},
		{"nesting", nested(2000), nested(4000)},
	} {
		a := allocated(func() { ShapeDiff(c.small, c.small) })
		b := allocated(func() { ShapeDiff(c.twice, c.twice) })
		t.Logf("%s: %d bytes allocate %d; %d bytes allocate %d", c.name, len(c.small), a, len(c.twice), b)
		if b > 3*a {
			t.Errorf("%s: twice the input (%d bytes) allocates %.1f times as much (%d bytes, %d a byte of input)",
				c.name, len(c.twice), float64(b)/float64(a), b, b/uint64(len(c.twice)))
		}
	}
}

// held: against a fixed recording, a large body costs in proportion to its
// size: 800 friends (2 MB) against the GetFriends recording.
func TestAttackShapeDiffLargeBodyAgainstRecordingLinear(t *testing.T) {
	x, err := Load("GetFriends")
	if err != nil {
		t.Fatal(err)
	}
	s := string(x.Answer)
	i, j := strings.Index(s, "["), strings.LastIndex(s, "]")
	people := s[i+1 : j]
	got := []byte(s[:i+1] + strings.Repeat(people+",", 399) + people + s[j:])
	var d string
	a := allocated(func() { d = ShapeDiff(x.Answer, got) })
	if d != "" {
		t.Fatalf("ShapeDiff = %q", d)
	}
	if per := a / uint64(len(got)); per > 200 {
		t.Errorf("%d bytes allocate %d, %d a byte", len(got), a, per)
	}
}

// held: the differences the godoc names are reported: a name that differs
// only in case (JSON names are case-sensitive, encoding/json's struct
// decoding is not), a number given as a string, null for an object, a
// number for a boolean, a field one level deeper, an element other than the
// first of another shape, an array for an object at the root, and a body
// that is not JSON (no panic).
func TestAttackShapeDiffReportsDifferences(t *testing.T) {
	for _, c := range []struct{ want, got, line string }{
		{`{"xuid":"1"}`, `{"Xuid":"1"}`, "-$.xuid: string"},
		{`{"n":1}`, `{"n":"1"}`, "+$.n: string"},
		{`{"o":{}}`, `{"o":null}`, "+$.o: null"},
		{`{"b":true}`, `{"b":0}`, "+$.b: number"},
		{`{"a":1}`, `{"a":{"a":1}}`, "+$.a: object"},
		{`{"a":[{"b":1}]}`, `{"a":[{"b":1},{"b":1},{"b":"x"}]}`, "+$.a[2].b: string"},
		{`{}`, `[]`, "+$: array"},
		{`{}`, `{"a":`, "+got is not JSON"},
		{`{"a":`, `{}`, "-want is not JSON"},
	} {
		if d := ShapeDiff([]byte(c.want), []byte(c.got)); !strings.Contains(d, c.line) {
			t.Errorf("ShapeDiff(%s, %s) = %q, want a line %q", c.want, c.got, d, c.line)
		}
	}
}
