package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
)

// attack13Green123 is a small green trace (exit 0 when analyzed whole).
func attack13Green123(t *testing.T, users, calls int) string {
	t.Helper()
	har := attack4GreenHAR(t, users, calls)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"analyze", har}, &out, &errb, withTestEnv(t)); code != 0 {
		t.Fatalf("the trace itself: exit %d: %s", code, errb.String())
	}
	return har
}

// TestAttack13AnalyzeHTMLWrittenAfterInterrupt: `xblcall analyze --html >(gzip
// >r.html.gz) trace` (a pipe, here /proc/self/fd/N as bash's /dev/fd/63),
// interrupted once the command has begun writing the HTML report: the
// rest of the report is written after the interrupt, though the run then
// exits 130.
//
// Promised: commit 68f3a38 "xblcall analyze: nothing is written once
// interrupted"; analyze.go run: "Nothing is written once interrupted: the
// report or result, printed or buffered for -o, ends at its next write,
// and the run with ctx's error (exit 130)"; RELIABILITY.md "nothing is
// written once interrupted". writeHTMLReport writes the --html report
// straight to its file, not through ctxWriter, and run checks ctx only
// before it.
func TestAttack13AnalyzeHTMLWrittenAfterInterrupt(t *testing.T) {
	t.Parallel()
	har := attack4GreenHAR(t, 300, 20)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	// The smallest pipe buffer, so what the pipe held before the interrupt
	// is at most a page.
	const pipeCap = 4096
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, pr.Fd(), 1031 /* F_SETPIPE_SZ */, pipeCap); e != 0 {
		t.Skip("F_SETPIPE_SZ:", e)
	}
	path := fmt.Sprintf("/proc/self/fd/%d", pw.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	after := make(chan int, 1)
	go func() {
		first := make([]byte, 1)
		if _, err := io.ReadFull(pr, first); err != nil { // the command is writing the report
			after <- -1
			return
		}
		interrupt()
		time.Sleep(100 * time.Millisecond)
		rest, _ := io.ReadAll(pr)
		after <- len(rest)
	}()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"analyze", "--html", path, har}, &out, &errb, withTestEnv(t))
	pw.Close()
	n := <-after
	if n < 0 {
		t.Fatalf("no HTML report began: exit %d, stderr %q", code, errb.String())
	}
	// Before the interrupt: at most the pipe's buffer, and one write in
	// flight (a template's piece).
	if n > pipeCap+64<<10 || code != 130 || out.Len() != 0 {
		t.Errorf("interrupted at the HTML report's first byte: %d more bytes of it written after the interrupt (the pipe held at most %d); exit %d, stdout %.80q; want nothing written once interrupted, 130",
			n, pipeCap, code, out.String())
	}
}

// TestAttack13HTMLAndSVGThroughDanglingLink: --html and simulate --svg given a
// symbolic link to a file that does not exist yet (report.html ->
// reports/latest.html, a common way to keep the newest report at one
// name): the report is written through the link (writeHTMLReport's
// os.Create, writeSVG's os.WriteFile follow it), but checkWritable
// refuses the path before the run: O_EXCL does not follow the link
// (EEXIST), then opening without O_CREATE finds nothing (ENOENT). At
// 9ec5249 (O_CREATE without O_EXCL) the check passed and the report was
// written.
//
// Promised: simulate.go checkWritable "makes sure an output path can be
// written before a long run starts, so a typo does not lose the run ... a
// file that did not exist is created and removed again"; --html "also
// write a self-contained HTML report to this file"; --svg "also draw
// requests and throttles over time to this SVG file".
func TestAttack13HTMLAndSVGThroughDanglingLink(t *testing.T) {
	t.Parallel()
	har := attack13Green123(t, 5, 5)
	for _, tc := range []struct {
		name, flag string
		args       []string
		want       string
	}{
		{"analyze --html", "--html", []string{"analyze", har, "--html"}, "<html"},
		{"simulate --svg", "--svg", []string{"simulate", "--svg"}, "<svg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "latest.out")
			link := filepath.Join(dir, "report.out")
			if err := os.Symlink(target, link); err != nil {
				t.Skip(err)
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), append(tc.args, link), &out, &errb, withTestEnv(t))
			b, _ := os.ReadFile(target)
			if code != 0 || !strings.Contains(string(b), tc.want) {
				t.Errorf("%s LINK (to a file not yet made, in a writable directory): exit %d, stderr %q, %d bytes written through the link; want exit 0 and the report written",
					tc.flag, code, strings.TrimSpace(errb.String()), len(b))
			}
		})
	}
}

