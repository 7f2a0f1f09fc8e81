package transport_test

import (
	"context"
	"errors"
	"net/http"
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
// locally by default, and waits for the window with WithMaxWait; with the
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
		s, err := profileCall(transport.WithMaxWait(ctx, 5*time.Minute), c)
		if waited := time.Since(start); s != 200 || waited < 200*time.Second || waited > 300*time.Second {
			t.Errorf("WithMaxWait(5m): %d %v after %v, want 200 once the 300 s window frees a call", s, err, waited)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		c := &http.Client{Transport: &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890"}}
		for range 10 { // the burst: 10 in 15 s
			profileCall(context.Background(), c)
		}
		start := time.Now()
		var te *transport.ThrottleError
		if _, err := profileCall(transport.FailFast(context.Background()), c); !errors.As(err, &te) || !te.Local || time.Since(start) != 0 {
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
		if _, err := profileCall(transport.NoRetry(context.Background()), c); err == nil {
			t.Error("a one-minute answer arrived within the default attempt timeout")
		}
		start := time.Now()
		if s, err := profileCall(transport.LongCall(transport.NoRetry(context.Background())), c); s != 200 || time.Since(start) != time.Minute {
			t.Errorf("LongCall: %d %v after %v, want 200 after a minute", s, err, time.Since(start))
		}
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
