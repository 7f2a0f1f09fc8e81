package datafile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// testDoc is shaped like the module's data files: a list of objects
// holding names, numbers, lists, maps, a duration read from text and a
// free-form body.
type testDoc struct {
	Items []testItem `json:"items"`
	Name  string     `json:"name,omitempty"`
}

type testItem struct {
	ID     string            `json:"id"`
	N      *int              `json:"n,omitempty"`
	Status int               `json:"status,omitempty"`
	Tags   []string          `json:"tags,omitempty"`
	Stats  map[string]int64  `json:"stats,omitempty"`
	Query  map[string]string `json:"query,omitempty"`
	Wait   testDuration      `json:"wait,omitempty"`
	Body   jsontext.Value    `json:"body,omitempty"`
}

// testDuration is a duration written as text ("2s").
type testDuration time.Duration

func (d *testDuration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = testDuration(v)
	return err
}

// testKind bounds testDoc's lists of objects and maps, as a kind must.
var testKind = Kind{Name: "test", MaxBytes: 16 << 20, Lists: map[string]int{
	"/items": 1000, "/items/*/tags": 100, "/items/*/stats": 100, "/items/*/query": 100,
}, Totals: map[string]int{"/items/*/tags": 150}}

// check is testDoc's own check: an item's id is a decimal number.
func (d *testDoc) check() error {
	for i, it := range d.Items {
		if _, err := strconv.ParseUint(it.ID, 10, 64); err != nil {
			return &Error{Field: fmt.Sprintf("items[%d].id", i), Reason: "not a number"}
		}
	}
	return nil
}

// readDoc reads text as a testKind file.
func readDoc(text string) (testDoc, error) {
	var d testDoc
	err := testKind.Read(strings.NewReader(text), &d, d.check)
	return d, err
}

