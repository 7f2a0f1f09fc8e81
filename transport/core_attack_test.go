package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attackCoreBase answers each attempt with the next of its handlers, which get
// the request as sent (its context included).
type attackCoreBase struct {
	mu    sync.Mutex
	n     int
	steps []func(*http.Request) (*http.Response, error)
}

func (b *attackCoreBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	i := b.n
	b.n++
	b.mu.Unlock()
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	if i < len(b.steps) {
		return b.steps[i](req)
	}
	return attackCoreResp(req, 200, nil, ""), nil
}

func (b *attackCoreBase) calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

func attackCoreResp(req *http.Request, status int, h http.Header, body string) *http.Response {
	rec := httptest.NewRecorder()
	for k, v := range h {
		rec.Header()[k] = v
	}
	rec.WriteHeader(status)
	io.WriteString(rec, body)
	resp := rec.Result()
	resp.Request = req
	return resp
}

// attackCoreStall answers 200 after d, or fails when the attempt's context ends first.
func attackCoreStall(d time.Duration) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		select {
		case <-time.After(d):
			return attackCoreResp(req, 200, nil, "ok"), nil
		case <-req.Context().Done():
			return nil, context.Cause(req.Context())
		}
	}
}

func attackCoreGet(t *testing.T, tr http.RoundTripper, ctx context.Context, url, xuid string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(xuid, title))
	resp, err := tr.RoundTrip(req)
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// Promise: transport/policy.go, Policy.AttemptTimeout: "AttemptTimeout
// bounds each attempt: ... LongCallTimeout is XSAPI's long timeout for
// calls that move much data" (also doc.go: "AttemptTimeout
// (LongCallTimeout is XSAPI's long 5-minute one)"). The attempt a 401's
// refresh sends is an attempt of the same call: it keeps the call's
// AttemptTimeout. assess.go's refresh recomputes XSAPI's default (5 to 30
// s) over it, so a long call's renewed attempt is cut at 20 s.
func TestAttackCoreRefreshKeepsPolicyAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &attackCoreBase{steps: []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) { return attackCoreResp(req, 401, nil, ""), nil },
			attackCoreStall(40 * time.Second), // a large upload's answer, within the policy's 2 minutes
		}}
		tr := &Transport{Base: b, TitleID: title, RefreshToken: func(*http.Request) (string, error) {
			return mock.Token(xuid1, title), nil
		}}
		ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: 2 * time.Minute})
		start := time.Now()
		resp, err := attackCoreGet(t, tr, ctx, profileURL, xuid1)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("renewed attempt under AttemptTimeout 2m: got %v %v after %v (%d attempts), want the 200 sent at 40 s", resp, err, time.Since(start), b.calls())
		}
	})
}

// Promise: the same (policy.go, AttemptTimeout bounds each attempt), the
// other way: a short AttemptTimeout (1 s) must bound the renewed attempt
// too, not XSAPI's 20 s.
func TestAttackCoreRefreshKeepsShortAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &attackCoreBase{steps: []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) { return attackCoreResp(req, 401, nil, ""), nil },
			attackCoreStall(time.Hour),
		}}
		tr2 := &Transport{Base: b, TitleID: title, RefreshToken: func(*http.Request) (string, error) {
			return mock.Token(xuid1, title), nil
		}}
		ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: time.Second})
		start := time.Now()
		_, err := attackCoreGet(t, tr2, ctx, profileURL, xuid1)
		// The renewed attempt times out at 1 s; a timeout is retried after
		// XSAPI's backoff (2 to 4 s), and the third attempt is answered.
		if el := time.Since(start); el > 6*time.Second || err != nil || b.calls() != 3 {
			t.Errorf("renewed attempt under AttemptTimeout 1s: %v after %v (%d attempts), want it cut at 1 s and the retry answered", err, el, b.calls())
		}
	})
}

