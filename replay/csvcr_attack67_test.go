package replay

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

const attack67XUID = "2533274790395904"

// attack67Err reads in as a pattern and returns its *datafile.Error.
func attack67Err(t *testing.T, in string) *datafile.Error {
	t.Helper()
	_, err := ReadPattern(strings.NewReader(in))
	var e *datafile.Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: %v, want a *datafile.Error", in, err)
	}
	return e
}

// attack67LineOf is the line text ends on as datafile.Error counts lines:
// 1 and one for each bare CR, LF or CRLF.
func attack67LineOf(text string) int {
	return 1 + strings.Count(text, "\n") + strings.Count(text, "\r") - strings.Count(text, "\r\n")
}

// TestAttack67PatternCSVQuotedLineBreakLine: a CSV event whose quoted service
// holds a line break (a bare CR, which datafile.Error counts as a line
// end and bareCRs now makes one, or a LF) has its count, on the line
// after the break, at fault: the error names the line the event starts
// on, where its time is, not the line its count is on.
//
// Promised (replay.ReadPattern): "What is wrong is a *datafile.Error
// naming the line and the field." and (datafile.Error.Line): "Line is the
// line the problem is on, from 1 (a bare CR, a LF or a CRLF ends a
// line)".
func TestAttack67PatternCSVQuotedLineBreakLine(t *testing.T) {
	for _, br := range []string{"\r", "\n", "\r\n"} {
		head := "time,service,user,count\n0,\"pro" + br + "file\","
		in := head + attack67XUID + ",zz\n"
		e := attack67Err(t, in)
		if e.Field != "count" {
			t.Fatalf("%q: field %q (%v)", in, e.Field, e)
		}
		if want := attack67LineOf(head); e.Line != want {
			t.Errorf("%q: the count is on line %d: %v: line %d", in, want, e, e.Line)
		}
	}
}

// held: a CSV pattern's errors name their line as datafile.Error counts
// lines, whatever mix of line ends comes before: CRLF, bare CRs, LF CR,
// CR CR LF, CRs in comments, blank lines of CRs, quoted fields holding
// CRs and CRLFs on earlier lines, a bare CR at the end of the file; a
// fault at the very end after a bare CR; a quote error's line. Promised
// (datafile.Error.Line): "Line is the line the problem is on, from 1 (a
// bare CR, a LF or a CRLF ends a line)".
func TestAttack67PatternCSVMixedLineEnds(t *testing.T) {
	ok := "0,profile," + attack67XUID + ",1"
	quoted := "0,\"a\rb\r\nc\"," + attack67XUID + ",1"
	for _, head := range []string{
		"time,service,user,count\r\n" + ok + "\r\n",
		"# c\r" + ok + "\r",
		"\r\r\n\n\r" + ok + "\n\r",
		"#x\r\r\n" + quoted + "\r" + ok + "\r\n",
		quoted + "\n\r\r" + ok + "\r",
		"\r\n\r\n" + ok + "\r\n\r",
	} {
		in := head + "0,profile," + attack67XUID + ",zz"
		for _, end := range []string{"", "\r", "\r\n", "\n"} {
			e := attack67Err(t, in+end)
			if want := attack67LineOf(head); e.Line != want || e.Field != "count" {
				t.Errorf("%q: %v: line %d field %q, want line %d count", in+end, e, e.Line, e.Field, want)
			}
		}
		// A quote error on that line.
		q := head + "0,pro\"file," + attack67XUID + ",1\r"
		if e := attack67Err(t, q); e.Line != attack67LineOf(head) {
			t.Errorf("%q: %v: line %d, want %d", q, e, e.Line, attack67LineOf(head))
		}
	}
	// A bare CR ending the file and every line: read, nothing lost.
	in := "time,service,user,count\r" + ok + "\r" + ok + "\r"
	if p, err := ReadPattern(strings.NewReader(in)); err != nil || len(p) != 2 {
		t.Errorf("%q: %v, %v", in, p, err)
	}
}

// held: a pattern of lone CRs up to MaxPatternSize, and one of events
// ended by bare CRs past MaxEvents, are refused at the right line with
// memory in proportion to the file: ten times the bytes allocate at most
// 13 times as much. Promised (datafile package doc): "Reading a file
// takes time and memory linear in its length."; (ReadPattern) "naming the
// line"; MaxEvents "bounds a pattern's lines (CSV)".
func TestAttack67PatternCSVLoneCRsLinear(t *testing.T) {
	fault := "0,profile," + attack67XUID + ",zz"
	lone := func(n int) (string, int) {
		return strings.Repeat("\r", n-len(fault)) + fault, n - len(fault) + 1
	}
	events := func(n int) (string, int) {
		line := "0,profile," + attack67XUID + ",1\r"
		k := min(n/len(line), MaxEvents+1)
		if k <= MaxEvents {
			return strings.Repeat(line, k-1) + fault, k
		}
		return strings.Repeat(line, k), MaxEvents + 1
	}
	for name, gen := range map[string]func(int) (string, int){"lone CRs": lone, "events": events} {
		alloc := func(n int) uint64 {
			in, line := gen(n)
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			_, err := ReadPattern(bytes.NewReader([]byte(in)))
			runtime.ReadMemStats(&m1)
			var e *datafile.Error
			if !errors.As(err, &e) || e.Line != line {
				t.Errorf("%s, %d bytes: %v, want line %d", name, len(in), err, line)
			}
			return m1.TotalAlloc - m0.TotalAlloc
		}
		n1 := MaxPatternSize
		if name == "events" {
			n1 = MaxEvents * 30 // below MaxEvents at a tenth, past it here
		}
		n0 := n1 / 10
		a0, a1 := alloc(n0), alloc(n1)
		if float64(a1) > 13*float64(a0) {
			t.Errorf("%s: %d bytes allocate %d, %d bytes %d", name, n0, a0, n1, a1)
		}
	}
}
