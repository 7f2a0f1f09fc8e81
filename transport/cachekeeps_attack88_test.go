package transport_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// attack88Twice reads url twice in a row with one token through a Transport
// whose base answers with answer, and returns how many requests reached
// the base.
func attack88Twice(t *testing.T, answer func(*http.Request) *http.Response, method string) int64 {
	t.Helper()
	base := &attack88Base{answer: answer}
	tr := attack88Transport(base)
	tr.RetryWindow = -1 // no retries: one request a call
	tr.Raw429 = true
	for range 2 {
		req := attack88Req(context.Background(), attack88URL, attack88Auth("1111", "token-a"))
		req.Method = method
		resp, err := tr.RoundTrip(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
	}
	return base.n.Load()
}

// TestAttack88NotKept: ReadCacheTTL's godoc: "keeps each 200 answer ... (at
// most as long as it is still fresh ...) ... An answer with Set-Cookie,
// Cache-Control no-store or no-cache, or an Age or Expires that cannot be
// read, is not kept"; CoalesceReads: "a GET".
//
// held: each answer below reached the base twice.
func TestAttack88NotKept(t *testing.T) {
	date := time.Now().UTC().Format(http.TimeFormat)
	cases := []struct {
		name   string
		status int
		h      http.Header
		method string
	}{
		{"404", 404, nil, "GET"},
		{"403", 403, nil, "GET"},
		{"429 without Retry-After", 429, nil, "GET"},
		{"203", 203, nil, "GET"},
		{"204", 204, nil, "GET"},
		{"HEAD 200", 200, nil, "HEAD"},
		{"OPTIONS 200", 200, nil, "OPTIONS"},
		{"no-store", 200, http.Header{"Cache-Control": {"no-store"}}, "GET"},
		{"NO-STORE", 200, http.Header{"Cache-Control": {"NO-STORE"}}, "GET"},
		{"no-cache with a field", 200, http.Header{"Cache-Control": {`no-cache="Set-Cookie"`}}, "GET"},
		{"private, no-store", 200, http.Header{"Cache-Control": {"private, no-store"}}, "GET"},
		{"no-store in a second field", 200, http.Header{"Cache-Control": {"max-age=60", "no-store"}}, "GET"},
		{"no-store under a lower-case name", 200, http.Header{"cache-control": {"no-store"}}, "GET"},
		{"no-store under two spellings", 200, http.Header{"Cache-Control": {"max-age=60"}, "cache-control": {"no-store"}}, "GET"},
		{"max-age=0", 200, http.Header{"Cache-Control": {"max-age=0"}}, "GET"},
		{"max-age not a number", 200, http.Header{"Cache-Control": {"max-age=soon"}}, "GET"},
		{"Set-Cookie", 200, http.Header{"Set-Cookie": {"s=1"}}, "GET"},
		{"set-cookie lower-case", 200, http.Header{"set-cookie": {"s=1"}}, "GET"},
		{"Age unreadable, max-age given", 200, http.Header{"Cache-Control": {"max-age=60"}, "Age": {"a while"}}, "GET"},
		{"Age negative, max-age given", 200, http.Header{"Cache-Control": {"max-age=60"}, "Age": {"-1"}}, "GET"},
		{"Age past max-age", 200, http.Header{"Cache-Control": {"max-age=5"}, "Age": {"5"}}, "GET"},
		{"Expires unreadable", 200, http.Header{"Expires": {"0"}, "Date": {date}}, "GET"},
		{"Expires without Date", 200, http.Header{"Expires": {time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}}, "GET"},
		{"Expires in the past", 200, http.Header{"Expires": {time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}, "Date": {date}}, "GET"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := attack88Twice(t, func(r *http.Request) *http.Response {
				resp := attack88OK(r, "data", c.h.Clone())
				resp.StatusCode = c.status
				resp.Status = http.StatusText(c.status)
				return resp
			}, c.method)
			if n != 2 {
				t.Errorf("%d requests for two calls: the answer was kept", n)
			}
		})
	}
}

// TestAttack88UnreadableAgeKeptWithoutLifetime: ReadCacheTTL's godoc: "An
// answer with Set-Cookie, Cache-Control no-store or no-cache, or an Age or
// Expires that cannot be read, is not kept."
//
// An answer that states no lifetime (no max-age, no Expires) and an Age
// that cannot be read ("a while", "-1", "1.5") was kept: the second call
// was answered from memory.
func TestAttack88UnreadableAgeKeptWithoutLifetime(t *testing.T) {
	for _, age := range []string{"a while", "-1", "1.5"} {
		t.Run(age, func(t *testing.T) {
			n := attack88Twice(t, func(r *http.Request) *http.Response {
				return attack88OK(r, "data", http.Header{"Age": {age}})
			}, "GET")
			if n != 2 {
				t.Errorf("Age %q: %d requests for two calls: the answer was kept", age, n)
			}
		})
	}
}

