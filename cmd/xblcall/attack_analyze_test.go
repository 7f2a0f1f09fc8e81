package main

// An outside attack on xblcall analyze: secrets and hostile text from a
// trace in every output format, and exit codes on hostile traces.

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const anAtkSecret = "SECRETzq7TOKEN"

func anAtkJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// anAtkHostileHAR: repeated calls and polling by one user whose URL carries a
// token in its query (under odd names), its path parameters, its user info
// and fragment; a cookie, a body and an answer holding tokens; a path with
// escapes and XML/markdown (a host holding them is no DNS name, and its
// entry a problem: TestAtkPercentEncodedHostJudgedApart); two 429s in a
// row (red).
func anAtkHostileHAR(t *testing.T, pathParam bool) string {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	var es []string
	entry := func(at time.Time, url, auth string, status int) string {
		return fmt.Sprintf(`{"startedDateTime": %q, "time": 50, "request": {"method": "POST", "url": %s,
			"headers": [{"name": "Authorization", "value": %q}, {"name": "Cookie", "value": "session=%s"},
			{"name": "X-Xbl-Signature", "value": "%s"}, {"name": "User-Agent", "value": "ua %s\u001b[31m"}],
			"cookies": [{"name": "token", "value": "%s"}],
			"postData": {"mimeType": "application/json", "text": "{\"refresh_token\": \"%s\"}"}},
			"response": {"status": %d, "headers": [{"name": "Retry-After", "value": "1"}],
			"content": {"mimeType": "application/json", "text": "{\"access_token\": \"%s\", \"gamertag\": \"%s\"}"}}}`,
			at.Format(time.RFC3339Nano), anAtkJSON(url), auth, anAtkSecret, anAtkSecret, anAtkSecret, anAtkSecret, anAtkSecret, status, anAtkSecret, anAtkSecret)
	}
	urls := []string{
		"https://u:" + anAtkSecret + "@profile.xboxlive.com/users/me/profile/settings?x_tok=" + anAtkSecret + "&sig=" + anAtkSecret + "#access_token=" + anAtkSecret,
		"https://presence.xboxlive.com/users/me;jsessionid=" + anAtkSecret + "/devices/current/titles/current?AccessToken=" + anAtkSecret,
		"https://social.xboxlive.com/users/xuid(1)/people?code=" + anAtkSecret + ";access_token=" + anAtkSecret,
		"https://evil.xboxlive.com/evil\u001b[2J\u0007<x>]]></testcase>`|*#/users/me/profile/settings?token=" + anAtkSecret,
	}
	if !pathParam {
		urls[1] = "https://presence.xboxlive.com/users/me/devices/current/titles/current?AccessToken=" + anAtkSecret
	}
	for u, url := range urls {
		for i := range 6 {
			es = append(es, entry(t0.Add(time.Duration(u)*time.Minute+time.Duration(i)*time.Second), url, "XBL3.0 x=1;"+anAtkSecret, 200))
		}
	}
	// Two 429s in a row: red. And calls to a host not judged, answered 429.
	for i := range 2 {
		es = append(es, entry(t0.Add(10*time.Minute+time.Duration(i)*time.Second), urls[0], "XBL3.0 x=2;"+anAtkSecret, 429))
		es = append(es, entry(t0.Add(11*time.Minute+time.Duration(i)*time.Second), "https://login.live.com/oauth20_token.srf?code="+anAtkSecret+"&refresh_token="+anAtkSecret, "Bearer "+anAtkSecret, 429))
	}
	// A token sent where the userhash goes.
	es = append(es, entry(t0.Add(12*time.Minute), urls[0], "XBL3.0 x="+anAtkSecret+";"+anAtkSecret, 200))
	return `{"log": {"version": "1.2", "entries": [` + strings.Join(es, ",\n") + `]}}`
}

// TestAttackNoSecretNoEscapeInAnyFormat: "no token from a trace reaching any
// output" and "server and trace text clipped and escaped in every output".
func TestAttackNoSecretNoEscapeInAnyFormat(t *testing.T) { anAtkNoSecret(t, false) }

// TestAttackPathParamSessionTokenInFindings: a session token carried as a
// path parameter (";jsessionid=TOKEN", as servlet containers write it) is
// quoted whole by repeated-calls' finding (Finding.URL) in every format.
func TestAttackPathParamSessionTokenInFindings(t *testing.T) { anAtkNoSecret(t, true) }

func anAtkNoSecret(t *testing.T, pathParam bool) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "hostile.har")
	if err := os.WriteFile(p, []byte(anAtkHostileHAR(t, pathParam)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "junit", "sarif", "html"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"analyze", "-v", "--format", format, p}, &out, &errb, withTestEnv(t))
		all := out.String() + errb.String()
		if code != 1 {
			t.Errorf("%s: exit %d, want 1 (red)\n%s", format, code, errb.String())
		}
		if i := strings.Index(all, anAtkSecret); i >= 0 {
			t.Errorf("%s: the token reached the output: ...%s...", format, all[max(0, i-120):min(len(all), i+40)])
		}
		if strings.ContainsAny(all, "\x1b\x07") {
			t.Errorf("%s: a raw escape reached the output", format)
		}
		if format == "junit" {
			d := xml.NewDecoder(strings.NewReader(out.String()))
			for {
				tok, err := d.Token()
				if err != nil {
					if err.Error() != "EOF" {
						t.Errorf("junit: not well-formed XML: %v", err)
					}
					break
				}
				if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "x" {
					t.Errorf("junit: an element <x> injected from the trace's host")
				}
			}
		}
		if format == "html" && strings.Contains(out.String(), "<x>") {
			t.Errorf("html: <x> from the trace unescaped")
		}
	}
}

// TestAttackExitCodesOnHostileTraces: a trace holding no entries, one that is
// gzip, UTF-16 or has a BOM is no pass (exit 2); a red trace exits 1.
func TestAttackExitCodesOnHostileTraces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := `{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://profile.xboxlive.com/users/me/profile/settings", "headers": [{"name": "Authorization", "value": "XBL3.0 x=1;t"}]}, "response": {"status": 200}}`
	cases := map[string]string{
		"empty.har":    `{"log": {"entries": []}}`,
		"nothing.har":  ``,
		"gzip.har":     "\x1f\x8b\x08\x00\x00\x00\x00\x00",
		"bom.har":      "\ufeff" + `{"log": {"entries": [` + e + `]}}`,
		"cut.har":      `{"log": {"entries": [` + e + `, ` + e[:60],
		"tail.har":     `{"log": {"entries": [` + e + `]}}` + "\n{",
		"nulls.har":    `{"log": {"entries": [null, null]}}`,
		"entries2.har": `{"log": {"entries": [` + e + `], "entries": []}}`,
	}
	for name, body := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"text", "junit", "sarif"} {
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"analyze", "--format", format, p}, &out, &errb, withTestEnv(t))
			if code == 0 {
				t.Errorf("%s (%s): exit 0, a pass: %s%s", name, format, out.String(), errb.String())
			}
		}
	}
}
