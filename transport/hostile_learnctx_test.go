package transport

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// slowLimitStore is a shared store whose learned-limit reads take as long
// as redisstore's with an unreachable Redis: until its Timeout (250 ms by
// default) or the context passed, whichever ends first.
type slowLimitStore struct {
	*throttle.MemoryBudgetStore
}

func (s slowLimitStore) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	ctx, cancel := context.WithTimeout(ctx, 250*time.Millisecond) // redisstore.DefaultTimeout
	defer cancel()
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestLearnedReadWithinTheCall: every call ends within its
// context. The read of learned limits that one call in ten seconds makes
// (refreshLearned, from call.init) runs under context.WithoutCancel of the
// call's context and outside the failover that guards every budget
// operation: with the shared store unreachable, a call with a 20 ms
// deadline (a FailFast one, even) takes the store's whole timeout, every
// ten seconds; learn does the same on every 429.
func TestLearnedReadWithinTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", Budget: slowLimitStore{&throttle.MemoryBudgetStore{}}}
		ctx, cancel := context.WithTimeout(WithPolicy(context.Background(), Policy{FailFast: true}), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		readAs(ctx, tr, nil)
		if d := time.Since(start); d > 20*time.Millisecond {
			t.Errorf("a call with a 20 ms deadline took %v", d)
		}
	})
}
