package mock

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// Attacks on the strict reading of world and script files (filedecode.go,
// filewalk.go, yamljson.go). Each test fails on the code as it is.

// TestAttackEmptyObjectsAllocatePerByte: a list of empty objects ("{},",
// three bytes) decodes each into a whole struct (a WorldAccount is 176
// bytes) before the count bound refuses the list, so these files allocate
// far past the bound per byte that TestReadingLinear holds the hostile
// shapes to (48 bytes a byte for JSON, 200 for YAML). At 16 MiB the JSON
// accounts shape allocates 5.9 GB and peaks at 3.5 GB RSS.
func TestAttackEmptyObjectsAllocatePerByte(t *testing.T) {
	const n = 64 << 10
	perByte := map[bool]float64{false: 48, true: 200} // as TestReadingLinear
	for _, f := range []hostileFile{
		{name: "json empty accounts", file: "world", gen: func() []byte { return fillBytes(n, `{"accounts": [`, "{}", ",", "]}") }},
		{name: "json null accounts", file: "world", gen: func() []byte { return fillBytes(n, `{"accounts": [`, "null", ",", "]}") }},
		{name: "json empty rules", file: "script", gen: func() []byte { return fillBytes(n, `{"rules": [`, "{}", ",", "]}") }},
		{name: "json empty answers", file: "script", gen: func() []byte { return fillBytes(n, `{"rules": [{"answers": [`, "{}", ",", "]}]}") }},
		{name: "yaml flow empty accounts", file: "world", gen: func() []byte { return fillBytes(n, "accounts: [", "{}", ",", "]\n") }},
		{name: "yaml block empty accounts", file: "world", gen: func() []byte { return fillBytes(n, "accounts:\n", "- {}\n", "", "") }},
	} {
		t.Run(f.name, func(t *testing.T) {
			f := f.made()
			got := float64(allocated(t, f)) / float64(len(f.data))
			if limit := perByte[strings.HasPrefix(f.name, "yaml")]; got > limit {
				t.Errorf("%d bytes allocated %.0f bytes a byte, want at most %.0f", len(f.data), got, limit)
			}
		})
	}
}

