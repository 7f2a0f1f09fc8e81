package transport

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack38GateStore is a hostile shared store: each Reserve takes delay (when
// honourCtx, it gives up with the context's error when that ends first),
// then answers answer(n, maxWait) for the n-th ask. It counts the slots
// it admitted and those given back.
type attack38GateStore struct {
	throttle.MemoryBudgetStore
	delay     time.Duration
	honourCtx bool
	answer    func(n int, maxWait time.Duration) throttle.Admission

	asked    atomic.Int32
	admitted atomic.Int32
	released atomic.Int32
}

func (s *attack38GateStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	n := int(s.asked.Add(1)) - 1
	if s.delay > 0 {
		if s.honourCtx {
			select {
			case <-time.After(s.delay):
			case <-ctx.Done():
				return throttle.Admission{}, ctx.Err()
			}
		} else {
			time.Sleep(s.delay)
		}
	}
	a := s.answer(n, maxWait)
	if a.Allowed {
		s.admitted.Add(1)
	}
	return a, nil
}

func (s *attack38GateStore) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	s.released.Add(1)
	return nil
}

// attack38GateResult is what one call through a hostile store did.
type attack38GateResult struct {
	sentAt     time.Duration // since the call began; -1 when never sent
	sentCtxErr error         // the request context's error when the Base got it
	sends      int
	took       time.Duration
	events     []Event
	err        error
}

// attack38GateCall sends one profile call through a Transport on store under
// ctx (a bubble's time).
func attack38GateCall(t *testing.T, ctx context.Context, store throttle.BudgetStore, shadow bool) attack38GateResult {
	t.Helper()
	start := time.Now()
	res := attack38GateResult{sentAt: -1}
	var mu sync.Mutex
	tr := &Transport{TitleID: title, Budget: store, Shadow: shadow, Observe: func(_ context.Context, e Event) {
		mu.Lock()
		defer mu.Unlock()
		res.events = append(res.events, e)
	}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		res.sends++
		if res.sentAt < 0 {
			res.sentAt = time.Since(start)
			res.sentCtxErr = r.Context().Err()
		}
		mu.Unlock()
		if err := r.Context().Err(); err != nil {
			return nil, err // as net/http does with a done context
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", "XBL3.0 x=attack38152-user;token")
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	res.took = time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	res.err = err
	return res
}

// attack38NegativeWait reports an event with a negative wait, if any.
func attack38NegativeWait(events []Event) (Event, bool) {
	for _, e := range events {
		if e.Wait < 0 {
			return e, true
		}
	}
	return Event{}, false
}

// BREAK: a store slow to answer (3 s, past the call's 2 s deadline) that
// books a slot 1 s after the ask: the wait left is 0, and the call is
// handed to the Base at 3 s with its context already done, its slot never
// given back. Before 01842a9 the 1 s wait ran (and, the context done,
// released the slot); now the "wait left 0" skips that check.
func TestAttack38GateLateAdmissionPastDeadlineIsSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{delay: 3 * time.Second, answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Allowed: true, Wait: time.Second, Slot: 7}
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		r := attack38GateCall(t, ctx, store, false)
		if r.sends > 0 || store.released.Load() != store.admitted.Load() {
			t.Errorf("a booking 1 s ahead answered at 3 s, deadline 2 s: the Base got the request at %v with its context done (%v), %d sends; slots admitted %d, released %d; err %v. "+
				"Promise (reserve, Policy.MaxWait): \"the call goes at the instant booked, never past its window or deadline by the store's delay\"; "+
				"\"Release gives back a slot Reserve booked (Admission.Slot) for a call that was then not sent\". Want: not sent, the slot released, the context's error",
				r.sentAt, r.sentCtxErr, r.sends, store.admitted.Load(), store.released.Load(), r.err)
		}
	})
}

