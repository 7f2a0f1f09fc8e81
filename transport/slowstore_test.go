package transport

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// slowAnswerStore is a shared store under load: its first Reserve takes
// delay to answer (the rest answer at once), and its answers are those answer gives, in turn, for
// the maxWait the call asked with. It records what it was asked.
type slowAnswerStore struct {
	throttle.MemoryBudgetStore
	delay  time.Duration
	answer []func(maxWait time.Duration) throttle.Admission

	mu    sync.Mutex
	asked []time.Duration // the maxWait of each Reserve
}

func (s *slowAnswerStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.asked)
	if n == 0 {
		time.Sleep(s.delay)
	}
	s.asked = append(s.asked, maxWait)
	return s.answer[min(n, len(s.answer)-1)](maxWait), nil
}

// slowStoreCall sends one profile call through a Transport on store under
// ctx, in a synctest bubble, and returns when the request reached the
// service (since the call began; -1 when it never did) and the call's
// error.
func slowStoreCall(t *testing.T, ctx context.Context, store throttle.BudgetStore) (sentAt time.Duration, err error) {
	sentAt, _, err = slowStoreCallEvents(t, ctx, store)
	return sentAt, err
}

// slowStoreCallEvents is slowStoreCall, and returns the call's events
// too.
func slowStoreCallEvents(t *testing.T, ctx context.Context, store throttle.BudgetStore) (sentAt time.Duration, events []Event, err error) {
	t.Helper()
	start := time.Now()
	sentAt = -1
	var mu sync.Mutex
	tr := &Transport{TitleID: title, Budget: store, Observe: func(_ context.Context, e Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sentAt = time.Since(start)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", "XBL3.0 x=slow-store-user;token")
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	return sentAt, events, err
}

// waits are the EventWaits among events.
func waits(events []Event) []time.Duration {
	var w []time.Duration
	for _, e := range events {
		if e.Kind == EventWait {
			w = append(w, e.Wait)
		}
	}
	return w
}

// TestSlowStoreBookingKeepsItsInstant: a booking's wait counts from the
// time the call asked at; a shared store that took 3 s to answer a
// booking at the end of the call's window had the call sent 3 s past that
// window (and its slot). The call now goes at the instant booked.
func TestSlowStoreBookingKeepsItsInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &slowAnswerStore{delay: 3 * time.Second, answer: []func(time.Duration) throttle.Admission{
			func(maxWait time.Duration) throttle.Admission {
				return throttle.Admission{Allowed: true, Wait: maxWait, Slot: 1}
			},
		}}
		sentAt, err := slowStoreCall(t, context.Background(), store)
		if err != nil || len(store.asked) != 1 || sentAt != store.asked[0] {
			t.Errorf("bookings at the end of the wait allowed (%v), answered 3 s late: sent at %v (%v); want one, sent at the instant booked", store.asked, sentAt, err)
		}
	})
}

// TestSlowStoreBookingPassedGoesAtOnce: a booking whose instant passed
// while the store answered goes at once.
func TestSlowStoreBookingPassedGoesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &slowAnswerStore{delay: 3 * time.Second, answer: []func(time.Duration) throttle.Admission{
			func(time.Duration) throttle.Admission {
				return throttle.Admission{Allowed: true, Wait: time.Second, Slot: 1}
			},
		}}
		sentAt, err := slowStoreCall(t, context.Background(), store)
		if err != nil || sentAt != 3*time.Second {
			t.Errorf("a booking 1 s ahead, answered 3 s late: sent at %v (%v); want at once, at 3 s", sentAt, err)
		}
	})
}

// TestSlowStoreRefusalWaitCountsFromTheAsk: a refusal to wait out (a
// booking held to a pending report) counts from the ask too. One of 2 s
// answered 3 s late is asked again at once (not refused: its wait is
// over, not absent), and one of 5 s waits the 2 s left.
func TestSlowStoreRefusalWaitCountsFromTheAsk(t *testing.T) {
	for _, tc := range []struct {
		refusal, sent time.Duration
	}{{2 * time.Second, 3 * time.Second}, {5 * time.Second, 5 * time.Second}} {
		synctest.Test(t, func(t *testing.T) {
			store := &slowAnswerStore{delay: 3 * time.Second, answer: []func(time.Duration) throttle.Admission{
				func(time.Duration) throttle.Admission { return throttle.Admission{Wait: tc.refusal} },
				func(time.Duration) throttle.Admission { return throttle.Admission{Allowed: true, Slot: 1} },
			}}
			sentAt, events, err := slowStoreCallEvents(t, context.Background(), store)
			if err != nil || sentAt != tc.sent || len(store.asked) != 2 {
				t.Errorf("a refusal for %v answered 3 s late, then an admission: sent at %v (%v), asked %d times; want sent at %v, asked twice", tc.refusal, sentAt, err, len(store.asked), tc.sent)
			}
			// The wait left, and none where nothing was left to wait.
			if w, want := waits(events), tc.sent-3*time.Second; len(w) != min(int(want), 1) || len(w) == 1 && w[0] != want {
				t.Errorf("a refusal for %v answered 3 s late: waits %v; want the %v left, or none", tc.refusal, w, want)
			}
		})
	}
}

