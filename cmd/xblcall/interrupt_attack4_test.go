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

// attack4GreenHAR writes a green HAR of users each reading their presence every
// 100 ms, calls times, every call answered 200.
func attack4GreenHAR(t *testing.T, users, calls int) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"log":{"version":"1.2","creator":{"name":"atk","version":"1"},"entries":[`)
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	n := 0
	for k := range calls {
		for u := range users {
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			fmt.Fprintf(&b, `{"startedDateTime":%q,"time":0,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/xuid(%d)","headers":[{"name":"Authorization","value":"XBL3.0 x=%d;R"}]},"response":{"status":200}}`,
				t0.Add(time.Duration(k)*100*time.Millisecond).Format(time.RFC3339Nano), 2533274790000000+u, u)
		}
	}
	b.WriteString(`]}}`)
	path := filepath.Join(t.TempDir(), "green.har")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// held: TestAttack4WhatIfInterruptedNoVerdict: `xblcall analyze --what-if`
// of a green trace of 60,000 calls, interrupted 50 ms and 400 ms in
// (while it reads the trace or replays it), and with -o: exit 130 and
// "interrupted" (main.go: "130 when interrupted (Ctrl-C)"), nothing on
// standard output, no report file: no verdict from a replay cut short.
func TestAttack4WhatIfInterruptedNoVerdict(t *testing.T) {
	t.Parallel()
	har := attack4GreenHAR(t, 1500, 40)
	// The trace as it is: green, exit 0, so a cut-short run could pass.
	if code, out, errs := xblcall(t, "analyze", har); code != 0 {
		t.Fatalf("the trace itself: exit %d\n%s%s", code, out, errs)
	}
	for _, after := range []time.Duration{50 * time.Millisecond, 400 * time.Millisecond} {
		for _, format := range []string{"text", "json"} {
			t.Run(after.String()+"/"+format, func(t *testing.T) {
				report := filepath.Join(t.TempDir(), "report")
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				time.AfterFunc(after, cancel)
				var out, errb bytes.Buffer
				start := time.Now()
				code := run(ctx, []string{"analyze", "--what-if", "--format", format, "-o", report, har}, &out, &errb, withTestEnv(t))
				took := time.Since(start)
				if code != 130 || out.Len() != 0 || !strings.Contains(errb.String(), "interrupted") {
					t.Errorf("interrupted at %v (returned at %v): exit %d, stdout %q, stderr %q; want 130, nothing, \"interrupted\"", after, took, code, out.String(), errb.String())
				}
				if _, err := os.Stat(report); err == nil {
					b, _ := os.ReadFile(report)
					t.Errorf("a report was written by a what-if interrupted at %v: %.200s", after, b)
				}
			})
		}
	}
}

// held: TestAttack4SimulateInterruptedHARNotAPass: `xblcall simulate` of
// 2,000,000 calls at one instant (a pattern's most) with --har, --json,
// interrupted 300 ms in: exit 130, "interrupted", nothing on standard
// output; the HAR it leaves, cut short, is never judged a pass by
// `xblcall analyze` (exit 0).
func TestAttack4SimulateInterruptedHARNotAPass(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pattern := filepath.Join(dir, "p.csv")
	if err := os.WriteFile(pattern, []byte("0,profile,2533274790000001,2000000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	har := filepath.Join(dir, "out.har")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"simulate", "--pattern", pattern, "--client", "naive", "--json", "--har", har}, &out, &errb, withTestEnv(t))
	if code != 130 || out.Len() != 0 || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("simulate interrupted: exit %d, stdout %.200q, stderr %q; want 130, nothing, \"interrupted\"", code, out.String(), errb.String())
	}
	fi, err := os.Stat(har)
	if err != nil {
		t.Fatal(err)
	}
	acode, aout, aerrs := xblcall(t, "analyze", "--trace-limits", har)
	t.Logf("the HAR left: %d bytes; analyze: exit %d, %.300s", fi.Size(), acode, aerrs)
	if acode == 0 {
		t.Errorf("the HAR of an interrupted simulate (%d bytes) judged a pass: %.300s", fi.Size(), aout)
	}
}
