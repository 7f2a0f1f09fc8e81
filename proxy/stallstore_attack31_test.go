package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack31StallStore is a shared budget store (Transport.Budget) whose budget
// operations stall: until timeout (redisstore's 250 ms against an
// unreachable Redis) then fail, or, with timeout 0, until the caller's
// context ends. Its learned-limit operations work.
type attack31StallStore struct {
	*throttle.MemoryBudgetStore
	timeout atomic.Int64 // a time.Duration
	ops     atomic.Int64
}

var errAttack31Stall = errors.New("atk: store unreachable")

func (s *attack31StallStore) stall(ctx context.Context) error {
	s.ops.Add(1)
	timeout := time.Duration(s.timeout.Load())
	if timeout == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(timeout):
		return errAttack31Stall
	}
}

func (s *attack31StallStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	return throttle.Admission{}, s.stall(ctx)
}
func (s *attack31StallStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	return s.stall(ctx)
}
func (s *attack31StallStore) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	return s.stall(ctx)
}
func (s *attack31StallStore) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	return s.stall(ctx)
}
func (s *attack31StallStore) Snapshot(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Snapshot, error) {
	return throttle.Snapshot{}, s.stall(ctx)
}

// held: a proxy whose transport's shared store (Transport.Budget) stalls,
// under 16 concurrent clients of two users: (a) the store fails after
// 250 ms: every client, with a 3 s deadline, gets 200 with its own user's
// answer (never the other's), within its deadline; (b) the store stalls
// until the call's context ends: every client with a 400 ms deadline ends
// by it, and within 3 s the proxy counts every call as ended (served,
// failed or cancelled), none left under way.
func TestAttack31ProxyStalledSharedStoreConcurrentClients(t *testing.T) {
	store := &attack31StallStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
	store.timeout.Store(int64(250 * time.Millisecond))
	f := serve(t, nil)
	f.tr.Budget = store

	run := func(t *testing.T, deadline time.Duration, wantOK bool) {
		var wg sync.WaitGroup
		for i := range 16 {
			x, other := xuid1, xuid2
			if i%2 == 1 {
				x, other = xuid2, xuid1
			}
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				start := time.Now()
				resp, body, err := get(t, f.client, ctx, profileURL+fmt.Sprintf("&n=%d", i), x)
				d := time.Since(start)
				if d > deadline+300*time.Millisecond {
					t.Errorf("client %d (deadline %v) took %v with the shared store stalled: the package doc promises a call "+
						"\"ends when the application gives up (it closes its connection or stream: the call's context ends\"; "+
						"Transport.Budget: \"A call gives the store every operation within its own context\"", i, deadline, d)
				}
				if !wantOK {
					return
				}
				if err != nil {
					t.Errorf("client %d: %v after %v (the store fails after 250 ms; Transport.Budget: \"While it fails, the transport uses a local budget\")", i, err, d)
					return
				}
				if resp.StatusCode != 200 || strings.Contains(body, other) || !strings.Contains(body, x) {
					t.Errorf("client %d of user %s got %d %q: another's answer, or none", i, x, resp.StatusCode, body)
				}
			})
		}
		wg.Wait()
	}
	t.Run("fails after 250ms", func(t *testing.T) { run(t, 3*time.Second, true) })

	store.timeout.Store(0) // now stalls until the caller's context ends
	before := f.srv.Stats()
	t.Run("stalls until the caller leaves", func(t *testing.T) { run(t, 400*time.Millisecond, false) })
	var ended int64
	for start := time.Now(); time.Since(start) < 3*time.Second; time.Sleep(50 * time.Millisecond) {
		s := f.srv.Stats()
		ended = (s.Served + s.RefusedLocally + s.Failed + s.Cancelled) - (before.Served + before.RefusedLocally + before.Failed + before.Cancelled)
		if ended >= 16 {
			break
		}
	}
	if ended < 16 {
		t.Errorf("3 s after 16 clients with 400 ms deadlines left, the proxy counts %d of their calls ended (%+v): "+
			"calls still under way on a stalled store; the package doc: a call \"ends when the application gives up\"", ended, f.srv.Stats())
	}
	if store.ops.Load() == 0 {
		t.Errorf("setup: the shared store was never asked")
	}
}
