package datafile_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

type attack2Doc struct {
	A string  `json:"a"`
	N int     `json:"n"`
	F float64 `json:"f"`
}

var attack2Kind = &datafile.Kind{Name: "atk", MaxBytes: 1 << 20}

func attack2Read(in string) (attack2Doc, error) {
	var v attack2Doc
	err := attack2Kind.Read(strings.NewReader(in), &v, nil)
	if err != nil {
		var de *datafile.Error
		if !errors.As(err, &de) {
			panic("not a *datafile.Error: " + err.Error())
		}
	}
	return v, err
}

// held: e287eef refuses U+2028, U+2029 and NEL written as themselves in
// YAML only. A JSON file keeps them in a string as JSON allows (RFC 8259
// §7: any character but '"', '\' and the controls U+0000..U+001F), and
// counts lines at CR and LF only there too; in YAML they are read when
// escaped, as \L, \P, \N or as \u2028, \u2029, \x85. In YAML they are
// refused anywhere written raw: a plain or single-quoted value, a comment,
// a YAML file in JSON syntax after a BOM (a BOM makes it YAML).
func TestAttack2LineSeparatorsJSONAndYAML(t *testing.T) {
	for _, c := range []string{"\u2028", "\u2029", "\u0085"} {
		v, err := attack2Read(`{"a": "x` + c + `y", "n": 1}`)
		if err != nil || v.A != "x"+c+"y" {
			t.Errorf("JSON with %U in a string: %q, %v", []rune(c)[0], v.A, err)
		}
		if _, err := attack2Read("{\"a\": \"x" + c + "y\",\n\"n\": \"bad\"}"); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("JSON with %U: the error after it is not on line 2: %v", []rune(c)[0], err)
		}
		for _, in := range []string{"a: x" + c + "y\n", "a: 'x" + c + "y'\n", "# " + c + "\na: x\n", "\ufeff{\"a\": \"x" + c + "y\"}"} {
			if v, err := attack2Read(in); err == nil {
				t.Errorf("YAML %q read as %q", in, v.A)
			}
		}
	}
	v, err := attack2Read(`a: "\u2028\u2029\x85\L\P\N"` + "\n")
	if err != nil || v.A != "\u2028\u2029\u0085\u2028\u2029\u0085" {
		t.Errorf("escaped: %q, %v", v.A, err)
	}
}

// held: e287eef writes a YAML float in exponent form. A float field reads
// each YAML float spelling (1.5, 1e3, -0.0, .5, +1.0, 1., 0.1, 5e-324 the
// least subnormal, 1.7976931348623157e308, -2.5E+2, and 7, an int)
// as the number; the same numbers in JSON read alike; an int field given
// 1.0, 1e3, -0.0 or +1.0 is refused in both forms ("+1.0" and ".5" are
// not JSON, and refused there); .inf and .nan refused.
func TestAttack2YAMLFloats(t *testing.T) {
	for in, want := range map[string]float64{
		"1.5": 1.5, "1e3": 1000, "-0.0": math.Copysign(0, -1), ".5": 0.5, "+1.0": 1, "1.": 1, "0.1": 0.1,
		"5e-324": 5e-324, "1.7976931348623157e308": 1.7976931348623157e308, "-2.5E+2": -250, "7": 7,
	} {
		v, err := attack2Read("f: " + in + "\n")
		if err != nil || v.F != want || math.Signbit(v.F) != math.Signbit(want) {
			t.Errorf("YAML f: %s read as %v, %v; want %v", in, v.F, err, want)
		}
		if in[0] == '.' || in[0] == '+' || in == "1." {
			continue
		}
		if v, err := attack2Read(`{"f": ` + in + `}`); err != nil || v.F != want {
			t.Errorf("JSON f: %s read as %v, %v", in, v.F, err)
		}
	}
	for _, in := range []string{"1.0", "1e3", "-0.0", "+1.0", "1.", "2.5e1"} {
		if v, err := attack2Read("n: " + in + "\n"); err == nil {
			t.Errorf("YAML n: %s accepted as %d", in, v.N)
		}
		if v, err := attack2Read(`{"n": ` + in + `}`); err == nil {
			t.Errorf("JSON n: %s accepted as %d", in, v.N)
		}
	}
	for _, in := range []string{".inf", "-.inf", ".nan", "1e400"} {
		if v, err := attack2Read("f: " + in + "\n"); err == nil {
			t.Errorf("YAML f: %s accepted as %v", in, v.F)
		}
	}
}
