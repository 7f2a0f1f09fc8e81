package replay

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

const attack63XUID = "2533274790395904"

func attack63PatternErr(t *testing.T, err error) *datafile.Error {
	t.Helper()
	var e *datafile.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v: want a *datafile.Error", err)
	}
	return e
}

// TestAttack63PatternCSVBareCRMovesTheLine: a CSV pattern whose comment line
// ends in a bare CR before the fault (a file from an old Mac editor, or
// a comment pasted with one). datafile.Error counts a bare CR as a line
// end; encoding/csv does not (it counts '\n' only and takes the CR as
// part of the comment), so the error names line 2 for a fault on line 3.
// The same bytes as a JSON pattern are counted as documented.
//
// Promised (replay.ReadPattern): "What is wrong is a *datafile.Error
// naming the line and the field." and (datafile.Error.Line): "Line is
// the line the problem is on, from 1 (a bare CR, a LF or a CRLF ends a
// line)".
func TestAttack63PatternCSVBareCRMovesTheLine(t *testing.T) {
	in := "# recorded on a Mac\r# by hand\n0,profile," + attack63XUID + ",zz\n" // line 1: "# recorded on a Mac", 2: "# by hand", 3: the fault
	_, err := ReadPattern(strings.NewReader(in))
	e := attack63PatternErr(t, err)
	if e.Line != 3 || e.Field != "count" {
		t.Errorf("%q: line %d field %q (%v), want line 3 (a bare CR ends line 1), field count", in, e.Line, e.Field, err)
	}
	// JSON, for comparison: the bare CR counts.
	js := "[\r{\"time\": 0, \"service\": \"profile\", \"user\": \"" + attack63XUID + "\", \"count\": \"zz\"}]"
	if e := attack63PatternErr(t, mustFail(ReadPattern(strings.NewReader(js)))); e.Line != 2 {
		t.Errorf("JSON: line %d, want 2", e.Line)
	}
}

func mustFail(_ Pattern, err error) error { return err }

// held: MaxPatternSize is exact for JSON and CSV, read or loaded: a
// pattern of exactly MaxPatternSize bytes is read, one byte more refused
// before it is parsed; /dev/zero, a link to it and a directory are
// refused with an *datafile.Error naming the file. Promised (ReadPattern):
// "reads a pattern of at most MaxPatternSize bytes"; (LoadPattern) "its
// errors name the file".
func TestAttack63PatternSizeBoundExact(t *testing.T) {
	one := "0,profile," + attack63XUID + ",1\n"
	csvOf := func(n int) []byte { // a comment pads the event to n bytes
		pad := n - len(one) - 2
		return []byte("#" + strings.Repeat("x", pad) + "\n" + one)
	}
	jsonOf := func(n int) []byte {
		ev := `[{"time": 0, "service": "profile", "user": "` + attack63XUID + `", "count": 1}]`
		return append([]byte(ev), bytes.Repeat([]byte(" "), n-len(ev))...)
	}
	dir := t.TempDir()
	for name, gen := range map[string]func(int) []byte{"csv": csvOf, "json": jsonOf} {
		at, over := gen(MaxPatternSize), gen(MaxPatternSize+1)
		if len(at) != MaxPatternSize || len(over) != MaxPatternSize+1 {
			t.Fatalf("%s: made %d and %d bytes", name, len(at), len(over))
		}
		if p, err := ReadPattern(bytes.NewReader(at)); err != nil || len(p) != 1 {
			t.Errorf("%s of exactly MaxPatternSize: %v, %v", name, p, err)
		}
		if _, err := ReadPattern(bytes.NewReader(over)); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("%s one byte over MaxPatternSize: %v", name, err)
		}
		f := filepath.Join(dir, name+"-over")
		os.WriteFile(f, over, 0o600)
		if e := attack63PatternErr(t, mustFail(LoadPattern(f))); e.File != f {
			t.Errorf("LoadPattern(%s): File %q", f, e.File)
		}
	}
	link := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", link)
	for _, name := range []string{"/dev/zero", link, dir} {
		e := attack63PatternErr(t, mustFail(LoadPattern(name)))
		if e.File != name {
			t.Errorf("LoadPattern(%s): File %q (%v)", name, e.File, e)
		}
	}
}
