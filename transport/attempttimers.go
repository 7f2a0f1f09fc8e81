package transport

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

// attemptTimers ends a Transport's attempts at their timeouts with one
// runtime timer for each timeout in use rather than one for each attempt.
// The attempts of one timeout wait in a queue in the order of their
// deadlines; its timer is armed for the first, and is not stopped when an
// attempt ends before it (the common case): when it fires, it ends the
// attempts whose deadlines have come and arms itself again for the next,
// or, with none left, drops the queue. A busy Transport so arms a timer
// about once per timeout, and a call pays a lock and a few links instead
// of arming and stopping a timer of its own (BENCHMARKS.md, §1b). The
// timer holds its queue strongly while attempts wait in it (an attempt
// whose caller dropped its body, and the Transport, still ends at its
// timeout) and weakly once none do: a Transport no longer used is then
// freed with its queues by the next collection, its timers left to fire on
// nothing. Only timeouts of whole milliseconds queue (those calls are
// given: XSAPI's and Policy.AttemptTimeout); one computed from the time a
// call has taken (a retry's, a renewal's) would make a queue of one
// attempt, and gets a timer of its own.
type attemptTimers struct {
	mu sync.Mutex
	q  map[time.Duration]*attemptQueue
}

// maxAttemptQueues bounds the queues, one per timeout in use: the attempts
// of a timeout beyond them get timers of their own.
const maxAttemptQueues = 8

// attemptQueue holds the queued attempts of one timeout, in the order of
// their deadlines. Its fields, and the links of the attempts in it, are
// guarded by ts.mu.
type attemptQueue struct {
	ts         *attemptTimers
	timeout    time.Duration
	head, tail *attempt
	timer      *time.Timer
	at         time.Time                     // when the timer fires
	held       *atomic.Pointer[attemptQueue] // the timer's strong hold: the queue while it is not empty
}

// add queues a, to end at deadline, and reports whether it did: false when
// maxAttemptQueues other timeouts have queues.
func (ts *attemptTimers) add(a *attempt, deadline time.Time, timeout time.Duration) bool {
	if timeout%time.Millisecond != 0 {
		return false
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	q := ts.q[timeout]
	if q == nil {
		if len(ts.q) >= maxAttemptQueues {
			return false
		}
		if ts.q == nil {
			ts.q = make(map[time.Duration]*attemptQueue)
		}
		q = &attemptQueue{ts: ts, timeout: timeout, held: new(atomic.Pointer[attemptQueue])}
		ts.q[timeout] = q
		w, held := weak.Make(q), q.held
		q.at = deadline
		q.timer = time.AfterFunc(time.Until(deadline), func() {
			q := held.Load()
			if q == nil {
				q = w.Value()
			}
			if q != nil {
				q.fire()
			}
		})
	} else if deadline.Before(q.at) {
		// A call whose time was read before another's, but that queues
		// after it, may be due before the timer fires.
		q.at = deadline
		q.timer.Reset(time.Until(deadline))
	}
	a.ts, a.deadline = ts, deadline
	// Deadlines come in order but for calls whose times were read in
	// another order than they queue: walk back past those.
	p := q.tail
	for p != nil && p.deadline.After(deadline) {
		p = p.prev
	}
	a.q, a.prev = q, p
	if p == nil {
		a.next, q.head = q.head, a
	} else {
		a.next, p.next = p.next, a
	}
	if a.next == nil {
		q.tail = a
	} else {
		a.next.prev = a
	}
	if q.head == a && a.next == nil { // the first in an empty queue
		q.held.Store(q)
	}
	return true
}

// remove takes a out of its queue, if it is still in one.
func (ts *attemptTimers) remove(a *attempt) {
	ts.mu.Lock()
	if a.q != nil {
		a.q.unlink(a)
	}
	ts.mu.Unlock()
}

func (q *attemptQueue) unlink(a *attempt) {
	if a.prev == nil {
		q.head = a.next
	} else {
		a.prev.next = a.next
	}
	if a.next == nil {
		q.tail = a.prev
	} else {
		a.next.prev = a.prev
	}
	a.q, a.prev, a.next = nil, nil, nil
	a.out.Store(true)
	if q.head == nil {
		q.held.Store(nil)
	}
}

// fire ends the attempts whose deadlines have come, then arms the timer
// for the next or, with none left, drops the queue.
func (q *attemptQueue) fire() {
	var due []*attempt
	q.ts.mu.Lock()
	now := time.Now()
	for q.head != nil && !q.head.deadline.After(now) {
		a := q.head
		q.unlink(a)
		due = append(due, a)
	}
	if q.head != nil {
		q.at = q.head.deadline
		q.timer.Reset(q.head.deadline.Sub(now))
	} else if q.ts.q[q.timeout] == q {
		delete(q.ts.q, q.timeout)
	}
	q.ts.mu.Unlock()
	for _, a := range due {
		a.cancel(context.DeadlineExceeded)
	}
}
