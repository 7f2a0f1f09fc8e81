package transport

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack34SlowLearned is a fleet's LimitStore whose next Learned read, once
// armed, takes its answer and then waits for release before returning it:
// a store that answers slowly (a Redis round trip, a busy node).
type attack34SlowLearned struct {
	*throttle.MemoryBudgetStore
	armed   atomic.Bool
	reading chan struct{}
	release chan struct{}
}

func (s *attack34SlowLearned) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	in, err := s.MemoryBudgetStore.Learned(ctx, now)
	if s.armed.CompareAndSwap(true, false) {
		close(s.reading)
		<-s.release
	}
	return in, err
}

// TestAttack34SlowReadRevertsConfirmedLimit: the fleet's store has profile's
// burst 8 in force. The service now applies 6. One call's periodic read of
// the store's limits (refreshLearned) takes the store's answer (8) and is
// slow to return; meanwhile two users' 429s on this very transport report
// 6, the store confirms 6 and the transport puts it in force (setScope).
// Then the slow read lands: "the store's limit of a window holds", and the
// 8 it read before the confirmation replaces the 6 the transport itself
// confirmed after it. A third user's burst of 8 is sent into the service's
// 429 until the next read, 10 s later. (The rule it replaced, "the one
// reported last holds", kept the newer 6.)
func TestAttack34SlowReadRevertsConfirmedLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack34SlowLearned{MemoryBudgetStore: &throttle.MemoryBudgetStore{}, reading: make(chan struct{}), release: make(chan struct{})}
		base := &attack34SwitchBase{}
		base.h.Store(attack31Served(t, 8))
		tr := &Transport{Base: base, TitleID: "1234567890", Budget: store, RetryWindow: -1}
		for range 9 {
			attack31ProfileAs(tr, "2533274790000001")
		}
		for range 9 {
			attack31ProfileAs(tr, "2533274790000002")
		}
		if n := attack31LearnedBurst(tr); n != 8 {
			t.Skipf("setup: burst 8 not confirmed: %+v", tr.LearnedLimits())
		}
		time.Sleep(30 * time.Second)
		base.h.Store(attack31Served(t, 6)) // the service now applies 6
		store.armed.Store(true)
		done := make(chan struct{})
		go func() { // this call's read of the store's limits is slow
			defer close(done)
			attack31ProfileAs(tr, "2533274790000009")
		}()
		<-store.reading
		for range 7 {
			attack31ProfileAs(tr, "2533274790000003")
		}
		for range 7 {
			attack31ProfileAs(tr, "2533274790000004")
		}
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Skipf("setup: burst 6 not confirmed during the slow read: %+v", tr.LearnedLimits())
		}
		close(store.release)
		<-done
		got := attack31LearnedBurst(tr)
		before := tr.Stats().Server429s
		for range 8 {
			attack31ProfileAs(tr, "2533274790000005")
		}
		n429 := tr.Stats().Server429s - before
		if got != 6 || n429 != 0 {
			t.Errorf("the transport confirmed profile's burst 6 (two users' 429s, confirmed by the fleet's store) while a "+
				"read of the store's limits begun before it was in flight; when the read landed the transport's burst "+
				"was %d (want 6: the store itself has 6) and a fifth user's 8 calls collected %d 429s (want 0). The "+
				"stale read's 8 replaced the newer confirmation. Against Transport.MaxLearnedLimit: \"once another "+
				"user's 429, or one from a later window, reports the same limit, every key of the scope does ... its "+
				"limit of a window holds where it has one\" (the store's limit is 6)", got, n429)
		}
	})
}
