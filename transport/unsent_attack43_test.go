package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// attack43CloseBody is a request body that records its Close.
type attack43CloseBody struct {
	io.Reader
	closed atomic.Int32
}

func (b *attack43CloseBody) Close() error { b.closed.Add(1); return nil }

// TestAttack43UnsentSignerReadBodyRetrySendsWholeBody: a PUT with a body and
// GetBody, a Signer that reads the body of its copy to sign it (the Signer's
// godoc: "the request's own copy: its headers and body are the attempt's")
// and puts what it read back in front (as xblsign does without GetBody),
// slow on the first attempt only (past Policy.AttemptTimeout). The first
// attempt is unsent (errUnsent) and retried; c.attempts is still 0, so the
// retry's rewind does not call GetBody and reuses c.req.Body, which the
// first Signer drained: the service gets an empty (or cut) body.
func TestAttack43UnsentSignerReadBodyRetrySendsWholeBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const payload = `{"settings":["GameDisplayName","Gamerscore"],"userIds":["2533274790000001"]}`
		var mu sync.Mutex
		var got []string
		tr := &Transport{TitleID: title, DisableBudget: true, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if err := r.Context().Err(); err != nil {
				return nil, err
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			mu.Lock()
			got = append(got, string(b))
			mu.Unlock()
			return attack41Resp(r, 200), nil
		})}
		var signs atomic.Int32
		ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
		ctx = WithSigner(ctx, func(r *http.Request) error {
			b, err := io.ReadAll(r.Body) // its copy's body, as the godoc lets it
			if err != nil {
				return err
			}
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
			if signs.Add(1) == 1 {
				time.Sleep(2 * time.Second) // past the attempt's timeout
			}
			r.Header.Set("Signature", "sig")
			return nil
		})
		req := attack41Req(ctx, "PUT", "attack43-body", payload)
		if req.GetBody == nil {
			t.Fatal("no GetBody")
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("call: %v, want the retry's 200", err)
		}
		resp.Body.Close()
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 || got[0] != payload {
			t.Errorf("the service got bodies %q after an unsent first attempt, want one whole %q: the retry reused the request's "+
				"body, which the first attempt's Signer had read, instead of a fresh one from GetBody (c.attempts is 0 after an unsent "+
				"attempt, and rewind calls GetBody only past the first attempt). Promise: transport.go: \"rewinding bodies with "+
				"Request.GetBody\"; Signer: \"the request's own copy: its headers and body are the attempt's\"; commit 5c9ffed: \"the call "+
				"retries it as an attempt that timed out\". Fix: rewind from GetBody whenever an earlier attempt was made ready "+
				"(a flag set in send after rewind, not c.attempts)", got, payload)
		}
	})
}

// TestAttack43UnsentSignerOwnErrorAfterTimeout: a Signer that is slow, then fails
// with an error of its own (a proof key revoked), not the context's. Its
// godoc: "an error ends the call with that error, the attempt unsent". The
// attempt's timeout having ended meanwhile, send replaces the error with
// errUnsent: the Signer is called again and again, and the call ends with
// "the attempt timed out before it was sent", its Signer's error lost.
func TestAttack43UnsentSignerOwnErrorAfterTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errRevoked := errors.New("signer: proof key revoked")
		var reached atomic.Int32
		tr := &Transport{TitleID: title, DisableBudget: true, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			reached.Add(1)
			return attack41Resp(r, 200), nil
		})}
		var signs atomic.Int32
		ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
		ctx = WithSigner(ctx, func(r *http.Request) error {
			signs.Add(1)
			time.Sleep(2 * time.Second) // an HSM that takes its time to refuse
			return errRevoked
		})
		_, err := tr.RoundTrip(attack41Req(ctx, "GET", "attack43-revoked", ""))
		if reached.Load() != 0 {
			t.Fatalf("Base reached %d times", reached.Load())
		}
		if !errors.Is(err, errRevoked) || signs.Load() != 1 {
			t.Errorf("a Signer that failed with its own error (after the attempt's timeout ended) was called %d times and the call "+
				"ended with %v, want %v after one call. Promise: Signer's godoc: \"an error ends the call with that error, the "+
				"attempt unsent\". Fix: in call.send, read errUnsent only when the Signer succeeded or returned the attempt "+
				"context's own error (errors.Is(err, context.Canceled/DeadlineExceeded)); keep any other Signer error final",
				signs.Load(), err, errRevoked)
		}
	})
}

