package analyze

import (
	"strings"
	"testing"
)

// Attacks on the readers: traces that hold two 429s in a row (red) which
// a reader does not see, yet reports as read whole (Input.Complete), so
// that the verdict is green or yellow. The promise: a trace that cannot be
// read whole is never green or yellow.

// attackVerdict reads a trace with read and returns the report's verdict
// and the input.
func attackVerdict(t *testing.T, read func(add func(*Call)) (Input, error)) (string, Input) {
	t.Helper()
	a, _ := New(nil, nil)
	in, err := read(a.Add)
	if err != nil {
		return "error: " + err.Error(), in
	}
	a.AddInput(in)
	return a.Report().Verdict, in
}

// TestAttackTokenless429s: 429s in a row (and calls before Retry-After
// passed) on calls that carry no Authorization, as Chrome's default
// ("sanitized") HAR export and HAR scrubbers leave every call, are never
// judged: the trace is yellow (the no-token warning), exit 0.
func TestAttackTokenless429s(t *testing.T) {
	var b strings.Builder
	b.WriteString(harHead)
	for i := range 6 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(strings.Replace(har429(i, ""), `{"name": "Authorization", "value": "XBL3.0 x=2;t"}`, `{"name": "Accept", "value": "*/*"}`, 1))
	}
	b.WriteString("]}}")
	verdict, in := attackVerdict(t, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(b.String()), add) })
	if verdict != Red {
		t.Errorf("six 429s in a row without a token: verdict %s (read whole %v); want red", verdict, in.Complete())
	}
}