// Promise: RELIABILITY.md, "An outside attack on scrubbed errors", the
// third attack's row: "the transport scrubs the attempt's own credentials
// (as sent: a renewed token, its signature) from debugMessage before
// clipping it". A Base whose response names another request
// (Response.Request: here the first one it saw, which carried the old
// token) must not make the transport forget the token the attempt itself
// carried: parse429 scrubs only what resp.Request holds, so the renewed
// token reaches ThrottleError.Body and the server_429 Event's Body.
func TestAttackCoreResponseNamingAnotherRequestStillScrubbed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		renewed := "XBL3.0 x=" + mock.UserHash(xuid1) + ";eyJRENEWEDSECRETTOKEN0123456789abcdefghijklmnop"
		var first *http.Request
		var mu sync.Mutex
		b := &attackCoreBase{steps: []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) {
				mu.Lock()
				first = req
				mu.Unlock()
				return attackCoreResp(req, 401, nil, ""), nil
			},
		}}
		echo := func(req *http.Request) (*http.Response, error) {
			tok := req.Header.Get("Authorization")
			body := `{"version":1,"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate","debugMessage":"denied ` + tok + `"}`
			resp := attackCoreResp(req, 429, http.Header{"Retry-After": {"1"}}, body)
			mu.Lock()
			resp.Request = first // another request: the first attempt's, with the old token
			mu.Unlock()
			return resp, nil
		}
		for range 10 {
			b.steps = append(b.steps, echo)
		}
		var events []Event
		var emu sync.Mutex
		tr := &Transport{Base: b, TitleID: title,
			RefreshToken: func(*http.Request) (string, error) { return renewed, nil },
			Observe: func(_ context.Context, e Event) {
				emu.Lock()
				events = append(events, e)
				emu.Unlock()
			}}
		_, err := attackCoreGet(t, tr, context.Background(), profileURL, xuid1)
		var te *ThrottleError
		if !errors.As(err, &te) {
			t.Fatalf("want a *ThrottleError, got %v", err)
		}
		if te.Body != nil && strings.Contains(te.Body.DebugMessage, "RENEWEDSECRET") {
			t.Errorf("ThrottleError.Body.DebugMessage holds the renewed token the attempt sent: %q", te.Body.DebugMessage)
		}
		emu.Lock()
		defer emu.Unlock()
		for _, e := range events {
			if e.Body != nil && strings.Contains(e.Body.DebugMessage, "RENEWEDSECRET") {
				t.Errorf("Event %v's Body.DebugMessage holds the renewed token: %q", e.Kind, e.Body.DebugMessage)
				break
			}
		}
	})
}

// held: one user's 429 with a long Retry-After (and RateLimit headers
// saying the burst is spent) blocks that user's key only: another user of
// the same service is sent at once. doc.go's table, "one user's 429 must
// not block every other local user"; cache.go's raCache doc.
func TestAttackCoreOneUsers429BlocksOnlyThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &attackCoreBase{steps: []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) {
				return attackCoreResp(req, 429, http.Header{
					"Retry-After":      {"600"},
					"Ratelimit-Policy": {`"burst";q=10;w=15, "sustain";q=30;w=300`},
					"Ratelimit":        {`"burst";r=0;t=15, "sustain";r=0;t=300`},
				}, `{"version":1,"currentRequests":11,"maxRequests":1,"periodInSeconds":15,"limitType":"Rate"}`), nil
			},
		}}
		tr := &Transport{Base: b, TitleID: title}
		ff := WithPolicy(context.Background(), Policy{FailFast: true})
		if _, err := attackCoreGet(t, tr, ff, profileURL, xuid1); err == nil {
			t.Fatal("first user's call: want its 429")
		}
		resp, err := attackCoreGet(t, tr, ff, profileURL, xuid2)
		if err != nil || resp.StatusCode != 200 || b.calls() != 2 {
			t.Errorf("another user after the first's 429: %v %v (%d sent), want it sent and answered", resp, err, b.calls())
		}
		// and the same user on another service
		resp, err = attackCoreGet(t, tr, ff, "https://social.xboxlive.com/users/me/summary", xuid1)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("the same user on another service: %v %v, want it sent", resp, err)
		}
	})
}