// TestAttack13FIFOOutputLosesItsReader: --html (and simulate --svg) to a named
// pipe a reader waits on (`mkfifo r; gzip <r >r.html.gz & xblcall analyze
// --html r trace`). checkWritable opens the FIFO and closes it at once:
// the reader gets end-of-file with no report and goes away, and the
// report's own open then waits for a reader that never comes: the run
// hangs after its work (or, when it opens before the reader has closed,
// writes into a pipe no one reads, and exits 0): its report lost. (So at
// 9ec5249 too.)
//
// Promised: simulate.go checkWritable "makes sure an output path can be
// written before a long run starts, so a typo does not lose the run. It
// leaves no trace: ... an existing one is opened and left as it is."
func TestAttack13FIFOOutputLosesItsReader(t *testing.T) {
	t.Parallel()
	har := attack13Green123(t, 300, 20) // judged in tens of ms: the reader has its end-of-file by then
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"analyze --html", []string{"analyze", har, "--html"}, "<html"},
		{"simulate --svg", []string{"simulate", "--svg"}, "<svg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "r")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip(err)
			}
			got := make(chan []byte, 1)
			go func() { // cat r >out: one open, read to the end
				f, err := os.Open(fifo)
				if err != nil {
					got <- nil
					return
				}
				b, _ := io.ReadAll(f)
				f.Close()
				got <- b
			}()
			done := make(chan int, 1)
			var out, errb syncBuffer
			go func() { done <- run(context.Background(), append(tc.args, fifo), &out, &errb, withTestEnv(t)) }()
			select {
			case code := <-done:
				b := <-got
				if code != 0 || !strings.Contains(string(b), tc.want) {
					t.Errorf("%s FIFO with a reader waiting: exit %d, the reader got %d bytes %.60q (end-of-file from the check before the run; the report then went into the pipe after the reader had its end, or nowhere); want the report delivered to the reader",
						tc.args[len(tc.args)-1], code, len(b), b)
				}
			case <-time.After(60 * time.Second): // a hang, not a slow run: judged in tens of ms alone, seconds beside other packages under -race
				b := <-got
				// Let the run end: be the reader its report waits for,
				// opened without waiting for a writer (the run may have
				// ended meanwhile, and a blocking open would then wait
				// forever).
				if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
					io.Copy(io.Discard, f)
					f.Close()
				}
				<-done
				t.Errorf("%s FIFO with a reader waiting: the reader got %d bytes and end-of-file from the check before the run; the run then hung 60 s writing its report (no reader left); want the report delivered to the reader",
					tc.args[len(tc.args)-1], len(b))
			}
		})
	}
}

// attack13Stdin123 is standard input that runs check once, at its second read
// (the command has begun reading: a .saz's copy is being made).
type attack13Stdin123 struct {
	r     io.Reader
	reads int
	check func()
}

func (s *attack13Stdin123) Read(p []byte) (int, error) {
	if s.reads++; s.reads == 2 && s.check != nil {
		s.check()
	}
	return s.r.Read(p[:min(len(p), 4096)])
}

