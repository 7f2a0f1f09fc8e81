package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/mock"
)

func TestRetryAfterHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(429, "3")}}
		tr := &Transport{Base: s, DisableBudget: true}
		start := time.Now()
		resp, err := get(t, tr, context.Background(), profileURL, xuid1)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("got %v, %v; want 200 after one retry", resp, err)
		}
		if d := s.times[1].Sub(start); d < 3*time.Second || d >= 4*time.Second {
			t.Errorf("retried after %v, want in [3s, 4s): max(backoff [2,4), 3s x [1, 1.2))", d)
		}
		if st := tr.Stats(); st.Attempts != 2 || st.Retries != 1 || st.Server429s != 1 {
			t.Errorf("Stats = %+v", st)
		}
	})
}

func TestFailFastBeyondWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(429, "30")}}
		tr := &Transport{Base: s, DisableBudget: true}
		start := time.Now()
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		var te *ThrottleError
		if !errors.As(err, &te) || te.Local || !te.Sent || te.Wait != 30*time.Second || te.Body == nil || te.Body.MaxRequests != 10 {
			t.Fatalf("err = %v (%+v), want a server ThrottleError with Retry-After 30s and the body", err, te)
		}
		if !errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS) {
			t.Errorf("errors.Is(err, 429 HRESULT) = false")
		}
		if time.Since(start) != 0 || s.calls() != 1 {
			t.Errorf("waited %v and sent %d; want an immediate answer after one attempt", time.Since(start), s.calls())
		}
		// The deadline is cached: the next call for the same key fails fast,
		// sending nothing, with the time left.
		time.Sleep(5 * time.Second)
		_, err = get(t, tr, context.Background(), profileURL, xuid1)
		if !errors.As(err, &te) || !te.Local || te.Sent || te.Wait != 25*time.Second {
			t.Fatalf("second call: %v, want a local refusal with 25s left", err)
		}
		if !strings.Contains(err.Error(), "no request was sent") {
			t.Errorf("message %q does not say nothing was sent", err)
		}
		// Another user is never blocked by it.
		if resp, err := get(t, tr, context.Background(), profileURL, xuid2); err != nil || resp.StatusCode != 200 {
			t.Errorf("other user: %v, %v", resp, err)
		}
		if s.calls() != 2 {
			t.Errorf("sent %d requests, want 2", s.calls())
		}
	})
}

func TestCacheOneWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(429, "30")}}
		tr := &Transport{Base: s, DisableBudget: true}
		get(t, tr, context.Background(), profileURL, xuid1)
		time.Sleep(18 * time.Second) // 12 s left: within a new call's 20 s window
		var wg sync.WaitGroup
		results := make([]error, 2)
		for i := range results {
			wg.Go(func() {
				_, results[i] = get(t, tr, context.Background(), profileURL, xuid1)
			})
			synctest.Wait()
		}
		wg.Wait()
		if results[0] != nil {
			t.Errorf("the waiter got %v, want success after the deadline", results[0])
		}
		var te *ThrottleError
		if !errors.As(results[1], &te) || !te.Local {
			t.Errorf("the second caller got %v, want a local refusal", results[1])
		}
	})
}

func TestPostBodyReplayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(503, ""), answer(502, "")}}
		tr := &Transport{Base: s, DisableBudget: true}
		body := `{"userIds":["1","2"],"settings":["Gamertag"]}`
		req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings", strings.NewReader(body))
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v, %v", resp, err)
		}
		for i, b := range s.bodies {
			if b != body {
				t.Errorf("attempt %d body %q, want %q", i, b, body)
			}
		}
		if len(s.bodies) != 3 {
			t.Errorf("%d attempts, want 3", len(s.bodies))
		}
	})
}

func TestUnrewindableBodySentOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(503, "")}}
		tr := &Transport{Base: s, DisableBudget: true}
		req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings", io.NopCloser(strings.NewReader("x")))
		req.GetBody = nil
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 503 || s.calls() != 1 {
			t.Errorf("%v, %v after %d attempts; want the 503 after one", resp, err, s.calls())
		}
	})
}

func TestCancelMidWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(503, "")}}
		tr := &Transport{Base: s, DisableBudget: true}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, err := get(t, tr, ctx, profileURL, xuid1)
		if !errors.Is(err, context.Canceled) || time.Since(start) != time.Second {
			t.Errorf("err %v after %v, want context.Canceled after 1s", err, time.Since(start))
		}
	})
}

func TestDeadlineNotPassed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(503, "")}}
		tr := &Transport{Base: s, DisableBudget: true}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		resp, err := get(t, tr, ctx, profileURL, xuid1)
		if err != nil || resp.StatusCode != 503 || time.Since(start) != 0 {
			t.Errorf("%v, %v after %v; want the 503 at once (backoff >= 2s would pass the deadline)", resp, err, time.Since(start))
		}
	})
}

func TestServerErrorWaits10s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(500, "")}}
		tr := &Transport{Base: s, DisableBudget: true}
		start := time.Now()
		get(t, tr, context.Background(), profileURL, xuid1)
		if d := s.times[1].Sub(start); d != 10*time.Second {
			t.Errorf("retried a 500 after %v, want 10s", d)
		}
	})
}

func TestNoRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tests := []struct {
			name string
			tr   *Transport
			ctx  context.Context
		}{
			{"window disabled", &Transport{RetryWindow: -1, DisableBudget: true}, context.Background()},
			{"context opt-out", &Transport{DisableBudget: true}, WithPolicy(context.Background(), Policy{NoRetry: true})},
		}
		for _, tt := range tests {
			s := &script{answers: []func(http.ResponseWriter){answer(503, "")}}
			tt.tr.Base = s
			resp, err := get(t, tt.tr, tt.ctx, profileURL, xuid1)
			if err != nil || resp.StatusCode != 503 || s.calls() != 1 {
				t.Errorf("%s: %v, %v after %d attempts, want 503 after 1", tt.name, resp, err, s.calls())
			}
		}
	})
}

func TestTransportErrorRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.Must(mock.New(mock.Config{Faults: mock.Faults{ResetRate: 1}}))
		tr := &Transport{Base: h, DisableBudget: true}
		start := time.Now()
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		// Attempts at 0, [2,4), then [4,8) more: the third would start past
		// 15 s left... the loop stops when the window cannot fit delay + 5 s.
		if err == nil || tr.Stats().Attempts < 2 || time.Since(start) > 20*time.Second {
			t.Errorf("err %v, %d attempts in %v", err, tr.Stats().Attempts, time.Since(start))
		}
	})
}

func TestRefreshToken401(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(401, ""), answer(401, "")}}
		refreshed := 0
		tr := &Transport{Base: s, DisableBudget: true, RefreshToken: func(*http.Request) (string, error) {
			refreshed++
			return mock.Token(xuid1, title), nil
		}}
		resp, err := get(t, tr, context.Background(), profileURL, xuid1)
		if err != nil || resp.StatusCode != 401 || refreshed != 1 || s.calls() != 2 {
			t.Errorf("%v, %v; refreshed %d, attempts %d; want the second 401 after exactly one refresh", resp, err, refreshed, s.calls())
		}
	})
}

func TestInsecureRefused(t *testing.T) {
	s := &script{}
	tr := &Transport{Base: s}
	_, err := get(t, tr, context.Background(), "http://profile.xboxlive.com/users/me/profile/settings", xuid1)
	if !errors.Is(err, ErrInsecure) || s.calls() != 0 {
		t.Errorf("plain http to a public host: %v, %d sent", err, s.calls())
	}
	if _, err := get(t, tr, context.Background(), "http://127.0.0.1:1/x", xuid1); err != nil {
		t.Errorf("plain http to loopback: %v", err)
	}
}

