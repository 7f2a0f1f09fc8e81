package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sazOf is a Fiddler archive of n sessions, each a call answered 200.
func sazOf(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		for _, f := range [][2]string{
			{fmt.Sprintf("raw/%d_c.txt", i), "GET https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: XBL3.0 x=1;tok\r\n\r\n"},
			{fmt.Sprintf("raw/%d_m.xml", i), `<Session SID="1"><SessionTimers ClientBeginRequest="` + t0.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano) + `"/></Session>`},
			{fmt.Sprintf("raw/%d_s.txt", i), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
		} {
			w, err := z.Create(f[0])
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, f[1])
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cancelAfter is a trace on standard input that interrupts the command
// (cancels its context) once it has handed over after bytes, and counts
// the reads asked of it after that.
type cancelAfter struct {
	r      io.Reader
	after  int
	read   int
	cancel context.CancelFunc
	late   int
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.read >= c.after {
		c.late++
		c.cancel()
	}
	n, err := c.r.Read(p[:min(len(p), 4096)])
	c.read += n
	return n, err
}

// TestAnalyzeInterruptedStopsReading: Ctrl-C while a trace is read ends
// the reading at its next read, for the analysis and the what-if, from a
// file (HAR, .saz) and from standard input: exit 130, "interrupted", no
// report on standard output or in -o's file. Before, the whole trace was
// read first: an interrupted what-if of a 60,000-call HAR ended 2 s after
// the interrupt, as late as one that ran whole.
func TestAnalyzeInterruptedStopsReading(t *testing.T) {
	har := attack4GreenHAR(t, 300, 40) // 12,000 calls, 2.6 MB
	b, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	saz := sazOf(t, 2000)
	sazFile := filepath.Join(t.TempDir(), "t.saz")
	if err := os.WriteFile(sazFile, saz, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, what := range [][]string{{"analyze"}, {"analyze", "--what-if"}} {
		for _, in := range []struct {
			name string
			data []byte
		}{{"HAR", b}, {"saz", saz}} {
			t.Run(strings.Join(what, " ")+"/"+in.name+"/stdin", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				src := &cancelAfter{r: bytes.NewReader(in.data), after: len(in.data) / 4, cancel: cancel}
				var out, errb bytes.Buffer
				code := run(ctx, append(what, "-"), &out, &errb, withStdin(src))
				if code != 130 || out.Len() != 0 || !strings.Contains(errb.String(), "interrupted") {
					t.Errorf("exit %d, stdout %.200q, stderr %q; want 130, nothing, \"interrupted\"", code, out.String(), errb.String())
				}
				if src.late > 1 {
					t.Errorf("%d reads of standard input after the interrupt; want the one that found it", src.late)
				}
			})
		}
		for _, file := range []string{har, sazFile} {
			t.Run(strings.Join(what, " ")+"/file/"+filepath.Ext(file), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel() // interrupted before the first read
				report := t.TempDir() + "/report"
				var out, errb bytes.Buffer
				code := run(ctx, append(what, "-o", report, file), &out, &errb)
				if code != 130 || out.Len() != 0 || !strings.Contains(errb.String(), "interrupted") {
					t.Errorf("exit %d, stdout %.200q, stderr %q; want 130, nothing, \"interrupted\"", code, out.String(), errb.String())
				}
				if _, err := os.Stat(report); err == nil {
					t.Errorf("a report was written by an interrupted run")
				}
			})
		}
	}
}
