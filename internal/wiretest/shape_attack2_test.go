package wiretest

import (
	"strconv"
	"strings"
	"testing"
)

// The promises (internal/wiretest/shape.go, ShapeDiff's godoc):
//
//	every element of an array in got must have the shape of one of the
//	recorded elements [...] A null in want matches any type [...]
//	Its work grows with the bodies' sizes times the number of distinct
//	shapes a recorded array holds.
//
// and FuzzShapeDiff's property (wiretest_test.go; RELIABILITY.md: "a body
// has its own shape but for the names it gives twice or that are not valid
// text"): ShapeDiff(x, x) reports nothing else.

// attack2NullChain is [null,[null,...[null,1]...]], k levels: an array whose
// elements are a null and one more such array.
func attack2NullChain(k int) []byte {
	return []byte(strings.Repeat("[null,", k) + "1" + strings.Repeat("]", k))
}

// Break. "every element of an array in got must have the shape of one of the
// recorded elements", "A null in want matches any type", and FuzzShapeDiff's
// property "A body has its own shape": an array holding a null beside other
// elements, compared with itself, is reported: the null element of got is
// matched only against the recorded non-null elements (ShapeDiff.array drops
// the recorded nulls from the shapes it matches against).
func TestAttack2ShapeDiffNullElementHasItsOwnShape(t *testing.T) {
	for _, b := range []string{
		`[null,1]`,
		`[1,null]`,
		`{"a":[null,{"b":1}]}`,
	} {
		if d := ShapeDiff([]byte(b), []byte(b)); d != "" {
			t.Errorf("ShapeDiff(%s, itself) = %q, want \"\"", b, d)
		}
	}
}

// Break. "Its work grows with the bodies' sizes times the number of distinct
// shapes a recorded array holds" (each array here holds one non-null shape).
// An element whose hash matches a recorded shape is walked; when that walk
// reports a line (the null above, one level down) the element is walked
// again against every recorded shape, and so at every level: the work
// doubles a level. A 155-byte body compared with itself took 9.6 s here,
// 141 bytes 1.7 s, 71 bytes 2 ms. Twice the input must not allocate much
// more than twice as much (the bound TestAttackShapeDiffGrowsLinearly sets).
func TestAttack2ShapeDiffNestedNullsExponential(t *testing.T) {
	small, twice := attack2NullChain(9), attack2NullChain(18)
	a := allocated(func() { ShapeDiff(small, small) })
	b := allocated(func() { ShapeDiff(twice, twice) })
	t.Logf("%d bytes allocate %d; %d bytes allocate %d", len(small), a, len(twice), b)
	if b > 3*a {
		t.Errorf("twice the input (%d bytes) allocates %.1f times as much (%d bytes)", len(twice), float64(b)/float64(a), b)
	}
}

// attack2DeepExtra is n objects nested under "a", the innermost holding the
// fields extra (none when extra is 0): b0, b1, ...
func attack2DeepExtra(n, extra int) []byte {
	var b strings.Builder
	b.WriteString(strings.Repeat(`{"a":`, n) + "{")
	for i := range extra {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"b` + strconv.Itoa(i) + `":1`)
	}
	b.WriteString("}" + strings.Repeat("}", n))
	return []byte(b.String())
}

// Break. "Its work grows with the bodies' sizes times the number of distinct
// shapes a recorded array holds" (here no array at all): a body n objects
// deep with n invented fields at the bottom gives n lines, each spelling a
// path n names long: the diff, and what it allocates, grow with the square
// of the body.
func TestAttack2ShapeDiffDeepLinesQuadratic(t *testing.T) {
	var sizes [2]int
	var alloc [2]uint64
	for i, n := range []int{1500, 3000} {
		want, got := attack2DeepExtra(n, 0), attack2DeepExtra(n, n)
		sizes[i] = len(want) + len(got)
		var d string
		alloc[i] = allocated(func() { d = ShapeDiff(want, got) })
		if d == "" {
			t.Fatal("the invented fields were not reported")
		}
		t.Logf("%d bytes of bodies allocate %d; the diff is %d bytes", sizes[i], alloc[i], len(d))
	}
	if alloc[1] > 3*alloc[0] {
		t.Errorf("twice the input (%d bytes) allocates %.1f times as much (%d bytes)", sizes[1], float64(alloc[1])/float64(alloc[0]), alloc[1])
	}
}

// held: an element matching one recorded shape in part is reported: arrays
// of arrays whose element types are split across recorded elements, objects
// with the same names but other nested shapes, an array element of another
// nested shape past the first.
func TestAttack2ShapeDiffNestedShapesReported(t *testing.T) {
	for _, c := range [][2]string{
		{`[[1],["s"]]`, `[[1,"s"]]`},
		{`[[[1]],[["s"]]]`, `[[[1,"s"]]]`},
		{`[{"a":{"b":1}}]`, `[{"a":{"b":"x"}}]`},
		{`[{"a":[{"b":1}]},{"a":[{"c":1}]}]`, `[{"a":[{"b":1}]},{"a":[{"b":1,"c":1}]}]`},
		{`[{"a":[]}]`, `[{"a":[[]]}]`},
		{`{"a":[1]}`, `{"a":[1,null]}`},
	} {
		if d := ShapeDiff([]byte(c[0]), []byte(c[1])); d == "" {
			t.Errorf("ShapeDiff(%s, %s) = \"\", want a difference", c[0], c[1])
		}
	}
}

// held: bodies identical in shape but for values and element counts pass,
// and a recorded null takes any type ("A null in want matches any type").
func TestAttack2ShapeDiffSameShapePasses(t *testing.T) {
	for _, c := range [][2]string{
		{`[[1],["s"]]`, `[["t"],[2],[3,4]]`},
		{`{"a":null}`, `{"a":[{"x":[1]}]}`},
		{`[null]`, `[1,"s",{}]`},
		{`[{"a":1,"b":[true]},{"c":"x"}]`, `[{"c":"y"},{"b":[],"a":2}]`},
	} {
		if d := ShapeDiff([]byte(c[0]), []byte(c[1])); d != "" {
			t.Errorf("ShapeDiff(%s, %s) = %q, want \"\"", c[0], c[1], d)
		}
	}
}
