package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// held: coalesced reads of one user whose token has expired: the service
// answers the old token 401 and the renewed one 200 with the renewed
// token's data. RefreshToken hands the leader a renewed token (here, by a
// buggy or hostile refresher, another user's): that answer stays the
// leader's — no follower holding the old token, and no later caller of the
// old token (read cache), is answered with it; the caller's own request
// keeps its header (a RoundTripper must not modify the request).
func TestAttack23RefreshedAnswerStaysTheLeaders(t *testing.T) {
	const oldTok, renewed = "XBL3.0 x=1111;expired", "XBL3.0 x=2222;someone-else"
	var n atomic.Int64
	base := attack23RT(func(r *http.Request) (*http.Response, error) {
		c := n.Add(1)
		time.Sleep(40 * time.Millisecond)
		a := r.Header.Get("Authorization")
		if a == oldTok {
			return &http.Response{StatusCode: 401, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("expired")), Request: r}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(fmt.Sprintf("data of %s n=%d", a, c))), Request: r}, nil
	})
	var refreshes atomic.Int64
	tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 10 * time.Second, DisableBudget: true,
		RefreshToken: func(*http.Request) (string, error) { refreshes.Add(1); return renewed, nil }}
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for range 6 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), "GET", attack23URL, nil)
			req.Header.Set("Authorization", oldTok)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Errorf("call: %v", err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if h := req.Header.Get("Authorization"); h != oldTok {
				t.Errorf("the caller's request now carries Authorization %q: RoundTrip modified its request", h)
			}
			mu.Lock()
			got[string(b)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	for body, k := range got {
		if k > 1 && strings.Contains(body, "someone-else") {
			t.Errorf("%d callers holding the old token were given the one answer %q that came to the renewed token; CoalesceReads promises \"one that came to a token renewed by RefreshToken stays its caller's\"", k, body)
		}
	}
	// A later call with the old token: never the cached renewed answer.
	before := n.Load()
	req, _ := http.NewRequest("GET", attack23URL, nil)
	req.Header.Set("Authorization", oldTok)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n.Load() == before {
		t.Errorf("a later call with the old token was answered from the cache with the renewed token's answer")
	}
	// And a caller who holds the renewed token may be served from its own
	// cache, but never something of the old token's.
	req2, _ := http.NewRequest("GET", attack23URL, nil)
	req2.Header.Set("Authorization", renewed)
	resp2, err := tr.RoundTrip(req2)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if strings.Contains(string(b), "expired") {
		t.Errorf("the renewed token's caller got %q", b)
	}
}