// TestAttack88KeptNoLongerThanFresh: "at most as long as it is still fresh:
// its Cache-Control max-age, else its Expires less its Date, less its Age,
// that freshness counted from when its request was sent".
//
// held: max-age=2 answered after 1.5 s is served from memory 0.3 s later
// and not 0.7 s later; Expires − Date = 3 s with Age 1 ends at 2 s.
func TestAttack88KeptNoLongerThanFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &attack88Base{
			hold: func(*http.Request) { time.Sleep(1500 * time.Millisecond) },
			answer: func(r *http.Request) *http.Response {
				return attack88OK(r, "x", http.Header{"Cache-Control": {"max-age=2"}})
			},
		}
		tr := attack88Transport(base)
		auth := attack88Auth("1111", "token-a")
		attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
		time.Sleep(300 * time.Millisecond)
		attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
		if n := base.n.Load(); n != 1 {
			t.Errorf("0.3 s later: %d requests, want 1 (still fresh)", n)
		}
		time.Sleep(400 * time.Millisecond)
		attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
		if n := base.n.Load(); n != 2 {
			t.Errorf("2.2 s after it was asked for: %d requests, want 2 (stale)", n)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		base := &attack88Base{answer: func(r *http.Request) *http.Response {
			now := time.Now()
			return attack88OK(r, "x", http.Header{"Date": {now.UTC().Format(http.TimeFormat)}, "Expires": {now.Add(3 * time.Second).UTC().Format(http.TimeFormat)}, "Age": {"1"}})
		}}
		tr := attack88Transport(base)
		auth := attack88Auth("1111", "token-a")
		attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
		time.Sleep(1900 * time.Millisecond)
		attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
		if n := base.n.Load(); n != 1 {
			t.Errorf("1.9 s later: %d requests, want 1", n)
		}
		time.Sleep(200 * time.Millisecond)
		attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
		if n := base.n.Load(); n != 2 {
			t.Errorf("2.1 s later: %d requests, want 2", n)
		}
	})
}

// TestAttack88VaryingAnswerStaysItsCallers: CoalesceReads' godoc: "An answer
// ... that varies on another header (Vary) ... stays its caller's".
//
// held: three callers at once, each answer its own, for Vary naming
// another header (any spelling, among known ones, or "*"); the known names
// alone are shared.
func TestAttack88VaryingAnswerStaysItsCallers(t *testing.T) {
	for _, c := range []struct {
		vary   []string
		shared bool
	}{
		{[]string{"X-Client"}, false},
		{[]string{"*"}, false},
		{[]string{"Accept-Language, user-agent"}, false},
		{[]string{"Accept-Language", "Origin"}, false},
		{[]string{" ,Accept-Language,,x-xbl-contract-version , AUTHORIZATION"}, true},
	} {
		t.Run(strings.Join(c.vary, "|"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &attack88Base{
					hold: func(*http.Request) { time.Sleep(100 * time.Millisecond) },
					answer: func(r *http.Request) *http.Response {
						return attack88OK(r, "x", http.Header{"Vary": c.vary})
					},
				}
				tr := attack88Transport(base)
				var fs []func()
				for i := range 3 {
					fs = append(fs, func() {
						time.Sleep(time.Duration(i) * time.Millisecond)
						attack88Do(t, tr, attack88Req(context.Background(), attack88URL, attack88Auth("1111", "token-a")))
					})
				}
				attack88Concurrently(fs...)
				attack88Do(t, tr, attack88Req(context.Background(), attack88URL, attack88Auth("1111", "token-a")))
				want := int64(4)
				if c.shared {
					want = 1
				}
				if n := base.n.Load(); n != want {
					t.Errorf("%d requests for 4 calls, want %d", n, want)
				}
			})
		})
	}
}

// TestAttack88RenewedTokenAnswerStaysItsCallers: "An answer ... that came to
// a token renewed by RefreshToken stays its caller's".
//
// held: the leader's token A is answered 401, refreshed to B, then 200 for
// B; a follower with token A and a later call with token A get their own
// requests' answers, never B's.
func TestAttack88RenewedTokenAnswerStaysItsCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokA, tokB := attack88Auth("1111", "token-a"), attack88Auth("1111", "token-b")
		var mu sync.Mutex
		refused := false
		base := &attack88Base{
			hold: func(*http.Request) { time.Sleep(100 * time.Millisecond) },
			answer: func(r *http.Request) *http.Response {
				mu.Lock()
				defer mu.Unlock()
				if r.Header.Get("Authorization") == tokA && !refused {
					refused = true
					resp := attack88OK(r, "expired", nil)
					resp.StatusCode, resp.Status = 401, "401 Unauthorized"
					return resp
				}
				return attack88OK(r, attack88Echo(r), nil)
			},
		}
		tr := attack88Transport(base)
		tr.RefreshToken = func(*http.Request) (string, error) { return tokB, nil }
		reqA := func() *http.Request { return attack88Req(context.Background(), attack88URL, tokA) }
		var lead, follow string
		attack88Concurrently(
			func() { lead, _ = attack88Do(t, tr, reqA()) },
			func() { time.Sleep(10 * time.Millisecond); follow, _ = attack88Do(t, tr, reqA()) },
		)
		wantB := attack88Echo(attack88Req(context.Background(), attack88URL, tokB))
		wantA := attack88Echo(reqA())
		if lead != wantB {
			t.Errorf("the leader: %q, want the answer to its renewed token", lead)
		}
		if follow != wantA {
			t.Errorf("the follower (token A) got %q, want %q", follow, wantA)
		}
		if later, _ := attack88Do(t, tr, reqA()); later != wantA {
			t.Errorf("a later call with token A got %q, want %q", later, wantA)
		}
	})
}

// TestAttack88ErrorIsNotKept: "keeps each 200 answer": an error is no
// answer; a later call sends again.
//
// held.
func TestAttack88ErrorIsNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		first := true
		var mu sync.Mutex
		base := &attack88Base{}
		tr := attack88Transport(roundTripper204(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			f := first
			first = false
			mu.Unlock()
			if f {
				base.n.Add(1)
				return nil, boom
			}
			return base.RoundTrip(r)
		}))
		tr.RetryWindow = -1
		auth := attack88Auth("1111", "token-a")
		if _, err := attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth)); err == nil {
			t.Fatal("the first call did not fail")
		}
		if got, err := attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth)); err != nil || got == "" {
			t.Errorf("the next call: %q, %v", got, err)
		}
		if n := base.n.Load(); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
}

type roundTripper204 func(*http.Request) (*http.Response, error)

func (f roundTripper204) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
