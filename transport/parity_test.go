package transport

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/mock"
)

// These tests hold the transport to XSAPI and libHttpClient, citing for each
// the code (and, where one exists, the upstream test) it follows. They run in
// testing/synctest with production timings: the upstream builds zero the
// jitter and the minimum window in their unit tests (HC_UNITTEST_API), so
// these check ranges instead.

// sends counts the attempts that reached a base, and when.
type sends struct {
	mu    sync.Mutex
	times []time.Time
}

func (s *sends) add() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.times = append(s.times, time.Now())
	return len(s.times)
}

func (s *sends) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.times)
}

func respond(r *http.Request, status int, retryAfter string) *http.Response {
	rec := httptest.NewRecorder()
	answer(status, retryAfter)(rec)
	resp := rec.Result()
	resp.Request = r
	return resp
}

// TestOneCallFiresAtRetryAfter follows libHttpClient HC_CALL::ShouldRetry,
// which writes the Retry-After entry with callPending set when the call that
// got it will retry, and HC_CALL::ShouldFailFast, which then fails every
// other call for the key at once (PR #511: two calls firing at the deadline
// flood the endpoint).
func TestOneCallFiresAtRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if s.add() == 1 {
				return respond(r, 429, "2"), nil
			}
			return respond(r, 200, ""), nil
		})
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
		first := make(chan error, 1)
		go func() { _, err := get(t, tr, context.Background(), profileURL, xuid1); first <- err }()
		time.Sleep(500 * time.Millisecond) // the first call has its 429 and waits to retry
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		var te *ThrottleError
		if !errors.As(err, &te) || !te.Local || te.Status != 429 || te.Sent {
			t.Errorf("second call: %v, want a local fail-fast 429 with nothing sent", err)
		}
		if err := <-first; err != nil {
			t.Errorf("first call: %v, want success on its retry", err)
		}
		if n := s.count(); n != 2 {
			t.Errorf("%d attempts reached the service, want 2 (only the first call retries)", n)
		}
		if d := s.times[1].Sub(s.times[0]); d < 2*time.Second || d >= 4*time.Second {
			t.Errorf("retry after %v, want in [2s, 4s): max(backoff [2,4), Retry-After x [1, 1.2))", d)
		}
	})
}

// TestOneWaiterWhenTheCallerDoesNotRetry: when the call that got the
// Retry-After is sent once, the entry is not pending; the next call holds
// for the deadline (it falls inside its window) and a third fails fast
// (ShouldFailFast: only one call waits per key).
func TestOneWaiterWhenTheCallerDoesNotRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if s.add() == 1 {
				return respond(r, 429, "3"), nil
			}
			return respond(r, 200, ""), nil
		})
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
		if _, err := get(t, tr, WithPolicy(context.Background(), Policy{NoRetry: true}), profileURL, xuid1); err == nil {
			t.Fatal("a call sent once got no 429")
		}
		waiter := make(chan error, 1)
		go func() { _, err := get(t, tr, context.Background(), profileURL, xuid1); waiter <- err }()
		synctest.Wait() // the waiter holds for the deadline
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		if te := (*ThrottleError)(nil); !errors.As(err, &te) || !te.Local {
			t.Errorf("third call: %v, want a fail-fast refusal", err)
		}
		if err := <-waiter; err != nil {
			t.Errorf("waiter: %v", err)
		}
		if n := s.count(); n != 2 || s.times[1].Sub(s.times[0]) != 3*time.Second {
			t.Errorf("attempts %v, want two, 3s apart", s.times)
		}
	})
}

