package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// stallingBody yields a few bytes, then blocks until the attempt's context
// ends, as http.Transport's body does when a server stalls mid-body.
type stallingBody struct {
	ctx   context.Context
	sent  bool
	ended func() // if set, called when the context ends the read
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "0123456789"), nil
	}
	<-b.ctx.Done()
	if b.ended != nil {
		b.ended()
		b.ended = nil
	}
	return 0, b.ctx.Err()
}

func (b *stallingBody) Close() error { return nil }

func stallingBase(status int) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{"Content-Length": {"100"}, "Retry-After": {"1"}}
		return &http.Response{StatusCode: status, Header: h, Body: &stallingBody{ctx: r.Context()},
			ContentLength: 100, Request: r}, nil
	})
}

// TestStalledBodyEnds: a server that sends the headers of a 503 or a 429 and
// stalls mid-body cannot hold RoundTrip: the transport's own reads of the
// body (the drain before a retry, the 429 body) are bounded by the attempt
// timeout, with context.Background() and the default Transport.
func TestStalledBodyEnds(t *testing.T) {
	tests := []struct {
		name   string
		status int
		window time.Duration
		max    time.Duration
	}{
		{"503 drained before each retry", 503, 0, 45 * time.Second},
		{"429 body read, retries off", 429, -1, 5 * time.Second},
		{"429 body read after retries", 429, 0, 45 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &Transport{Base: stallingBase(tt.status), TitleID: title, DisableBudget: true, RetryWindow: tt.window}
				start := time.Now()
				done := make(chan error, 1)
				go func() {
					req, _ := http.NewRequest("GET", profileURL, nil)
					req.Header.Set("Authorization", mock.Token(xuid1, title))
					resp, err := tr.RoundTrip(req)
					if err == nil {
						resp.Body.Close() // a final response's body is the caller's: not read here
					}
					done <- err
				}()
				time.Sleep(tt.max)
				synctest.Wait()
				select {
				case <-done:
				default:
					t.Fatalf("call still blocked after %v", time.Since(start))
				}
			})
		})
	}
}

// TestStalled200BodyIsTheCallers: a 200 body streamed to a transport caller
// is not cut by the attempt timeout (the caller reads at its own pace),
// unless the request asks for BoundBody, as the typed client does.
func TestStalled200BodyIsTheCallers(t *testing.T) {
	for _, bound := range []bool{false, true} {
		t.Run(map[bool]string{false: "streamed", true: "BoundBody"}[bound], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &Transport{Base: stallingBase(200), TitleID: title, DisableBudget: true}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if bound {
					ctx = WithPolicy(ctx, Policy{BoundBody: true})
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
				req.Header.Set("Authorization", mock.Token(xuid1, title))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { _, err := io.ReadAll(resp.Body); done <- err }()
				time.Sleep(time.Minute)
				synctest.Wait()
				select {
				case err := <-done:
					if !bound || !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("read ended with %v; bound %v", err, bound)
					}
				default:
					if bound {
						t.Error("a BoundBody read still blocked after a minute")
					}
					cancel() // the caller's own context ends its read
					<-done
				}
				resp.Body.Close()
			})
		})
	}
}

// TestStalledBodyLoopback: the same over real loopback HTTP: a server that
// sends a 429's headers and 10 of 100 bytes, then stalls. With retries off
// the call ends after the 5 s attempt timeout.
func TestStalledBodyLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a 5 s attempt timeout in real time")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	release := make(chan struct{})
	defer close(release)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				c.Read(buf)
				io.WriteString(c, "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 100\r\n\r\n0123456789")
				<-release
			}()
		}
	}()
	tr := &Transport{TitleID: title, RetryWindow: -1, DisableBudget: true}
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/users/me/profile/settings", nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", mock.Token(xuid1, title))
	start := time.Now()
	_, err = tr.RoundTrip(req)
	// The call ends (a hang would fail the test's deadline) with the 429,
	// and not before the 5 s attempt timeout cut the stalled body.
	if took := time.Since(start); took < 5*time.Second || err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("RoundTrip = %v after %v; want the 429 once the 5 s attempt timeout ends the body", err, took)
	}
}

// TestAttemptReleased: an attempt's context ends when its body is read to
// the end or closed, whichever comes first, and a body handed to the caller
// is not cut while it streams.
func TestAttemptReleased(t *testing.T) {
	tests := []struct {
		name string
		end  func(io.ReadCloser)
	}{
		{"read to EOF", func(b io.ReadCloser) { io.ReadAll(b) }},
		{"closed unread", func(b io.ReadCloser) { b.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent context.Context
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent = r.Context()
					return &http.Response{StatusCode: 200, Header: http.Header{},
						Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
				})
				tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
				req, _ := http.NewRequest("GET", profileURL, nil)
				req.Header.Set("Authorization", mock.Token(xuid1, title))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Hour) // far past the attempt timeout: the caller's body is not cut
				if err := sent.Err(); err != nil {
					t.Fatalf("attempt context ended before the body did: %v", err)
				}
				tt.end(resp.Body)
				if !errors.Is(sent.Err(), context.Canceled) {
					t.Errorf("attempt context after the body ended: %v, want canceled", sent.Err())
				}
				resp.Body.Close()
			})
		})
	}
}