// BREAK: a store that honours the call's context (gives up with its error
// at the deadline): the failover books the call in the local store, and the
// gate hands the request to the Base with its context done, the local
// slot kept for a call the service never saw.
func TestAttack38GateStoreHonouringCtxPastDeadlineIsSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{delay: time.Hour, honourCtx: true, answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Allowed: true, Slot: 7}
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		r := attack38GateCall(t, ctx, store, false)
		if r.sends > 0 {
			t.Errorf("a store held until the deadline (2 s) gave up with the context's error: the Base got the request at %v with its context done (%v); err %v. "+
				"Promise (Policy.MaxWait): \"the context's own deadline still ends the call\"; (reserve) \"never past its window or deadline by the store's delay\". Want: the call ends with its context, nothing sent",
				r.sentAt, r.sentCtxErr, r.err)
		}
	})
}

// BREAK: a store answering Allowed with a wait longer than the maxWait it
// was given (an hour, asked within the 20 s window, no deadline): the call
// waits the whole hour and is sent then, far past its retry window.
func TestAttack38GateAdmissionPastMaxWaitIsWaited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Allowed: true, Wait: time.Hour, Slot: 7}
		}}
		r := attack38GateCall(t, context.Background(), store, false)
		if r.sentAt > 20*time.Second || r.took > 20*time.Second {
			t.Errorf("a booking an hour ahead (asked with maxWait %v): sent at %v after %v, err %v. "+
				"Promise (maxWait): \"the wait must end inside its retry window (or the longer wait Policy.MaxWait allows; none with FailFast)\"; (reserve) \"never past its window or deadline\". "+
				"Want: refused locally (its slot released) or at least not sent past the 20 s window",
				20*time.Second, r.sentAt, r.took, r.err)
		}
	})
}

// BREAK: FailFast asks with maxWait 0; a store that books 5 s ahead anyway
// makes the FailFast call wait 5 s.
func TestAttack38GateFailFastWaitsOnAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Allowed: true, Wait: 5 * time.Second, Slot: 7}
		}}
		r := attack38GateCall(t, WithPolicy(context.Background(), Policy{FailFast: true}), store, false)
		if r.took > 0 || len(waits(r.events)) > 0 {
			t.Errorf("FailFast, a store booking 5 s ahead: took %v, waits %v, sent at %v, err %v. "+
				"Promise (Policy.FailFast): \"FailFast makes the call never wait: a call the budget ... would hold is refused locally at once\"",
				r.took, waits(r.events), r.sentAt, r.err)
		}
	})
}

// BREAK: a background call asks with maxWait 0 ("admits now or never");
// a store that books it 5 s ahead anyway has it sent at once, before the
// instant it was booked for.
func TestAttack38GateBackgroundSentBeforeItsBooking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Allowed: true, Wait: 5 * time.Second, Slot: 7}
		}}
		r := attack38GateCall(t, WithPolicy(context.Background(), Policy{Priority: Background}), store, false)
		if r.sends > 0 && r.sentAt < 5*time.Second && store.released.Load() == 0 {
			t.Errorf("a background call booked 5 s ahead: sent at %v, its slot kept (released %d). "+
				"Promise (throttle.Admission.Allowed): \"When Wait is not zero, the call is booked for now+Wait and must not be sent before then\"; (Background) \"it books no future slot\". "+
				"Want: refused with its slot released, or sent no earlier than 5 s", r.sentAt, store.released.Load())
		}
	})
}

// held: a slow store (1 s an answer) refusing forever with a 1 ns wait:
// the call asks about once a second, is refused within a second past its
// 20 s window (never sent), emits no EventWait for the waits it did not
// wait, and no negative wait.
func TestAttack38GateSlowTinyRefusalsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{delay: time.Second, answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Wait: 1}
		}}
		r := attack38GateCall(t, context.Background(), store, false)
		var te *ThrottleError
		if r.sends != 0 || !errors.As(r.err, &te) || !te.Local || r.took > 21*time.Second || store.asked.Load() > 22 || len(waits(r.events)) != 0 {
			t.Errorf("slow tiny refusals: %d sends, err %v, took %v, asked %d, waits %v; want a local refusal by 21 s, nothing sent, no waits", r.sends, r.err, r.took, store.asked.Load(), waits(r.events))
		}
		if e, ok := attack38NegativeWait(r.events); ok {
			t.Errorf("negative wait in %+v", e)
		}
	})
}

