package transport_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

const policyURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

func profileCall(ctx context.Context, c *http.Client) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", policyURL, nil)
	req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestPerCallPolicy: with the sustain budget spent, a call is refused
// locally by default, and waits for the window with Policy.MaxWait; with the
// burst spent, FailFast refuses at once where a call would wait.
func TestPerCallPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &http.Client{Transport: &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890"}}
		ctx := context.Background()
		for range 30 { // profile's sustain: 30 in 300 s (the budget paces the bursts)
			if s, err := profileCall(ctx, c); s != 200 {
				t.Fatalf("spending the budget: %d %v", s, err)
			}
		}
		start := time.Now()
		var te *transport.ThrottleError
		if _, err := profileCall(ctx, c); !errors.As(err, &te) || !te.Local || time.Since(start) > time.Second {
			t.Errorf("default, sustain spent: %v after %v, want a local refusal at once", err, time.Since(start))
		}
		start = time.Now()
		s, err := profileCall(transport.WithPolicy(ctx, transport.Policy{MaxWait: 5 * time.Minute}), c)
		if waited := time.Since(start); s != 200 || waited < 200*time.Second || waited > 300*time.Second {
			t.Errorf("MaxWait 5m: %d %v after %v, want 200 once the 300 s window frees a call", s, err, waited)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		c := &http.Client{Transport: &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890"}}
		for range 10 { // the burst: 10 in 15 s
			profileCall(context.Background(), c)
		}
		start := time.Now()
		var te *transport.ThrottleError
		if _, err := profileCall(transport.WithPolicy(context.Background(), transport.Policy{FailFast: true}), c); !errors.As(err, &te) || !te.Local || time.Since(start) != 0 {
			t.Errorf("FailFast, burst spent: %v after %v, want a local refusal at once", err, time.Since(start))
		}
		if s, _ := profileCall(context.Background(), c); s != 200 {
			t.Errorf("without FailFast the call waits for the burst window: %d", s)
		}
	})
}

// TestLongCall: an answer that takes a minute times out under the retry
// window's attempt timeout and arrives under LongCall's 5 minutes.
func TestLongCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			select {
			case <-time.After(time.Minute):
				return mock.NewHandler().RoundTrip(r)
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		})
		c := &http.Client{Transport: &transport.Transport{Base: slow, TitleID: "1234567890", DisableBudget: true}}
		if _, err := profileCall(transport.WithPolicy(context.Background(), transport.Policy{NoRetry: true}), c); err == nil {
			t.Error("a one-minute answer arrived within the default attempt timeout")
		}
		start := time.Now()
		if s, err := profileCall(transport.WithPolicy(context.Background(), transport.Policy{NoRetry: true, AttemptTimeout: transport.LongCallTimeout}), c); s != 200 || time.Since(start) != time.Minute {
			t.Errorf("LongCall: %d %v after %v, want 200 after a minute", s, err, time.Since(start))
		}
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPriorities: with a flood of background calls on the same user and
// service, interactive calls go at once and the service answers no 429;
// with no share kept, or the flood unmarked, the interactive call queues
// behind the flood.
func TestPriorities(t *testing.T) {
	for _, tc := range []struct {
		name       string
		share      float64
		mark       bool
		wantQueued bool
	}{
		{"background marked, default share", 0, true, false},
		{"background marked, no share", -1, true, true},
		{"flood unmarked", 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890", InteractiveShare: tc.share}
				c := &http.Client{Transport: tr}
				flood := transport.WithPolicy(context.Background(), transport.Policy{MaxWait: 2 * time.Minute})
				if tc.mark {
					flood = transport.WithPolicy(flood, transport.Policy{Priority: transport.Background})
				}
				statuses := make(chan int, 15)
				for range 15 { // profile: burst 10 in 15 s, sustain 30 in 300 s
					go func() { s, _ := profileCall(flood, c); statuses <- s }()
				}
				synctest.Wait()
				time.Sleep(time.Second)
				var waited []time.Duration // -1: refused, as it would wait past its window
				for range 3 {              // the kept share of the burst: 3 of 10
					start := time.Now()
					if s, _ := profileCall(context.Background(), c); s != 200 {
						waited = append(waited, -1)
						continue
					}
					waited = append(waited, time.Since(start))
				}
				for range 15 {
					if s := <-statuses; s != 200 {
						t.Errorf("a background call ended %d", s)
					}
				}
				if queued := waited[0] != 0; queued != tc.wantQueued {
					t.Errorf("the interactive calls waited %v; want queued %v", waited, tc.wantQueued)
				}
				if !tc.wantQueued && (slices.Max(waited) != 0 || slices.Min(waited) != 0) {
					t.Errorf("the interactive calls waited %v, want none", waited)
				}
				if n := tr.Stats().Server429s; n != 0 {
					t.Errorf("the service answered %d 429s", n)
				}
			})
		})
	}
}

// TestLimitShare: with LimitShare 0.9 the budget lets 9 of profile's 10
// calls a burst go (the 10th is refused where it would wait), as the trace
// analyzer wants a window to hold at most 90 % of a limit; without it, 10.
func TestLimitShare(t *testing.T) {
	for _, tc := range []struct {
		share float64
		want  int
	}{{0, 10}, {0.9, 9}, {0.01, 1}} {
		synctest.Test(t, func(t *testing.T) {
			c := &http.Client{Transport: &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890", LimitShare: tc.share}}
			served := 0
			for range 12 {
				if s, _ := profileCall(transport.WithPolicy(context.Background(), transport.Policy{FailFast: true}), c); s == 200 {
					served++
				}
			}
			if served != tc.want {
				t.Errorf("share %v: %d calls served at once, want %d", tc.share, served, tc.want)
			}
		})
	}
}
