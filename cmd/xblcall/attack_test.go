package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackTraceNamesItsOwnLimits: without --limits or --revision,
// xblcall analyze judges by the limits a HAR names (log._fgrlLimits, as
// xblcall simulate writes them). A red trace (five 429s in a row, calls
// before Retry-After) that names limits with no fallback and no rule for
// its hosts has every call "not judged (not Xbox services)": green, exit
// 0, in every format; the revision it gives itself ("2020") is what
// stderr and the report name. Among other traces (a plain red HAR beside
// it), its limits judge them all: green too.
func TestAttackTraceNamesItsOwnLimits(t *testing.T) {
	dir := t.TempDir()
	named := `"_fgrlLimits": {"revision": "2020", "source": "x", "rules": [{"service": "none", "hosts": ["nothing.example"], "burst": 1, "sustain": 1}]}, `
	red := redHAR("")
	evil := filepath.Join(dir, "evil.har")
	os.WriteFile(evil, []byte(strings.Replace(red, `{"log": {`, `{"log": {`+named, 1)), 0o644)
	plain := filepath.Join(dir, "plain.har")
	os.WriteFile(plain, []byte(red), 0o644)
	if code, out, errs := xblcall(t, "analyze", plain); code != 1 {
		t.Fatalf("the plain trace: exit %d, want 1 (red)\n%s%s", code, out, errs)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"text", []string{evil}},
		{"junit", []string{"--format", "junit", evil}},
		{"sarif", []string{"--format", "sarif", evil}},
		{"beside a plain red trace", []string{plain, evil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := xblcall(t, append([]string{"analyze"}, tt.args...)...)
			if code != 1 {
				t.Errorf("exit %d; want 1: the 429s in a row fail whatever limits the trace names\n%.300s\n%s", code, out, errs)
			}
		})
	}
}

// TestAttackSwallowedCSVAmongTraces: a CSV data file whose header line
// opens a quote that is never closed holds no row (the header swallows
// the file, 429s and all) and is called read whole; alone it is "no
// calls" (exit 2), but beside a green trace the verdict is green, exit 0.
func TestAttackSwallowedCSVAmongTraces(t *testing.T) {
	dir := t.TempDir()
	green := filepath.Join(dir, "green.har")
	os.WriteFile(green, []byte(`{"log": {"entries": [{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET",
		"url": "https://social.xboxlive.com/users/me/people", "headers": [{"name": "Authorization", "value": "XBL3.0 x=1;t"}]},
		"response": {"status": 200}}]}}`), 0o644)
	row := func(s string) string {
		return `profile.xboxlive.com,https://profile.xboxlive.com/users/me/profile/settings,2,,,,Retry-After: 60,,429,80,2026-03-01T20:00:0` + s + `Z,true` + "\n"
	}
	data := filepath.Join(dir, "data.csv")
	os.WriteFile(data, []byte("v1510\nHost,Uri,XboxUserId,MultiplayerCorrelationId,RequestHeaders,RequestBody,ResponseHeaders,ResponseBody,"+
		"HttpStatusCode,EllapsedCallTimeMs,ReqTimeUTC,\"IsGet\n"+row("1")+row("2")+row("3")), 0o644)
	code, out, errs := xblcall(t, "analyze", green, data)
	if code == 0 {
		t.Errorf("exit 0; want 1 (red) or 2 (the data file not read whole)\n%s%s", out, errs)
	}
}
