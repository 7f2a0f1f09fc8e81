package transport

import (
	"context"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// Ticker paces a periodic call of one user and scope: it ticks every
// Every (the poll planner's safe interval, limits.Plan), never faster, and
// later when the local budget of the key runs low: when the next call
// would wait (a server Retry-After, or the budget spent by other calls of
// the same key), it waits for that, and when a window has no call left it
// waits until the window frees one. Receive from C as from a time.Ticker;
// Stop it when done. A tick is dropped, not queued, while nobody receives.
type Ticker struct {
	C    <-chan time.Time
	ctx  context.Context // ends at Stop, and with it a wait for the budget store
	stop context.CancelFunc
	done chan struct{}
}

// NewTicker starts a Ticker for key k (k.User the userhash of the calls'
// Authorization, k.Scope a scope of the limits; an empty k.Title is the
// Transport's TitleID) and the interval every, which must be positive. The
// first tick comes at once.
func (t *Transport) NewTicker(k throttle.Key, every time.Duration) (*Ticker, error) {
	if every <= 0 {
		return nil, &usageError{"a ticker's interval must be positive"}
	}
	if _, err := t.ruleByScope(k.Scope); err != nil {
		return nil, err
	}
	c := make(chan time.Time, 1)
	ctx, stop := context.WithCancel(context.Background())
	tk := &Ticker{C: c, ctx: ctx, stop: stop, done: make(chan struct{})}
	go tk.run(t, k, every, c)
	return tk, nil
}

// Stop ends the ticker, and a read of a shared budget store it waits for
// (the store's call ends with its context); no tick comes after it returns.
func (tk *Ticker) Stop() {
	tk.stop()
	<-tk.done
}

func (tk *Ticker) run(t *Transport, k throttle.Key, every time.Duration, c chan time.Time) {
	defer close(tk.done)
	wait := time.Duration(0) // the first tick at once
	for {
		if !tk.sleep(wait) {
			return
		}
		// At the planned time, the budget may ask for more (other calls
		// of the key spent it): wait that out before ticking.
		for w := t.budgetWait(tk.ctx, k); w > 0; w = t.budgetWait(tk.ctx, k) {
			if !tk.sleep(w) {
				return
			}
		}
		select {
		case c <- time.Now():
		default: // nobody is receiving: drop it, as time.Ticker does
		}
		wait = every
	}
}

// sleep waits d, and reports false when the ticker was stopped meanwhile.
func (tk *Ticker) sleep(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-tk.ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// budgetWait is how long the key's budget asks the next call to wait: the
// snapshot's wait, or until a spent window frees a call.
func (t *Transport) budgetWait(ctx context.Context, k throttle.Key) time.Duration {
	s, err := t.snapshot(ctx, k)
	if err != nil {
		return 0
	}
	wait := s.Wait
	for _, w := range []throttle.WindowState{s.Burst, s.Sustain} {
		if w.Limit > 0 && w.Count >= w.Limit {
			wait = max(wait, w.Reset)
		}
	}
	return wait
}
