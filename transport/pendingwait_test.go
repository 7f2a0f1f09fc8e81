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

// heldStore counts the bookings a shared store holds: those it admitted,
// less those given back.
type heldStore struct {
	*attack31SlowSyncStore
	held atomic.Int32
}

func (s *heldStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	a, err := s.attack31SlowSyncStore.Reserve(ctx, k, l, now, maxWait)
	if err == nil && a.Allowed {
		s.held.Add(1)
	}
	return a, err
}

func (s *heldStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	err := s.attack31SlowSyncStore.Release(ctx, k, l, slot)
	if err == nil {
		s.held.Add(-1)
	}
	return err
}

// pendingSync sets up a key whose RateLimit counts (its burst spent, the
// window resetting in 6 s) a failed store is owed, then recovers the store
// slowly (a Sync takes 300 ms) and starts a call B that pays them; it
// returns a function sending a call of the key under ctx, and the count
// of calls sent.
func pendingSync(t *testing.T, store *heldStore) (call func(context.Context) (time.Duration, error), sent *atomic.Int32, wait func()) {
	sent = new(atomic.Int32)
	tr := &Transport{LimitShare: 0.9, TitleID: title, Budget: store, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	tr.init()
	f := tr.budget.(*failover)
	r, _ := tr.limits.ByScope("profile")
	l := tr.share(r.ClientLimit())
	store.fail.Store(true)
	f.Sync(context.Background(), attack28Key("pending-user"), l, time.Now(), throttle.Burst, l.Burst, 6*time.Second)
	store.fail.Store(false)
	store.slow = true
	time.Sleep(1100 * time.Millisecond) // past the probe's pacing
	call = func(ctx context.Context) (time.Duration, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", "XBL3.0 x=pending-user;token")
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return time.Since(start), err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := call(context.Background()); err != nil {
			t.Errorf("B, paying the counts: %v", err)
		}
	})
	time.Sleep(100 * time.Millisecond) // B's payment is on its way
	return call, sent, wg.Wait
}

// TestPendingReportWaitBooksInTheSharedStore: a call booked while its key's
// counts are on their way to the shared store, which the local store (that
// has them) would make wait, waits that long and then books again in the
// shared store, where it is counted for the fleet (its first booking there
// given back).
func TestPendingReportWaitBooksInTheSharedStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &heldStore{attack31SlowSyncStore: &attack31SlowSyncStore{attack28Store: &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}}
		call, sent, wait := pendingSync(t, store)
		took, err := call(context.Background())
		wait()
		if err != nil || took < 4*time.Second || took > 7*time.Second || sent.Load() != 2 {
			t.Errorf("C: %v after %v, %d sent: want sent after the window's reset, about 5.5 s later", err, took, sent.Load())
		}
		if n := store.held.Load(); n != 2 {
			t.Errorf("the shared store holds %d bookings, want 2 (B's and C's, booked after its wait)", n)
		}
	})
}

// TestPendingReportWaitEndsWithItsContext: the same call, cancelled while it
// waits, is not sent and ends with its context's error at once.
func TestPendingReportWaitEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &heldStore{attack31SlowSyncStore: &attack31SlowSyncStore{attack28Store: &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}}
		call, sent, wait := pendingSync(t, store)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(2*time.Second, cancel)
		took, err := call(ctx)
		wait()
		if err == nil || ctx.Err() == nil || took != 2*time.Second || sent.Load() != 1 {
			t.Errorf("C cancelled 2 s into its wait: %v after %v, %d sent: want its context's error at 2 s, only B sent", err, took, sent.Load())
		}
		if n := store.held.Load(); n != 1 {
			t.Errorf("the shared store holds %d bookings, want B's alone", n)
		}
	})
}

// zeroWaitStore refuses every booking without a wait (a store of a user's
// own that says "no" and nothing more), and counts the bookings asked.
type zeroWaitStore struct {
	throttle.MemoryBudgetStore
	asked atomic.Int32
}

func (s *zeroWaitStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	if s.asked.Add(1) > 3 {
		return throttle.Admission{Allowed: true}, nil // ends a loop that asks again at once
	}
	return throttle.Admission{}, nil
}

// TestRefusalWithoutWaitIsRefused: a refusal that names no wait is the
// call's refusal, asked once: the call does not ask again at once.
func TestRefusalWithoutWaitIsRefused(t *testing.T) {
	store := &zeroWaitStore{}
	tr := &Transport{TitleID: title, Budget: store, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", "XBL3.0 x=zero-user;token")
	_, err := tr.RoundTrip(req)
	if te, ok := err.(*ThrottleError); !ok || !te.Local || store.asked.Load() != 1 {
		t.Errorf("a refusal without a wait: %v, the store asked %d times; want a local refusal, asked once", err, store.asked.Load())
	}
}
