package transport

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack39Gate2ShadowRefusalSentWithContextDone: Shadow mode, a shared
// store slow to answer (3 s) that refuses, the call's deadline at 2 s.
// The context ended while the store answered; the shadow refusal then
// hands the call to the Base with its context done (the break fixed for
// admissions in d3839bc, left open for Shadow's refusals), interactive and
// background alike.
func TestAttack39Gate2ShadowRefusalSentWithContextDone(t *testing.T) {
	for _, bg := range []bool{false, true} {
		t.Run(map[bool]string{false: "interactive", true: "background"}[bg], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &attack38GateStore{delay: 3 * time.Second, answer: func(int, time.Duration) throttle.Admission {
					return throttle.Admission{Wait: 5 * time.Second}
				}}
				ctx := context.Background()
				if bg {
					ctx = WithPolicy(ctx, Policy{Priority: Background})
				}
				ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				r := attack38GateCall(t, ctx, store, true)
				if r.sends != 0 || r.sentCtxErr != nil {
					t.Errorf("background %v, Shadow, a 2 s deadline, the store's refusal answered at 3 s: the Base got the call at %v with its context's "+
						"error %v (%d sends), the call ended %v; want nothing sent and the context's error. Promise broken: Transport's doc \"may wait "+
						"before sending ..., never past the request's context deadline\", and this stop's \"a call whose context has ended ... books "+
						"nothing\" / \"the call ends with its context's error\" (RELIABILITY.md): the Shadow branch of gateBudget/gateBackground returns "+
						"nil without reading the context", bg, r.sentAt, r.sentCtxErr, r.sends, r.err)
				}
			})
		})
	}
}

// held: a slow store (3 s) refusing past the window after a 2 s deadline
// (not Shadow): nothing is sent, nothing stays booked, the call ends with
// an error at the answer (a *ThrottleError, its context done: judged, the
// refusal is what the budget said and nothing was sent), interactive and
// background.
func TestAttack39Gate2LateRefusalAfterDeadlineNothingSent(t *testing.T) {
	for _, bg := range []bool{false, true} {
		t.Run(map[bool]string{false: "interactive", true: "background"}[bg], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &attack38GateStore{delay: 3 * time.Second, answer: func(int, time.Duration) throttle.Admission {
					return throttle.Admission{Wait: time.Minute}
				}}
				ctx := context.Background()
				if bg {
					ctx = WithPolicy(ctx, Policy{Priority: Background})
				}
				ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				r := attack38GateCall(t, ctx, store, false)
				if r.sends != 0 || r.err == nil || store.admitted.Load() != 0 || r.took != 3*time.Second {
					t.Errorf("background %v: %d sends, err %v, admitted %d, took %v", bg, r.sends, r.err, store.admitted.Load(), r.took)
				}
			})
		})
	}
}