// held: a Signer that honours req.Context() and gives up with its error
// (context.Canceled, the attempt context's Err, or one wrapping it) when the
// attempt's own timeout ends: read as the attempt's timeout, retried, and
// the retry (a fast Signer) is sent once.
func TestAttack43UnsentSignerReturnsAttemptContextError(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var reached atomic.Int32
			tr := &Transport{TitleID: title, DisableBudget: true, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				reached.Add(1)
				return attack41Resp(r, 200), nil
			})}
			var signs atomic.Int32
			ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
			ctx = WithSigner(ctx, func(r *http.Request) error {
				if signs.Add(1) == 1 {
					<-r.Context().Done()
					if wrap {
						return errors.New("signer: gave up: " + r.Context().Err().Error())
					}
					return r.Context().Err()
				}
				r.Header.Set("Signature", "sig")
				return nil
			})
			resp, err := tr.RoundTrip(attack41Req(ctx, "GET", "attack43-ctxerr", ""))
			if wrap {
				// a text-only error: either reading (final, or retried) is fair; it must end, unsent or once sent
				if resp != nil {
					resp.Body.Close()
				}
				if reached.Load() > 1 {
					t.Errorf("Base reached %d times", reached.Load())
				}
				return
			}
			if err != nil || reached.Load() != 1 || signs.Load() != 2 {
				t.Errorf("Signer returning its attempt context's error: err %v, Base reached %d, Signer called %d; want the retry's 200",
					err, reached.Load(), signs.Load())
			}
			if resp != nil {
				resp.Body.Close()
			}
		})
	}
}

// TestAttack43UnsentSignerErrorQuotesToken: a Signer whose error quotes the
// request's Authorization (as a signing library's "cannot sign %v" of the
// header may). The Base's errors are scrubbed of the request's credentials
// in send (xblauth.Secrets ScrubError); the Signer's are returned whole.
// README.md: "Tokens never appear in logs or errors".
func TestAttack43UnsentSignerErrorQuotesToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const token = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9SECRETSECRET"
		var logs bytes.Buffer
		tr := &Transport{TitleID: title, DisableBudget: true,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return attack41Resp(r, 200), nil
			})}
		ctx := WithSigner(context.Background(), func(r *http.Request) error {
			return errors.New("signer: cannot sign request with Authorization " + r.Header.Get("Authorization"))
		})
		req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
		req.Header.Set("Authorization", "XBL3.0 x=2533274790000001;"+token)
		_, err := tr.RoundTrip(req)
		if err == nil {
			t.Fatal("the Signer's error did not end the call")
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("RoundTrip's error quotes the token the Signer's error named: %q. Promise: README.md: \"Tokens never appear in "+
				"logs or errors\"; RELIABILITY.md: \"An error whose text, or any cause's, told a credential comes back with its text "+
				"scrubbed\". Fix: in call.send, scrub a Signer's (and GetBody's) error as the Base's is: "+
				"keepCode(err, xblauth.Secrets{}.HeaderSecrets(req.Header).URLSecrets(req.URL).ScrubError(err))", err)
		}
		if strings.Contains(logs.String(), token) {
			t.Errorf("the log holds the token: %s", logs.String())
		}
	})
}

// held: a Signer slow on EVERY attempt (each attempt's own 1 s timeout ends
// in it), the key's report pending (both stores book): the call ends within
// its retry window with an error errors.Is reads as DeadlineExceeded,
// nothing reaches the Base, no attempt is counted (Stats, EventAttempt),
// the retries keep XSAPI's backoff (few Signer calls), and neither store
// keeps a booking. No log line or event claims a status.
func TestAttack43UnsentSignerSlowEveryAttempt(t *testing.T) {
	for _, mode := range []string{"pending", "shadow-pending", "memory"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				user := "attack43-slow-" + mode
				base := &attack41Base{}
				var tr *Transport
				var p *attack41Pair
				if mode == "memory" {
					tr = &Transport{TitleID: title, Base: base}
				} else {
					p = attack41Setup(t, user, false, base)
					tr = p.tr
					tr.Shadow = mode == "shadow-pending"
				}
				var logs bytes.Buffer
				tr.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				var attempts, retries atomic.Int32
				var badEvent atomic.Value
				tr.Observe = func(_ context.Context, e Event) {
					switch e.Kind {
					case EventAttempt:
						attempts.Add(1)
					case EventRetry:
						retries.Add(1)
						if e.Status != 0 || e.Attempt != 0 {
							badEvent.Store(e)
						}
					}
				}
				var signs atomic.Int32
				ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
				ctx = WithSigner(ctx, func(r *http.Request) error {
					signs.Add(1)
					time.Sleep(2 * time.Second)
					r.Header.Set("Signature", "sig")
					return nil
				})
				start := time.Now()
				_, err := tr.RoundTrip(attack41Req(ctx, "GET", user, ""))
				took := time.Since(start)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err %v, want one errors.Is reads as DeadlineExceeded", err)
				}
				if took > DefaultRetryWindow+2*time.Second {
					t.Errorf("call took %v, past its %v retry window", took, DefaultRetryWindow)
				}
				n, _, reachedDone := base.stats()
				if n != 0 || reachedDone != 0 || attempts.Load() != 0 || tr.Stats().Attempts != 0 {
					t.Errorf("Base got %d (+%d done), EventAttempt %d, Stats.Attempts %d; want none", n, reachedDone, attempts.Load(), tr.Stats().Attempts)
				}
				if s := signs.Load(); s < 2 || s > 5 {
					t.Errorf("Signer called %d times in the window (retries %d): want XSAPI's backoff, a handful", s, retries.Load())
				}
				if e := badEvent.Load(); e != nil {
					t.Errorf("an EventRetry of an unsent attempt names a status or attempt: %+v", e)
				}
				if strings.Contains(logs.String(), "status=") {
					t.Errorf("the log names a status for attempts never sent:\n%s", logs.String())
				}
				if p != nil {
					p.check(t, 0, "a Signer past every attempt's timeout", attack41PromiseCounted)
				}
				t.Logf("%s: err %v, took %v, signs %d, retries %d", mode, err, took, signs.Load(), retries.Load())
			})
		})
	}
}

