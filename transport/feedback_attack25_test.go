package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// attack25CtxStore is a working shared store that, as a network store does, fails
// at once an operation whose context has ended.
type attack25CtxStore struct{ *throttle.MemoryBudgetStore }

func (s attack25CtxStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Release(ctx, k, l, slot)
}

func (s attack25CtxStore) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Block(ctx, k, now, until)
}

func (s attack25CtxStore) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.MemoryBudgetStore.Sync(ctx, k, l, now, p, used, reset)
}

// TestAttack25SyncCutShortIgnoredByThisProcess: the service's RateLimit headers
// say the key's burst is spent (another process of the fleet spent 9 of
// its 10); the call that brings them is cancelled as its answer arrives.
// The Budget doc says the counts are "kept locally when the call ends
// before the store answers" — but while the shared store works, this
// process's next call books in the shared store only, which never heard
// them, and is sent into a 429. A call that was not cancelled makes the
// next one wait locally (control).
func TestAttack25SyncCutShortIgnoredByThisProcess(t *testing.T) {
	for _, cancelAtAnswer := range []bool{false, true} {
		t.Run(fmt.Sprint("cancelled=", cancelAtAnswer), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := mock.NewHandler()
				for range 9 { // another process's calls: the service counts them
					if _, err := get(t, h, context.Background(), profileURL, xuid1); err != nil {
						t.Fatal(err)
					}
				}
				var cancel context.CancelFunc
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					resp, err := h.RoundTrip(r)
					if cancel != nil {
						cancel() // the caller gives up as the answer arrives
						cancel = nil
					}
					return resp, err
				})
				tr := &Transport{Base: base, TitleID: title, RetryWindow: -1, Budget: attack25CtxStore{&throttle.MemoryBudgetStore{}}}
				ctx, c := context.WithCancel(context.Background())
				defer c()
				if cancelAtAnswer {
					cancel = c
				}
				get(t, tr, ctx, profileURL, xuid1) // the 10th: the headers say none is left
				resp, err := get(t, tr, context.Background(), profileURL, xuid1)
				var te *ThrottleError
				if errors.As(err, &te) && te.Local {
					return // held back by the counts the service reported
				}
				st := 0
				if resp != nil {
					st = resp.StatusCode
				}
				if te != nil {
					st = te.Status
				}
				t.Errorf("cancelled=%v: the next call was sent (status %d, err %v) after the service reported the burst "+
					"spent: the counts reached neither the shared store (the call's context had ended) nor this "+
					"process's bookings (the local copy is read only during an outage). Promise: Transport.Budget "+
					"\"what the service reports (a 429's block, RateLimit counts) is kept locally when the call ends "+
					"before the store answers\"", cancelAtAnswer, st, err)
			})
		})
	}
}