// held: a Retry-After on a host without a rule blocks that host only, not
// another host without a rule, nor a ruled service (keyof.go: "host:" and
// the host).
func TestAttackCoreUnruledHostRetryAfterStaysOnItsHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &attackCoreBase{steps: []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) {
				return attackCoreResp(req, 503, http.Header{"Retry-After": {"600"}}, ""), nil
			},
		}}
		tr := &Transport{Base: b, TitleID: title}
		ff := WithPolicy(context.Background(), Policy{FailFast: true})
		attackCoreGet(t, tr, ff, "https://evil.example.com/x", xuid1)
		for _, u := range []string{"https://other.example.com/x", profileURL, "https://EVIL.example.com:8443/x"} {
			resp, err := attackCoreGet(t, tr, ff, u, xuid1)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("%s after evil.example.com's Retry-After: %v %v, want it sent", u, resp, err)
			}
		}
	})
}

// Promise: policy.go, Background: "It never takes the share of the key's
// limits kept for interactive calls ... so an interactive call of the same
// user and service never queues behind it" (doc.go: "never queues ahead of
// them"). A cached Retry-After has one place for a call to hold for it
// (gate.go, gateCache); a Background call that takes it makes the
// interactive call that comes next fail at once, a local refusal it would
// not have met without the background call (it would have held for the
// Retry-After itself and been sent when it ended).
func TestAttackCoreBackgroundTakesTheRetryAfterPlaceFromInteractive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &attackCoreBase{steps: []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) {
				return attackCoreResp(req, 429, http.Header{"Retry-After": {"5"}}, ""), nil
			},
		}}
		tr := &Transport{Base: b, TitleID: title}
		// A FailFast call gets the 429: cached, and no call holds for it.
		attackCoreGet(t, tr, WithPolicy(context.Background(), Policy{FailFast: true}), profileURL, xuid1)
		done := make(chan error, 1)
		go func() {
			_, err := attackCoreGet(t, tr, WithPolicy(context.Background(), Policy{Priority: Background}), profileURL, xuid1)
			done <- err
		}()
		synctest.Wait() // the background call holds for the Retry-After
		resp, err := attackCoreGet(t, tr, context.Background(), profileURL, xuid1)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("interactive call while a background call holds for a Retry-After: %v %v, want it to hold and be sent", resp, err)
		}
		<-done
	})
}

// Promise: transport.go, LimitShare: "the share of each limit ... the
// budget lets calls use"; Transport's doc: the budget "keeps ... in sync
// with what the service reports: ... RateLimit / RateLimit-Policy headers
// ... resync the counts". A service's RateLimit "r" is what remains of
// its own limit (ratelimit.ParseHeaders: "the limit less the requests
// remaining"); without a RateLimit-Policy the transport hands
// ParseHeaders the limit cut to LimitShare (c.limit), so remaining 3 of
// profile's 10 (7 used, by the user's other devices) reads as 2 used of 5:
// the budget lets 2 more calls through a window already past its half.
func TestAttackCoreLimitShareSyncReadsRemainingAgainstTheServicesLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &attackCoreBase{steps: []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) {
				return attackCoreResp(req, 200, http.Header{"Ratelimit": {`"burst";r=3;t=15, "sustain";r=23;t=300`}}, "{}"), nil
			},
		}}
		tr := &Transport{Base: b, TitleID: title, LimitShare: 0.5}
		ff := WithPolicy(context.Background(), Policy{FailFast: true})
		if _, err := attackCoreGet(t, tr, ff, profileURL, xuid1); err != nil {
			t.Fatal(err)
		}
		sent := 1
		for range 4 {
			if _, err := attackCoreGet(t, tr, ff, profileURL, xuid1); err == nil {
				sent++
			}
		}
		// The service counts 7 of 10 after the first call: LimitShare 0.5
		// (5 of 10) lets no more through in this burst window.
		if sent > 1 {
			t.Errorf("LimitShare 0.5 after the service reported 3 of 10 left: %d calls sent in the window (the service then counts %d of 10), want 1", sent, 7+sent-1)
		}
	})
}

