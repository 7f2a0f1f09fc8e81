package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack25PipeBase is a real net/http Transport whose connections are net.Pipe
// ends (they belong to the synctest bubble); serve answers each.
func attack25PipeBase(serve func(c net.Conn)) *http.Transport {
	return &http.Transport{
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, s := net.Pipe()
			go func() {
				defer s.Close()
				br := bufio.NewReader(s)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				serve(s)
			}()
			return c, nil
		},
		DisableCompression: true,
	}
}

// held: a 503 (Content-Length 100000) whose body is cut short after 18 s
// is drained, not retried (no room left in the window), and handed over:
// the caller reads what was sent, then net/http's io.ErrUnexpectedEOF (the
// drain's swallowed error is given again), never a clean EOF.
func TestAttack25DrainTruncatedBodyKeepsItsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		attempts := 0
		base := attack25PipeBase(func(c net.Conn) {
			attempts++
			fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100000\r\n\r\n")
			c.Write([]byte("first part;"))
			time.Sleep(18 * time.Second)
			c.Write([]byte("second part"))
		})
		defer base.CloseIdleConnections()
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
		req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/me/profile/settings", nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if attempts != 1 {
			t.Errorf("%d attempts, want 1", attempts)
		}
		if string(got) != "first part;second part" {
			t.Errorf("body %q", got)
		}
		if err == nil {
			t.Errorf("a 503 body cut short (22 of its 100000 bytes) read to a clean EOF after the drain: "+
				"the transport swallowed io.ErrUnexpectedEOF. Promise: \"an answer not retried after all goes to "+
				"the caller whole\" (RELIABILITY.md; got %d bytes)", len(got))
		} else if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Logf("error %v", err)
		}
	})
}

// held: a drained 503 of exactly maxDrain bytes, and one of maxDrain+1,
// not retried after the drain (no room left), reach the caller whole;
// Close after a full read and reads after Close do not panic.
func TestAttack25DrainExactSizes(t *testing.T) {
	for _, n := range []int{0, 1, maxDrain - 1, maxDrain, maxDrain + 1, 2*maxDrain + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body := bytes.Repeat([]byte("x"), n)
				if n > 0 {
					body[n-1] = 'E'
				}
				attempts := 0
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					attempts++
					return &http.Response{StatusCode: 503, Header: http.Header{}, Request: r,
						Body: &slowStartBody{ctx: r.Context(), head: []byte{}, tail: body, pause: 18 * time.Second}}, nil
				})
				tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
				req, _ := http.NewRequest("GET", profileURL, nil)
				req.Header.Set("Authorization", mock.Token(xuid1, title))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				if err != nil || !bytes.Equal(got, body) || attempts != 1 {
					t.Errorf("n=%d: got %d bytes (%v), %d attempts", n, len(got), err, attempts)
				}
				resp.Body.Close()
				resp.Body.Close()
				resp.Body.Read(make([]byte, 10))
			})
		})
	}
}

// held: a 429 with Observe set (its body peeked for the event: 64 KiB+1
// kept) and more body behind a stall of 18 s: the drain reads only what
// was peeked, the discard no more, so no stall delays a retry: every
// attempt starts inside the 20 s window, and the call ends with the
// service's ThrottleError.
func TestAttack25Drain429ObservedNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		attempts := 0
		start := time.Now()
		var at []time.Duration
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			attempts++
			at = append(at, time.Since(start))
			h := http.Header{}
			h.Set("Retry-After", "1")
			head := bytes.Repeat([]byte(" "), 70<<10)
			return &http.Response{StatusCode: 429, Header: h, Request: r,
				Body: &slowStartBody{ctx: r.Context(), head: head, tail: []byte("{}"), pause: 18 * time.Second}}, nil
		})
		n429 := 0
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true, Observe: func(_ context.Context, e Event) {
			if e.Status == 429 {
				n429++
			}
		}}
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		var te *ThrottleError
		if !errors.As(err, &te) || !te.Sent {
			t.Fatalf("err %v, want the service's ThrottleError", err)
		}
		if n429 == 0 {
			t.Fatalf("no 429 event")
		}
		for _, d := range at {
			if d >= 15*time.Second {
				t.Errorf("an attempt at %v (all: %v), outside the window's rule", d, at)
			}
		}
	})
}

// attack25GenBody stalls pause on its first read, then gives n bytes of 'x', each
// read failing once its attempt's context has ended (as net/http's do).
type attack25GenBody struct {
	ctx    context.Context
	n      int
	pause  time.Duration
	paused bool
}

