package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	t.Parallel()
	har := attack4GreenHAR(t, 300, 40) // 12,000 calls, 2.6 MB
	b, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	f := sazFile(t, 2000)
	f.Close()
	saz, err := os.ReadFile(f.Name())
	if err != nil {
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
				code := run(ctx, append(what, "-"), &out, &errb, withTestEnv(t), withStdin(src))
				if code != 130 || out.Len() != 0 || !strings.Contains(errb.String(), "interrupted") {
					t.Errorf("exit %d, stdout %.200q, stderr %q; want 130, nothing, \"interrupted\"", code, out.String(), errb.String())
				}
				if src.late > 1 {
					t.Errorf("%d reads of standard input after the interrupt; want the one that found it", src.late)
				}
			})
		}
		for _, file := range []string{har, f.Name()} {
			t.Run(strings.Join(what, " ")+"/file/"+filepath.Ext(file), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel() // interrupted before the first read
				report := t.TempDir() + "/report"
				var out, errb bytes.Buffer
				code := run(ctx, append(what, "-o", report, file), &out, &errb, withTestEnv(t))
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
