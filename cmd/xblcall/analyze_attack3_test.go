package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// attack3CLIEntry is a HAR entry: a GET of profile settings by user 1 at t.
func attack3CLIEntry(t time.Time, status int) string {
	return fmt.Sprintf(`{"startedDateTime": %q, "time": 50, "request": {"method": "GET",
		"url": "https://profile.xboxlive.com/users/me/profile/settings",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=1;tok"}]},
		"response": {"status": %d, "headers": []}}`, t.Format(time.RFC3339Nano), status)
}

// TestAttack3AnalyzeCertificationSpanExitZero: xblcall analyze --help ("red a
// finding fails: a 300 s span reaches the rule's certification figure
// ...", exit 1 when red) and analyze/doc.go:33-36. 28 profile calls in the
// first 3 s, then 300 between 290 s and 310 s: the 300 s span from 290 s
// holds the profile rule's certification figure (300, limits/data/2020.json),
// so the trace is red and the gate must fail (exit 1). It exits 0, in
// every format: the spans start at a call and the next only after a span
// past 90 % of the limit (analyze/judge.go windows), so the 300 calls are
// split between [0 s, 300 s) and [300 s, 600 s).
func TestAttack3AnalyzeCertificationSpanExitZero(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	var es []string
	for i := range 28 {
		es = append(es, attack3CLIEntry(t0.Add(time.Duration(i)*100*time.Millisecond), 200))
	}
	for i := range 300 {
		es = append(es, attack3CLIEntry(t0.Add(290*time.Second+time.Duration(i)*20*time.Second/300), 200))
	}
	p := filepath.Join(t.TempDir(), "cert.har")
	har := `{"log": {"version": "1.2", "creator": {"name": "atk", "version": "1"}, "entries": [` + strings.Join(es, ",\n") + `]}}`
	if err := os.WriteFile(p, []byte(har), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "junit", "sarif"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"analyze", "--format", format, p}, &out, &errb, withTestEnv(t))
		if code != 1 {
			t.Errorf("--format %s: exit %d, want 1 (red: a 300 s span holds 300 profile calls)\n%s", format, code, errb.String())
		}
	}
}