func (b *attack25GenBody) Read(p []byte) (int, error) {
	if !b.paused {
		b.paused = true
		select {
		case <-time.After(b.pause):
		case <-b.ctx.Done():
			return 0, context.Cause(b.ctx)
		}
	}
	if err := b.ctx.Err(); err != nil {
		return 0, context.Cause(b.ctx)
	}
	if b.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), b.n)
	for i := range k {
		p[i] = 'x'
	}
	b.n -= k
	return k, nil
}

func (b *attack25GenBody) Close() error { return nil }

// TestAttack25CoalescedDrainedLargeBodyCutByTimer: a coalesced GET answered 503
// with a body too large to share (17 MiB) that starts after 18 s: the
// retry is decided, the body drained (18 s), the window asked again (no
// room), and the answer goes to the caller. Without CoalesceReads the
// caller reads the rest at its own pace (handOver stops the attempt's
// timer); with it, the leader's answer went through drain, its Body is no
// longer an *attemptBody, lead cannot stop the timer, and the rest is cut
// at the attempt's timeout.
func TestAttack25CoalescedDrainedLargeBodyCutByTimer(t *testing.T) {
	for _, coalesce := range []bool{false, true} {
		t.Run(fmt.Sprint("coalesce=", coalesce), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const size = MaxCoalescedBody + 1<<20
				attempts := 0
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					attempts++
					return &http.Response{StatusCode: 503, Header: http.Header{}, Request: r,
						Body: &attack25GenBody{ctx: r.Context(), n: size, pause: 18 * time.Second}}, nil
				})
				tr := &Transport{Base: base, TitleID: title, DisableBudget: true, CoalesceReads: coalesce}
				req, _ := http.NewRequest("GET", profileURL, nil)
				req.Header.Set("Authorization", mock.Token(xuid1, title))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				head := make([]byte, 1<<20)
				if _, err := io.ReadFull(resp.Body, head); err != nil {
					t.Fatalf("first MiB: %v", err)
				}
				time.Sleep(5 * time.Second) // the caller's own pace: past the attempt's 20 s
				n, err := io.Copy(io.Discard, resp.Body)
				if err != nil || int(n)+len(head) != size || attempts != 1 {
					t.Errorf("coalesce=%v: after a pause the caller read %d of %d bytes of the 503's body: %v (%d attempts). "+
						"Promise (lead's doc): \"the rest of an answer too large to share then comes at the caller's pace, "+
						"as without coalescing, unless the caller's own policy asks for BoundBody\"; package doc "+
						"\"timeout covers the headers and the transport's own reads\"",
						coalesce, int(n)+len(head), size, err, attempts)
				}
			})
		})
	}
}

// TestAttack25CoalescedPeeked429LargeBodyCutByTimer: the same through peek429
// rather than drain: with Raw429 (the 429 goes to the caller as an answer)
// and Observe (its body peeked for the event), retries off, a coalesced
// 429 whose body is too large to share: lead's *attemptBody check misses
// the peeked body too, and the rest is cut at the 5 s attempt timeout.
func TestAttack25CoalescedPeeked429LargeBodyCutByTimer(t *testing.T) {
	for _, coalesce := range []bool{false, true} {
		t.Run(fmt.Sprint("coalesce=", coalesce), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const size = MaxCoalescedBody + 1<<20
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: 429, Header: http.Header{}, Request: r,
						Body: &attack25GenBody{ctx: r.Context(), n: size}}, nil
				})
				tr := &Transport{Base: base, TitleID: title, DisableBudget: true, CoalesceReads: coalesce,
					Raw429: true, RetryWindow: -1, Observe: func(context.Context, Event) {}}
				req, _ := http.NewRequest("GET", profileURL, nil)
				req.Header.Set("Authorization", mock.Token(xuid1, title))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				time.Sleep(10 * time.Second) // the caller's own pace: past the attempt's 5 s
				n, err := io.Copy(io.Discard, resp.Body)
				if err != nil || int(n) != size {
					t.Errorf("coalesce=%v: after a pause the caller read %d of %d bytes of the raw 429's body: %v. "+
						"Promise (lead's doc): \"the rest of an answer too large to share then comes at the caller's pace, "+
						"as without coalescing, unless the caller's own policy asks for BoundBody\"",
						coalesce, n, size, err)
				}
			})
		})
	}
}