// held: NoRetry, FailFast, and a body without GetBody (sent once): a Signer
// past the attempt's timeout makes the one attempt unsent and final: the
// error is the timeout (errors.Is DeadlineExceeded), the Signer is called
// once, nothing is sent, neither store keeps a booking.
func TestAttack43UnsentSentOnceIsFinal(t *testing.T) {
	for _, mode := range []string{"noretry", "failfast", "nogetbody"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				user := "attack43-once-" + mode
				base := &attack41Base{}
				p := attack41Setup(t, user, false, base)
				pol := Policy{AttemptTimeout: time.Second, NoRetry: mode == "noretry", FailFast: mode == "failfast"}
				ctx := WithPolicy(context.Background(), pol)
				var signs atomic.Int32
				ctx = WithSigner(ctx, func(r *http.Request) error {
					signs.Add(1)
					time.Sleep(2 * time.Second)
					return nil
				})
				req := attack41Req(ctx, "PUT", user, "body")
				if mode == "nogetbody" {
					req.GetBody = nil
				}
				_, err := p.tr.RoundTrip(req)
				if !errors.Is(err, context.DeadlineExceeded) || signs.Load() != 1 {
					t.Errorf("err %v, Signer called %d times; want the timeout after one", err, signs.Load())
				}
				if n, _, d := base.stats(); n != 0 || d != 0 || p.tr.Stats().Attempts != 0 {
					t.Errorf("Base got %d (+%d done), Stats.Attempts %d", n, d, p.tr.Stats().Attempts)
				}
				p.check(t, 0, "an unsent attempt sent once", attack41PromiseCounted)
			})
		})
	}
}

// TestAttack43UnsentBodyNotClosed: a PUT whose body has no GetBody (sent once),
// its Signer past the attempt's timeout: the attempt is unsent and final.
// net/http.RoundTripper: "RoundTrip must always close the body, including on
// errors". The body is never closed (a file, a pipe's writer waits forever).
// The same holds for a Signer that fails at once.
func TestAttack43UnsentBodyNotClosed(t *testing.T) {
	for _, mode := range []string{"timeout", "signer-error", "ctx-ended"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &Transport{TitleID: title, DisableBudget: true, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					r.Body.Close()
					return attack41Resp(r, 200), nil
				})}
				ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
				var cancel context.CancelFunc = func() {}
				if mode == "ctx-ended" {
					ctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
				}
				defer cancel()
				ctx = WithSigner(ctx, func(r *http.Request) error {
					if mode == "signer-error" {
						return errors.New("signer: no key")
					}
					time.Sleep(2 * time.Second)
					return nil
				})
				body := &attack43CloseBody{Reader: strings.NewReader("data")}
				req, _ := http.NewRequestWithContext(ctx, "PUT", profileURL, body)
				req.Header.Set("Authorization", "XBL3.0 x=attack43;token")
				_, err := tr.RoundTrip(req)
				if err == nil {
					t.Fatal("call succeeded")
				}
				if body.closed.Load() == 0 {
					t.Errorf("%s: the call ended unsent (%v) and never closed the request body. Promise: net/http.RoundTripper "+
						"(which Transport implements): \"RoundTrip must always close the body, including on errors\". Fix: in "+
						"call.run, closeBody(c.req) when a call ends with no attempt sent (c.attempts == 0), as its gate's "+
						"refusal does", mode, err)
				}
			})
		})
	}
}

