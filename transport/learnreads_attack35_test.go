package transport

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack35SlowStore is attack31LimitStore whose Learned reads the store at
// once but answers after delay (a slow link: the answer is the store as it
// was when asked), and can be made to lack every limit.
type attack35SlowStore struct {
	attack31LimitStore
	hide  *atomic.Bool
	delay *atomic.Int64
}

func (s attack35SlowStore) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	in, err := s.attack31LimitStore.Learned(ctx, now)
	if s.hide.Load() {
		in = nil
	}
	if d := time.Duration(s.delay.Swap(0)); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return in, err
}

// TestAttack35OlderReadResurrectsEndedLimit: two reads of the fleet's store in
// flight at once (refreshLearned lets a new one start every 10 s; the first
// is slow, 15 s). The store's burst 6 ends there (a flush, or the store's
// clock: the case of TestAttack34SkewedReplicaKeepsExpiredFleetLimit)
// between them. The second read, asked later, lands first and ends the 6
// (EventLimitLearned "expired"); then the first, older read lands and puts
// the ended 6 back in force for every key of the scope, until a third read,
// which ends it a second time (a second EventLimitLearned for one end).
func TestAttack35OlderReadResurrectsEndedLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, _ := attack35Served(map[string]int{attack35A: 6, attack35B: 6})
		hide, delay := new(atomic.Bool), new(atomic.Int64)
		store := attack35SlowStore{attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}, hide, delay}
		var mu sync.Mutex
		var ends int
		tr := &Transport{Base: base, TitleID: title, Budget: store, RetryWindow: -1, Observe: func(_ context.Context, e Event) {
			if e.Kind == EventLimitLearned && e.Body == nil {
				mu.Lock()
				ends++
				mu.Unlock()
			}
		}}
		attack31ProfileAs(tr, attack35A)
		attack31ProfileAs(tr, attack35B)
		time.Sleep(11 * time.Second)
		attack31ProfileAs(tr, attack35D) // a read that has the store's 6: it is the store's now
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Fatalf("burst %d, want 6", n)
		}
		time.Sleep(11 * time.Second)
		delay.Store(int64(15 * time.Second))
		var wg sync.WaitGroup
		wg.Go(func() { attack31ProfileAs(tr, attack35D) }) // read 1: has 6, lands in 15 s
		time.Sleep(time.Second)
		hide.Store(true) // the store ends the 6
		time.Sleep(10 * time.Second)
		attack31ProfileAs(tr, attack35D) // read 2: lacks it
		if n := attack31LearnedBurst(tr); n != 0 {
			t.Fatalf("read 2 lacks the store's 6, the transport keeps %d", n)
		}
		wg.Wait() // read 1 lands
		if n := attack31LearnedBurst(tr); n != 0 {
			t.Errorf("a read asked before the store ended burst 6, landing after a read that ended it, put it back: burst %d in force for every key; "+
				"Transport.MaxLearnedLimit: \"its limit of a window holds where it has one, and one read from it ends when it ends there\"", n)
		}
		time.Sleep(11 * time.Second)
		attack31ProfileAs(tr, attack35D)
		mu.Lock()
		defer mu.Unlock()
		if ends != 1 {
			t.Errorf("burst 6 ended once in the store, %d EventLimitLearned ends: EventLimitLearned: \"Once per change\"", ends)
		}
	})
}
