package analyze

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestReportTextEscapedOnce: trace text in a report (a host of 5,000 bytes
// holding escape codes, which the fallback rule judges as any
// *.xboxlive.com host; a userhash holding escape codes, as Analyzer.Add
// takes it from a caller) is escaped and clipped once, as the report is
// built: no output (HTML, JUnit, SARIF, JSON) carries a raw ESC or BEL or
// the host whole, and each carries the escape as the report holds it
// (\x1b, not \\x1b). Before, the HTML report carried ESC and BEL raw
// (html/template escapes no control character), so printing it to a
// terminal ran them, and the JSON, JUnit and SARIF reports carried the
// 5,000 bytes (the JUnit classname, a finding's text, SARIF's logical
// location).
// A HAR naming that host is not read whole (such a host is no DNS name:
// TestAtkPercentEncodedHostJudgedApart), and its outputs carry none of it.
func TestReportTextEscapedOnce(t *testing.T) {
	host := "\x1b[2J" + strings.Repeat("a", 5000) + ".xboxlive.com"
	har := func(s string) string {
		return `{"startedDateTime": "2026-03-01T20:00:0` + s + `Z", "request": {"method": "GET", "url": "https://\u001b[2J` + strings.Repeat("a", 5000) + `.xboxlive.com/x",
			"headers": [{"name": "Authorization", "value": "XBL3.0 x=\u001b]0;pwned\u0007u;t"}]},
			"response": {"status": 429, "headers": [{"name": "Retry-After", "value": "60"}]}}`
	}
	fromHAR := func(t *testing.T) *Report {
		a, _ := New(nil, nil)
		in, err := ReadHAR(strings.NewReader(`{"log": {"entries": [`+har("1")+", "+har("2")+"]}}"), a.Add)
		if err != nil {
			t.Fatal(err)
		}
		a.AddInput(in)
		return a.Report()
	}
	fromAdd := func(t *testing.T) *Report {
		var tr trace
		for i := range 2 {
			tr.add(float64(i), "GET", "https://"+host+"/x", "", 429).Authorization = "XBL3.0 x=\x1b]0;pwned\x07u;t"
		}
		return tr.report(t)
	}
	outputs := map[string]func(*Report, *bytes.Buffer) error{
		"html":  (*Report).writeHTMLTo,
		"junit": func(r *Report, b *bytes.Buffer) error { return r.WriteJUnit(b) },
		"sarif": func(r *Report, b *bytes.Buffer) error { return r.WriteSARIF(b) },
		"json":  func(r *Report, b *bytes.Buffer) error { return json.NewEncoder(b).Encode(r) },
	}
	for name, build := range map[string]func(*testing.T) *Report{"read from a HAR": fromHAR, "added": fromAdd} {
		rep, want := build(t), Red
		if name == "read from a HAR" {
			want = Incomplete
		}
		if rep.Verdict != want {
			t.Fatalf("%s: verdict %s, want %s", name, rep.Verdict, want)
		}
		for format, write := range outputs {
			t.Run(name+", "+format, func(t *testing.T) {
				var b bytes.Buffer
				if err := write(rep, &b); err != nil {
					t.Fatal(err)
				}
				if i := bytes.IndexAny(b.Bytes(), "\x1b\x07"); i >= 0 {
					t.Errorf("a raw control byte at %d: %q", i, b.Bytes()[max(0, i-30):min(b.Len(), i+20)])
				}
				if n := strings.Count(b.String(), strings.Repeat("a", 1000)); n > 0 {
					t.Errorf("the host's 5,000 bytes unclipped (%d runs of 1,000)", n)
				}
				escaped := `\x1b[2`
				if format == "json" || format == "sarif" {
					escaped = `\\x1b[2` // a backslash, as JSON writes it
				}
				if want == Red && !strings.Contains(b.String(), escaped) || strings.Contains(b.String(), `\`+escaped) {
					t.Errorf("the escape not as the report holds it (%s, once)", escaped)
				}
			})
		}
	}
}

// writeHTMLTo is WriteHTML into a buffer.
func (r *Report) writeHTMLTo(b *bytes.Buffer) error { return r.WriteHTML(b) }
