package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack40SlowStore is a shared MemoryBudgetStore that takes delay to answer
// each Reserve, or gives up at the caller's context's end with its error
// (a store under load, honouring the context as redisstore does), and
// counts the bookings it made and was given back.
type attack40SlowStore struct {
	throttle.MemoryBudgetStore
	delay time.Duration

	booked, released atomic.Int32
}

func (s *attack40SlowStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	tm := time.NewTimer(s.delay)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return throttle.Admission{}, ctx.Err()
	case <-tm.C:
	}
	a, err := s.MemoryBudgetStore.Reserve(ctx, k, l, now, maxWait)
	if a.Allowed {
		s.booked.Add(1)
	}
	return a, err
}

func (s *attack40SlowStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	s.released.Add(1)
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

// attack40SlowCall sends one profile call of user through tr with a deadline
// and policy, and returns its error and how long it took.
func attack40SlowCall(tr *Transport, pol Policy, user string, deadline time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(WithPolicy(context.Background(), pol), deadline)
	defer cancel()
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, "GET", attack39Gate2URL, nil)
	req.Header.Set("Authorization", "XBL3.0 x="+user+";token")
	resp, err := tr.RoundTrip(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return time.Since(start), err
}

// held: a 429 with Retry-After: 2, then 200s, on a shared store that takes
// 3 s to answer each booking; a 12 s deadline. The call ends within its
// deadline, nothing is sent with its context done, and the store keeps
// exactly one booking per attempt sent. Then twenty concurrent calls on the
// cached Retry-After under -race: every call ends within its context, none
// is sent after it ended, bookings kept == attempts sent. synctest.Test
// fails if a goroutine or timer of the transport outlives the calls.
func TestAttack40GateSlowStoreRetryAfter429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack40SlowStore{delay: 3 * time.Second}
		var sent, late, n429 atomic.Int32
		tr := &Transport{TitleID: title, Budget: store, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Context().Err() != nil {
				late.Add(1)
			}
			if sent.Add(1) == 1 {
				n429.Add(1)
				h := http.Header{"Retry-After": {"2"}}
				return &http.Response{StatusCode: 429, Header: h, Request: r,
					Body: io.NopCloser(strings.NewReader(`{"version":1,"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate"}`))}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		took, err := attack40SlowCall(tr, Policy{}, "attack40154-slow-user", 12*time.Second)
		if took > 12*time.Second {
			t.Errorf("the call took %v past its 12 s deadline (err %v)", took, err)
		}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				pol := Policy{}
				if i%3 == 0 {
					pol.Priority = Background
				}
				if i%4 == 0 {
					pol.FailFast = true
				}
				d := time.Duration(1+i%7) * time.Second
				took, err := attack40SlowCall(tr, pol, "attack40154-slow-user", d)
				if took > d {
					t.Errorf("call %d took %v past its %v deadline (err %v)", i, took, d, err)
				}
			})
		}
		wg.Wait()
		if late.Load() != 0 {
			t.Errorf("%d attempts sent with their context done", late.Load())
		}
		if kept := store.booked.Load() - store.released.Load(); kept != sent.Load() {
			t.Errorf("the shared store keeps %d bookings (%d booked, %d given back) for %d attempts sent",
				kept, store.booked.Load(), store.released.Load(), sent.Load())
		}
	})
}

// held: LimitShare 0.9 and the default InteractiveShare, background and
// interactive calls of one key on a store that takes 2 s to answer, 40
// concurrent calls with 1-9 s deadlines: every call ends within its
// deadline, nothing is sent with its context done, the store keeps one
// booking per call sent, and no more calls are sent than the share of the
// burst allows in the time the test spans.
func TestAttack40GateSlowStoreSharesBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack40SlowStore{delay: 2 * time.Second}
		var sent, late atomic.Int32
		tr := &Transport{TitleID: title, Budget: store, LimitShare: 0.9, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Context().Err() != nil {
				late.Add(1)
			}
			sent.Add(1)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		var wg sync.WaitGroup
		var refused atomic.Int32
		for i := range 40 {
			wg.Go(func() {
				pol := Policy{}
				if i%2 == 0 {
					pol.Priority = Background
				}
				d := time.Duration(1+i%9) * time.Second
				took, err := attack40SlowCall(tr, pol, "attack40154-share-user", d)
				if took > d {
					t.Errorf("call %d took %v past its %v deadline (err %v)", i, took, d, err)
				}
				var te *ThrottleError
				if errors.As(err, &te) {
					refused.Add(1)
				}
			})
		}
		wg.Wait()
		if late.Load() != 0 {
			t.Errorf("%d calls sent with their context done", late.Load())
		}
		if kept := store.booked.Load() - store.released.Load(); kept != sent.Load() {
			t.Errorf("the shared store keeps %d bookings (%d booked, %d given back) for %d calls sent",
				kept, store.booked.Load(), store.released.Load(), sent.Load())
		}
		tr.init()
		rule, _ := tr.limits.ByScope("profile")
		if l := rule.ClientLimit(); int(sent.Load()) > l.Burst {
			t.Errorf("%d calls sent within 9 s, burst %d with LimitShare 0.9", sent.Load(), l.Burst)
		}
	})
}