// held: CoalesceReads, five identical signed GETs, the first's first
// attempt unsent (its Signer past the 1 s attempt timeout). A read with a
// Signer is never coalesced (readKeyOf), and a bodiless GET has no GetBody
// to be slow, so no leader's attempt can time out unsent: each caller sends
// its own and gets its 200 and body; the unsent one is retried.
func TestAttack43UnsentCoalescedLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reached atomic.Int32
		tr := &Transport{TitleID: title, CoalesceReads: true, DisableBudget: true, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if err := r.Context().Err(); err != nil {
				return nil, err
			}
			reached.Add(1)
			resp := attack41Resp(r, 200)
			resp.Body = io.NopCloser(strings.NewReader("answer"))
			return resp, nil
		})}
		var signs atomic.Int32
		ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
		ctx = WithSigner(ctx, func(r *http.Request) error {
			if signs.Add(1) == 1 {
				time.Sleep(2 * time.Second)
			}
			r.Header.Set("Signature", "sig")
			return nil
		})
		var wg sync.WaitGroup
		errs := make([]string, 5)
		for i := range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i > 0 {
					time.Sleep(500 * time.Millisecond) // join the leader's flight while it signs
				}
				resp, err := tr.RoundTrip(attack41Req(ctx, "GET", "attack43-coalesce", ""))
				if err != nil {
					errs[i] = err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != "answer" {
					errs[i] = "status/body " + string(b)
				}
			}()
		}
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				t.Errorf("caller %d: %s", i, e)
			}
		}
		if reached.Load() != 5 || tr.Stats().Coalesced != 0 {
			t.Errorf("Base reached %d times, want 5, signed reads uncoalesced (Stats.Coalesced %d)", reached.Load(), tr.Stats().Coalesced)
		}
		t.Logf("signs %d, coalesced %d", signs.Load(), tr.Stats().Coalesced)
	})
}

// held: a 503 sent, then the retry's GetBody takes past the 1 s attempt
// timeout (the key's report pending): that attempt is unsent, its bookings
// go back, the next retry gets a whole body from GetBody again and is sent
// (200); each store holds the two attempts the service counted.
func TestAttack43UnsentSlowGetBodyOnRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const user = "attack43-getbody"
		var mu sync.Mutex
		var bodies []string
		base := &attack41Base{answers: []int{503}}
		rec := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Body != nil && r.Context().Err() == nil {
				b, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(b))
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
			}
			return base.RoundTrip(r)
		})
		p := attack41Setup(t, user, false, rec)
		req := attack41Req(WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second}), "PUT", user, "payload")
		var gets atomic.Int32
		req.GetBody = func() (io.ReadCloser, error) {
			if gets.Add(1) == 1 {
				time.Sleep(2 * time.Second)
			}
			return io.NopCloser(strings.NewReader("payload")), nil
		}
		resp, err := p.tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		resp.Body.Close()
		n, counted, done := base.stats()
		mu.Lock()
		defer mu.Unlock()
		if n != 2 || done != 0 || len(bodies) != 2 || bodies[0] != "payload" || bodies[1] != "payload" || resp.StatusCode != 200 {
			t.Errorf("Base got %d (+%d done), bodies %q, status %d; want 503 then 200, whole bodies", n, done, bodies, resp.StatusCode)
		}
		if a := p.tr.Stats().Attempts; a != 2 {
			t.Errorf("Stats.Attempts %d, want 2", a)
		}
		p.check(t, counted, "503, a retry whose GetBody outlasted its timeout, then 200", attack41PromiseCounted)
	})
}

// TestSignerContextErrorQuotingTokenIsScrubbed: a Signer's error that
// wraps a context's error and quotes the Authorization header (a signing
// service's "gave up for <header>: context canceled") ends the call with
// the Signer's error, its text scrubbed of the token and errors.Is still
// reading the context's error: only the Signer's errors that wrap no
// context's error were scrubbed.
func TestSignerContextErrorQuotingTokenIsScrubbed(t *testing.T) {
	const token = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9CTXSECRET"
	tr := &Transport{TitleID: title, DisableBudget: true, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return attack41Resp(r, 200), nil
	})}
	ctx := WithSigner(context.Background(), func(r *http.Request) error {
		return fmt.Errorf("signer: gave up for %s: %w", r.Header.Get("Authorization"), context.Canceled)
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
	req.Header.Set("Authorization", "XBL3.0 x=2533274790000001;"+token)
	_, err := tr.RoundTrip(req)
	if err == nil || strings.Contains(err.Error(), token) || !errors.Is(err, context.Canceled) {
		t.Errorf("a Signer's error quoting the token and wrapping context.Canceled: %v; want it scrubbed, errors.Is still reading context.Canceled", err)
	}
}
