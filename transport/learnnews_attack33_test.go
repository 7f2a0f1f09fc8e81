package transport

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// attack33LearnedStore is a shared LimitStore whose Learned read alone can fail
// or stall (until its caller's context ends); its Learn and budget work.
type attack33LearnedStore struct {
	attack31LimitStore
	learnedFail  atomic.Bool
	learnedStall atomic.Bool
	learns       atomic.Int32
}

func (s *attack33LearnedStore) Learn(ctx context.Context, r throttle.LimitReport) (throttle.Learned, error) {
	s.learns.Add(1)
	return s.attack31LimitStore.Learn(ctx, r)
}

func (s *attack33LearnedStore) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	if s.learnedStall.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.learnedFail.Load() {
		return nil, errAttack28Down
	}
	return s.attack31LimitStore.Learned(ctx, now)
}

func attack33LearnedSetup(t *testing.T) (*attack33LearnedStore, *Transport) {
	store := &attack33LearnedStore{attack31LimitStore: attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}}
	a := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
	store.fail.Store(true)
	for range 8 {
		attack31ProfileAs(a, "2533274790000001")
	}
	for range 8 {
		attack31ProfileAs(a, "2533274790000002")
	}
	if n := attack31LearnedBurst(a); n != 6 {
		t.Fatalf("setup: A did not confirm burst 6 during the outage (%+v)", a.LearnedLimits())
	}
	time.Sleep(2 * time.Second)
	store.fail.Store(false)
	return store, a
}

// held: a shared store whose Learned read fails while its Learn works: the
// owed learn reports are sent (learnNews: "A shared store that cannot be
// read is sent r"), paid once each (no loop), and the store confirms the
// limit.
func TestAttack33LearnedFailsLearnWorks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, a := attack33LearnedSetup(t)
		store.learnedFail.Store(true)
		f := a.budget.(*failover)
		before := store.learns.Load()
		for i := range 12 {
			attack31ProfileAs(a, "25332747900001"+string(rune('0'+i/10))+string(rune('0'+i%10)))
		}
		sent := store.learns.Load() - before
		in, _ := store.MemoryBudgetStore.Learned(context.Background(), time.Now())
		if f.nOwed.Load() != 0 || sent > 2 || len(in) != 1 || in[0].Limit != 6 {
			t.Errorf("store's Learned fails, Learn works: after 12 calls %d still owed, %d Learn calls paid (want 2: the two users' reports, once each), store has %+v (want burst 6 confirmed). "+
				"Against Transport.MaxLearnedLimit: \"the reports of a limit confirmed meanwhile are owed to it (as the budget's are...)\"", f.nOwed.Load(), sent, in)
		}
	})
}

// held: the shared store's Learned read (learnNews, paying an owed learn)
// stalls: a call with a 2 s deadline still ends by its deadline, and the
// report stays owed (not lost).
func TestAttack33LearnNewsStallEndsWithDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, a := attack33LearnedSetup(t)
		store.learnedStall.Store(true)
		f := a.budget.(*failover)
		owedLearns := func() int {
			f.owedMu.Lock()
			defer f.owedMu.Unlock()
			n := 0
			for _, o := range f.owed {
				if o.op == opLearn {
					n++
				}
			}
			return n
		}
		if owedLearns() == 0 {
			t.Fatalf("setup: no learn owed")
		}
		for i := range 4 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", attack31ProfileURL, nil)
			req.Header.Set("Authorization", mock.Token("253327479000030"+string(rune('0'+i)), "1234567890"))
			start := time.Now()
			resp, err := a.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			took := time.Since(start)
			cancel()
			if took > 2*time.Second {
				t.Errorf("call %d with a 2 s deadline took %v while the store's Learned read stalled: against RELIABILITY.md's \"Every call ends\" and Transport: a call gives the store every operation \"within its own context\"", i, took)
			}
		}
		store.learnedStall.Store(false)
		time.Sleep(2 * time.Second)
		for i := range 8 {
			attack31ProfileAs(a, "253327479000040"+string(rune('0'+i)))
		}
		in, _ := store.MemoryBudgetStore.Learned(context.Background(), time.Now())
		if len(in) != 1 || in[0].Limit != 6 {
			t.Errorf("after the Learned read stalled then recovered, the store has %+v (want burst 6 confirmed): the owed learns were lost (%d still owed)", in, owedLearns())
		}
	})
}