func TestRaw429AndLogsRedacted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		s := &script{answers: []func(http.ResponseWriter){answer(429, "60")}}
		tr := &Transport{Base: s, DisableBudget: true, Raw429: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		resp, err := get(t, tr, context.Background(), profileURL, xuid1)
		if err != nil || resp.StatusCode != 429 {
			t.Errorf("Raw429: %v, %v", resp, err)
		}
		tok := mock.Token(xuid1, title)
		secret := tok[strings.Index(tok, ";")+1:]
		if out := logs.String(); !strings.Contains(out, "server_429") || strings.Contains(out, secret) {
			t.Errorf("logs %q: want the 429 logged and no token", out)
		}
	})
}

func TestBaseErrorNoResponse(t *testing.T) {
	tr := &Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil }), RetryWindow: -1}
	var buf bytes.Buffer
	req, _ := http.NewRequest("GET", profileURL, &buf)
	if _, err := tr.RoundTrip(req); err == nil {
		t.Error("a base returning (nil, nil) gave no error")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAttemptTimeout: a hung attempt is abandoned after the per-attempt
// timeout (20 s for the first: the whole window), and the call ends there.
func TestAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		tr := &Transport{Base: hang, DisableBudget: true}
		start := time.Now()
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 20*time.Second {
			t.Errorf("err %v after %v, want DeadlineExceeded after 20s", err, time.Since(start))
		}
	})
}

// TestAttemptTimeoutAfterHeaders: once the headers are in, reading the body
// is not cut by the attempt timeout.
func TestAttemptTimeoutAfterHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: &script{}, DisableBudget: true}
		req, _ := http.NewRequest("GET", profileURL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		if err := resp.Request.Context().Err(); err != nil {
			t.Errorf("attempt context ended after the headers: %v", err)
		}
		resp.Body.Close()
		if resp.Request.Context().Err() == nil {
			t.Error("attempt context still live after Close")
		}
	})
}

func TestFinal429WithoutRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(429, ""), answer(429, ""), answer(429, ""), answer(429, "")}}
		tr := &Transport{Base: s, DisableBudget: true}
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		var te *ThrottleError
		if !errors.As(err, &te) || te.Local || te.Wait < 2*time.Second {
			t.Errorf("err %v (%+v): want a server 429 suggesting at least the first backoff", err, te)
		}
	})
}

// slowStartBody gives head, then waits pause (the request's context may end
// it), then gives tail, then io.EOF.
type slowStartBody struct {
	ctx        context.Context
	head, tail []byte
	pause      time.Duration
	paused     bool
}

func (b *slowStartBody) Read(p []byte) (int, error) {
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	if !b.paused {
		b.paused = true
		select {
		case <-time.After(b.pause):
		case <-b.ctx.Done():
			return 0, context.Cause(b.ctx)
		}
	}
	if len(b.tail) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.tail)
	b.tail = b.tail[n:]
	return n, nil
}

func (b *slowStartBody) Close() error { return nil }

// TestNotRetriedAfterItsDrainIsWhole: a 503 whose body takes 18 s of the
// 20 s window to come is read before the wait; the window then has no room
// for a retry, so the call returns that 503, its body whole (longer than
// what the transport reads of it: maxDrain), and sends nothing more.
func TestNotRetriedAfterItsDrainIsWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		head, tail := []byte("{\"code\":"), bytes.Repeat([]byte("7"), maxDrain+1000)
		want := append(append([]byte(nil), head...), tail...)
		attempts := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			attempts++
			return &http.Response{StatusCode: 503, Header: http.Header{}, Request: r,
				Body: &slowStartBody{ctx: r.Context(), head: head, tail: tail, pause: 18 * time.Second}}, nil
		})
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
		req, _ := http.NewRequest("GET", profileURL, nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || err != nil || !bytes.Equal(got, want) {
			t.Errorf("got %d, %d bytes (%v), want the 503 with its %d bytes", resp.StatusCode, len(got), err, len(want))
		}
		if attempts != 1 {
			t.Errorf("%d attempts, want 1: no room was left in the window for a retry", attempts)
		}
	})
}