// held: a fast store refusing with a 1 ns wait forever under a 10 us
// deadline: the call ends by its deadline, sending nothing (it asks once a
// nanosecond, as the store says: it polls at the rate the store names, so a
// store naming 1 ns is hammered for the call's window; noted, not a
// promise broken). In real time too, under a 20 ms deadline.
func TestAttack38GateTinyRefusalsEndWithDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Wait: 1}
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Microsecond)
		defer cancel()
		r := attack38GateCall(t, ctx, store, false)
		t.Logf("asked %d times in %v: %v", store.asked.Load(), r.took, r.err)
		if r.sends != 0 || r.err == nil || r.took > 10*time.Microsecond {
			t.Errorf("tiny refusals: %d sends, err %v, took %v", r.sends, r.err, r.took)
		}
	})
	store := &attack38GateStore{answer: func(int, time.Duration) throttle.Admission {
		return throttle.Admission{Wait: 1}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	r := attack38GateCall(t, ctx, store, false)
	t.Logf("real time: asked %d times in %v: %v", store.asked.Load(), r.took, r.err)
	if r.sends != 0 || r.err == nil || r.took > time.Second {
		t.Errorf("tiny refusals, real time: %d sends, err %v, took %v", r.sends, r.err, r.took)
	}
}

// held: negative waits: an admission with -5 s goes at once with no
// EventWait; a refusal with -5 s is final, its ThrottleError and event
// wait 0, asked once (interactive and background).
func TestAttack38GateNegativeWaits(t *testing.T) {
	for _, bg := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			if bg {
				ctx = WithPolicy(ctx, Policy{Priority: Background})
			}
			store := &attack38GateStore{answer: func(int, time.Duration) throttle.Admission {
				return throttle.Admission{Allowed: true, Wait: -5 * time.Second, Slot: 7}
			}}
			r := attack38GateCall(t, ctx, store, false)
			if r.err != nil || r.sentAt != 0 || len(waits(r.events)) != 0 {
				t.Errorf("bg=%v admission -5 s: sent at %v, waits %v, err %v", bg, r.sentAt, waits(r.events), r.err)
			}
			store = &attack38GateStore{answer: func(int, time.Duration) throttle.Admission {
				return throttle.Admission{Wait: -5 * time.Second}
			}}
			r = attack38GateCall(t, ctx, store, false)
			var te *ThrottleError
			if r.sends != 0 || !errors.As(r.err, &te) || te.Wait != 0 || store.asked.Load() != 1 || r.took != 0 {
				t.Errorf("bg=%v refusal -5 s: %d sends, err %v, asked %d, took %v; want a final refusal, wait 0, asked once", bg, r.sends, r.err, store.asked.Load(), r.took)
			}
			if e, ok := attack38NegativeWait(r.events); ok {
				t.Errorf("bg=%v negative wait in %+v", bg, e)
			}
		})
	}
}

// held: a refusal past the window answered 2 s late: refused at 2 s (not
// waited), its ThrottleError's wait the 28 s left of the 30 s refusal,
// interactive and background; under MaxWait 60 s the same refusal is
// waited out to 30 s from the ask, then an admission sends it.
func TestAttack38GateLateRefusalWaitAndBounds(t *testing.T) {
	for _, bg := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			if bg {
				ctx = WithPolicy(ctx, Policy{Priority: Background})
			}
			store := &attack38GateStore{delay: 2 * time.Second, answer: func(int, time.Duration) throttle.Admission {
				return throttle.Admission{Wait: 30 * time.Second}
			}}
			r := attack38GateCall(t, ctx, store, false)
			var te *ThrottleError
			if r.sends != 0 || !errors.As(r.err, &te) || te.Wait != 28*time.Second || r.took != 2*time.Second || store.asked.Load() != 1 {
				t.Errorf("bg=%v refusal 30 s answered at 2 s: %d sends, err %v, took %v, asked %d; want refused at 2 s, wait 28 s", bg, r.sends, r.err, r.took, store.asked.Load())
			}
			p := Policy{MaxWait: 60 * time.Second}
			if bg {
				p.Priority = Background
			}
			store = &attack38GateStore{delay: 2 * time.Second, answer: func(n int, _ time.Duration) throttle.Admission {
				if n == 0 {
					return throttle.Admission{Wait: 30 * time.Second}
				}
				return throttle.Admission{Allowed: true, Slot: 1}
			}}
			r = attack38GateCall(t, WithPolicy(context.Background(), p), store, false)
			if r.err != nil || r.sentAt != 32*time.Second {
				// the second ask leaves at 30 s and is answered (2 s) at 32 s
				t.Errorf("bg=%v MaxWait 60 s, refusal 30 s answered at 2 s: sent at %v, err %v; want 32 s (30 s wait from the ask, 2 s for the next answer)", bg, r.sentAt, r.err)
			}
			if w := waits(r.events); len(w) != 1 || w[0] != 28*time.Second {
				t.Errorf("bg=%v waits %v; want the 28 s left", bg, w)
			}
		})
	}
}

