package datafile

import (
	"testing"
)

// TestErrorLineAndField: an error is placed where the decoder found it,
// by the path of what it read, not by text that merely looks alike: a key
// of the same name earlier in a body or a map, a value equal to the name,
// the second of two lists; and lines end at a bare CR as at a LF.
func TestErrorLineAndField(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Error
	}{
		{"unknown field whose name is a key of an earlier body",
			"{\"items\": [\n{\"id\": \"1\", \"body\": {\"nmae\": 1}},\n{\"nmae\": \"x\", \"id\": \"2\"}\n]}",
			Error{Line: 3, Field: "items[1].nmae", Reason: "no such field"}},
		{"unknown field whose name is an earlier query's",
			"{\"items\": [\n{\"id\": \"1\", \"query\": {\"tags2\": \"1\"}},\n{\"tags2\": \"x\", \"id\": \"2\"}\n]}",
			Error{Line: 3, Field: "items[1].tags2", Reason: "no such field"}},
		{"unknown field whose name is an earlier value",
			"{\"items\": [{\"id\": \"1\", \"tags\": [\"tier2\"]},\n  {\"id\": \"2\", \"tier2\": \"x\"}]}",
			Error{Line: 2, Field: "items[1].tier2", Reason: "no such field"}},
		{"the check's field after a body holding its name",
			"{\"items\": [\n{\"id\": \"1\", \"body\": {\"items\": [{\"id\": \"1\"}, {\"id\": \"y\"}]}},\n{\"id\": \"x\"}]}",
			Error{Line: 3, Field: "items[1].id", Reason: "not a number"}},
		{"the second of two ids",
			"{\"items\": [{\"id\": \"1\",\n\"id\": \"x\"}]}",
			Error{Line: 2, Field: "items[0].id", Reason: "named twice"}},
		{"lines ended by CR",
			"{\"items\": [\r{\"id\": \"1\"},\r{\"id\": \"x\"}]}",
			Error{Line: 3, Field: "items[1].id", Reason: "not a number"}},
		{"lines ended by CRLF and CR",
			"{\"items\": [\r\n{\"id\": \"1\"},\r\r\n{\"id\": \"x\"}]}",
			Error{Line: 4, Field: "items[1].id", Reason: "not a number"}},
		{"a key with a dot",
			"{\"items\": [{\"id\": \"1\",\n \"stats\": {\"a.b\": \"x\"}}]}",
			Error{Line: 2, Field: "items[0].stats.a.b", Reason: "a string where a whole number belongs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDoc(tc.text)
			checkError(t, err, tc.want)
		})
	}
}

// TestLocate: locate finds a value by its path, at its member's name, and
// the deepest value on a path that goes further than the JSON.
func TestLocate(t *testing.T) {
	const text = `{"a": [1, {"b": 2, "c": [3, 4]}], "d": {"a": 5}}`
	for _, tc := range []struct {
		path  []string
		at    int
		field string
	}{
		{nil, 0, ""},
		{[]string{"a"}, 1, "a"},
		{[]string{"a", "1", "c", "1"}, 28, "a[1].c[1]"},
		{[]string{"d", "a"}, 40, "d.a"},
		{[]string{"a", "1", "x", "y"}, 10, "a[1].x.y"},
		{[]string{"a", "7"}, 1, "a[7]"},
		{[]string{"a", "0", "z"}, 7, "a[0].z"},
	} {
		s := &source{json: []byte(text)}
		at, field := s.locate(tc.path)
		if at != tc.at || field != tc.field {
			t.Errorf("locate(%q) = %d, %q; want %d, %q", tc.path, at, field, tc.at, tc.field)
		}
	}
}
