package main

import (
	"os"
	"path/filepath"
	"testing"
)

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
