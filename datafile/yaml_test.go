package datafile

import (
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// TestYAMLOneDocument: a file holds one document. yaml.Unmarshal read a
// stream's first and never parsed the rest, so a second one was dropped
// unread, malformed or not, where JSON refuses anything after its value.
func TestYAMLOneDocument(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Error
	}{
		{"a malformed second document", "items:\n  - id: \"1\"\n---\nitems: [oops\n", Error{Line: 3, Reason: "not YAML"}},
		{"the items in the second", "---\nitems: []\n---\nitems:\n  - id: \"1\"\n", Error{Line: 3, Reason: "more after the document"}},
		{"an empty second", "items: []\n---\n", Error{Line: 2, Reason: "more after the document"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDoc(tc.text)
			checkError(t, err, tc.want)
		})
	}
}

// TestYAMLNothingRewritten: what JSON has no form for is refused, not
// rewritten into something the file did not say: an alias (even as a key,
// which was written as the anchor's name where yaml.v3 reads the anchored
// value), an anchor, a merge key (written as a member named "<<"), a key
// that is a list or a mapping, a tag beyond YAML's core schema (!!binary
// was read as the bytes it encodes, invalid UTF-8 replaced), a number JSON
// cannot hold.
func TestYAMLNothingRewritten(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Error
	}{
		{"an alias as a key", "items:\n  - id: &x \"1\"\n    *x : 2\n", Error{Line: 2, Field: "items[0].id", Reason: "anchors and aliases are not read"}},
		{"an alias as a value", "name: &n x\nitems:\n  - id: *n\n", Error{Line: 1, Field: "name", Reason: "anchors and aliases are not read"}},
		{"a merge key", "items:\n  - {<<: {id: \"1\"}, n: 2}\n", Error{Line: 2, Field: "items[0]", Reason: "merge keys (<<) are not read"}},
		{"a list as a key", "items:\n  - id: \"1\"\n    ? [a]\n    : 1\n", Error{Line: 3, Field: "items[0]", Reason: "a key is text"}},
		{"binary", "items:\n  - id: \"1\"\n    query: {k: !!binary /w==}\n", Error{Line: 3, Field: "items[0].query.k", Reason: "a tag other than YAML's core ones (!!binary)"}},
		{"an explicit timestamp", "items:\n  - id: !!timestamp 2001-02-03\n", Error{Line: 2, Field: "items[0].id", Reason: "a tag other than YAML's core ones (!!timestamp)"}},
		{"a local tag", "items:\n  - id: !x \"1\"\n", Error{Line: 2, Field: "items[0].id", Reason: "a tag other than YAML's core ones (!x)"}},
		{"a tagged key", "items:\n  - !!binary aWQ=: \"1\"\n", Error{Line: 2, Field: "items[0]", Reason: "a tag other than YAML's core ones (!!binary)"}},
		{"infinity", "items:\n  - id: \"1\"\n    body: .inf\n", Error{Line: 3, Field: "items[0].body", Reason: "not a value JSON can hold"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDoc(tc.text)
			checkError(t, err, tc.want)
		})
	}
}

// TestYAMLScalarsKeptAsWritten: a plain scalar YAML resolves as a
// timestamp was written as RFC 3339 text, so a string held other text than
// the file's (yaml.v3 itself, reading into a string, keeps it as written):
// a query ?since=2024-01-01 never matched, an id of ten characters became
// twenty. It is kept as written.
func TestYAMLScalarsKeptAsWritten(t *testing.T) {
	got, err := readDoc("items:\n  - id: \"1\"\n    query: {since: 2024-01-01, at: 2001-12-14t21:59:43.10-05:00}\n")
	if err != nil {
		t.Fatal(err)
	}
	var native struct {
		Items []struct {
			Query map[string]string `yaml:"query"`
		} `yaml:"items"`
	}
	if err := yaml.Unmarshal([]byte("items:\n  - query: {since: 2024-01-01, at: 2001-12-14t21:59:43.10-05:00}\n"), &native); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(native.Items[0].Query, got.Items[0].Query); d != "" {
		t.Errorf("query (-yaml.v3 +read)\n%s", d)
	}
	if want := map[string]string{"since": "2024-01-01", "at": "2001-12-14t21:59:43.10-05:00"}; !cmp.Equal(want, got.Items[0].Query) {
		t.Errorf("query %q, want %q", got.Items[0].Query, want)
	}
}

// FuzzYAMLJSON: the JSON written for a YAML document is valid and holds
// what yaml.v3 itself reads (seen through JSON; a timestamp aside, which
// is kept as its text), and its line marks are in order within it.
func FuzzYAMLJSON(f *testing.F) {
	f.Add([]byte("items:\n  - id: \"1\"\n    n: 010\n    tags: [\"2\", 3, -4, +5, 0x1F, 1_000]\n"))
	f.Add([]byte("a: [true, True, FALSE, yes, ~, null, 1.5, .inf, 2024-01-01, !!binary aGk=, !!str 12, '7', \"\\e\"]\n"))
	f.Add([]byte("? [a]\n: 1\n? {b: c}\n: 2\n"))
	f.Add([]byte("a: &x 1\nb: *x\nc: {<<: {d: 1}}\n"))
	f.Add([]byte("a: 1\n---\nb: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s source
		if s.fromYAML(data) != nil {
			return
		}
		if !jsontext.Value(s.json).IsValid(jsontext.AllowDuplicateNames(true)) {
			t.Fatalf("invalid JSON %q", s.json)
		}
		if !slices.IsSortedFunc(s.marks, func(a, b lineMark) int { return int(a.at - b.at) }) ||
			len(s.marks) > 0 && int(s.marks[len(s.marks)-1].at) > len(s.json) {
			t.Fatalf("marks out of order or past the JSON: %v", s.marks)
		}
		var want any
		if yaml.Unmarshal(data, &want) != nil || holdsTime(want) {
			return
		}
		wantJSON, err := json.Marshal(want)
		if err != nil {
			return // keys yaml.v3 reads as other than strings
		}
		var got, again any
		if err := json.Unmarshal(s.json, &got); err != nil {
			return // a key named twice, which the read refuses
		}
		json.Unmarshal(wantJSON, &again)
		if d := cmp.Diff(again, got); d != "" {
			t.Fatalf("YAML %q: JSON differs from yaml.v3's (-yaml.v3 +ours)\n%s", data, d)
		}
	})
}

// holdsTime reports whether v, as yaml.v3 reads it into any, holds a
// timestamp (which the JSON keeps as its text).
func holdsTime(v any) bool {
	switch v := v.(type) {
	case time.Time:
		return true
	case []any:
		return slices.ContainsFunc(v, holdsTime)
	case map[string]any:
		for _, e := range v {
			if holdsTime(e) {
				return true
			}
		}
	case map[any]any:
		return true // not JSON anyway
	}
	return false
}
