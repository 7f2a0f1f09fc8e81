package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/mocktest"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// inProcess returns a proxy whose transport calls base in the process, to
// be driven through serveHTTP with requests in absolute form: in a
// testing/synctest bubble, its waits take no real time.
func inProcess(t *testing.T, base http.RoundTripper, edit func(*Config)) *Server {
	t.Helper()
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	tlsConf, err := ca.TLSConfig(Hosts(limits.Default()))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Transport: &transport.Transport{Base: base, TitleID: title, Raw429: true}, TLS: tlsConf}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// send sends one request in absolute form from loopback through s.
func send(s *Server, ctx context.Context, method, url, xuid string, body io.Reader, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, method, url, body)
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Authorization", mock.Token(xuid, title))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	s.serveHTTP(rec, req)
	return rec
}

// TestCallsWaitAsTheTransport: 11 profile reads at once, with the
// transport's own policy: the burst's 10 are served at once and the 11th
// waits for the budget (the 15 s window and its 1 s margin) and is served;
// the service sees no 429.
func TestCallsWaitAsTheTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s := inProcess(t, h, nil)
		start := time.Now()
		var mu sync.Mutex
		var waits []time.Duration
		var wg sync.WaitGroup
		for range 11 {
			wg.Go(func() {
				rec := send(s, context.Background(), "GET", profileURL, xuid1, nil)
				mu.Lock()
				defer mu.Unlock()
				if rec.Code != 200 {
					t.Errorf("status %d, want 200", rec.Code)
				}
				waits = append(waits, time.Since(start))
			})
		}
		wg.Wait()
		if last := waits[len(waits)-1]; last != 16*time.Second {
			t.Errorf("the last call ended after %v, want 16s (the burst window and the margin)", last)
		}
		mocktest.NoThrottled(t, h)
	})
}

// TestGivingUpGivesTheSlotBack: an application that gives up on a call
// waiting for its budget ends it at once (its context), and the slot it
// had booked goes back: the budget counts only what was sent.
func TestGivingUpGivesTheSlotBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s := inProcess(t, h, nil)
		for range 10 {
			send(s, context.Background(), "GET", profileURL, xuid1, nil)
		}
		// The application's own timeout: the proxy sees no deadline, only
		// the connection closing (the request's context ending).
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(2*time.Second, cancel)
		start := time.Now()
		send(s, ctx, "GET", profileURL, xuid1, nil)
		if took := time.Since(start); took != 2*time.Second {
			t.Errorf("the call ended after %v, want the application's 2s", took)
		}
		snap, err := s.tr.Snapshot(throttle.Key{User: mock.UserHash(xuid1), Scope: "profile"})
		if err != nil || snap.Burst.Count != 10 {
			t.Errorf("the budget holds %d calls (%v), want the 10 sent", snap.Burst.Count, err)
		}
		if got := s.Stats().Cancelled; got != 1 {
			t.Errorf("Stats().Cancelled %d, want 1", got)
		}
	})
}

// TestMaxCallTime: a call ends at MaxCallTime whatever the application's
// own timeout: 504, and the transport's attempt is cancelled.
func TestMaxCallTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ended := make(chan struct{})
		hang := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			close(ended)
			return nil, r.Context().Err()
		})
		s := inProcess(t, hang, func(c *Config) { c.MaxCallTime = time.Minute })
		start := time.Now()
		rec := send(s, context.Background(), "GET", profileURL, xuid1, nil, HeaderAttemptTimeout, "5m", HeaderNoRetry, "true")
		<-ended
		if took := time.Since(start); rec.Code != http.StatusGatewayTimeout || took != time.Minute {
			t.Errorf("%d after %v, want 504 after 1m", rec.Code, took)
		}
	})
}

// TestBodiesRewoundWhenSmall: a request body of known length up to 64 KiB
// is held, so a retried call sends it whole again; a larger one is
// streamed and sent once, as the transport sends a body it cannot rewind;
// neither is kept after the call.
func TestBodiesRewoundWhenSmall(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size      int
		wantSends int
		wantCode  int
	}{{"small", 1 << 10, 2, 200}, {"large", 100 << 10, 1, 503}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var bodies []int
				flaky := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					b, _ := io.ReadAll(r.Body)
					bodies = append(bodies, len(b))
					rec := httptest.NewRecorder()
					if len(bodies) == 1 {
						rec.WriteHeader(503)
					}
					return rec.Result(), nil
				})
				s := inProcess(t, flaky, nil)
				body := bytes.Repeat([]byte("x"), tc.size)
				rec := send(s, context.Background(), "POST", "https://profile.xboxlive.com/users/batch/profile/settings", xuid1, bytes.NewReader(body))
				want := make([]int, tc.wantSends)
				for i := range want {
					want[i] = tc.size
				}
				if diff := cmp.Diff(want, bodies); diff != "" || rec.Code != tc.wantCode {
					t.Errorf("status %d, want %d; bodies sent mismatch (-want +got):\n%s", rec.Code, tc.wantCode, diff)
				}
				if n := s.held.n.Load(); n != 0 {
					t.Errorf("%d bytes of bodies held after the call", n)
				}
			})
		})
	}
}

// TestBadPolicyNothingSent: a policy header the proxy cannot read is
// answered 400 naming it, and nothing is sent.
func TestBadPolicyNothingSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s := inProcess(t, h, nil)
		rec := send(s, context.Background(), "GET", profileURL, xuid1, nil, HeaderMaxWait, "forever")
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), HeaderMaxWait) || s.tr.Stats().Attempts != 0 {
			t.Errorf("%d %q, %d sent; want 400 naming %s, none sent", rec.Code, rec.Body, s.tr.Stats().Attempts, HeaderMaxWait)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
