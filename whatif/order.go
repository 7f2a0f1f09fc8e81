package whatif

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// inOrder adds the replay's calls to the analysis after, in one order
// whatever order they reach it in: by time, and the calls of one instant
// (which the replay's concurrent calls may finish in either order) by
// what they are. It holds one instant's calls.
type inOrder struct {
	a   *analyze.Analyzer
	mu  sync.Mutex
	at  time.Time
	buf []*analyze.Call
	n   int // calls added
}

// add takes a call the replay made (analyze.Recorder.Add).
func (o *inOrder) add(c *analyze.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.buf) > 0 && !c.Time.Equal(o.at) {
		o.flushLocked()
	}
	o.at = c.Time
	o.buf = append(o.buf, c)
}

// flush adds the calls held.
func (o *inOrder) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
}

// flushLocked adds the calls held, numbered in their order. Requires o.mu
// held.
func (o *inOrder) flushLocked() {
	slices.SortStableFunc(o.buf, compareCalls)
	for i, c := range o.buf {
		c.Index = o.n
		o.n++
		o.a.Add(c)
		o.buf[i] = nil
	}
	o.buf = o.buf[:0]
}

// compareCalls orders the calls of one instant by what the analysis reads
// of them; calls equal in all of it are alike to it in either order.
func compareCalls(a, b *analyze.Call) int {
	return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.Authorization, b.Authorization), strings.Compare(a.Method, b.Method),
		strings.Compare(a.URL, b.URL), cmp.Compare(a.Status, b.Status), strings.Compare(a.RetryAfter, b.RetryAfter),
		cmp.Compare(a.Duration, b.Duration), bytes.Compare(a.RequestBody, b.RequestBody), bytes.Compare(a.ResponseBody, b.ResponseBody))
}
