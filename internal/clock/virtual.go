package clock

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Virtual is a discrete-event clock for simulations. Goroutines that take
// part register with Go; when every one of them is asleep in Sleep, time
// jumps to the earliest wake-up. Participants must block only in Sleep (or
// briefly on locks): anything else stalls the simulation.
type Virtual struct {
	mu      sync.Mutex
	now     time.Time
	running int
	q       wakeups
	seq     uint64
	idle    chan struct{} // closed when nothing runs and nothing sleeps
}

// NewVirtual returns a virtual clock reading start.
func NewVirtual(start time.Time) *Virtual {
	return &Virtual{now: start, idle: make(chan struct{})}
}

type wakeup struct {
	at  time.Time
	seq uint64
	ch  chan struct{} // closed to wake a sleeper
	fn  func()        // or called, for AfterFunc
	off bool          // cancelled
	i   int           // its index in the queue; -1 once out of it
}

type wakeups []*wakeup

func (w wakeups) Len() int { return len(w) }
func (w wakeups) Less(i, j int) bool {
	if w[i].at.Equal(w[j].at) {
		return w[i].seq < w[j].seq
	}
	return w[i].at.Before(w[j].at)
}
func (w wakeups) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].i, w[j].i = i, j
}
func (w *wakeups) Push(x any) {
	x.(*wakeup).i = len(*w)
	*w = append(*w, x.(*wakeup))
}
func (w *wakeups) Pop() any {
	old := *w
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*w = old[:len(old)-1]
	x.i = -1
	return x
}

// Now returns the virtual time.
func (v *Virtual) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

// Go runs f as a participant. Start a simulation with one root participant
// that starts the others: a participant started from outside may find time
// already moved on, if those before it slept first.
func (v *Virtual) Go(f func()) {
	v.mu.Lock()
	v.running++
	v.mu.Unlock()
	go func() {
		defer v.done()
		f()
	}()
}

// Hold counts one more participant: a goroutine the caller (itself a
// participant, so that time cannot move meanwhile) is about to resume from
// a wait outside the clock. It stops being one with Release.
func (v *Virtual) Hold() {
	v.mu.Lock()
	v.running++
	v.mu.Unlock()
}

// Release ends the calling participant's part, as if it had returned (Go's
// f), though its goroutine goes on to wait outside the clock until someone
// Holds it again, or for good.
func (v *Virtual) Release() { v.done() }

func (v *Virtual) done() {
	v.mu.Lock()
	v.running--
	v.advance()
	v.mu.Unlock()
}

// Wait blocks until every participant has finished and no timer is left.
// A Virtual clock runs one simulation: once idle, it stays idle.
func (v *Virtual) Wait() { <-v.idle }

// Sleep parks the caller until the virtual time has advanced by d.
func (v *Virtual) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	v.mu.Lock()
	w := v.push(d, nil)
	v.running--
	v.advance()
	v.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		v.mu.Lock()
		if !w.off {
			w.off = true
			v.running++ // awake again, outside the clock's knowledge
		}
		v.mu.Unlock()
		return ctx.Err()
	}
}

// AfterFunc calls f, in a new participant, once the virtual time has
// advanced by d.
func (v *Virtual) AfterFunc(d time.Duration, f func()) Stopper {
	v.mu.Lock()
	w := v.push(d, f)
	v.mu.Unlock()
	return stopper{v, w}
}

type stopper struct {
	v *Virtual
	w *wakeup
}

// Stop cancels the call and takes it out of the queue, so that timers
// stopped long before they were due (a transport's attempt timeout, every
// call) do not pile up in it.
func (s stopper) Stop() bool {
	s.v.mu.Lock()
	defer s.v.mu.Unlock()
	was := s.w.off
	s.w.off = true
	if s.w.i >= 0 {
		heap.Remove(&s.v.q, s.w.i)
	}
	return !was
}

// push queues a wake-up. Requires v.mu held.
func (v *Virtual) push(d time.Duration, fn func()) *wakeup {
	v.seq++
	w := &wakeup{at: v.now.Add(d), seq: v.seq, fn: fn}
	if fn == nil {
		w.ch = make(chan struct{})
	}
	heap.Push(&v.q, w)
	return w
}

// advance moves time to the next wake-up when nothing runs. Requires v.mu
// held.
func (v *Virtual) advance() {
	for v.running == 0 {
		if v.q.Len() == 0 {
			select {
			case <-v.idle:
			default:
				close(v.idle)
			}
			return
		}
		w := heap.Pop(&v.q).(*wakeup)
		if w.off {
			continue
		}
		w.off = true
		if w.at.After(v.now) {
			v.now = w.at
		}
		v.running++
		if w.fn != nil {
			fn := w.fn
			go func() {
				defer v.done()
				fn()
			}()
			continue
		}
		close(w.ch)
	}
}
