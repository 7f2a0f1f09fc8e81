package transport

import (
	"sync"
	"sync/atomic"
	"time"
)

// wheelTick is the granularity of attempt timeouts: an attempt's context
// reports its exact deadline, but is cancelled at the end of the tick in
// which the deadline falls (at most 100 ms late on XSAPI's 5 to 30 s).
const wheelTick = 100 * time.Millisecond

const wheelShards = 8

// wheel bounds the attempts of one Transport. Arming and stopping a runtime
// timer per attempt costs about 300 ns on a small VM (timer-heap locks and
// clock reads); here an attempt joins the list of its tick's slot, under one
// of a few locks, and a slot has one runtime timer, armed when the slot is
// first used and shared by every attempt that ends in it. Finishing an
// attempt unlinks it; the slot's timer then fires on an empty or shorter
// list. It starts no goroutine (the timers run their function in the
// runtime's), so it works inside testing/synctest.
type wheel struct {
	next   atomic.Uint32
	shards [wheelShards]wheelShard
}

type wheelShard struct {
	mu    sync.Mutex
	slots map[int64]*attemptCtx // tick index -> the head of its list (nil when emptied)
	_     [40]byte              // keep shards on separate cache lines
}

// add makes c expire at the end of the tick holding deadline; now is the
// time on the real clock.
func (w *wheel) add(c *attemptCtx, now, deadline time.Time) {
	sh := &w.shards[w.next.Add(1)%wheelShards]
	slot := (deadline.UnixNano() + int64(wheelTick) - 1) / int64(wheelTick)
	sh.mu.Lock()
	if sh.slots == nil {
		sh.slots = make(map[int64]*attemptCtx)
	}
	head, armed := sh.slots[slot]
	c.wprev, c.wnext = nil, head
	if head != nil {
		head.wprev = c
	}
	sh.slots[slot] = c
	c.wshard, c.wslot, c.inWheel = sh, slot, true
	sh.mu.Unlock()
	if !armed {
		time.AfterFunc(time.Unix(0, slot*int64(wheelTick)).Sub(now), func() { sh.fire(slot) })
	}
}

// fire expires every attempt still in the slot.
func (sh *wheelShard) fire(slot int64) {
	sh.mu.Lock()
	c := sh.slots[slot]
	delete(sh.slots, slot)
	var due []*attemptCtx
	for ; c != nil; c = c.wnext {
		c.inWheel = false
		due = append(due, c)
	}
	sh.mu.Unlock()
	for _, c := range due {
		c.expire()
	}
}

// remove takes c out of its slot, if it is still in one.
func (sh *wheelShard) remove(c *attemptCtx) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !c.inWheel {
		return
	}
	c.inWheel = false
	if c.wprev != nil {
		c.wprev.wnext = c.wnext
	} else {
		sh.slots[c.wslot] = c.wnext
	}
	if c.wnext != nil {
		c.wnext.wprev = c.wprev
	}
	c.wprev, c.wnext = nil, nil
}