// held: TestAttack13StdinSAZLeavesNoCopy: a .saz on standard input, whole, over
// the bound, cut in half, interrupted during its copy, and an empty
// standard input: TMPDIR holds nothing while the copy is made (it was
// removed from the directory at once) nor after, and the trace's
// Authorization value is printed nowhere.
//
// Promised: analyze.go readSAZ "Gone from the directory at once where the
// system allows it (the open file reads on): a run given up on after an
// interrupt, or killed, leaves no copy of the trace's requests behind";
// RELIABILITY.md "the copy is removed from its directory as soon as it is
// made (read through the open file)".
func TestAttack13StdinSAZLeavesNoCopy(t *testing.T) {
	saz := attack11SAZ(t, 300)
	defer maxStdinSAZ.Store(maxStdinSAZ.Load())
	for _, tc := range []struct {
		name      string
		data      []byte
		bound     int64
		interrupt bool
		codes     []int
	}{
		{"whole", saz, int64(len(saz)), false, []int{0, 1}},
		{"over the bound", saz, int64(len(saz) - 1), false, []int{2}},
		{"cut", saz[:len(saz)/2], int64(len(saz)), false, []int{2}},
		{"interrupted", saz, int64(len(saz)), true, []int{130}},
		{"empty", nil, int64(len(saz)), false, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			maxStdinSAZ.Store(tc.bound)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var during []string
			src := &attack13Stdin123{r: bytes.NewReader(tc.data), check: func() {
				during = attack13List123(t, tmp)
				if tc.interrupt {
					cancel()
				}
			}}
			var out, errb bytes.Buffer
			code := run(ctx, []string{"analyze", "-"}, &out, &errb, withTestEnv(t), withStdin(src))
			after := attack13List123(t, tmp)
			ok := false
			for _, c := range tc.codes {
				ok = ok || c == code
			}
			if !ok || len(during) > 0 || len(after) > 0 {
				t.Errorf("exit %d (want %v), in TMPDIR while reading %v, after %v; stderr %q", code, tc.codes, during, after, errb.String())
			}
			if s := out.String() + errb.String(); strings.Contains(s, "x=7;t") {
				t.Errorf("the trace's Authorization value printed: %.200q", s)
			}
		})
	}
}

func attack13List123(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// held: TestAttack13InterruptedRunKeepsEarlierReports: a report already at -o's
// path and at --html's, and a run interrupted while it reads the trace
// from standard input: exit 130, nothing on standard output,
// both earlier reports intact, no temporary file beside them.
//
// Promised: RELIABILITY.md "the `-o` file is not written, and the run ends
// with the interrupt (130)"; --output "a report already there, is never
// emptied before that, and is left alone when no report is made";
// checkWritable "an existing one is opened and left as it is".
func TestAttack13InterruptedRunKeepsEarlierReports(t *testing.T) {
	t.Parallel()
	har := attack4GreenHAR(t, 300, 20)
	b, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "junit", "sarif", "html"} {
		for _, whatIf := range []bool{false, true} {
			if whatIf && format != "text" && format != "json" {
				continue
			}
			dir := t.TempDir()
			report, html := filepath.Join(dir, "report"), filepath.Join(dir, "r.html")
			os.WriteFile(report, []byte("the earlier report"), 0o644)
			os.WriteFile(html, []byte("<html>the earlier HTML</html>"), 0o644)
			ctx, cancel := context.WithCancel(context.Background())
			src := &cancelAfter{r: bytes.NewReader(b), after: len(b) / 2, cancel: cancel}
			args := []string{"analyze", "--format", format, "-o", report, "--html", html}
			if whatIf {
				args = append(args, "--what-if")
			}
			var out, errb bytes.Buffer
			code := run(ctx, append(args, "-"), &out, &errb, withTestEnv(t), withStdin(src))
			cancel()
			r, _ := os.ReadFile(report)
			h, _ := os.ReadFile(html)
			left := attack13List123(t, dir)
			if code != 130 || out.Len() != 0 || string(r) != "the earlier report" || string(h) != "<html>the earlier HTML</html>" || len(left) != 2 {
				t.Errorf("%s what-if %v: exit %d, stdout %.60q, -o %.60q, --html %.60q, dir %v", format, whatIf, code, out.String(), r, h, left)
			}
		}
	}
}

// attack13SlowPipe123 reads a pipe slowly to its end.
func attack13SlowPipe123(r io.Reader) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		p := make([]byte, 8192)
		for {
			n, err := r.Read(p)
			b.Write(p[:n])
			if err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		got <- b.Bytes()
	}()
	return got
}

