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

// TestRetryReasons: EventRetry's Reason says why the call sends again, as
// Event's godoc lists them: an attempt whose timeout ended while its slow
// Signer made it ready was never sent ("not sent: attempt timed out", where
// it said "network error"); one sent and then timed out is a network
// error; a 503 is its status; a token refreshed after a 401 is sent again
// with no EventRetry. Each case runs as a subtest of its own, so a failure
// hides none of the others.
func TestRetryReasons(t *testing.T) {
	tests := []struct {
		name     string
		slowSign bool     // the first attempt's Signer outlasts its timeout
		hang     bool     // the first attempt that reaches the base hangs past its timeout
		answers  []int    // the base's statuses, in order
		refresh  bool     // a RefreshToken
		want     []string // the EventRetry reasons, in order
		attempts int32    // EventAttempts
	}{
		{name: "unsent", slowSign: true, want: []string{"not sent: attempt timed out"}, attempts: 1},
		{name: "sent then timed out", hang: true, want: []string{"network error"}, attempts: 2},
		{name: "503", answers: []int{503}, want: []string{"status 503"}, attempts: 2},
		{name: "401 refreshed", answers: []int{401}, refresh: true, want: nil, attempts: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &attack41Base{answers: tt.answers}
				var rt http.RoundTripper = base
				if tt.hang {
					var once atomic.Bool
					rt = roundTripFunc(func(r *http.Request) (*http.Response, error) {
						if once.CompareAndSwap(false, true) {
							<-r.Context().Done()
							return nil, context.Cause(r.Context())
						}
						return base.RoundTrip(r)
					})
				}
				tr := &Transport{TitleID: title, Base: rt}
				if tt.refresh {
					tr.RefreshToken = func(*http.Request) (string, error) { return "XBL3.0 x=reasons;renewed", nil }
				}
				var mu sync.Mutex
				var got []string
				var attempts atomic.Int32
				tr.Observe = func(_ context.Context, e Event) {
					switch e.Kind {
					case EventAttempt:
						attempts.Add(1)
					case EventRetry:
						mu.Lock()
						got = append(got, e.Reason)
						mu.Unlock()
					}
				}
				ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
				var signs atomic.Int32
				ctx = WithSigner(ctx, func(r *http.Request) error {
					if signs.Add(1) == 1 && tt.slowSign {
						time.Sleep(2 * time.Second)
					}
					return nil
				})
				resp, err := tr.RoundTrip(attack41Req(ctx, "GET", "reasons", ""))
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				resp.Body.Close()
				mu.Lock()
				defer mu.Unlock()
				if len(got) != len(tt.want) || len(got) > 0 && got[0] != tt.want[0] {
					t.Errorf("EventRetry reasons %q, want %q", got, tt.want)
				}
				if n := attempts.Load(); n != tt.attempts {
					t.Errorf("%d EventAttempts, want %d", n, tt.attempts)
				}
			})
		})
	}
}