// TestAttemptTimeoutOncePerCall follows XSAPI XblHttpCall::CalcHttpTimeout: the
// per-attempt timeout is the time left in the window, between 5 s and 30 s,
// computed once per call and reused by its retries; with a window of 0 (no
// retries) it is 5 s. Each attempt's answer stalls mid-body, so the attempt
// lasts exactly its timeout: the drain of the 503 before the retry, and the
// caller's read of the final body (BoundBody) end when it does; a retry
// goes only if the window still has room for it after the drain.
func TestAttemptTimeoutOncePerCall(t *testing.T) {
	tests := []struct {
		name   string
		window time.Duration
		want   []time.Duration // each attempt's timeout
	}{
		// The 503's body takes the whole window to end: the window is asked
		// again after it, and no retry goes (TestAttack24DrainedRetryOutsideWindow).
		{"default window: 20s, and no retry after a body that took it all", 0, []time.Duration{20 * time.Second}},
		{"long window: capped at 30s, and the retry keeps it", 40 * time.Second, []time.Duration{30 * time.Second, 30 * time.Second}},
		{"short window: at least 5s", 3 * time.Second, []time.Duration{5 * time.Second}},
		{"retries off: 5s", -1, []time.Duration{5 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var got []time.Duration
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					start := time.Now()
					status := 503
					if len(got) > 0 {
						status = 200
					}
					body := &stallingBody{ctx: r.Context(), ended: func() { got = append(got, time.Since(start)) }}
					return &http.Response{StatusCode: status, Header: http.Header{}, Body: body, Request: r}, nil
				})
				tr := &Transport{Base: base, TitleID: title, DisableBudget: true, RetryWindow: tt.window}
				req, _ := http.NewRequestWithContext(WithPolicy(context.Background(), Policy{BoundBody: true}), "GET", profileURL, nil)
				req.Header.Set("Authorization", mock.Token(xuid1, title))
				if resp, err := tr.RoundTrip(req); err == nil {
					io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("attempts' timeouts (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestHungServerWithRetriesOff: a connection that never answers ends after
// the 5 s attempt timeout, even with retries off and a context without a
// deadline.
func TestHungServerWithRetriesOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		tr := &Transport{Base: base, TitleID: title, RetryWindow: -1}
		start := time.Now()
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		if err == nil || time.Since(start) != 5*time.Second {
			t.Errorf("hung call ended after %v with %v, want a timeout after 5s", time.Since(start), err)
		}
		if hresult.Of(err) != hresult.HTTP_E_STATUS_REQUEST_TIMEOUT {
			t.Errorf("hresult.Of = %v, want HTTP_E_STATUS_REQUEST_TIMEOUT", hresult.Of(err))
		}
	})
}

// TestHttpTimeoutWindow ports XSAPI Tests/UnitTests/Tests/Shared/
// HttpCallSettingsTests.cpp TestHttpTimeouts: with a 15 s window and a
// service that answers 503 forever, the call is retried at least once and
// ends within the window.
func TestHttpTimeoutWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			s.add()
			return respond(r, 503, ""), nil
		})
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true, RetryWindow: 15 * time.Second}
		start := time.Now()
		resp, err := get(t, tr, context.Background(), profileURL, xuid1)
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("got %v, %v; want the last 503", resp, err)
		}
		if s.count() < 2 || time.Since(start) > 15*time.Second {
			t.Errorf("%d attempts in %v, want more than one within 15s", s.count(), time.Since(start))
		}
	})
}

// TestTransientFailuresRetried follows libHttpClient HC_CALL::ShouldRetry
// (every networkErrorCode but E_HC_NO_NETWORK is retried) as it runs on
// Windows and GDK, where every transport failure is E_FAIL. Failures no
// retry can change fail at once.
func TestTransientFailuresRetried(t *testing.T) {
	dial := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
	}
	tests := []struct {
		name     string
		err      error
		attempts int
	}{
		{"host unreachable", dial(syscall.EHOSTUNREACH), 2},
		{"network unreachable", dial(syscall.ENETUNREACH), 2},
		{"connection refused", dial(syscall.ECONNREFUSED), 2},
		{"connection reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, 2},
		{"dns timeout", &net.DNSError{Err: "i/o timeout", Name: "profile.xboxlive.com", IsTimeout: true}, 2},
		{"dns server failure", &net.DNSError{Err: "server misbehaving", Name: "profile.xboxlive.com", IsTemporary: true}, 2},
		{"network down (no network)", dial(syscall.ENETDOWN), 1},
		{"no such host", &net.DNSError{Err: "no such host", Name: "profile.xboxlive.com", IsNotFound: true}, 1},
		{"certificate does not verify", &url.Error{Op: "Get", Err: x509.UnknownAuthorityError{}}, 1},
		{"certificate for another host", x509.HostnameError{Host: "profile.xboxlive.com", Certificate: &x509.Certificate{}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var s sends
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if s.add() == 1 {
						return nil, tt.err
					}
					return respond(r, 200, ""), nil
				})
				tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
				get(t, tr, context.Background(), profileURL, xuid1)
				if s.count() != tt.attempts {
					t.Errorf("%d attempts, want %d", s.count(), tt.attempts)
				}
			})
		})
	}
}

