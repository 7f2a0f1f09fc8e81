package wiretest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEveryExchangeParses: every recorded file loads, names its sources and
// says who calls.
func TestEveryExchangeParses(t *testing.T) {
	names := Names()
	if len(names) < 18 {
		t.Fatalf("%d exchanges, want one per typed call (18)", len(names))
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			x, err := Load(n)
			if err != nil {
				t.Fatal(err)
			}
			if len(x.Sources) == 0 || x.Caller == "" || x.Title == "" || x.Header["X-Xbl-Contract-Version"] == "" {
				t.Errorf("%s: want sources, caller, title and a contract version: %+v", n, x)
			}
			for _, b := range x.Before {
				if _, err := Load(b); err != nil {
					t.Errorf("before: %v", err)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no request marker", "GET /x\n", `no "-- request --" line`},
		{"no request line", "# only a comment\n-- request --\n-- response 200 --\n", "no request line"},
		{"relative path", "GET x\n-- request --\n-- response 200 --\n", "want METHOD /path"},
		{"no response", "GET /x\n-- request --\n", `no "-- response STATUS --" line`},
		{"bad status", "GET /x\n-- request --\n\n-- response abc --\n", "bad status"},
		{"status out of range", "GET /x\n-- request --\n\n-- response 999 --\n", "bad status"},
		{"request not JSON", "GET /x\n-- request --\n{\n-- response 200 --\n", "request body is not JSON"},
		{"answer not JSON", "GET /x\n-- request --\n\n-- response 200 --\nnope", "response body is not JSON"},
		{"header without colon", "GET /x\nnoheader\n-- request --\n\n-- response 200 --\n", "want a header"},
		{"bad escape", "GET /x%zz\n-- request --\n\n-- response 200 --\n", "bad path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v, want an error containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	x, err := Parse([]byte("# src\ncaller: 1\ntitle: 2\nbefore: A B\nGET /users/xuid(1)/a,b?x=1&y=2\nx-xbl-contract-version: 3.1\n-- request --\n-- response 204 --\n"))
	if err != nil {
		t.Fatal(err)
	}
	if x.Method != "GET" || x.RawPath != "/users/xuid(1)/a,b" || x.Query.Get("y") != "2" || x.Status != 204 ||
		x.Answer != nil || x.Header["X-Xbl-Contract-Version"] != "3.1" || strings.Join(x.Before, ",") != "A,B" {
		t.Errorf("Parse = %+v", x)
	}
}

func TestShapeDiff(t *testing.T) {
	tests := []struct {
		name, want, got string
		diff            []string // substrings, one per expected line; none means equal
	}{
		{"same shape, other values", `{"a":"x","b":[1,2],"c":{"d":true}}`, `{"a":"y","b":[3],"c":{"d":false}}`, nil},
		{"missing field", `{"a":"x","b":1}`, `{"a":"x"}`, []string{"-$.b: number"}},
		{"extra field", `{"a":"x"}`, `{"a":"x","z":1}`, []string{"+$.z: number"}},
		{"wrong type", `{"a":"1"}`, `{"a":1}`, []string{"-$.a: string", "+$.a: number"}},
		{"null matches any", `{"a":null}`, `{"a":{"b":1}}`, nil},
		{"nested", `{"u":{"v":[{"w":1}]}}`, `{"u":{"v":[{"w":"1"}]}}`, []string{"-$.u.v[0].w: number"}},
		{"one of the recorded element shapes", `[{"s":"on","d":[]},{"s":"off"}]`, `[{"s":"off"},{"s":"on","d":[]}]`, nil},
		{"no recorded element fits", `[{"s":"on"}]`, `[{"t":1}]`, []string{"-$[0].s: string", "+$[0].t: number"}},
		{"empty array", `{"a":[1]}`, `{"a":[]}`, nil},
		{"root type", `[]`, `{}`, []string{"-$: array"}},
		{"number beyond float64", `{"n":1e999}`, `{"n":` + strings.Repeat("6", 400) + `}`, nil},
		{"trailing data", `{}`, `{} {}`, []string{"+got is not JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ShapeDiff([]byte(tt.want), []byte(tt.got))
			if len(tt.diff) == 0 && got != "" {
				t.Errorf("ShapeDiff = %q, want none", got)
			}
			for _, d := range tt.diff {
				if !strings.Contains(got, d) {
					t.Errorf("ShapeDiff = %q, want it to contain %q", got, d)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		b, _ := files.ReadFile("testdata/" + n + ".txt")
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := Parse(b)
		if err != nil {
			return
		}
		if x.Status < 100 || x.Status > 599 || !strings.HasPrefix(x.RawPath, "/") {
			t.Fatalf("Parse accepted %+v", x)
		}
		if x.Answer != nil && !json.Valid(x.Answer) {
			t.Fatal("answer is not JSON")
		}
	})
}

func FuzzShapeDiff(f *testing.F) {
	f.Add([]byte(`{"a":[{"b":null}]}`), []byte(`{"a":[{"b":1},{"c":2}]}`))
	f.Add([]byte(strings.Repeat("6", 400)), []byte(`1e999`)) // once failed: beyond float64
	f.Add([]byte(`{"a":1,"a":"x","\ud800":[]}`), []byte(`{}`))
	f.Add([]byte(`[null,[null,[null,1]]]`), []byte(`[[1],null]`)) // once failed: a null element not its own shape
	f.Fuzz(func(t *testing.T, want, got []byte) {
		// A body has its own shape, but for the names it gives twice or
		// that are not valid text, reported on both sides.
		if d := ShapeDiff(want, want); json.Valid(want) && d != "" {
			for _, line := range strings.Split(d, "\n") {
				if !strings.HasSuffix(line, ": named twice") && !strings.HasSuffix(line, ": a name that is not valid text") && !strings.HasSuffix(line, " more differences") {
					t.Fatalf("ShapeDiff(x, x) = %q for %q", d, want)
				}
			}
		}
		ShapeDiff(want, got)
	})
}
