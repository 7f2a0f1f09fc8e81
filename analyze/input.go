package analyze

import (
	"errors"
	"fmt"
	"io"
)

// MaxCalls bounds the calls read from one trace, and the calls an Analyzer
// judges.
const MaxCalls = 4_000_000

// MaxTraceBytes bounds the bytes read of one trace: what follows is not
// read, and Input.Stop says so.
const MaxTraceBytes = 4 << 30

// maxTraceBytes is MaxTraceBytes, lowered by tests.
var maxTraceBytes int64 = MaxTraceBytes

// ErrNotTrace is returned when the input is not a trace of the kind read.
var ErrNotTrace = errors.New("not a trace")

// Input is what a reader made of one trace.
//
// A trace is read whole when reading reached its end and every entry
// became a call (or was a CONNECT tunnel, passed over): Complete. A trace
// that was not is still analyzed as far as it was read, but the report's
// verdict is Incomplete, whatever the calls read, so that a gate never
// passes a trace it did not see whole.
type Input struct {
	Name  string `json:"name"`
	Calls int    `json:"calls"` // calls passed on
	// Problems are the entries that could not be read as calls, or not as
	// one call every reader reads alike (a data file's call whose Uri names
	// another host than its Host, passed on as a call at its Host), each
	// with its index, byte offset and reason (the first maxProblems;
	// ProblemCount counts them all). The reader went on past each.
	Problems     []Problem `json:"problems,omitempty"`
	ProblemCount int       `json:"problemCount"`
	// Truncated says why reading stopped before the end of the trace, when
	// it did, and Stop where: the entry being read (or the first not read)
	// and the byte at which the reader could go no further.
	Truncated string   `json:"truncated,omitempty"`
	Stop      *Problem `json:"stop,omitempty"`
}

// Problem is a place in a trace that was not read as a call: an entry (a
// HAR entry, a .saz session in session order, a data file's row or call,
// from 0) and the byte offset in the trace where it starts, or where
// reading stopped; -1 when the offset is not known (calls added without a
// reader).
type Problem struct {
	Index  int    `json:"index"`
	Offset int64  `json:"offset"`
	Reason string `json:"reason"`
}

// String is the problem as messages name it: "entry 3 at byte 512: reason".
func (p Problem) String() string {
	if p.Offset < 0 {
		return fmt.Sprintf("entry %d: %s", p.Index, p.Reason)
	}
	return fmt.Sprintf("entry %d at byte %d: %s", p.Index, p.Offset, p.Reason)
}

const maxProblems = 100

// Complete reports whether the trace was read whole: to its end, every
// entry a call.
func (in *Input) Complete() bool { return in.Stop == nil && in.Truncated == "" && in.ProblemCount == 0 }

// Gap returns the first place the trace was not read as calls (its first
// problem, else where reading stopped), or nil when it was read whole.
func (in *Input) Gap() *Problem {
	switch {
	case len(in.Problems) > 0:
		return &in.Problems[0]
	case in.Stop != nil:
		return in.Stop
	case in.Truncated != "":
		return &Problem{Index: in.Calls + in.ProblemCount, Offset: -1, Reason: in.Truncated}
	}
	return nil
}

func (in *Input) problem(i int, off int64, format string, args ...any) {
	in.ProblemCount++
	if len(in.Problems) < maxProblems {
		in.Problems = append(in.Problems, Problem{i, off, clip(fmt.Sprintf(format, args...))})
	}
}

// stop records that reading stopped at entry i, byte off, and why.
func (in *Input) stop(i int, off int64, format string, args ...any) {
	reason := clip(fmt.Sprintf(format, args...))
	in.Truncated, in.Stop = reason, &Problem{i, off, reason}
}

// cappedReader reads at most left bytes of r; past them it fails, and over
// says it did. read counts the bytes it passed on.
type cappedReader struct {
	r    io.Reader
	left int64
	read int64
	over bool
}

var errCapped = errors.New("trace over its byte limit")

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if n, _ := c.r.Read(p[:min(len(p), 1)]); n > 0 { // the input goes on
			c.over = true
			return 0, errCapped
		}
		return 0, io.EOF
	}
	n, err := c.r.Read(p[:min(int64(len(p)), c.left)])
	c.left -= int64(n)
	c.read += int64(n)
	return n, err
}

// overLimit is the reason a reader gives when a trace goes on past
// MaxTraceBytes.
func overLimit() string {
	return fmt.Sprintf("stopped after %d MiB, the most one trace may hold", maxTraceBytes>>20)
}
