package replay

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

// runner runs a pattern's calls on as few goroutines as their waits need: a
// worker is put to work only when every worker is asleep inside a call
// (waiting for a budget slot or a retry) while calls are queued. Virtual
// time advances only when every participant sleeps, so each call still
// starts at its own instant, and the goroutines grow with the calls waiting
// at once, not with the calls made. Each call runs on a goroutine that has
// run no other: a goroutine's stack never shrinks while it waits, and one
// that had sent a call (through the transport, and the mock's handler) has
// grown to 8 or 16 KiB, twice to four times what a call waiting for its
// budget needs, on thousands of calls waiting at once in a what-if (a
// goroutine a call costs a few per cent of the replay's CPU). A worker with
// nothing queued parks outside the clock until it is needed, and close
// ends the parked ones. The queue holds one item per event and instant, not
// one per call.
type runner struct {
	v    *clock.Virtual
	call func(e *Event)
	ctx  context.Context // the run's: once it ends, the calls queued are dropped, not made

	mu      sync.Mutex
	queue   []queued
	awake   int // workers not asleep
	live    int // workers at work (not parked)
	maxLive int // the most at work at once
	parked  int // workers parked, waiting on resume
	resume  chan struct{}
	stop    chan struct{}
}

// newRunner returns a runner of calls on v for a run under ctx.
func newRunner(ctx context.Context, v *clock.Virtual) *runner {
	return &runner{v: v, ctx: ctx, resume: make(chan struct{}), stop: make(chan struct{})}
}

// close ends the parked workers, once the clock is idle (v.Wait).
func (r *runner) close() { close(r.stop) }

type queued struct {
	e *Event
	n int // calls of e still to start at this instant
}

// push queues one call of e, starting a worker if none is awake.
func (r *runner) push(e *Event) {
	r.mu.Lock()
	if n := len(r.queue); n > 0 && r.queue[n-1].e == e {
		r.queue[n-1].n++
	} else {
		r.queue = append(r.queue, queued{e, 1})
	}
	spawn, reuse := r.awake == 0, false
	if spawn {
		reuse = r.wake()
	}
	r.mu.Unlock()
	if spawn {
		r.start(reuse)
	}
}

// start puts a worker to work: a parked one when wake took one, else a
// new one. The caller is a participant.
func (r *runner) start(reuse bool) {
	r.v.Hold()
	if reuse {
		r.resume <- struct{}{}
		return
	}
	go r.work()
}

// wake counts a worker about to start and reports whether it is a parked
// one. Requires r.mu held.
func (r *runner) wake() (reuse bool) {
	r.awake++
	r.live++
	r.maxLive = max(r.maxLive, r.live)
	if r.parked > 0 {
		r.parked--
		return true
	}
	return false
}

// work runs a queued call, parking while there is none, until close; the
// next queued call goes to a goroutine of its own. Once the run's context
// has ended, the queue is dropped instead: its calls are not made, and
// the work after a cancel grows with the calls under way, not with those
// queued.
func (r *runner) work() {
	for {
		e := r.pop()
		if e == nil {
			r.v.Release()
			select {
			case <-r.resume: // counted again (start)
				continue
			case <-r.stop:
				return
			}
		}
		if r.ctx.Err() != nil {
			r.mu.Lock()
			r.queue = nil
			r.mu.Unlock()
			continue // pop parks this worker
		}
		r.call(e)
		r.v.Hold() // the next worker, counted awake as this one was
		go r.work()
		r.v.Release()
		return
	}
}

// pop takes the next queued call; nil, with the worker parked (no longer
// awake), when there is none.
func (r *runner) pop() *Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		r.awake--
		r.live--
		r.parked++
		r.queue = nil // let a burst's backing array go
		return nil
	}
	q := &r.queue[0]
	e := q.e
	if q.n--; q.n == 0 {
		r.queue = r.queue[1:]
	}
	return e
}