// checkError checks that err is an *Error of the test kind with want's
// line and field, and a reason that starts with want's.
func checkError(t *testing.T, err error, want Error) {
	t.Helper()
	var got *Error
	if !errors.As(err, &got) {
		t.Fatalf("error %v, want an *Error", err)
	}
	if !strings.HasPrefix(got.Reason, want.Reason) {
		t.Errorf("reason %q, want it to start %q", got.Reason, want.Reason)
	}
	want.File = "test"
	if d := cmp.Diff(want, Error{File: got.File, Line: got.Line, Field: got.Field, Reason: want.Reason}); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// TestReadErrors: what is wrong is named with its line and field, in JSON
// and in YAML alike, whether the syntax, the decoder or the kind's check
// found it.
func TestReadErrors(t *testing.T) {
	const ok = "{\"items\": [\n  {\"id\": \"1\"},\n  {\"id\": \"2\"}\n]}"
	for _, tc := range []struct {
		name, text string
		want       Error
	}{
		{"syntax", "{\"items\": [\n  {\"id\": \"1\"},\n  {\"id\" \"2\"}\n]}", Error{Line: 3, Field: "items[1].id", Reason: "not JSON: invalid character"}},
		{"truncated", "{\"items\": [\n  {\"id\": \"1\"", Error{Line: 2, Field: "items[0]", Reason: "the file ends inside the document"}},
		{"more after the document", ok + "\n{}", Error{Line: 5, Reason: "more after the document"}},
		{"more after, lines ended by CR", strings.ReplaceAll(ok, "\n", "\r") + "\r{}", Error{Line: 5, Reason: "more after the document"}},
		{"more after, lines ended by CRLF", strings.ReplaceAll(ok, "\n", "\r\n") + "\r\n{}", Error{Line: 5, Reason: "more after the document"}},
		{"not UTF-8", "{\"items\": [\n  {\"id\": \"\xff\"}]}", Error{Line: 2, Field: "items[0].id", Reason: "not UTF-8"}},
		{"unknown field", "{\"items\": [\n  {\"id\": \"1\",\n   \"ids\": \"x\"}]}", Error{Line: 3, Field: "items[0].ids", Reason: "no such field"}},
		{"wrong type", "{\"items\": [\n  {\"id\": \"1\",\n   \"n\": \"lots\"}]}", Error{Line: 3, Field: "items[0].n", Reason: "a string where a whole number belongs"}},
		{"a fraction for a whole number", `{"items": [{"id": "1", "n": 1.5}]}`, Error{Line: 1, Field: "items[0].n", Reason: "a number where a whole number belongs"}},
		{"a number out of range", `{"items": [{"id": "1", "n": 99999999999999999999}]}`, Error{Line: 1, Field: "items[0].n", Reason: "a number out of range"}},
		{"a stat of the wrong type", "{\"items\": [{\"id\": \"1\",\n \"stats\": {\"k\": true}}]}", Error{Line: 2, Field: "items[0].stats.k", Reason: "true or false where a whole number belongs"}},
		{"a number for a duration", `{"items": [{"id": "1", "wait": 5}]}`, Error{Line: 1, Field: "items[0].wait", Reason: "a number where a string belongs"}},
		{"text that is no duration", `{"items": [{"id": "1", "wait": "soon"}]}`, Error{Line: 1, Field: "items[0].wait", Reason: "time: invalid duration"}},
		{"a list for the document", "[]", Error{Line: 1, Reason: "a list where an object belongs"}},
		{"the check's field", strings.Replace(ok, `"2"`, `"x2"`, 1), Error{Line: 3, Field: "items[1].id", Reason: "not a number"}},
		{"the check's field, lines ended by CR", strings.ReplaceAll(strings.Replace(ok, `"2"`, `"x2"`, 1), "\n", "\r"), Error{Line: 3, Field: "items[1].id", Reason: "not a number"}},
		{"empty", " \n\t", Error{Reason: "empty"}},
		{"yaml unknown field", "items:\n  - id: \"1\"\n  - id: \"2\"\n    ids: x\n", Error{Line: 4, Field: "items[1].ids", Reason: "no such field"}},
		{"yaml wrong type", "items:\n  - id: \"1\"\n    n: lots\n", Error{Line: 3, Field: "items[0].n", Reason: "a string where a whole number belongs"}},
		{"yaml wrong type on the line after its key", "items:\n  - id: \"1\"\n    n:\n      lots\n", Error{Line: 4, Field: "items[0].n", Reason: "a string where a whole number belongs"}},
		{"yaml check's field", "items:\n  - id: \"1\"\n  - id: x2\n", Error{Line: 3, Field: "items[1].id", Reason: "not a number"}},
		{"yaml check's field in a flow list", "items: [{id: \"1\"},\n  {id: x2}]\n", Error{Line: 2, Field: "items[1].id", Reason: "not a number"}},
		{"yaml syntax", "items:\n  - id: \"1\"\n\t- id: \"2\"\n", Error{Line: 3, Reason: "not YAML"}},
		{"yaml with no document", "# nothing\n", Error{Reason: "empty"}},
		{"yaml too large", "items: []\n" + strings.Repeat("#\n", MaxYAMLBytes), Error{Reason: "YAML larger than 1048576 bytes"}},
		{"too large", `{"items": [], "name": "` + strings.Repeat("x", testKind.MaxBytes) + `"}`, Error{Reason: "larger than 16777216 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDoc(tc.text)
			checkError(t, err, tc.want)
		})
	}
}

// TestNamesReadExactly: a member is read by its exact name, once. JSON's
// encoding/json kept the last of two members of one name and matched a
// name without case, by Unicode folding ("ſ", U+017F, folds to "s"), so
// what a reader (or grep) of a file saw first was not what was read.
func TestNamesReadExactly(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Error
	}{
		{"json id twice", "{\"items\": [{\"id\": \"1\",\n \"id\": \"2\"}]}", Error{Line: 2, Field: "items[0].id", Reason: "named twice"}},
		{"json items twice", "{\"items\": [{\"id\": \"1\"}],\n \"items\": []}", Error{Line: 2, Field: "items", Reason: "named twice"}},
		{"json id and ID", `{"items": [{"id": "1", "ID": "2"}]}`, Error{Line: 1, Field: "items[0].ID", Reason: "no such field"}},
		{"json status twice", `{"items": [{"id": "1", "status": 200, "status": 503}]}`, Error{Line: 1, Field: "items[0].status", Reason: "named twice"}},
		{"json a body's key twice", `{"items": [{"id": "1", "body": {"a": 1, "a": 2}}]}`, Error{Line: 1, Field: "items[0].body.a", Reason: "named twice"}},
		{"yaml id twice", "items:\n  - id: \"1\"\n    id: \"2\"\n", Error{Line: 3, Field: "items[0].id", Reason: "named twice"}},
		{"yaml a quoted key and a plain one", "items:\n  - id: \"1\"\n    stats: {1: 1, \"1\": 2}\n", Error{Line: 3, Field: "items[0].stats.1", Reason: "named twice"}},
		{"yaml id and ID", "items:\n  - id: \"1\"\n    ID: \"2\"\n", Error{Line: 3, Field: "items[0].ID", Reason: "no such field"}},
		{"yaml status and ſtatus (U+017F)", "items:\n  - id: \"1\"\n    status: 200\n    ſtatus: 503\n", Error{Line: 4, Field: "items[0].ſtatus", Reason: "no such field"}},
		{"yaml items and Items", "items:\n  - id: \"1\"\nItems:\n  - id: \"2\"\n", Error{Line: 3, Field: "Items", Reason: "no such field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDoc(tc.text)
			checkError(t, err, tc.want)
		})
	}
}