// Promise: stats.go, Stats.LimitsLearned: "limits learned from 429 bodies
// that differ from the data (LearnedLimits lists them)". One limit learned
// once, then ended, is one limit learned; the end of a limit is counted as
// a second one (the EventLimitLearned of its end feeds the same counter),
// so the counter says 2 while LearnedLimits never listed more than 1.
func TestAttackCoreStatsLimitsLearnedCountsNoEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &attackCoreBase{steps: []func(*http.Request) (*http.Response, error){
			func(req *http.Request) (*http.Response, error) {
				return attackCoreResp(req, 429, nil, `{"version":1,"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"Rate"}`), nil
			},
		}}
		tr := &Transport{Base: b, TitleID: title, RetryWindow: -1}
		attackCoreGet(t, tr, context.Background(), profileURL, xuid1)
		if n := len(tr.LearnedLimits()); n != 1 || tr.Stats().LimitsLearned != 1 {
			t.Fatalf("after one 429 reporting 6: %d listed, Stats.LimitsLearned %d; want 1 and 1", n, tr.Stats().LimitsLearned)
		}
		time.Sleep(11 * time.Minute) // past throttle.LearnedFor
		attackCoreGet(t, tr, context.Background(), profileURL, xuid1)
		if got := tr.Stats().LimitsLearned; got != 1 {
			t.Errorf("Stats.LimitsLearned = %d after one limit learned and then ended (LearnedLimits now lists %d), want 1", got, len(tr.LearnedLimits()))
		}
	})
}

// held: Retry-After values that are huge, HTTP-dates far ahead, negative,
// zero or garbage never make a call wait past its context deadline or its
// retry window (doc.go: "It never sleeps past the request's context
// deadline"; transport.go MaxRetryAfter).
func TestAttackCoreRetryAfterNeverWaitsPastContextOrWindow(t *testing.T) {
	for _, ra := range []string{"99999999999", "Fri, 31 Dec 9999 23:59:59 GMT", "-5", "0", "Thu, 01 Jan 1970 00:00:00 GMT", "1e9", "3, 600"} {
		t.Run(ra, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &attackCoreBase{}
				for range 50 {
					b.steps = append(b.steps, func(req *http.Request) (*http.Response, error) {
						return attackCoreResp(req, 429, http.Header{"Retry-After": {ra}}, ""), nil
					})
				}
				tr := &Transport{Base: b, TitleID: title}
				ctx, cancel := context.WithTimeout(context.Background(), 7*time.Second)
				defer cancel()
				start := time.Now()
				attackCoreGet(t, tr, ctx, profileURL, xuid1)
				if el := time.Since(start); el > 7*time.Second {
					t.Errorf("Retry-After %q: call took %v, past its 7 s deadline", ra, el)
				}
				start = time.Now()
				attackCoreGet(t, tr, context.Background(), profileURL, xuid2)
				if el := time.Since(start); el > 20*time.Second+maxAttemptTimeout {
					t.Errorf("Retry-After %q: call without deadline took %v, past its retry window", ra, el)
				}
			})
		})
	}
}

// Promise: stats.go, BudgetLeft: "says what is left of its key's budget"
// for "a response of this transport" (doc.go: "After a call, BudgetLeft
// says what is left of its key's budget"). send() keeps a Base's
// Response.Request when it is set, even to another request: here another
// user's, so the caller of user 1 reads user 2's budget (another user's
// data) instead of its own.
func TestAttackCoreBudgetLeftIsTheCallersKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var other *http.Request
		var mu sync.Mutex
		b := &attackCoreBase{}
		for range 3 { // user 2's calls
			b.steps = append(b.steps, func(req *http.Request) (*http.Response, error) {
				mu.Lock()
				other = req
				mu.Unlock()
				return attackCoreResp(req, 200, nil, "{}"), nil
			})
		}
		b.steps = append(b.steps, func(req *http.Request) (*http.Response, error) { // user 1's
			resp := attackCoreResp(req, 200, nil, "{}")
			mu.Lock()
			resp.Request = other
			mu.Unlock()
			return resp, nil
		})
		tr := &Transport{Base: b, TitleID: title}
		for range 3 {
			attackCoreGet(t, tr, context.Background(), profileURL, xuid2)
		}
		resp, err := attackCoreGet(t, tr, context.Background(), profileURL, xuid1)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := tr.BudgetLeft(resp)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Burst.Count != 1 {
			t.Errorf("BudgetLeft of user 1's one call: burst count %d (user 2's is 3), want 1", snap.Burst.Count)
		}
	})
}