// TestAttackLongNumberErrorBounded: encoding/json's UnmarshalTypeError
// carries the number as written ("number 999..."), and decodeError puts it
// in the reason unclipped: a 100,000-digit number where a whole number
// belongs makes an error of 100 KB (16 MB for a file at the bound),
// answered whole by the admin API's 400.
func TestAttackLongNumberErrorBounded(t *testing.T) {
	long := strings.Repeat("9", 100_000)
	for _, tc := range []struct{ name, file, text string }{
		{"world gamerscore", "world", `{"accounts": [{"xuid": "1", "gamerscore": ` + long + `}]}`},
		{"world stat", "world", `{"accounts": [{"xuid": "1", "titles": [{"titleId": "1", "stats": {"k": ` + long + `}}]}]}`},
		{"script status", "script", `{"rules": [{"answers": [{"status": ` + long + `}]}]}`},
		{"fraction where a whole number belongs", "script", `{"rules": [{"answers": [{"status": 1.` + long + `}]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := hostileFile{file: tc.file, data: []byte(tc.text)}.read()
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("%v, want a *FileError", err)
			}
			if msg := err.Error(); len(msg) > 400 || strings.ContainsFunc(msg, unicode.IsControl) {
				t.Errorf("error of %d bytes %s, want at most 400", len(msg), safeHead(msg))
			}
		})
	}
}

// TestAttackLongNumberAdminAnswer: the admin API answers a refused world
// with its error whole: a 1,000,000-digit gamerscore makes a 400 of 1 MB.
func TestAttackLongNumberAdminAnswer(t *testing.T) {
	srv := serveAll(t, NewHandler())
	file := `{"accounts": [{"xuid": "1", "gamerscore": ` + strings.Repeat("9", 1_000_000) + `}]}`
	req, _ := http.NewRequest("PUT", srv.URL+AdminPrefix+"api/world", strings.NewReader(file))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || len(b) > 1000 {
		t.Errorf("answer %d of %d bytes %s, want 400 of at most 1000", resp.StatusCode, len(b), safeHead(string(b)))
	}
}

// TestAttackDuplicateKeysRefused: YAML refuses a key named twice, but
// encoding/json keeps the last of two keys silently, and matches a field's
// name without case, by Unicode folding ("ſ", U+017F, folds to "s"). So a
// JSON file may name a field twice, and a YAML one too, in another case:
// what a reader (or grep) of the file sees first is not what the mock
// reads.
func TestAttackDuplicateKeysRefused(t *testing.T) {
	for _, tc := range []struct{ name, file, text string }{
		{"json xuid twice", "world", `{"accounts": [{"xuid": "1", "xuid": "2"}]}`},
		{"json accounts twice", "world", `{"accounts": [{"xuid": "1"}], "accounts": []}`},
		{"json xuid and XUID", "world", `{"accounts": [{"xuid": "1", "XUID": "2"}]}`},
		{"json status twice", "script", `{"rules": [{"answers": [{"status": 200, "status": 503}]}]}`},
		{"yaml xuid and XUID", "world", "accounts:\n  - xuid: \"1\"\n    XUID: \"2\"\n"},
		{"yaml status and ſtatus (U+017F)", "script", "rules:\n  - answers:\n      - status: 200\n        ſtatus: 503\n"},
		{"yaml rules and Rules", "script", "rules:\n  - answers: [{status: 200}]\nRules:\n  - answers: [{status: 503}]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := hostileFile{file: tc.file, data: []byte(tc.text)}.read()
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("accepted (%v), want a *FileError: the field is named twice", err)
			}
		})
	}
}

// TestAttackErrorLineAndField: an error names the line and field of what
// is wrong. The walk that finds them reads the file differently from the
// decoder: it names the first key of a name anywhere in the file (an
// answer's body among them), the first of two keys the decoder kept the
// last of, and counts lines by "\n" only.
func TestAttackErrorLineAndField(t *testing.T) {
	for _, tc := range []struct {
		name, file, text string
		want             FileError
	}{
		{"unknown field whose name is a key of an earlier body", "script",
			"{\"rules\": [\n{\"answers\": [{\"body\": {\"nmae\": 1}}]},\n{\"nmae\": \"x\", \"answers\": [{}]}\n]}",
			FileError{Line: 3, Field: "rules[1].nmae", Reason: "no such field"}},
		{"unknown field whose name is an earlier header", "script",
			"{\"rules\": [\n{\"answers\": [{\"headers\": {\"then2\": \"1\"}}]},\n{\"then2\": \"x\", \"answers\": [{}]}\n]}",
			FileError{Line: 3, Field: "rules[1].then2", Reason: "no such field"}},
		{"the second of two xuid keys is the bad one", "world",
			"{\"accounts\": [{\"xuid\": \"1\",\n\"xuid\": \"x\"}]}",
			FileError{Line: 2, Field: "accounts[0].xuid", Reason: "not a XUID"}},
		{"the second of two accounts lists is the bad one", "world",
			"{\"accounts\": [{\"xuid\": \"1\"}, {\"xuid\": \"2\"}],\n\"accounts\": [{\"xuid\": \"3\"}, {\"xuid\": \"y\"}]}",
			FileError{Line: 2, Field: "accounts[1].xuid", Reason: "not a XUID"}},
		{"lines ended by CR", "world",
			"{\"accounts\": [\r{\"xuid\": \"1\"},\r{\"xuid\": \"x\"}]}",
			FileError{Line: 3, Field: "accounts[1].xuid", Reason: "not a XUID"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := hostileFile{file: tc.file, data: []byte(tc.text)}.read()
			checkFileError(t, err, tc.want, tc.file)
		})
	}
}

// TestAttackYAMLSecondDocumentRefused: yaml.Unmarshal reads a stream's
// first document and never parses the rest, so a world or script of two
// documents is accepted with the second dropped unread, malformed or not,
// where JSON refuses anything after the document ("more after the
// document").
func TestAttackYAMLSecondDocumentRefused(t *testing.T) {
	for _, tc := range []struct{ name, file, text string }{
		{"world, a malformed second document", "world", "accounts:\n  - xuid: \"1\"\n---\naccounts: [oops\n"},
		{"world, the accounts in the second", "world", "---\naccounts: []\n---\naccounts:\n  - xuid: \"1\"\n    gamertag: Eve\n"},
		{"script, the rule in the second", "script", "rules: []\n---\nrules:\n  - answers: [{status: 503}]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := hostileFile{file: tc.file, data: []byte(tc.text)}.read()
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("accepted (%v), want a *FileError: more after the document", err)
			}
		})
	}
}

// TestAttackYAMLJSONDiffersFromYAMLv3: FuzzYAMLJSON's property (the JSON
// written for YAML holds what yaml.v3 itself decodes) fails for a merge
// key, written as a member named "<<" (sent so in a script's body), and
// for an alias used as a key, written as the anchor's name where yaml.v3
// reads the anchored value; an alias is to be refused ("aliases are not
// read"), but one in a key is not looked at.
func TestAttackYAMLJSONDiffersFromYAMLv3(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"merge key", "a: {<<: {x: 1}, b: 2}\n"},
		{"alias as a key", "a: &x k\n*x : 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s source
			if err := s.fromYAML([]byte(tc.text)); err != nil {
				return // refused: fine
			}
			var want any
			if err := yaml.Unmarshal([]byte(tc.text), &want); err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(want)
			var got, again any
			json.Unmarshal(s.json, &got)
			json.Unmarshal(wantJSON, &again)
			if d := cmp.Diff(again, got); d != "" {
				t.Errorf("JSON differs from yaml.v3's (-yaml.v3 +ours)\n%s", d)
			}
		})
	}
	t.Run("alias key sets a field", func(t *testing.T) {
		w, err := ReadWorld(strings.NewReader("accounts:\n  - xuid: &gamertag \"1\"\n    *gamertag : Eve\n"))
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("accepted as %+v, want a *FileError: aliases are not read", w.Accounts)
		}
	})
}

// TestAttackYAMLScalarKeptAsWritten: a plain scalar YAML resolves as a
// timestamp is written as RFC 3339 text, so a string field holds other
// text than the file's (yaml.v3 itself, decoding into a string, keeps it
// as written): a rule matching ?since=2024-01-01 never matches, a header
// is sent rewritten, a gamertag is refused as too long. Binary data is
// rewritten the same way, its invalid UTF-8 replaced, so the gamertag
// check's "not UTF-8" never sees it.
func TestAttackYAMLScalarKeptAsWritten(t *testing.T) {
	t.Run("query value", func(t *testing.T) {
		text := "rules:\n  - match: {query: {since: 2024-01-01}}\n    answers: [{status: 200}]\n"
		s, err := ReadScript(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		var native Script
		if err := yaml.Unmarshal([]byte(text), &native); err != nil {
			t.Fatal(err)
		}
		if got, want := s.Rules[0].Match.Query["since"], native.Rules[0].Match.Query["since"]; got != want {
			t.Errorf("query since = %q, want %q (as written, as yaml.v3 reads it)", got, want)
		}
	})
	t.Run("header value", func(t *testing.T) {
		s, err := ReadScript(strings.NewReader("rules:\n  - answers: [{headers: {X-Day: 2024-01-01}}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.Rules[0].Answers[0].Headers["X-Day"], "2024-01-01"; got != want {
			t.Errorf("header = %q, want %q", got, want)
		}
	})
	t.Run("gamertag", func(t *testing.T) {
		w, err := ReadWorld(strings.NewReader("accounts:\n  - xuid: \"1\"\n    gamertag: 2001-02-03\n"))
		if err != nil {
			t.Fatalf("%v, want the gamertag 2001-02-03 (10 characters)", err)
		}
		if got := w.Accounts[0].Gamertag; got != "2001-02-03" {
			t.Errorf("gamertag %q, want 2001-02-03", got)
		}
	})
	t.Run("binary gamertag", func(t *testing.T) {
		w, err := ReadWorld(strings.NewReader("accounts:\n  - xuid: \"1\"\n    gamertag: !!binary /w==\n"))
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("accepted as %q, want refused: the gamertag is the byte 0xff, not UTF-8", w.Accounts[0].Gamertag)
		}
	})
}

// TestAttackSameXUIDTwice: a world's accounts are one a XUID, a title is
// named once in an account, but both are compared as text: "1" and "01"
// (and "0001") are the same decimal number, each a XUID to CheckXUID, and
// are taken as two accounts; "7" and "07" as two titles.
func TestAttackSameXUIDTwice(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"accounts 1 and 01", `{"accounts": [{"xuid": "1"}, {"xuid": "01"}]}`},
		{"a friend that is the account itself", `{"accounts": [{"xuid": "1", "friends": ["01"]}, {"xuid": "01"}]}`},
		{"titles 7 and 07", `{"accounts": [{"xuid": "1", "titles": [{"titleId": "7"}, {"titleId": "07"}]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := ReadWorld(strings.NewReader(tc.text))
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("accepted as %+v, want a *FileError: the same XUID or title twice", w.Accounts)
			}
		})
	}
}

// TestAttackScriptHeaderChecked: validHeader refuses a few separators in
// a header's name and line breaks and NUL in its value, and its reason
// says "a header name is a token", but a name with a control character
// or a non-ASCII letter passes (net/http then drops the header without a
// word), and so does a value with other control characters (written as
// it is, so that a Go client fails the whole answer: "malformed MIME
// header line").
func TestAttackScriptHeaderChecked(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"control character in a name", `{"rules": [{"answers": [{"headers": {"X-\u0001": "v"}}]}]}`},
		{"non-ASCII name", `{"rules": [{"answers": [{"headers": {"Xé": "v"}}]}]}`},
		{"control characters in a value", `{"rules": [{"answers": [{"headers": {"X-A": "a\u0001\u007fb"}}]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadScript(strings.NewReader(tc.text))
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("accepted as %q, want a *FileError: not a header net/http writes", s.Rules[0].Answers[0].Headers)
			}
		})
	}
}
