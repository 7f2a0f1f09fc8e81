package analyze_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// held: TestAttack3CIOutputsCarryNoMarkupFromTrace: analyze/doc.go "Reports for
// CI" (WriteJUnit, WriteSARIF) and RELIABILITY.md:465 (every trace-sourced
// string escaped and clipped once). A red HAR whose host (judged by the
// fallback rule, *.xboxlive.com) holds "]]>", "<failure>", a NUL, U+FFFE,
// an ESC and a line break (a CI log line of its own): JUnit is
// well-formed XML with no raw control character nor line break from the
// trace; SARIF is valid JSON. Such a host is no DNS name, so its entries
// are problems and the verdict incomplete (TestAtkPercentEncodedHostJudgedApart).
func TestAttack3CIOutputsCarryNoMarkupFromTrace(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	host := `x]]><failure><x a='\u0000\ufffe\u001b[2J\n;;error;;pwned\r\n&amp;.xboxlive.com` // no '/', ':', '@': they end a host
	e := func(at time.Time) string {
		s := attack3Entry(at, "1", 429)
		return strings.Replace(s, `https://profile.xboxlive.com/`, `https://`+host+`/`, 1)
	}
	rep := attack3AnalyzeHAR(t, attack3HAR(e(t0), e(t0.Add(time.Second))))
	if rep.Verdict != analyze.Incomplete {
		t.Fatalf("verdict %s, want incomplete", rep.Verdict)
	}
	var junit bytes.Buffer
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(junit.Bytes()))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("JUnit not well-formed: %v", err)
		}
	}
	for _, bad := range []string{"\x00", "\x1b", "\n;;error", "<failure><x", "\uFFFE"} {
		if bytes.Contains(junit.Bytes(), []byte(bad)) {
			t.Errorf("JUnit holds %q from the trace", bad)
		}
	}
	var sarif bytes.Buffer
	if err := rep.WriteSARIF(&sarif); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(sarif.Bytes()) {
		t.Errorf("SARIF is not valid JSON")
	}
}

// held: TestAttack3Presence429sAcrossItsTwoHosts: analyze/doc.go:17-18 (calls
// grouped "per rule of the limits data (a service scope such as
// presence/write)") and :38 (two or more 429s in a row fail). The 2020
// table's presence write rule names userpresence.xboxlive.com and
// presence.xboxlive.com: a user's 429 at one then a 429 at the other are
// two in a row of one service: red.
func TestAttack3Presence429sAcrossItsTwoHosts(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	e := func(at time.Time, host string) string {
		s := attack3Entry(at, "1", 429)
		s = strings.Replace(s, `"GET"`, `"POST"`, 1)
		return strings.Replace(s, `https://profile.xboxlive.com/users/me/profile/settings`, `https://`+host+`/users/me/devices/current/titles/current`, 1)
	}
	rep := attack3AnalyzeHAR(t, attack3HAR(e(t0, "userpresence.xboxlive.com"), e(t0.Add(time.Second), "PRESENCE.xboxlive.com:443")))
	if rep.Verdict != analyze.Red {
		t.Errorf("429 at userpresence then at presence (presence/write): verdict %s, want red", rep.Verdict)
	}
}
