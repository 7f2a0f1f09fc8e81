package datafile

import (
	"strings"
	"testing"
)

// TestNestingBounded: a file nests at most MaxNesting (64) levels, in JSON
// as in YAML: the document's value is at depth 1, and a value at 65 is
// refused with its line, before the decoder reads it.
func TestNestingBounded(t *testing.T) {
	// The body is the fourth level: the document, items, an item, its body.
	const body = 4
	jsonAt := func(v string) string { return "{\"items\": [{\"id\": \"1\", \"body\":\n" + v + "}]}" }
	yamlAt := func(v string) string { return "items:\n  - id: \"1\"\n    body:\n      " + v + "\n" }
	nest := func(open, inner, close string, levels int) string {
		return strings.Repeat(open, levels) + inner + strings.Repeat(close, levels)
	}
	for _, tc := range []struct {
		name string
		text string
		line int // of the refusal; 0: accepted
	}{
		{"json arrays at 64", jsonAt(nest("[", "", "]", MaxNesting-body+1)), 0},
		{"json arrays at 65", jsonAt(nest("[", "", "]", MaxNesting-body+2)), 2},
		{"json value at 65", jsonAt(nest("[", "1", "]", MaxNesting-body+1)), 2},
		{"json objects at 64", jsonAt(nest(`{"a": `, "{}", "}", MaxNesting-body)), 0},
		{"json objects at 65", jsonAt(nest(`{"a": `, "{}", "}", MaxNesting-body+1)), 2},
		{"json objects on lines", jsonAt(nest("{\"a\":\n", "1", "}", MaxNesting)), MaxNesting - body + 3},
		{"yaml flow at 64", yamlAt(nest("[", "", "]", MaxNesting-body+1)), 0},
		{"yaml flow at 65", yamlAt(nest("[", "", "]", MaxNesting-body+2)), 4},
		{"yaml value at 65", yamlAt(nest("[", "1", "]", MaxNesting-body+1)), 4},
		{"yaml mappings at 65", yamlAt(nest("{a: ", "{}", "}", MaxNesting-body+1)), 4},
		{"json past the decoder's own bound", jsonAt(strings.Repeat("[", 20000)), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDoc(tc.text)
			if tc.line == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			checkError(t, err, Error{Line: tc.line, Field: field(err), Reason: "nested too deep"})
		})
	}
}

// field returns the field of err, an *Error, for tests whose field is
// long and beside the point.
func field(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Field
	}
	return ""
}

// TestListsBounded: a list longer than its kind's bound, or lists longer
// together than their bound in all, are refused at the first member past
// the bound, with that member's line and the list's field, in JSON and in
// YAML; a list of the bound's length, and one with no bound, are read.
func TestListsBounded(t *testing.T) {
	items := func(n int, sep, item string) string {
		return `{"items": [` + strings.TrimSuffix(strings.Repeat(item+sep, n), sep) + `]}`
	}
	tags := func(n int) string {
		return `{"items": [{"id": "1"}, {"id": "2", "tags": [` + strings.TrimSuffix(strings.Repeat(`"t",`, n), ",") + `]}]}`
	}
	stats := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(`"s` + strings.Repeat("x", i) + `": 1`)
		}
		return `{"items": [{"id": "1", "stats": {` + b.String() + `}}]}`
	}
	for _, tc := range []struct {
		name, text string
		want       Error // Line 0: accepted
	}{
		{"items at the bound", items(1000, ",", `{"id": "1"}`), Error{}},
		{"an item past the bound", items(1001, ",\n", `{"id": "1"}`), Error{Line: 1001, Field: "items", Reason: "more than 1000 entries"}},
		{"nulls past the bound", items(1001, ",\n", `null`), Error{Line: 1001, Field: "items", Reason: "more than 1000 entries"}},
		{"empty objects past the bound", items(1001, ",\n", `{}`), Error{Line: 1001, Field: "items", Reason: "more than 1000 entries"}},
		{"tags at the bound", tags(100), Error{}},
		{"a tag past the bound", tags(101), Error{Line: 1, Field: "items[1].tags", Reason: "more than 100 entries"}},
		{"stats at the bound", stats(100), Error{}},
		{"a stat past the bound", stats(101), Error{Line: 101, Field: "items[0].stats", Reason: "more than 100 entries"}},
		{"tags at the bound in all", `{"items": [{"id": "1", "tags": [` + list(`"t"`, 100) + `]}, {"id": "2", "tags": [` + list(`"t"`, 50) + `]}]}`, Error{}},
		{"a tag past the bound in all", "{\"items\": [{\"id\": \"1\", \"tags\": [" + list(`"t"`, 100) + "]},\n{\"id\": \"2\", \"tags\": [" + list(`"t"`, 51) + "]}]}",
			Error{Line: 2, Field: "items[1].tags", Reason: "more than 150 entries in all the lists like it"}},
		{"a long list with no bound", `{"items": [{"id": "1", "body": [` + strings.Repeat("{},", 5000) + `{}]}]}`, Error{}},
		{"yaml items past the bound", "items:\n" + strings.Repeat("- {}\n", 1001), Error{Line: 1002, Field: "items", Reason: "more than 1000 entries"}},
		{"yaml flow items past the bound", "items: [" + strings.Repeat("{},\n", 1000) + "{}]\n", Error{Line: 1001, Field: "items", Reason: "more than 1000 entries"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDoc(tc.text)
			if tc.want.Line == 0 {
				if err != nil && !strings.Contains(err.Error(), "not a number") {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			checkError(t, err, tc.want)
		})
	}
}

// list is n units, comma separated.
func list(unit string, n int) string { return strings.TrimSuffix(strings.Repeat(unit+",", n), ",") }
