package main

// An outside attack (attack81) on xblcall analyze's exit status: 0 only when
// the verdict is green or yellow and the traces were read whole.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attack81HAR is a HAR of a passing call (user 1), then two 429s in a row
// (user 2, Retry-After 60) to url: red when url is profile settings'.
func attack81HAR(url string) string {
	entry := func(s int, url, user string, status int) string {
		return fmt.Sprintf(`{"startedDateTime": "2026-03-01T20:00:%02dZ", "request": {"method": "GET", "url": %q,
			"headers": [{"name": "Authorization", "value": "XBL3.0 x=%s;t"}]}, "response": {"status": %d, "headers": [{"name": "Retry-After", "value": "60"}]}}`, s, url, user, status)
	}
	return `{"log": {"version": "1.2", "entries": [` + entry(0, "https://social.xboxlive.com/users/me/people", "1", 200) + ",\n" +
		entry(1, url, "2", 429) + ",\n" + entry(2, url, "2", 429) + "]}}"
}

func attack81Write(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAttack81AnalyzeHostlessURLExitsZero breaks xblcall analyze --help: "red
// ... the title mishandles 429s (two or more in a row ...). Exit status 1"
// and "incomplete: a trace was not read whole: ... an entry that is no
// call ... Exit status 2": with one byte taken out of a red trace (the
// second '/' of "https://" in its 429s' URLs, which then name no host as
// net/url reads them), the command exits 0, yellow, and its JUnit report
// holds no failure and no error: a CI gate passes the trace.
func TestAttack81AnalyzeHostlessURLExitsZero(t *testing.T) {
	dir := t.TempDir()
	red := attack81Write(t, dir, "red.har", []byte(attack81HAR("https://profile.xboxlive.com/users/me/profile/settings")))
	if code, out, errs := xblcall(t, "analyze", red); code != 1 {
		t.Fatalf("control: exit %d; want 1 (red)\n%s%s", code, out, errs)
	}
	cut := attack81Write(t, dir, "cut.har", []byte(attack81HAR("https:/profile.xboxlive.com/users/me/profile/settings")))
	code, out, errs := xblcall(t, "analyze", cut)
	if code == 0 {
		t.Errorf("red trace with one byte less: exit 0; want 1 or 2\n%s%s", out, errs)
	}
	code, out, _ = xblcall(t, "analyze", "--format", "junit", cut)
	if code == 0 && !strings.Contains(out, "<failure") && !strings.Contains(out, "<error") {
		t.Errorf("JUnit report of it: exit 0 and no failure, no error:\n%s", out)
	}
}

// held: a directory of good traces with one bad one among them (cut
// short), a gzip'd HAR, an empty file and a HAR with a byte order mark
// each exit 2 (incomplete, or an input error), never 0.
func TestAttack81AnalyzeDamagedExitsTwoHeld(t *testing.T) {
	dir := t.TempDir()
	// A green trace: one call, answered 200 (exit 0 read whole).
	good := `{"log": {"version": "1.2", "entries": [{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET",
		"url": "https://social.xboxlive.com/users/me/people", "headers": [{"name": "Authorization", "value": "XBL3.0 x=1;t"}]},
		"response": {"status": 200}}]}}`
	if code, out, errs := xblcall(t, "analyze", attack81Write(t, dir, "good.har", []byte(good))); code != 0 {
		t.Fatalf("control: exit %d; want 0\n%s%s", code, out, errs)
	}
	mixed := filepath.Join(dir, "mixed")
	if err := os.Mkdir(mixed, 0o755); err != nil {
		t.Fatal(err)
	}
	attack81Write(t, mixed, "a.har", []byte(good))
	attack81Write(t, mixed, "b.har", []byte(good[:len(good)-40]))
	attack81Write(t, mixed, "c.har", []byte(good))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(good))
	zw.Close()
	gzp := attack81Write(t, dir, "g.har", gz.Bytes())
	empty := attack81Write(t, dir, "e.har", nil)
	bom := attack81Write(t, dir, "bom.har", []byte("\ufeff"+good))
	for name, p := range map[string]string{"directory with one cut file": mixed, "gzip": gzp, "empty": empty, "BOM": bom} {
		if code, out, errs := xblcall(t, "analyze", p); code != 2 {
			t.Errorf("%s: exit %d; want 2\n%s%s", name, code, out, errs)
		}
	}
}
