package transport

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack35HidingStore is attack31LimitStore whose Learned can be made to
// lack every limit (the store ended them: a flushed Redis, or its clock).
type attack35HidingStore struct {
	attack31LimitStore
	hide *atomic.Bool
}

func (s attack35HidingStore) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	in, err := s.attack31LimitStore.Learned(ctx, now)
	if s.hide.Load() {
		return nil, err
	}
	return in, err
}

// held: a limit confirmed during an outage (outage entry, burst 8), then
// after recovery reported again by the same two users to the working store
// (their owed reports paid first): the entry became the store's (the
// outage flag cleared by setScope), so when the store later lacks it the
// next read ends it, as "one read from it ends when it ends there" says.
func TestAttack35OutageEntryReconfirmedEndsWithStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, _ := attack35Served(map[string]int{attack35A: 8, attack35B: 8})
		hide := new(atomic.Bool)
		store := attack35HidingStore{attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}, hide}
		tr := &Transport{Base: base, TitleID: title, Budget: store, RetryWindow: -1}
		attack31ProfileAs(tr, attack35D)
		store.fail.Store(true)
		attack31ProfileAs(tr, attack35A)
		attack31ProfileAs(tr, attack35B)
		if n := attack31LearnedBurst(tr); n != 8 {
			t.Fatalf("outage confirmation: burst %d, want 8", n)
		}
		store.fail.Store(false)
		time.Sleep(20 * time.Second)
		for range 3 {
			attack31ProfileAs(tr, attack35D)
		}
		time.Sleep(20 * time.Second)
		attack31ProfileAs(tr, attack35A)
		attack31ProfileAs(tr, attack35B)
		in, _ := store.MemoryBudgetStore.Learned(context.Background(), time.Now())
		if len(in) != 1 || in[0].Limit != 8 {
			t.Fatalf("after recovery the store has %+v, want burst 8 confirmed", in)
		}
		sl := tr.scopeMap()[scopeWindow{"profile", throttle.Burst}]
		if sl.outage {
			t.Errorf("burst 8 reported again to the working store still carries outage: %+v", sl)
		}
		hide.Store(true)
		time.Sleep(11 * time.Second)
		attack31ProfileAs(tr, attack35D)
		if n := attack31LearnedBurst(tr); n != 0 {
			t.Errorf("the store no longer has burst 8, the transport keeps %d: Transport.MaxLearnedLimit: \"one read from it ends when it ends there\"", n)
		}
	})
}
