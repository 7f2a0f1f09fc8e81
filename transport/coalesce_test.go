package transport_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// slowBase answers through the mock after 100 ms and counts the requests
// per user.
type slowBase struct {
	h    *mock.Handler
	mu   sync.Mutex
	sent map[string]int // by xuid
}

func (b *slowBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	b.sent[r.Header.Get("X-Test-User")]++
	b.mu.Unlock()
	select {
	case <-time.After(100 * time.Millisecond):
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return b.h.RoundTrip(r)
}

func read(ctx context.Context, c *http.Client, xuid string) (int, string) {
	req, _ := http.NewRequestWithContext(ctx, "GET", policyURL, nil)
	req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
	req.Header.Set("X-Test-User", xuid)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestCoalesceReads: ten identical GETs of one user at once send one
// request and each gets the whole answer; another user's never shares it;
// the read cache answers within its TTL; a follower whose leader is
// cancelled still gets its answer; without CoalesceReads each call sends.
func TestCoalesceReads(t *testing.T) {
	const a, b = "2533274790000001", "2533274790000002"
	for _, tc := range []struct {
		name     string
		coalesce bool
		want     map[string]int
	}{
		{"coalesced", true, map[string]int{a: 4, b: 1}}, // 10 at once, past the TTL, a cancelled leader, its follower
		{"off", false, map[string]int{a: 14, b: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &slowBase{h: mock.NewHandler(), sent: map[string]int{}}
				tr := &transport.Transport{Base: base, TitleID: "1234567890", CoalesceReads: tc.coalesce, ReadCacheTTL: 2 * time.Second}
				c := &http.Client{Transport: tr}
				var wg sync.WaitGroup
				var ok atomic.Int32
				for range 10 {
					wg.Go(func() {
						if s, body := read(context.Background(), c, a); s == 200 && len(body) > 50 {
							ok.Add(1)
						}
					})
				}
				wg.Go(func() { read(context.Background(), c, b) })
				wg.Wait()
				time.Sleep(time.Second)
				read(context.Background(), c, a) // within the TTL: the cache
				time.Sleep(2 * time.Second)
				read(context.Background(), c, a) // past it: sent
				// The leader is cancelled while a follower waits.
				ctx, cancel := context.WithCancel(context.Background())
				time.Sleep(10 * time.Second)
				wg.Go(func() { read(ctx, c, a) })
				synctest.Wait()
				var follower int
				wg.Go(func() { follower, _ = read(context.Background(), c, a) })
				synctest.Wait()
				cancel()
				wg.Wait()
				if follower != 200 {
					t.Errorf("the follower of a cancelled call got %d", follower)
				}
				if ok.Load() != 10 {
					t.Errorf("%d of 10 concurrent calls got the whole answer", ok.Load())
				}
				if diff := cmp.Diff(tc.want, base.sent); diff != "" {
					t.Errorf("requests sent per user (-want +got):\n%s", diff)
				}
			})
		})
	}
}
