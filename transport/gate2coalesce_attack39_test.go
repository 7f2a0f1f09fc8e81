package transport

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// held: coalesced GETs on a shared store that books each call 2 s ahead:
// the leader is cancelled at 1 s while it waits for its booking; its
// follower (same read, not cancelled) is not given the leader's error: it
// sends its own, once; the store gave back the leader's slot alone (two
// admitted, one released, one sent).
func TestAttack39Gate2CoalescedLeaderCancelledInItsBooking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack39Gate2Store{wait: 2 * time.Second, slot: 9}
		var sent atomic.Int32
		tr := attack39Gate2Transport(store, &sent)
		tr.CoalesceReads = true
		lctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		var wg sync.WaitGroup
		var errs [2]error
		for i, ctx := range []context.Context{lctx, context.Background()} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, "GET", attack39Gate2URL, nil)
				req.Header.Set("Authorization", "XBL3.0 x=coalesce-user;token")
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				errs[i] = err
			}()
			synctest.Wait() // the leader joins first
		}
		wg.Wait()
		store.mu.Lock()
		admitted := store.admitted
		store.mu.Unlock()
		if errs[0] == nil || errs[1] != nil || sent.Load() != 1 || admitted != 2 || len(store.releases()) != 1 {
			t.Errorf("leader cancelled in its booking: errors %v, sent %d, admitted %d, released %v", errs, sent.Load(), admitted, store.releases())
		}
	})
}
