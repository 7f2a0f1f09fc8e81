package mock

import (
	"errors"
	"strings"
	"testing"
	"unicode"
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