// TestReadAccepts: the forms a file may take read alike.
func TestReadAccepts(t *testing.T) {
	n := 7
	want := testDoc{Name: "x", Items: []testItem{{ID: "1", N: &n, Status: 503, Tags: []string{"a", "b"},
		Stats: map[string]int64{"1": 2}, Query: map[string]string{"since": "2024-01-01"}, Wait: testDuration(2 * time.Second), Body: jsontext.Value(`{"b":1,"a":[true,null]}`)}}}
	for _, tc := range []struct{ name, text string }{
		{"json", `{"name": "x", "items": [{"id": "1", "n": 7, "status": 503, "tags": ["a", "b"], "stats": {"1": 2}, "query": {"since": "2024-01-01"}, "wait": "2s", "body": {"b":1,"a":[true,null]}}]}`},
		{"yaml", "name: x\nitems:\n  - id: \"1\"\n    n: 7\n    status: 503\n    tags: [a, b]\n    stats: {1: 2}\n    query: {since: 2024-01-01}\n    wait: 2s\n    body: {b: 1, a: [true, ~]}\n"},
		{"yaml with core tags", "name: !!str x\nitems:\n  - id: !!str 1\n    n: !!int 7\n    status: 0x1F7\n    tags: !!seq [a, b]\n    stats: !!map {1: 2}\n    query: {since: 2024-01-01}\n    wait: 2s\n    body: {b: 1, a: [True, null]}\n"},
		{"yaml, one document marked", "---\nname: x\nitems: [{id: \"1\", n: 7, status: 503, tags: [a, b], stats: {1: 2}, query: {since: 2024-01-01}, wait: 2s, body: {b: 1, a: [true, null]}}]\n...\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readDoc(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestLoad: Load names the file in its errors, and one that cannot be
// opened is an *Error too, wrapping the *fs.PathError.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "bad.yaml")
	os.WriteFile(name, []byte("items:\n  - id: x\n"), 0o600)
	var d testDoc
	err := testKind.Load(name, &d, d.check)
	if got, want := fmt.Sprint(err), name+": line 2: items[0].id: not a number"; got != want {
		t.Errorf("Load = %q, want %q", got, want)
	}
	err = testKind.Load(filepath.Join(dir, "none.json"), &d, nil)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, fs.ErrNotExist) || e.File != filepath.Join(dir, "none.json") {
		t.Errorf("Load of a missing file = %v, want an *Error that is fs.ErrNotExist", err)
	}
}

// TestErrorsBounded: a field names keys, and a key may be long or hold
// escape codes; a reason never holds the file's text (the decoder quotes
// a number as written): an error stays under 400 bytes, escaped.
func TestErrorsBounded(t *testing.T) {
	long := strings.Repeat("k\x1b[2J", 20000)
	yamlLong := strings.ReplaceAll(long, "\x1b", `\e`)
	number := strings.Repeat("9", 100_000)
	for _, tc := range []struct{ name, text string }{
		{"yaml key named twice", "items:\n  - id: \"1\"\n    body:\n" + strings.Repeat("      ? \""+yamlLong+"\"\n      : 1\n", 2)},
		{"yaml alias under a long key", "items:\n  - id: \"1\"\n    body:\n      a: &x 1\n      ? \"" + yamlLong + "\"\n      : *x\n"},
		{"json unknown long key", `{"items": [{"` + strings.ReplaceAll(long, "\x1b", `\u001b`) + `": 1}]}`},
		{"json long number for a whole number", `{"items": [{"id": "1", "n": ` + number + `}]}`},
		{"json long number for a stat", `{"items": [{"id": "1", "stats": {"k": ` + number + `}}]}`},
		{"json long fraction for a whole number", `{"items": [{"id": "1", "status": 1.` + number + `}]}`},
		{"json long number for a duration", `{"items": [{"id": "1", "wait": ` + number + `}]}`},
		{"json long text for a duration", `{"items": [{"id": "1", "wait": "` + long + `"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDoc(tc.text)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%v, want an *Error", err)
			}
			if msg := err.Error(); len(msg) > 400 || strings.ContainsFunc(msg, unicode.IsControl) || strings.Contains(msg, "999999") {
				t.Errorf("error of %d bytes %q, want at most 400, with no control character or the number", len(msg), msg[:min(len(msg), 200)])
			}
		})
	}
}

// FuzzRead: whatever the input, the read ends in an *Error of at most 400
// bytes with no control character, or a value; a JSON input read is what
// go-json-experiment/json's strict decoding of it gives, and one refused
// that it decodes is refused for a bound (nesting, a list's length).
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"name": "x", "items": [{"id": "1", "n": 7, "tags": ["a"], "stats": {"1": 2}, "wait": "2s", "body": [1, {"a": null}]}]}`))
	f.Add([]byte("items:\n  - id: \"1\"\n    body: {b: 1, a: [true, ~, 2024-01-01, 0x1F, .inf]}\n"))
	f.Add([]byte(`{"items": [{"id": "1", "id": "2", "ID": 3}]}`))
	f.Add([]byte(`{"items": [{"id": "1", "body": [[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]}]}`))
	f.Add([]byte("items: [{id: &a 1}, {id: *a}]\n---\nx: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got testDoc
		err := testKind.Read(bytes.NewReader(data), &got, nil)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want an *Error", err, err)
			}
			if msg := err.Error(); len(msg) > 400 || strings.ContainsFunc(msg, unicode.IsControl) {
				t.Fatalf("error of %d bytes %q", len(msg), msg)
			}
		}
		if c := firstChar(data); c != '{' && c != '[' {
			return
		}
		var want testDoc
		werr := json.Unmarshal(data, &want, json.RejectUnknownMembers(true))
		switch e, _ := err.(*Error); {
		case err == nil && werr != nil:
			t.Fatalf("read what json/v2 refuses (%v)", werr)
		case err == nil:
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("read other than json/v2 (-json/v2 +read)\n%s", d)
			}
		case werr == nil && !strings.HasPrefix(e.Reason, "nested too deep") && !strings.HasPrefix(e.Reason, "more than"):
			t.Fatalf("refused what json/v2 reads, not for a bound: %v", err)
		}
	})
}
