package mock

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// FuzzYAMLJSON: the JSON written for a YAML document is valid and holds
// what yaml.v3 itself decodes (seen through JSON), and its line marks are
// in order within it.
func FuzzYAMLJSON(f *testing.F) {
	f.Add([]byte("accounts:\n  - xuid: \"1\"\n    gamertag: Ada\n    gamerscore: 010\n    friends: [\"2\", 3, -4, +5, 0x1F, 1_000]\n"))
	f.Add([]byte("a: [true, True, FALSE, yes, ~, null, 1.5, .inf, 2024-01-01, !!binary aGk=, !!str 12, '7', \"\\e\"]\n"))
	f.Add([]byte("? [a]\n: 1\n? {b: c}\n: 2\n"))
	f.Add([]byte("a: &x 1\nb: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s source
		if s.fromYAML(data) != nil {
			return
		}
		if !json.Valid(s.json) {
			t.Fatalf("invalid JSON %q", s.json)
		}
		if !slices.IsSortedFunc(s.marks, func(a, b lineMark) int { return int(a.at - b.at) }) ||
			len(s.marks) > 0 && int(s.marks[len(s.marks)-1].at) > len(s.json) {
			t.Fatalf("marks out of order or past the JSON: %v", s.marks)
		}
		var want any
		if yaml.Unmarshal(data, &want) != nil {
			return
		}
		wantJSON, err := json.Marshal(want)
		if err != nil {
			return // keys yaml.v3 decodes as other than strings
		}
		var got, again any
		json.Unmarshal(s.json, &got)
		json.Unmarshal(wantJSON, &again)
		if d := cmp.Diff(again, got); d != "" {
			t.Fatalf("YAML %q: JSON differs from yaml.v3's (-yaml.v3 +ours)\n%s", data, d)
		}
	})
}
