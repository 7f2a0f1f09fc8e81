package mock

import (
	"sync/atomic"
	"time"
)

// timerOn is a timer whose callback reaches what it acts on only until
// the timer is stopped: a stopped timer can stay in the runtime's heap,
// callback and all, until its time would have come (while earlier timers
// are pending), and then holds nothing of the mock
// (TestRTAStoppedLapseHoldsNothing,
// TestRTAClosedConnectionFlushTimerHoldsNothing). Its owner's lock guards
// arm and stop.
type timerOn[T any] struct {
	t  *time.Timer
	on atomic.Pointer[T]
	f  func(*T)
}

// newTimerOn returns a timer, not yet armed, that calls f with on.
func newTimerOn[T any](on *T, f func(*T)) *timerOn[T] {
	r := &timerOn[T]{f: f}
	r.on.Store(on)
	return r
}

// arm calls f with what the timer acts on after d, unless it is stopped
// first; arming it again sets it again.
func (r *timerOn[T]) arm(d time.Duration) {
	if r.t != nil {
		r.t.Reset(d)
		return
	}
	r.t = time.AfterFunc(d, func() {
		if v := r.on.Load(); v != nil {
			r.f(v)
		}
	})
}

// stop stops the timer for good and lets go of what it acts on.
func (r *timerOn[T]) stop() {
	r.on.Store(nil)
	if r.t != nil {
		r.t.Stop()
	}
}