// TestSlowStoreRefusalPastTheWindowIsRefused: a refusal whose wait, from
// the ask, would end past the call's deadline is refused, and the
// deadline is read after the store's late answer: 9 s asked at 0, a
// deadline at 10 s, the answer at 3 s (6 s left of the wait, 7 s of the
// deadline) waits; the same answer at 5 s with a deadline at 8 s (4 s
// left of the wait, 3 s of the deadline) is refused at once; a deadline
// 1 ns past the wait's end (the last instant the call may be sent at is
// then the wait's own) waits.
func TestSlowStoreRefusalPastTheWindowIsRefused(t *testing.T) {
	for _, tc := range []struct {
		delay, deadline time.Duration
		refused         bool
	}{{3 * time.Second, 10 * time.Second, false}, {5 * time.Second, 8 * time.Second, true}, {3 * time.Second, 9*time.Second + 1, false}} {
		synctest.Test(t, func(t *testing.T) {
			store := &slowAnswerStore{delay: tc.delay, answer: []func(time.Duration) throttle.Admission{
				func(time.Duration) throttle.Admission { return throttle.Admission{Wait: 9 * time.Second} },
				func(time.Duration) throttle.Admission { return throttle.Admission{Allowed: true, Slot: 1} },
			}}
			ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			start := time.Now()
			sentAt, err := slowStoreCall(t, ctx, store)
			took := time.Since(start)
			te, _ := err.(*ThrottleError)
			switch {
			case tc.refused && (te == nil || !te.Local || took != tc.delay || te.Wait != 9*time.Second-tc.delay):
				t.Errorf("deadline %v, answered at %v: %v after %v; want a local refusal at once, its wait the %v left", tc.deadline, tc.delay, err, took, 9*time.Second-tc.delay)
			case !tc.refused && (err != nil || sentAt != 9*time.Second):
				t.Errorf("deadline %v, answered at %v: sent at %v (%v); want sent at 9 s", tc.deadline, tc.delay, sentAt, err)
			}
		})
	}
}

// TestSlowStoreBackgroundWaitCountsFromTheAsk: a background call's wait
// for its share counts from its ask as well.
func TestSlowStoreBackgroundWaitCountsFromTheAsk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &slowAnswerStore{delay: 3 * time.Second, answer: []func(time.Duration) throttle.Admission{
			func(time.Duration) throttle.Admission { return throttle.Admission{Wait: 5 * time.Second} },
			func(time.Duration) throttle.Admission { return throttle.Admission{Allowed: true, Slot: 1} },
		}}
		sentAt, err := slowStoreCall(t, WithPolicy(context.Background(), Policy{Priority: Background}), store)
		if err != nil || sentAt != 5*time.Second || len(store.asked) != 2 {
			t.Errorf("a background call refused for 5 s, answered 3 s late: sent at %v (%v), asked %d times; want at 5 s, asked twice", sentAt, err, len(store.asked))
		}
	})
}

// TestBackgroundRefusalWithoutWaitIsRefused: a background call refused
// without a wait is refused, asked once; it asked again at once, and again,
// for as long as its context lasted (forever, without a deadline).
func TestBackgroundRefusalWithoutWaitIsRefused(t *testing.T) {
	store := &zeroWaitStore{}
	tr := &Transport{TitleID: title, Budget: store, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	req, _ := http.NewRequestWithContext(WithPolicy(context.Background(), Policy{Priority: Background}), "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", "XBL3.0 x=zero-user;token")
	_, err := tr.RoundTrip(req)
	if te, ok := err.(*ThrottleError); !ok || !te.Local || store.asked.Load() != 1 {
		t.Errorf("a background call refused without a wait: %v, the store asked %d times; want a local refusal, asked once", err, store.asked.Load())
	}
}
