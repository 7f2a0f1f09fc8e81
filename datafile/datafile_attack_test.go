package datafile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

// attackDoc is a data file shaped like the module's kinds: a name and a whole
// number.
type attackDoc struct {
	A string `json:"a"`
	N int    `json:"n"`
}

var attackKind = &datafile.Kind{Name: "atk", MaxBytes: 1 << 20, Lists: map[string]int{"/l": 3}}

func attackRead(in string) (attackDoc, *datafile.Error) {
	var v attackDoc
	err := attackKind.Read(strings.NewReader(in), &v, nil)
	if err == nil {
		return v, nil
	}
	var de *datafile.Error
	if !errors.As(err, &de) {
		panic("not a *datafile.Error: " + err.Error())
	}
	return v, de
}

// datafile/error.go, Error.Line: "Line is the line the problem is on,
// from 1 (a bare CR, a LF or a CRLF ends a line)". A YAML file holding
// U+2028 (LINE SEPARATOR) or U+0085 (NEL) before the fault: yaml.v3
// counted each as a line break, so the error named a line one past the
// one the documented counting (and an editor that breaks lines only at
// CR and LF) gives; and it folded a quoted value's NEL into a space,
// where JSON keeps the character. Now the character is refused, on the
// line it is on; escaped in a double-quoted string it is read.
func TestAttackYAMLLineCountsOnlyCRAndLF(t *testing.T) {
	for in, line := range map[string]int{
		"a: \"x\u2028y\"\nn: bad\n":             1,
		"a: \"x\u0085y\"\nn: bad\n":             1,
		"# c\u2028\nn: bad\n":                   1,
		"a: 'x\u0085y'\n":                       1,
		"a: x\r\nb: 1\rc: \"\u2029\"\nn: bad\n": 3,
	} {
		_, err := attackRead(in)
		switch {
		case err == nil:
			t.Errorf("%q accepted", in)
		case err.Field == "n" && err.Line == 2:
		case err.Field == "" && err.Line == line && strings.Contains(err.Reason, "U+"):
		default:
			t.Errorf("%q: error on line %d at %q, want the character refused on line %d (only CR, LF and CRLF end a line): %v", in, err.Line, err.Field, line, err)
		}
	}
	// Escaped, the characters are read as themselves.
	v, err := attackRead("a: \"x\\N\\Ly\"\nn: 1\n")
	if err != nil || v.A != "x\u0085\u2028y" {
		t.Errorf("escaped NEL and LS read as %q, %v", v.A, err)
	}
}

// datafile's package doc: "YAML is written as JSON, each value marked with
// its YAML line, and both forms are then read alike", step 2 "refusing
// ... values of the wrong type"; yaml.go: "what JSON has no form for is
// refused rather than rewritten". A whole number written 1.0 or 1e3:
// the JSON file is refused ("a number where a whole number belongs"),
// the same value in YAML is rewritten as 1 or 1000 and accepted: one
// datum, two verdicts.
func TestAttackYAMLAndJSONReadNumbersAlike(t *testing.T) {
	for _, num := range []string{"1.0", "1e3", "2.50e1"} {
		_, jerr := attackRead(`{"n": ` + num + `}`)
		yv, yerr := attackRead("n: " + num + "\n")
		if (jerr == nil) != (yerr == nil) {
			t.Errorf("n = %s: JSON read gives %v, YAML read gives %+v, %v: the two forms are not read alike", num, jerr, yv, yerr)
		}
	}
}

// held: a key named twice in two spellings (an escape, a YAML quoting) is
// refused; "a name matches a field exactly, case included".
func TestAttackNamesTwiceInTwoSpellingsRefused(t *testing.T) {
	for _, in := range []string{
		`{"n": 1, "\u006e": 2}`,
		"n: 1\n\"n\": 2\n",
		"n: 1\n? n\n: 2\n",
		`{"N": 1}`,
		`{"\u212a": 1}`,
	} {
		if v, err := attackRead(in); err == nil {
			t.Errorf("%q accepted as %+v", in, v)
		}
	}
}

// held: Error "each part escaped and clipped (the whole at most 400
// bytes)": a long key full of escape codes, in JSON and YAML, at a
// nesting too deep, a list too long, and an unknown field.
func TestAttackErrorTextEscapedAndClipped(t *testing.T) {
	key := strings.Repeat("\x1b[2J\u202e", 5000)
	jkey := strings.ReplaceAll(strings.ReplaceAll(key, "\x1b", `\u001b`), "\u202e", `\u202e`)
	for _, in := range []string{
		`{"` + jkey + `": 1}`,
		`{"a": "x", "` + jkey + `": {"` + jkey + `": 1}}`,
		"\"" + strings.ReplaceAll(key, "\x1b", `\e`) + "\": 1\n",
		strings.Repeat("[", 65) + strings.Repeat("]", 65),
		`{"l": [{}, {}, {}, {}]}`,
		"a: &x 1\nn: *x\n",
	} {
		_, err := attackRead(in)
		if err == nil {
			t.Fatalf("%.40q accepted", in)
		}
		s := err.Error()
		if len(s) > 400 || strings.ContainsAny(s, "\x1b\u202e\n") {
			t.Errorf("error of %d bytes, or unescaped: %.200q", len(s), s)
		}
	}
}
