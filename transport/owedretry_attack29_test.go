package transport

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// held: the retry path (run: assess, drain, mayRetry, sleep, gate) with
// an owed block: a 429 with Retry-After 3 whose Block the shared store
// (an isolating one, the user's node down for that moment) fails is owed;
// the call's retry pays it at its gate and is sent no earlier than the
// Retry-After; another user's call meanwhile books in the shared store and
// is sent at once (its node is up); nothing is left owed and the call ends
// within its retry window.
func TestAttack29OwedBlockOnRetryPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}, isolates: true}
		uhs1 := xblauth.UserHashOf(mock.Token(xuid1, title))
		s := &script{answers: []func(http.ResponseWriter){
			func(w http.ResponseWriter) { store.setDownUser(uhs1); answer(429, "3")(w) },
		}}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := s.RoundTrip(r)
			if s.calls() == 1 {
				time.AfterFunc(500*time.Millisecond, func() { store.setDownUser("") })
			}
			return resp, err
		})
		tr := &Transport{Base: base, TitleID: title, Budget: store}
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(time.Second)
			if _, err := get(t, tr, context.Background(), profileURL, xuid2); err != nil {
				t.Errorf("another user's call: %v", err)
			}
		}()
		resp, err := get(t, tr, context.Background(), profileURL, xuid1)
		<-done
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("call with retry: %v %v", resp, err)
		}
		s.mu.Lock()
		times := append([]time.Time(nil), s.times...)
		s.mu.Unlock()
		if len(times) != 3 {
			t.Fatalf("sent %d, want 3 (429, other user's, retry)", len(times))
		}
		if d := times[2].Sub(times[0]); d < 3*time.Second {
			t.Errorf("the retry went %v after the 429's Retry-After 3", d)
		}
		if d := times[1].Sub(start); d > 1100*time.Millisecond {
			t.Errorf("another user's call waited %v", d)
		}
		if n := tr.budget.(*failover).nOwed.Load(); n != 0 {
			t.Errorf("%d still owed", n)
		}
	})
}
