package replay

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

// runner runs a pattern's calls on as few goroutines as their waits need. A
// worker takes queued calls one after another; a new worker starts only when
// every worker is asleep inside a call (waiting for a budget slot or a
// retry) while calls are queued. Virtual time advances only when every
// participant sleeps, so each call still starts at its own instant, and the
// goroutines grow with the calls waiting at once, not with the calls made.
// The queue holds one item per event and instant, not one per call.
type runner struct {
	v    *clock.Virtual
	call func(e *Event)

	mu      sync.Mutex
	queue   []queued
	awake   int // workers not asleep
	live    int // workers alive
	maxLive int // the most alive at once
}

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
	spawn := r.awake == 0
	if spawn {
		r.wake()
	}
	r.mu.Unlock()
	if spawn {
		r.v.Go(r.work)
	}
}

// wake counts a worker about to start. Requires r.mu held.
func (r *runner) wake() {
	r.awake++
	r.live++
	r.maxLive = max(r.maxLive, r.live)
}

func (r *runner) work() {
	for {
		e := r.pop()
		if e == nil {
			return
		}
		r.call(e)
	}
}

// pop takes the next queued call; nil, with the worker no longer awake,
// when there is none.
func (r *runner) pop() *Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		r.awake--
		r.live--
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
	spawn := r.awake == 0 && len(r.queue) > 0
	if spawn {
		r.wake()
	}
	r.mu.Unlock()
	if spawn {
		r.v.Go(r.work)
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

// schedule is the pattern's calls in time order, merged across events:
// events that overlap run at the same time, each call at its own instant.
type schedule struct {
	next []cursor // a heap by the time of each event's next call
}

type cursor struct {
	e  *Event
	i  int // the next call's index in e
	at time.Duration
}

func newSchedule(p Pattern) *schedule {
	s := &schedule{}
	for i := range p {
		if p[i].Count > 0 {
			s.next = append(s.next, cursor{e: &p[i], at: callTime(&p[i], 0)})
		}
	}
	heap.Init(s)
	return s
}

// callTime is when call i of e starts: spread evenly over e.Spread, in
// floating point so that large counts and spreads cannot overflow.
func callTime(e *Event, i int) time.Duration {
	return e.At + time.Duration(float64(e.Spread)*(float64(i)/float64(e.Count)))
}

// pop returns the next call and its time; false when none is left.
func (s *schedule) pop() (*Event, time.Duration, bool) {
	if len(s.next) == 0 {
		return nil, 0, false
	}
	c := &s.next[0]
	e, at := c.e, c.at
	if c.i++; c.i < e.Count {
		c.at = callTime(e, c.i)
		heap.Fix(s, 0)
	} else {
		heap.Pop(s)
	}
	return e, at, true
}

func (s *schedule) Len() int { return len(s.next) }
func (s *schedule) Less(i, j int) bool {
	if s.next[i].at == s.next[j].at {
		return s.next[i].e.At < s.next[j].e.At
	}
	return s.next[i].at < s.next[j].at
}
func (s *schedule) Swap(i, j int) { s.next[i], s.next[j] = s.next[j], s.next[i] }
func (s *schedule) Push(x any)    { s.next = append(s.next, x.(cursor)) }
func (s *schedule) Pop() any {
	old := s.next
	x := old[len(old)-1]
	s.next = old[:len(old)-1]
	return x
}
