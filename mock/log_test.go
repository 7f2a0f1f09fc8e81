package mock

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// logLines decodes the JSON lines a slog.JSONHandler wrote.
func logLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		delete(m, "time")
		delete(m, "tookMs")
		out = append(out, m)
	}
	return out
}

// TestLogger: each answered request is one line with its key's counts after
// it; a 429 carries the counts that refused it; a host the mock does not
// serve has no key; a reset is logged as aborted; the token never appears.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	h := Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}))
	tok := Token(xuid1, title1)
	for range 11 { // profile: burst 10 / 15 s
		do(t, h, "GET", profileURL, tok, "")
	}
	do(t, h, "GET", "https://nosuch.xboxlive.com/x", tok, "")
	lines := logLines(t, &buf)
	if len(lines) != 12 {
		t.Fatalf("%d lines, want 12:\n%s", len(lines), buf.String())
	}
	key := func(status, burst, sustain float64) map[string]any {
		return map[string]any{"level": "INFO", "msg": "request", "method": "GET", "host": "profile.xboxlive.com",
			"path": "/users/me/profile/settings", "status": status, "scope": "profile", "user": UserHash(xuid1),
			"title": title1, "burst": burst, "burstLimit": 10.0, "sustain": sustain, "sustainLimit": 30.0}
	}
	want := []map[string]any{
		key(200, 1, 1),
		key(200, 10, 10),
		key(429, 11, 11),
		{"level": "INFO", "msg": "request", "method": "GET", "host": "nosuch.xboxlive.com", "path": "/x", "status": 404.0},
	}
	got := []map[string]any{lines[0], lines[9], lines[10], lines[11]}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
	if strings.Contains(buf.String(), tok[strings.Index(tok, ";")+1:]) {
		t.Error("the log carries the token")
	}

	buf.Reset()
	h = Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), Faults: Faults{ResetRate: 1}}))
	req, _ := http.NewRequest("GET", profileURL, nil)
	req.Header.Set("Authorization", tok)
	if _, err := h.RoundTrip(req); err == nil {
		t.Fatal("no reset")
	}
	if got := logLines(t, &buf); len(got) != 1 || got[0]["aborted"] != true || got[0]["status"] != 0.0 {
		t.Errorf("reset logged as %v", got)
	}
}