// Now, Sleep and AfterFunc make the runner the calls' clock.Clock: a call
// about to sleep hands the queue to a new worker when it was the last one
// awake.
func (r *runner) Now() time.Time { return r.v.Now() }

func (r *runner) AfterFunc(d time.Duration, f func()) clock.Stopper { return r.v.AfterFunc(d, f) }

func (r *runner) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 || ctx.Err() != nil {
		return r.v.Sleep(ctx, d)
	}
	r.mu.Lock()
	r.awake--
	spawn, reuse := r.awake == 0 && len(r.queue) > 0, false
	if spawn {
		reuse = r.wake()
	}
	r.mu.Unlock()
	if spawn {
		r.start(reuse)
	}
	err := r.v.Sleep(ctx, d)
	r.mu.Lock()
	r.awake++
	r.mu.Unlock()
	return err
}

// Wait makes the runner a clock.Waiter: a call waiting for another's answer
// (a coalesced read) polls for it in virtual time, from 1 ms up to 100 ms
// apart, since virtual time advances only while every call sleeps.
func (r *runner) Wait(ctx context.Context, done <-chan struct{}) error {
	for d := time.Millisecond; ; d = min(2*d, 100*time.Millisecond) {
		select {
		case <-done:
			return nil
		default:
		}
		if err := r.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// schedule is the events' calls in time order, merged across events:
// events that overlap run at the same time, each call at its own instant.
// It reads the events in order as their time comes, and holds only those
// started and not done (a count spread over time), so it grows with the
// events that overlap, not with the events.
type schedule struct {
	ev   Events
	keep func(*Event) bool // the events to run; nil: all
	next int               // the first event not started
	on   []cursor          // a heap by the time of each started event's next call
}

type cursor struct {
	e  *Event
	n  int // e's index in the events: the last tie-break
	i  int // the next call's index in e
	at time.Duration
}

func newSchedule(ev Events) *schedule { return &schedule{ev: ev} }

// callTime is when call i of e starts: spread evenly over e.Spread, in
// floating point so that large counts and spreads cannot overflow.
func callTime(e *Event, i int) time.Duration {
	return e.At + time.Duration(float64(e.Spread)*(float64(i)/float64(e.Count)))
}

// pop returns the next call and its time; false when none is left.
func (s *schedule) pop() (*Event, time.Duration, bool) {
	for s.next < s.ev.Len() {
		if len(s.on) > 0 && !s.before(s.ev.Event(s.next).At) {
			break
		}
		e := new(Event)
		*e = s.ev.Event(s.next)
		s.next++
		if e.Count <= 0 || (s.keep != nil && !s.keep(e)) {
			continue
		}
		heap.Push(s, cursor{e: e, n: s.next - 1, at: e.At})
		break
	}
	if len(s.on) == 0 {
		return nil, 0, false
	}
	c := &s.on[0]
	e, at := c.e, c.at
	if c.i++; c.i < e.Count {
		c.at = callTime(e, c.i)
		heap.Fix(s, 0)
	} else {
		heap.Pop(s)
	}
	return e, at, true
}

// before reports whether an event not started, at at, comes before the
// next call of those started: only at an earlier time, since at the same
// time a started event began no later and comes first in the events.
func (s *schedule) before(at time.Duration) bool { return at < s.on[0].at }

func (s *schedule) Len() int { return len(s.on) }
func (s *schedule) Less(i, j int) bool {
	a, b := s.on[i], s.on[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.e.At != b.e.At {
		return a.e.At < b.e.At
	}
	return a.n < b.n
}
func (s *schedule) Swap(i, j int) { s.on[i], s.on[j] = s.on[j], s.on[i] }
func (s *schedule) Push(x any)    { s.on = append(s.on, x.(cursor)) }
func (s *schedule) Pop() any {
	old := s.on
	x := old[len(old)-1]
	s.on = old[:len(old)-1]
	return x
}

// idle reports whether no call of the runner is queued or under way.
func (r *runner) idle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live == 0 && len(r.queue) == 0
}
