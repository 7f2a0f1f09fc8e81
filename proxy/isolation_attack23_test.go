package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// held: through one proxy whose transport coalesces and caches reads, two
// users share one client connection (HTTP/2 in a CONNECT tunnel, one
// connection) and read the same URL at once and again within the cache's
// TTL: each answer is the caller's own (its own XUID, never the other's).
func TestAttack23ProxyTwoUsersOneConnectionOwnAnswers(t *testing.T) {
	f := serve(t, nil)
	f.tr.CoalesceReads = true
	f.tr.ReadCacheTTL = 10 * time.Second
	f.client.Transport.(*http.Transport).MaxConnsPerHost = 1
	for round := range 3 {
		var wg sync.WaitGroup
		for i := range 8 {
			x := xuid1
			if i%2 == 1 {
				x = xuid2
			}
			other := map[string]string{xuid1: xuid2, xuid2: xuid1}[x]
			wg.Go(func() {
				resp, body, err := get(t, f.client, context.Background(), profileURL, x)
				if err != nil {
					t.Errorf("round %d: %v", round, err)
					return
				}
				if resp.StatusCode != 200 {
					t.Errorf("round %d: user %s got %d %s", round, x, resp.StatusCode, body)
					return
				}
				if strings.Contains(body, other) || !strings.Contains(body, x) {
					t.Errorf("round %d: user %s was answered %q through the proxy: Config.Transport's doc promises CoalesceReads \"shares answers only between calls with the same credentials\"", round, x, body)
				}
			})
		}
		wg.Wait()
	}
	if ua, ub := mock.UserHash(xuid1), mock.UserHash(xuid2); ua == ub {
		t.Fatal("the two users share a userhash")
	}
}

// held: one user's spent budget and its Fgrl-Fail-Fast header, sent on a
// connection, neither refuse the other user's calls on that same
// connection nor stay on the connection: the same user's next call without
// the header waits for its budget (as the Transport's own Policy says)
// instead of being refused at once.
func TestAttack23ProxyPolicyHeaderDoesNotOutliveItsCall(t *testing.T) {
	f := serve(t, nil)
	f.client.Transport.(*http.Transport).MaxConnsPerHost = 1
	spendBudget(t, f, xuid1)
	for i := range 5 {
		resp, body, err := get(t, f.client, context.Background(), profileURL, xuid2)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("user 2's call %d after user 1 spent its budget: %v %v %s; the package doc promises \"one user's 429 must not block every other local user\"", i, err, resp, body)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	resp, _, err := get(t, f.client, ctx, profileURL, xuid1)
	switch {
	case err == nil && resp.Header.Get(HeaderRefused) == "local" && time.Since(start) < 300*time.Millisecond:
		t.Errorf("user 1's call without %s was refused at once (%v): the previous calls' policy header outlived them on the connection; the package doc says \"A call without them follows the Transport's own Policy\"", HeaderFailFast, time.Since(start))
	case err != nil && !errors.Is(err, context.DeadlineExceeded):
		t.Logf("user 1's call ended %v", err)
	}
}
