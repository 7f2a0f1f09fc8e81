package transport

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestAttack42SendReadyAttemptTimeoutInSigner: the key's report is pending (both
// stores book), the call's context lives, its Policy.AttemptTimeout is 1 s,
// and its Signer takes 2 s the first time. The attempt's own context (the
// attempt timeout) ended while the attempt was made ready: net/http's
// Transport sends nothing for such a request (attack41Base returns the
// context's error, reachedDone). That attempt must not be counted as sent:
// its bookings go back, as for the call's context (call.send's new check
// reads only the call's context, c.ctx, not the attempt's, a.ctx). The
// retry signs at once and is sent (200): the service counted 1 attempt.
func TestAttack42SendReadyAttemptTimeoutInSigner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const user = "attack42-attempt-timeout-signer"
		base := &attack41Base{}
		p := attack41Setup(t, user, false, base)
		var signs atomic.Int32
		ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
		ctx = WithSigner(ctx, func(r *http.Request) error {
			if signs.Add(1) == 1 {
				time.Sleep(2 * time.Second) // past the attempt's timeout; the signature itself is good
			}
			r.Header.Set("Signature", "sig")
			return nil
		})
		var attempts atomic.Int32
		p.tr.Observe = func(_ context.Context, e Event) {
			if e.Kind == EventAttempt {
				attempts.Add(1)
			}
		}
		resp, err := p.tr.RoundTrip(attack41Req(ctx, "GET", user, ""))
		if err != nil {
			t.Fatalf("call: %v, want the retry's 200", err)
		}
		resp.Body.Close()
		n, counted, reachedDone := base.stats()
		if n != 1 || counted != 1 {
			t.Fatalf("the service got %d attempts (%d counted), want 1", n, counted)
		}
		if reachedDone != 0 {
			t.Errorf("an attempt went to the Base with its context done (%d time(s): its attempt timeout ended in the Signer; "+
				"%d EventAttempt for 1 attempt the service got). Promise: RELIABILITY.md: \"an attempt whose context ended while it "+
				"was made ready (signed, its body made again) is not sent, and its bookings go back\"; commit 39188a3: \"an attempt "+
				"whose context ended while it was made ready (a slow Signer, a slow GetBody on a retry) is not sent\". "+
				"Fix: in call.send, check the attempt's context (a.ctx when a != nil; its cause is the attempt timeout) as well as "+
				"c.ctx after rewind and the Signer, and end the attempt unsent (a timeout there may then be retried as an attempt timeout)",
				reachedDone, attempts.Load())
		}
		p.check(t, 1, "a Signer that outlasted the attempt's timeout (that attempt not sent), then a retry sent (200)",
			"RELIABILITY.md: \"an attempt whose context ended while it was made ready (signed, its body made again) is not sent, "+
				"and its bookings go back\"; call.unbook: \"gives back the slot the budget booked for the last attempt, which the "+
				"service did not count: it was never sent\"")
	})
}

// held: DisableBudget, Shadow and a plain (no pending report) budget: a
// Signer that outlasts the call's deadline. The Base is never reached, no
// EventAttempt, and the error is the context's own (errors.Is).
func TestAttack42SendReadySlowSignerPastDeadlineModes(t *testing.T) {
	for _, mode := range []string{"disable-budget", "shadow", "budget"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var reached atomic.Int32
				tr := &Transport{TitleID: title, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					reached.Add(1)
					return attack41Resp(r, 200), nil
				})}
				tr.DisableBudget = mode == "disable-budget"
				tr.Shadow = mode == "shadow"
				var attempts atomic.Int32
				tr.Observe = func(_ context.Context, e Event) {
					if e.Kind == EventAttempt {
						attempts.Add(1)
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				ctx = WithSigner(ctx, func(r *http.Request) error {
					time.Sleep(3 * time.Second)
					r.Header.Set("Signature", "sig")
					return nil
				})
				_, err := tr.RoundTrip(attack41Req(ctx, "GET", "attack42-modes-"+mode, ""))
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("call: %v, want its context's error", err)
				}
				if reached.Load() != 0 || attempts.Load() != 0 || tr.Stats().Attempts != 0 {
					t.Errorf("%s: Base reached %d times, %d EventAttempt, Stats.Attempts %d, for an attempt never sent",
						mode, reached.Load(), attempts.Load(), tr.Stats().Attempts)
				}
			})
		})
	}
}

// held: a 401, then a RefreshToken that takes past the call's 2 s
// deadline, the key's report pending: the retry is not sent, the error is
// the context's own, and neither store keeps a booking (the 401's is given
// back, the retry books nothing).
func TestAttack42SendReadySlowRefreshPastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const user = "attack42-slow-refresh"
		base := &attack41Base{answers: []int{401}}
		p := attack41Setup(t, user, false, base)
		p.tr.RefreshToken = func(*http.Request) (string, error) {
			time.Sleep(3 * time.Second)
			return "XBL3.0 x=" + user + ";fresh", nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := p.tr.RoundTrip(attack41Req(ctx, "GET", user, ""))
		if resp != nil {
			resp.Body.Close()
		}
		n, counted, reachedDone := base.stats()
		if reachedDone != 0 || n != 1 {
			t.Errorf("after a refresh past the deadline: Base got %d attempts, %d with the context done; want the 401 alone (err %v)", n, reachedDone, err)
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("call: %v, want its context's error (or the 401)", err)
		}
		p.check(t, counted, "a 401 then a refresh past the deadline", attack41PromiseCounted)
	})
}
