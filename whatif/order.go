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
// whatever order they reach it in and whatever part of the replay made
// them: by time, and the calls of one instant (which concurrent calls may
// finish in either order) by what they are. It holds the calls of a step
// of the replay (replay.Options.OnStep).
type inOrder struct {
	a   *analyze.Analyzer
	mu  sync.Mutex
	buf []*analyze.Call
	n   int // calls added
}

// add takes a call the replay made (analyze.Recorder.Add).
func (o *inOrder) add(c *analyze.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, c)
}

// before adds the calls made before until, numbered in their order
// (replay.Options.OnStep).
func (o *inOrder) before(until time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	slices.SortStableFunc(o.buf, compareCalls)
	n := 0
	for n < len(o.buf) && o.buf[n].Time.Before(until) {
		c := o.buf[n]
		c.Index = o.n
		o.n++
		o.a.Add(c)
		n++
	}
	rest := copy(o.buf, o.buf[n:])
	clear(o.buf[rest:])
	o.buf = o.buf[:rest]
}

// flush adds the calls held.
func (o *inOrder) flush() {
	o.mu.Lock()
	last := time.Time{}
	for _, c := range o.buf {
		if c.Time.After(last) {
			last = c.Time
		}
	}
	o.mu.Unlock()
	o.before(last.Add(1))
}

// compareCalls orders the calls of one instant by what the analysis reads
// of them; calls equal in all of it are alike to it in either order.
func compareCalls(a, b *analyze.Call) int {
	return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.Authorization, b.Authorization), strings.Compare(a.Method, b.Method),
		strings.Compare(a.URL, b.URL), cmp.Compare(a.Status, b.Status), strings.Compare(a.RetryAfter, b.RetryAfter),
		cmp.Compare(a.Duration, b.Duration), bytes.Compare(a.RequestBody, b.RequestBody), bytes.Compare(a.ResponseBody, b.ResponseBody))
}