// held: TestAttack13UninterruptedReportWhole: a run that is not interrupted
// writes its whole report: a large one (every format, 400 users'
// findings) to a standard output that is a slow pipe, the same bytes as
// to a buffer, and to -o; exit 1 (red) each time.
//
// Promised: ctxWriter refuses a write only once ctx is done ("each read
// or write first checks ctx"); README/main.go "1 for a failure of the
// work itself" (a red verdict).
func TestAttack13UninterruptedReportWhole(t *testing.T) {
	t.Parallel()
	har := attack4GreenHAR(t, 400, 10)
	for _, format := range []string{"text", "json", "junit", "sarif", "html"} {
		args := []string{"analyze", "-v", "--format", format, har}
		var want, errb bytes.Buffer
		wantCode := run(context.Background(), args, &want, &errb, withTestEnv(t))
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		got := attack13SlowPipe123(pr)
		code := run(context.Background(), args, pw, &errb, withTestEnv(t))
		pw.Close()
		b := <-got
		pr.Close()
		o := filepath.Join(t.TempDir(), "report")
		var none bytes.Buffer
		oCode := run(context.Background(), append([]string{"analyze", "-v", "--format", format, "-o", o}, har), &none, &errb, withTestEnv(t))
		ob, _ := os.ReadFile(o)
		if code != wantCode || oCode != wantCode || !bytes.Equal(b, want.Bytes()) || !bytes.Equal(ob, want.Bytes()) || want.Len() < 10000 {
			t.Errorf("%s: exit %d to a buffer (%d bytes), %d to a slow pipe (%d bytes, same %v), %d to -o (%d bytes, same %v)",
				format, wantCode, want.Len(), code, len(b), bytes.Equal(b, want.Bytes()), oCode, len(ob), bytes.Equal(ob, want.Bytes()))
		}
	}
}

// held: TestAttack13CheckWritableRefusesAndLeavesAsIs: --html and simulate
// --svg given a directory, a link to a directory, or a path in a missing
// directory: exit 2, before the run, nothing made; an existing file (one
// read-only too) and a link to one, on a run that fails after the check
// (analyze: a file that is no trace; simulate: --har a directory, opened
// after the check), are left as they were.
//
// Promised: checkWritable "a file that did not exist is created and
// removed again (a run that ends without its report leaves none), an
// existing one is opened and left as it is"; RELIABILITY.md "`--html`'s
// check before the run now creates and removes a file that did not exist".
func TestAttack13CheckWritableRefusesAndLeavesAsIs(t *testing.T) {
	t.Parallel()
	notTrace := filepath.Join(t.TempDir(), "x.har")
	os.WriteFile(notTrace, []byte(`{"not":"a trace"}`), 0o600)
	for _, cmd := range [][]string{{"analyze", notTrace, "--html"}, {"simulate", "--svg"}} {
		dir := t.TempDir()
		sub := filepath.Join(dir, "sub")
		os.Mkdir(sub, 0o755)
		os.Symlink(sub, filepath.Join(dir, "tosub"))
		for _, p := range []string{sub, filepath.Join(dir, "tosub"), filepath.Join(dir, "missing", "r.out")} {
			var out, errb bytes.Buffer
			code := run(context.Background(), append(append([]string{}, cmd...), p), &out, &errb, withTestEnv(t))
			ents, _ := os.ReadDir(sub)
			if code != 2 || len(ents) != 0 || out.Len() != 0 {
				t.Errorf("%s %s: exit %d, %d entries made in the directory, stdout %.60q, stderr %q; want 2, nothing", cmd[0], p, code, len(ents), out.String(), errb.String())
			}
		}
		// A failing run after the check: existing files as they were, no file made.
		for _, mode := range []os.FileMode{0o644, 0o444} {
			f := filepath.Join(dir, fmt.Sprintf("r%o.out", mode))
			os.WriteFile(f, []byte("earlier"), mode)
			link := f + ".link"
			os.Symlink(f, link)
			fresh := filepath.Join(dir, fmt.Sprintf("fresh%o.out", mode))
			for _, p := range []string{f, link, fresh} {
				args := append(append([]string{}, cmd...), p)
				if cmd[0] == "simulate" {
					args = append(args, "--har", sub)
				}
				var out, errb bytes.Buffer
				code := run(context.Background(), args, &out, &errb, withTestEnv(t))
				b, _ := os.ReadFile(f)
				_, ferr := os.Lstat(fresh)
				if code != 2 || string(b) != "earlier" || ferr == nil {
					t.Errorf("%s %s (mode %o): exit %d, the earlier file %q, a fresh file left %v; stderr %q", cmd[0], p, mode, code, b, ferr == nil, errb.String())
				}
			}
		}
	}
}

