package transport

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack39Gate2Store is a shared store whose every Reserve admits with a wait
// (wait, capped at what it was asked), naming its slot slot; it records
// the slots it was given back, and fails every Sync when failSync (an
// isolating store's node that takes no writes of that kind).
type attack39Gate2Store struct {
	throttle.MemoryBudgetStore
	wait     time.Duration
	slot     int64
	failSync bool

	mu       sync.Mutex
	admitted int
	released []int64
}

func (s *attack39Gate2Store) IsolatesFailures() bool { return s.failSync }

func (s *attack39Gate2Store) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitted++
	return throttle.Admission{Allowed: true, Wait: min(s.wait, maxWait), Slot: s.slot}, nil
}

func (s *attack39Gate2Store) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = append(s.released, slot)
	return nil
}

func (s *attack39Gate2Store) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if s.failSync {
		return errors.New("attack39: sync not taken")
	}
	return s.MemoryBudgetStore.Sync(ctx, k, l, now, p, used, reset)
}

func (s *attack39Gate2Store) releases() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.released...)
}

const attack39Gate2URL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

// attack39Gate2Transport is a Transport on store whose Base answers 200 and
// counts what it was sent.
func attack39Gate2Transport(store throttle.BudgetStore, sent *atomic.Int32) *Transport {
	return &Transport{TitleID: title, Budget: store, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
}

// attack39Gate2CancelledCall sends one profile call of user through tr whose
// context is cancelled after cancelAt (while it waits for its booking),
// and returns its error.
func attack39Gate2CancelledCall(tr *Transport, ctx context.Context, user string, cancelAt time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	time.AfterFunc(cancelAt, cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", attack39Gate2URL, nil)
	req.Header.Set("Authorization", "XBL3.0 x="+user+";token")
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// TestAttack39Gate2NegativeSlotReleasedInTheWrongStore: a custom shared
// BudgetStore names its slots as it likes ("Its meaning is the store's
// own", throttle.Admission.Slot; a store of random int64 ids names half of
// them negative). The failover reads a negative slot as its local store's:
// a call cancelled while it waited gave the custom store's booking back to
// the local store, and the custom store kept it for a call never sent.
// Now a shared store's slots must not be negative (Transport.Budget): a
// booking with one goes back to that store at once, reported as the
// store's failure (an EventBudgetError saying so), and the call books
// locally.
func TestAttack39Gate2NegativeSlotReleasedInTheWrongStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slot = -4242424242 // e.g. rand.Int64()'s
		store := &attack39Gate2Store{wait: 2 * time.Second, slot: slot}
		var sent atomic.Int32
		tr := attack39Gate2Transport(store, &sent)
		var said []string
		tr.Observe = func(_ context.Context, e Event) {
			if e.Kind == EventBudgetError && e.Err != nil {
				said = append(said, e.Err.Error())
			}
		}
		err := attack39Gate2CancelledCall(tr, context.Background(), "neg-slot-user", time.Second)
		if rel := store.releases(); len(rel) != 1 || rel[0] != slot {
			t.Errorf("the shared store booked slot %d; it was given back %v: want [%d] once. "+
				"Promise broken: \"a booking is kept only while the call's context lives (otherwise its slot is released ...)\" (RELIABILITY.md) and "+
				"throttle.Admission.Slot: \"Its meaning is the store's own\": the failover's Release sent a negative slot to its local store "+
				"(failover.Release: slot < 0 -> f.local.Release), so the custom store kept a booking for a call never sent", slot, rel, slot)
		}
		if err != nil || sent.Load() != 1 || len(said) != 1 || !strings.Contains(said[0], "must not be negative") {
			t.Errorf("a store booking slot %d: %v, sent %d, budget errors %q; want the call booked locally and sent, one error naming the store's slot", slot, err, sent.Load(), said)
		}
	})
}

// TestAttack39Gate2StricterLocalBookingNeverReleased: while a key's report is
// pending (its RateLimit counts owed to an isolating store that fails
// every Sync), a call is booked in both stores (failover.stricter) and
// goes on the shared store's booking, the local one kept to count it. A
// call that is then cancelled while it waits for that booking does not go:
// only its shared slot is given back, and its local booking stays. Ten
// such calls, none sent, spend the key's burst in the local store, and a
// FailFast call is refused locally though the service has counted one
// call of ten.
func TestAttack39Gate2StricterLocalBookingNeverReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack39Gate2Store{wait: 2 * time.Second, slot: 7, failSync: true}
		var sent atomic.Int32
		tr := attack39Gate2Transport(store, &sent)
		tr.init()
		const user = "stricter-user"
		k := throttle.Key{User: user, Title: title, Scope: "profile"}
		rule, ok := tr.limits.ByScope("profile")
		if !ok {
			t.Fatal("no profile rule")
		}
		l := rule.ClientLimit()
		// The service reported 1 call used of the burst window: the
		// isolating store fails the Sync, so it is owed (pending).
		tr.budget.Sync(context.Background(), k, l, time.Now(), throttle.Burst, 1, 15*time.Second)
		before, _ := tr.Snapshot(k)
		for i := range 10 {
			if err := attack39Gate2CancelledCall(tr, context.Background(), user, time.Second); !errors.Is(err, context.Canceled) {
				t.Fatalf("call %d, cancelled while it waited for its booking: %v; want context.Canceled", i, err)
			}
		}
		after, _ := tr.Snapshot(k)
		if sent.Load() != 0 || len(store.releases()) != 10 {
			t.Fatalf("sent %d, the shared store given back %d slots; want 0 sent, 10 given back", sent.Load(), len(store.releases()))
		}
		err := attack39Gate2CancelledCall(tr, WithPolicy(context.Background(), Policy{FailFast: true}), user, time.Hour)
		if before.Burst.Count != after.Burst.Count || err != nil {
			t.Errorf("ten calls cancelled while they waited for their bookings, none sent: the local budget's burst went from %d to %d used (of %d), "+
				"and a FailFast call then got %v; want the count unchanged and the call sent. Promise broken: \"a booking is kept only while the "+
				"call's context lives (otherwise its slot is released and the call ends with its context's error)\" (RELIABILITY.md; call.book: "+
				"\"the slot goes back, so that the budget keeps counting what the service counts\"): failover.stricter keeps the local booking "+
				"of a call that goes on the shared one, and its Release gives back the shared slot alone",
				before.Burst.Count, after.Burst.Count, l.Burst, err)
		}
	})
}
