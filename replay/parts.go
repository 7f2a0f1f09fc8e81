package replay

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

// part is one part of a run (Options.Parts): some users' calls on a clock,
// a service and a client of their own.
type part struct {
	v    *clock.Virtual
	obs  *observer
	r    *runner
	ctx  context.Context
	fed  atomic.Bool  // feed has started every call of the part
	read atomic.Int64 // events feed has read for the last time (the schedule's next)
}

// partOf is the part of n that replays user's calls (FNV-1a of the XUID).
func partOf(user string, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(user); i++ {
		h = (h ^ uint32(user[i])) * 16777619
	}
	return int(h % uint32(n))
}

// tick meets the other parts at every step of virtual time until the
// part has nothing left to call: it sleeps to the step, where every call
// before it has reached the service, and waits there, which holds the
// part's clock, until every part has come.
func (p *part) tick(st *steps) {
	for k := 1; ; k++ {
		if p.v.Sleep(p.ctx, st.every) != nil || (p.fed.Load() && p.r.idle()) {
			st.leave()
			return
		}
		st.arrive(k)
	}
}

// steps is where the parts meet (Options.OnStep): a barrier at each step
// of virtual time.
type steps struct {
	every time.Duration
	start time.Time
	on    func(until time.Time)
	// release, if set, tells the events how many every part has read for
	// the last time (Releaser).
	release func()

	mu      sync.Mutex
	cond    *sync.Cond
	live    int // parts still ticking
	arrived int // at step k
	k       int
	gen     int // steps passed
}

// arrive waits at step k until every live part has come.
func (s *steps) arrive(k int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.k = k
	s.arrived++
	if s.arrived == s.live {
		s.pass()
		return
	}
	for g := s.gen; g == s.gen; {
		s.cond.Wait()
	}
}

// leave takes a part out of the steps; the others may then pass.
func (s *steps) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live--
	if s.arrived > 0 && s.arrived == s.live {
		s.pass()
	}
}

// pass lets the parts waiting at step s.k go, after OnStep. Requires s.mu
// held.
func (s *steps) pass() {
	if s.on != nil {
		s.on(s.start.Add(time.Duration(s.k) * s.every))
	}
	if s.release != nil {
		s.release()
	}
	s.arrived = 0
	s.gen++
	s.cond.Broadcast()
}
