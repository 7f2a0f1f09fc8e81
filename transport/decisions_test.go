package transport

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// statusBase answers every request with status and header, and counts the
// requests.
type statusBase struct {
	status int
	header http.Header
	mu     sync.Mutex
	sent   int
}

func (b *statusBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	b.sent++
	b.mu.Unlock()
	return &http.Response{StatusCode: b.status, Header: b.header.Clone(), Body: http.NoBody, Request: r}, nil
}

// TestRetryAfterReachesTheSharedBudget: a 429's Retry-After blocks the
// key in the budget store every transport of a fleet shares, so another
// transport's call for the same user within it is refused without being
// sent; a 503's Retry-After stays the transport's own (its Retry-After
// cache) and blocks no one else.
func TestRetryAfterReachesTheSharedBudget(t *testing.T) {
	for _, tc := range []struct {
		status    int
		otherSent int
	}{
		{429, 0},
		{503, 1},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &throttle.MemoryBudgetStore{}
				first := &Transport{Base: &statusBase{status: tc.status, header: http.Header{"Retry-After": {"30"}}}, TitleID: "1234567890", Budget: store, RetryWindow: -1}
				readAs(context.Background(), first, nil)
				other := &statusBase{status: 200}
				second := &Transport{Base: other, TitleID: "1234567890", Budget: store, RetryWindow: -1}
				time.Sleep(time.Second)
				readAs(context.Background(), second, nil)
				if other.sent != tc.otherSent {
					t.Errorf("after a %d with Retry-After 30, another transport on the store sent %d calls for the user 1 s later, want %d", tc.status, other.sent, tc.otherSent)
				}
			})
		})
	}
}

// TestRateLimitHeadersResyncTheBudget: a RateLimit header's remaining
// count becomes the budget's used count; a window reported with no limit,
// or a limit of 0, counts against the call's own limit; a window with
// nothing used changes nothing.
func TestRateLimitHeadersResyncTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name, policy, state string
		wantUsed            int // of the burst window, the call itself included
	}{
		{"limit and remaining", `"burst";q=10;w=15`, `"burst";r=3;t=10`, 7},
		{"no policy: the call's limit", ``, `"burst";r=3;t=10`, 7},
		{"a limit of 0: the call's limit", `"burst";q=0;w=15`, `"burst";r=4;t=10`, 6},
		{"nothing used", `"burst";q=10;w=15`, `"burst";r=10;t=10`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.Header{"Ratelimit": {tc.state}}
				if tc.policy != "" {
					h["Ratelimit-Policy"] = []string{tc.policy}
				}
				tr := &Transport{Base: &statusBase{status: 200, header: h}, TitleID: "1234567890"}
				readAs(context.Background(), tr, nil)
				snap, err := tr.Snapshot(throttle.Key{User: "1111", Scope: "profile"})
				if err != nil {
					t.Fatal(err)
				}
				if snap.Burst.Count != tc.wantUsed {
					t.Errorf("burst used %d after the answer, want %d", snap.Burst.Count, tc.wantUsed)
				}
			})
		})
	}
}

// TestBackgroundKeepsOneCall: however large the interactive share, a
// background call keeps at least one call a window (a background limit of
// zero would mean no limit at all); with a share of 0.25 of social's 10 /
// 30, background calls stop at 7 in a burst.
func TestBackgroundKeepsOneCall(t *testing.T) {
	for _, tc := range []struct {
		share float64
		want  int // background calls sent at once, of 15
	}{
		{1, 1},
		{0, 7}, // the default: a quarter kept, rounded up
		{-1, 10},
	} {
		synctest.Test(t, func(t *testing.T) {
			base := &statusBase{status: 200}
			tr := &Transport{Base: base, TitleID: "1234567890", InteractiveShare: tc.share, RetryWindow: -1}
			for range 15 {
				req, _ := http.NewRequestWithContext(WithPolicy(context.Background(), Policy{Priority: Background}), "GET", "https://social.xboxlive.com/users/me/people", nil)
				req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}
			if base.sent != tc.want {
				t.Errorf("InteractiveShare %v: %d of 15 background calls sent at once, want %d", tc.share, base.sent, tc.want)
			}
		})
	}
}

// TestBackgroundWaitsThenAsksAgain: a background call that waited for
// its share asks the budget again before it is sent: calls that came
// meanwhile are not overrun, and a burst window never holds more than the
// background limit.
func TestBackgroundWaitsThenAsksAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &statusBase{status: 200}
		tr := &Transport{Base: base, TitleID: "1234567890", Margin: -1}
		start := time.Now()
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(WithPolicy(context.Background(), Policy{MaxWait: time.Minute, Priority: Background}), "GET", "https://social.xboxlive.com/users/me/people", nil)
				req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			})
		}
		var sent []int
		for _, at := range []time.Duration{time.Second, 17 * time.Second} {
			time.Sleep(at - time.Since(start))
			synctest.Wait()
			base.mu.Lock()
			sent = append(sent, base.sent)
			base.mu.Unlock()
		}
		if want := []int{7, 14}; !slices.Equal(sent, want) {
			t.Errorf("background calls sent by 1 s and by 17 s: %v, want %v: the background burst limit, 7, a window", sent, want)
		}
		wg.Wait()
	})
}

// TestJitterNeverPanics: XSAPI's jitter only lengthens a wait, by less
// than a fifth, for any wait, the tiniest included.
func TestJitterNeverPanics(t *testing.T) {
	for _, d := range []time.Duration{1, 4, 5, time.Second, 30 * time.Second} {
		for range 100 {
			if got := jitterUp(d); got < d || got > d+d/5 {
				t.Fatalf("jitterUp(%v) = %v, want in [%v, %v]", d, got, d, d+d/5)
			}
		}
	}
}

// TestBackoffIsXSAPIs: the n-th retry after a failure waits in [2^n,
// 2^(n+1)) seconds, as XSAPI's, up to its 60 s cap (from the 6th on, the
// capped interval is randomized as the others: 40 to 60 s; XSAPI's 20 s
// window never reaches it).
func TestBackoffIsXSAPIs(t *testing.T) {
	for range 50 {
		c := &call{}
		for n := 1; n <= 7; n++ {
			lo, hi := time.Duration(1<<n)*time.Second, time.Duration(1<<(n+1))*time.Second
			if n >= 6 {
				lo, hi = 40*time.Second, maxBackoff+time.Nanosecond
			}
			if got := c.backoff(); got < lo || got >= min(hi, maxBackoff+time.Nanosecond) {
				t.Fatalf("retry %d waits %v, want in [%v, %v)", n, got, lo, hi)
			}
		}
	}
}
