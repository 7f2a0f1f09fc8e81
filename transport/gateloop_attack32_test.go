package transport

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack32TinyWaitStore refuses every booking with a wait of 1 ms (a store that
// always says "not yet, almost"), counting the bookings asked.
type attack32TinyWaitStore struct {
	throttle.MemoryBudgetStore
	asked atomic.Int32
}

func (s *attack32TinyWaitStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	s.asked.Add(1)
	return throttle.Admission{Wait: time.Millisecond}, nil
}

// held: gateBudget's new wait-and-ask-again loop against a store that
// refuses again and again with a tiny wait: the call still ends with its
// context's deadline (2 s), sending nothing, and is not left spinning.
func TestAttack32GateLoopTinyWaitEndsWithDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack32TinyWaitStore{}
		var sent atomic.Int32
		tr := &Transport{TitleID: title, Budget: store, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", "XBL3.0 x=tiny-user;token")
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		took := time.Since(start)
		t.Logf("ended after %v with %v; the store was asked %d times", took, err, store.asked.Load())
		if err == nil || sent.Load() != 0 || took > 2*time.Second {
			t.Errorf("a store refusing with 1 ms again and again: %v after %v, %d sent; want a refusal or the context's end within 2 s, nothing sent (Policy / \"Every call ends\")",
				err, took, sent.Load())
		}
	})
}