// TestRequestsNoRetryCanFix: a malformed URL or an unsupported scheme fails
// at once, sending nothing.
func TestRequestsNoRetryCanFix(t *testing.T) {
	for _, u := range []string{"ftp://profile.xboxlive.com/x", "https:///path-without-host", "", "profile.xboxlive.com/x"} {
		t.Run(u, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var s sends
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) { s.add(); return respond(r, 200, ""), nil })
				tr := &Transport{Base: base, TitleID: title}
				req := &http.Request{Method: "GET", Header: http.Header{}}
				req.URL, _ = url.Parse(u)
				start := time.Now()
				_, err := tr.RoundTrip(req)
				if err == nil || s.count() != 0 || time.Since(start) != 0 {
					t.Errorf("RoundTrip(%q) = %v after %v with %d sends; want an error at once", u, err, time.Since(start), s.count())
				}
			})
		})
	}
}

// TestRefreshHonoursSendOnce follows XSAPI XblHttpCall::HandleAuthError: a
// 401 is refreshed and retried once only when the call may be retried.
func TestRefreshHonoursSendOnce(t *testing.T) {
	tests := []struct {
		name      string
		ctx       context.Context
		window    time.Duration
		refreshes int
		attempts  int
	}{
		{"retryable call: refresh and resend once", context.Background(), 0, 1, 2},
		{"sent once (NoRetry): no refresh, no resend", WithPolicy(context.Background(), Policy{NoRetry: true}), 0, 0, 1},
		{"retries off: no refresh, no resend", context.Background(), -1, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var s sends
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					s.add()
					return respond(r, 401, ""), nil
				})
				refreshes := 0
				tr := &Transport{Base: base, TitleID: title, RetryWindow: tt.window,
					RefreshToken: func(*http.Request) (string, error) { refreshes++; return mock.Token(xuid1, title), nil }}
				resp, err := get(t, tr, tt.ctx, profileURL, xuid1)
				if err != nil || resp.StatusCode != 401 {
					t.Errorf("got %v, %v; want the 401", resp, err)
				}
				if refreshes != tt.refreshes || s.count() != tt.attempts {
					t.Errorf("%d refreshes, %d attempts; want %d, %d", refreshes, s.count(), tt.refreshes, tt.attempts)
				}
			})
		})
	}
}

// TestOfThrottleError: hresult.Of gives a ThrottleError's HRESULT, bare and
// wrapped as http.Client wraps it.
func TestOfThrottleError(t *testing.T) {
	te := &ThrottleError{Status: 429, Wait: time.Second, Local: true}
	for _, err := range []error{te, &url.Error{Op: "Get", URL: profileURL, Err: te}} {
		if got := hresult.Of(err); got != hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS {
			t.Errorf("hresult.Of(%v) = %v, want 0x801901AD", err, got)
		}
	}
}

// TestCancelWhileRetryPending ports libHttpClient
// Tests/UnitTests/Tests/GlobalTests.cpp TestAsyncCleanupWithHttpCallPendingRetry:
// a call waiting to retry a 500 (at least 10 s) that is cancelled 2 s in ends
// at once with E_ABORT, sends nothing more, and releases its Retry-After
// claim.
func TestCancelWhileRetryPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			s.add()
			return respond(r, 500, ""), nil
		})
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := get(t, tr, ctx, profileURL, xuid1); done <- err }()
		time.Sleep(2 * time.Second)
		cancel()
		start := time.Now()
		err := <-done
		if time.Since(start) != 0 || hresult.Of(err) != hresult.E_ABORT {
			t.Errorf("cancelled call ended after %v with %v (%v), want E_ABORT at once", time.Since(start), err, hresult.Of(err))
		}
		time.Sleep(time.Minute)
		if s.count() != 1 {
			t.Errorf("%d attempts, want 1", s.count())
		}
	})
}
