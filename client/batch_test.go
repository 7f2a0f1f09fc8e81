package client

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// counting counts the requests it passes to the mock by method and path
// (the user path's XUID left out).
type counting struct {
	h    *mock.Handler
	mu   sync.Mutex
	seen map[string]int
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	p := r.URL.Path
	if i := strings.Index(p, "xuid("); i >= 0 {
		p = p[:i] + "xuid(X)"
	}
	c.mu.Lock()
	c.seen[r.Method+" "+r.URL.Host+p]++
	c.mu.Unlock()
	return c.h.RoundTrip(r)
}

// TestBatchWindow: 30 presence lookups and 120 profile lookups one user
// makes at once go out as one presence batch and two profile batches (100
// users at most each); another acting user's lookup is its own batch; each
// caller gets its own user's record; a cancelled caller returns at once
// and the others still get theirs. Without a window every lookup is a
// call.
func TestBatchWindow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window time.Duration
		want   map[string]int
	}{
		{"5ms", 5 * time.Millisecond, map[string]int{
			"POST userpresence.xboxlive.com/users/batch": 2, "POST profile.xboxlive.com/users/batch/profile/settings": 2}},
		{"off", 0, map[string]int{
			"GET userpresence.xboxlive.com/users/xuid(X)": 32, "POST profile.xboxlive.com/users/batch/profile/settings": 120}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				roomy, err := limits.Parse([]byte(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 1000, "sustain": 1000},
					{"service": "presence", "hosts": ["userpresence.xboxlive.com"], "burst": 1000, "sustain": 1000}]}`))
				if err != nil {
					t.Fatal(err)
				}
				h, err := mock.New(mock.Config{Limits: roomy}) // the lookups one by one stay within the limits
				if err != nil {
					t.Fatal(err)
				}
				base := &counting{h: h, seen: map[string]int{}}
				tr := &transport.Transport{TitleID: title, Base: base, DisableBudget: true}
				c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: tr, BatchWindow: tc.window})
				if err != nil {
					t.Fatal(err)
				}
				u := c.As(me)
				var wg sync.WaitGroup
				var mu sync.Mutex
				var wrong []string
				xuid := func(i int) string { return strconv.Itoa(2533274790000000 + i) }
				for i := range 30 {
					wg.Go(func() {
						if p, err := u.GetPresence(context.Background(), xuid(i)); err != nil || p.XUID != xuid(i) {
							mu.Lock()
							wrong = append(wrong, "presence "+xuid(i)+": "+p.XUID+" "+errString(err))
							mu.Unlock()
						}
					})
				}
				for i := range 120 {
					wg.Go(func() {
						if p, err := u.GetProfile(context.Background(), xuid(i), []string{"Gamertag"}); err != nil || p.XUID != xuid(i) || p.Settings["Gamertag"] == "" {
							mu.Lock()
							wrong = append(wrong, "profile "+xuid(i)+": "+p.XUID+" "+errString(err))
							mu.Unlock()
						}
					})
				}
				wg.Go(func() { c.As(other).GetPresence(context.Background(), me) })
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if _, err := u.GetPresence(ctx, xuid(99)); tc.window > 0 && err != context.Canceled {
					t.Errorf("a cancelled lookup: %v, want context.Canceled", err)
				}
				wg.Wait()
				if len(wrong) > 0 {
					t.Errorf("lookups that got another record or an error: %q", wrong)
				}
				if diff := cmp.Diff(tc.want, base.seen); diff != "" {
					t.Errorf("requests (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
