package analyze

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestAttackOutputsClipAndEscape: a trace whose host holds escape codes
// and 5,000 more bytes (the fallback rule judges any *.xboxlive.com host),
// and whose userhash holds escape codes, 429s in a row. The promise:
// server and trace text is clipped and escaped in every output. The HTML
// report (the --html file, and --format html on standard output) carries
// the ESC and BEL bytes raw, so that printing it to a terminal runs them;
// the JSON, JUnit and SARIF reports carry the 5,000 bytes unclipped (the
// JUnit classname and a finding's text, SARIF's logical location).
func TestAttackOutputsClipAndEscape(t *testing.T) {
	host := `\u001b[2J` + strings.Repeat("a", 5000) + ".xboxlive.com" // JSON text
	e := func(s string) string {
		return `{"startedDateTime": "2026-03-01T20:00:0` + s + `Z", "request": {"method": "GET", "url": "https://` + host + `/x",
			"headers": [{"name": "Authorization", "value": "XBL3.0 x=\u001b]0;pwned\u0007u;t"}]},
			"response": {"status": 429, "headers": [{"name": "Retry-After", "value": "60"}]}}`
	}
	a, _ := New(nil, nil)
	in, err := ReadHAR(strings.NewReader(`{"log": {"entries": [`+e("1")+", "+e("2")+"]}}"), a.Add)
	if err != nil {
		t.Fatal(err)
	}
	a.AddInput(in)
	rep := a.Report()
	if rep.Verdict != Red {
		t.Fatalf("verdict %s, want red", rep.Verdict)
	}
	outputs := map[string]func(*bytes.Buffer) error{
		"html":  func(b *bytes.Buffer) error { return rep.WriteHTML(b) },
		"junit": func(b *bytes.Buffer) error { return rep.WriteJUnit(b) },
		"sarif": func(b *bytes.Buffer) error { return rep.WriteSARIF(b) },
		"json": func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		},
	}
	for name, write := range outputs {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			if i := bytes.IndexAny(b.Bytes(), "\x1b\x07"); i >= 0 {
				t.Errorf("a raw control byte at %d: %q", i, b.Bytes()[max(0, i-30):min(b.Len(), i+20)])
			}
			if n := strings.Count(b.String(), strings.Repeat("a", 1000)); n > 0 {
				t.Errorf("the host's 5,000 bytes unclipped (%d runs of 1,000)", n)
			}
		})
	}
}