// held: a store that blocks until the call's context ends and then
// refuses with a wait (answering after the context ended): the call ends
// with its context's error at the deadline, nothing sent, no spin.
func TestAttack38GateAnswerAfterCancelRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Wait: time.Second}
		}}
		blocking := &attack38CtxBlockStore{attack38GateStore: store}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		r := attack38GateCall(t, ctx, blocking, false)
		if r.sends != 0 || r.err == nil || r.took != 3*time.Second || store.asked.Load() > 2 {
			t.Errorf("store answering after the deadline: %d sends, err %v, took %v, asked %d", r.sends, r.err, r.took, store.asked.Load())
		}
	})
}

// attack38CtxBlockStore blocks each Reserve until ctx ends, then answers as
// its attack38GateStore does (no error).
type attack38CtxBlockStore struct{ *attack38GateStore }

func (s *attack38CtxBlockStore) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	<-ctx.Done()
	return s.attack38GateStore.Reserve(ctx, k, l, now, maxWait)
}

// held: Shadow mode with a slow refusing store: one ask, a shadow refusal
// carrying the wait left, the call sent at the answer, no EventWait.
func TestAttack38GateShadowSlowRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{delay: 2 * time.Second, answer: func(int, time.Duration) throttle.Admission {
			return throttle.Admission{Wait: 5 * time.Second}
		}}
		r := attack38GateCall(t, context.Background(), store, true)
		var shadow []Event
		for _, e := range r.events {
			if e.Kind == EventShadowRefusal {
				shadow = append(shadow, e)
			}
		}
		if r.err != nil || r.sentAt != 2*time.Second || store.asked.Load() != 1 || len(shadow) != 1 || shadow[0].Wait != 3*time.Second || len(waits(r.events)) != 0 {
			t.Errorf("shadow, slow refusal: sent at %v, err %v, asked %d, shadow %v, waits %v", r.sentAt, r.err, store.asked.Load(), shadow, waits(r.events))
		}
	})
}

// held: concurrent calls on one Transport through a slow store that
// alternates refusals to wait out and admissions (run with -race): every
// call ends, none past its 20 s window plus one answer.
func TestAttack38GateConcurrentSlowStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack38GateStore{delay: 300 * time.Millisecond, answer: func(n int, maxWait time.Duration) throttle.Admission {
			if n%2 == 0 {
				return throttle.Admission{Wait: min(time.Second, maxWait)}
			}
			return throttle.Admission{Allowed: true, Wait: min(500*time.Millisecond, maxWait), Slot: int64(n)}
		}}
		var sends atomic.Int32
		tr := &Transport{TitleID: title, Budget: store, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends.Add(1)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				ctx := context.Background()
				if i%2 == 1 {
					ctx = WithPolicy(ctx, Policy{Priority: Background})
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
				req.Header.Set("Authorization", "XBL3.0 x=attack38152-user;token")
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				if took := time.Since(start); took > 21*time.Second {
					t.Errorf("call %d took %v (%v)", i, took, err)
				}
			})
		}
		wg.Wait()
	})
}