// TestAttack13OutputWrittenAfterInterruptExitsZero: Ctrl-C while the -o report
// is being put in place (writeFileAtomic: its temporary file written and
// synced, then renamed over the path), after the command's own check of
// the interrupt: the report is renamed into place after the interrupt and
// the run exits with the verdict's status (0 on a green trace), not 130.
// -o's deferred write checks ctx once, before writeFileAtomic, and
// nothing checks it after.
//
// Promised: RELIABILITY.md "nothing is written once interrupted: standard
// output and `-o`'s buffer refuse every write after it, the `-o` file is
// not written, and the run ends with the interrupt (130)"; main.go "130
// when interrupted (Ctrl-C)".
//
// Only an interrupt verified to have come before the rename (the file's
// change time, which writeFileAtomic's chmod and rename set) counts; the
// delay after the trace's end is searched for near the end of an
// uninterrupted run.
func TestAttack13OutputWrittenAfterInterruptExitsZero(t *testing.T) {
	// Serial: it times a run (it skips under -race; .ci/run runs it without).
	racebuild.Skip(t, "a search for a moment in a run, which the detector's slowness moves")
	b, err := os.ReadFile(attack13Green123(t, 500, 40)) // 20,000 calls, green
	if err != nil {
		t.Fatal(err)
	}
	args := func(o string) []string { return []string{"analyze", "--format", "json", "-o", o, "-"} }
	clock := &attack11Clock{}
	never := &attack11InterruptAfterEOF{r: bytes.NewReader(b), delay: time.Hour, cancel: func() {}, clock: clock}
	var out, errb bytes.Buffer
	if code := run(context.Background(), args(filepath.Join(t.TempDir(), "r.json")), &out, &errb, withTestEnv(t), withStdin(never)); code != 0 {
		t.Fatalf("uninterrupted: exit %d: %s", code, errb.String())
	}
	total := time.Since(clock.get(&clock.eof))
	// At the trace's end, before the judging: a moment every run has.
	ctx, cancel := context.WithCancel(context.Background())
	o0 := filepath.Join(t.TempDir(), "r.json")
	code := run(ctx, args(o0), &out, &errb, withTestEnv(t), withStdin(&attack11InterruptAfterEOF{r: bytes.NewReader(b), cancel: cancel, clock: &attack11Clock{}}))
	cancel()
	if _, err := os.Stat(o0); code != 130 || err == nil {
		t.Errorf("interrupted at the trace's end: exit %d, -o written: %v; want 130, no -o file", code, err == nil)
	}
	for i := range 12 {
		delay := total - time.Duration(i)*total/60
		ctx, cancel := context.WithCancel(context.Background())
		clock := &attack11Clock{}
		src := &attack11InterruptAfterEOF{r: bytes.NewReader(b), delay: delay, cancel: cancel, clock: clock}
		o := filepath.Join(t.TempDir(), "r.json")
		var out, errb bytes.Buffer
		code := run(ctx, args(o), &out, &errb, withTestEnv(t), withStdin(src))
		returned := time.Now()
		cancel()
		intr := clock.get(&clock.interrupt)
		var st syscall.Stat_t
		if intr.IsZero() || intr.After(returned) || syscall.Stat(o, &st) != nil {
			continue // after the run, or before the report was put in place
		}
		renamed := time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
		if !renamed.After(intr) {
			continue // the report was in place when the interrupt came
		}
		t.Errorf("interrupted %v after the trace's end, %v before the -o report was renamed into place: exit %d (stderr %q), the report written; want 130, no -o file",
			intr.Sub(clock.get(&clock.eof)).Round(time.Millisecond), renamed.Sub(intr).Round(time.Microsecond), code, strings.TrimSpace(errb.String()))
		return
	}
	t.Log("no interrupt left an -o report put in place after it: held")
}
