package transport

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack31SlowSyncStore is a working shared store whose Sync takes 300 ms (a
// slow Redis well within its timeout) while slow is set.
type attack31SlowSyncStore struct {
	*attack28Store
	slow bool
}

func (s *attack31SlowSyncStore) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if s.slow {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.attack28Store.Sync(ctx, k, l, now, p, used, reset)
}

// TestAttack31StricterRefusesCallBothStoresAdmit: a key's RateLimit counts (the
// burst spent, its window resetting in 6 s) are owed to the shared store
// (it failed them). It recovers, slowly: call B of the key pays the owed
// counts, which take 300 ms to land. Call C of the key, an interactive one
// that may wait 20 s for its budget, books meanwhile: the shared store
// (still without the counts) admits it now, the local store (with them)
// admits it in about 6 s, within its wait. Neither store refuses it; the
// failover refused it all the same, and the call got a local 429. Now the
// failover's refusal carries the local store's wait, which the call waits
// out, then books in the shared store, which has the counts by then: C is
// sent, after the window's reset. (The attack's test asked the failover
// alone; it now sends B and C through a Transport.)
func TestAttack31StricterRefusesCallBothStoresAdmit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack31SlowSyncStore{attack28Store: &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		var sent atomic.Int32
		tr := &Transport{LimitShare: 0.9, TitleID: title, Budget: shared, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		tr.init()
		f := tr.budget.(*failover)
		k := attack28Key("stricter-user")
		r, _ := tr.limits.ByScope("profile")
		l := tr.share(r.ClientLimit())
		ctx := context.Background()

		shared.fail.Store(true)
		f.Sync(ctx, k, l, time.Now(), throttle.Burst, l.Burst, 6*time.Second) // owed: the store failed it
		shared.fail.Store(false)
		shared.slow = true
		time.Sleep(1100 * time.Millisecond) // past the failover's probe pacing: the store is tried again

		call := func() (time.Duration, error) {
			req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
			req.Header.Set("Authorization", "XBL3.0 x=stricter-user;token")
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return time.Since(start), err
		}
		var wg sync.WaitGroup
		var bErr error
		wg.Go(func() { _, bErr = call() }) // B pays the counts; they land 300 ms later
		time.Sleep(100 * time.Millisecond) // B's payment is on its way
		took, err := call()
		wg.Wait()
		if err != nil || took < 4*time.Second || bErr != nil || sent.Load() != 2 {
			t.Errorf("an interactive call that may wait 20 s, booked while its key's RateLimit counts (burst spent, reset "+
				"in 6 s) were on their way to the shared store: %v after %v (B: %v; %d sent), want sent after the reset, "+
				"about 5 s later. Transport.Budget: \"until a key's reports have reached the store, its calls are booked "+
				"in both stores and hold the stricter\"; Transport.Policy: \"how long they may wait for their budget\": a "+
				"wait within its MaxWait is the stricter, not a refusal", err, took, bErr, sent.Load())
		}
	})
}

// held: with LimitShare 0.5 and the default InteractiveShare (profile's
// 10 / 30 becomes 5 / 15, background 3 / 11), a key whose report is on its
// way to the shared store (its bookings held to the stricter of both
// stores): 3 background calls go, the 4th is refused; interactive calls
// then take places 4 and 5 and the 6th is refused; a background call is
// never admitted into the interactive part by either store, and no
// interactive call within the share is refused.
func TestAttack31LimitShareBackgroundWhilePending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
		tr := &Transport{LimitShare: 0.5}
		f := newFailover(tr, shared, 0)
		k := attack28Key("share-user")
		l := tr.share(throttle.Limit{Burst: 10, Sustain: 30})
		bg := tr.backgroundLimit(l)
		if l.Burst != 5 || bg.Burst != 3 {
			t.Fatalf("setup: share %+v, background %+v", l, bg)
		}
		ctx := context.Background()
		// A report of k on its way (a call paying it) for the whole test.
		f.owedMu.Lock()
		f.inFlight[k]++
		f.nReports.Add(1)
		f.owedMu.Unlock()
		now := time.Now()
		var got []bool
		for range 4 {
			a, _ := f.Reserve(ctx, k, bg, now, 0)
			got = append(got, a.Allowed)
		}
		for range 3 {
			a, _ := f.Reserve(ctx, k, l, now, 0)
			got = append(got, a.Allowed)
		}
		want := []bool{true, true, true, false, true, true, false}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("admissions (4 background, 3 interactive) %v, want %v: Transport.LimitShare: \"the share of each "+
					"limit ... the budget lets calls use\"; Background: \"It never takes the share kept for interactive calls\"", got, want)
			}
		}
	})
}
