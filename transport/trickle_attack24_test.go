package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// attack24Trickle is a body that never ends: one byte every gap, counting what
// was read, ending only when closed.
type attack24Trickle struct {
	ctx    context.Context // the request's: as net/http's bodies, a read ends when it is done
	gap    time.Duration
	n      *atomic.Int64
	closed atomic.Bool
	chunk  int
}

func (b *attack24Trickle) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, io.ErrClosedPipe
	}
	if b.gap > 0 {
		select {
		case <-b.ctx.Done():
			return 0, context.Cause(b.ctx)
		case <-time.After(b.gap):
		}
	}
	k := min(len(p), max(b.chunk, 1))
	for i := range k {
		p[i] = ' '
	}
	b.n.Add(int64(k))
	return k, nil
}

func (b *attack24Trickle) Close() error { b.closed.Store(true); return nil }

// held: a 503 / 500 / 429 / 401 whose body trickles a byte a second and
// never ends (a read ends when the request's context does, as net/http's),
// retries on (and Observe set, so a 429's body is read, and a
// RefreshToken that returns the same token for the 401): every call ends
// by its 3 s context deadline, and within a minute without one.
func TestAttack24TrickledErrorBodiesEnd(t *testing.T) {
	for _, status := range []int{503, 500, 429, 401} {
		for _, withDeadline := range []bool{true, false} {
			t.Run(fmt.Sprint(status, withDeadline), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var read atomic.Int64
					base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
						return &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {"1"}}, Body: &attack24Trickle{ctx: r.Context(), gap: time.Second, n: &read}, Request: r}, nil
					})
					tr := &Transport{Base: base, TitleID: title, DisableBudget: true,
						Observe:      func(context.Context, Event) {},
						RefreshToken: func(r *http.Request) (string, error) { return r.Header.Get("Authorization"), nil }}
					ctx := context.Background()
					bound := time.Minute // it ends (how long it may take without a deadline: TestAttack24DrainedRetryOutsideWindow)
					if withDeadline {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, 3*time.Second)
						defer cancel()
						bound = 3 * time.Second
					}
					start := time.Now()
					req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
					req.Header.Set("Authorization", "XBL3.0 x=1;tok")
					resp, err := tr.RoundTrip(req)
					if resp != nil {
						resp.Body.Close() // the caller never reads a non-200 body
					}
					if d := time.Since(start); d > bound {
						t.Errorf("status %d, deadline %v: the call took %v (%v), want at most %v", status, withDeadline, d, err, bound)
					}
				})
			})
		}
	}
}

// held: a 200 with BoundBody whose body never ends (fast, 32 KiB a read):
// the attempt timeout (5 s without retries) ends the caller's reading.
func TestAttack24BoundBodyEndlessFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var read atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &attack24Trickle{ctx: r.Context(), gap: time.Millisecond, chunk: 32 << 10, n: &read}, Request: r}, nil
		})
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true, RetryWindow: -1, Policy: Policy{BoundBody: true}}
		req, _ := http.NewRequest("GET", profileURL, nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if d := time.Since(start); d > 5*time.Second || err == nil {
			t.Errorf("an endless BoundBody 200 read for %v (%v), want an error at 5 s", d, err)
		}
	})
}

// TestAttack24DrainedRetryOutsideWindow: the transport decides to retry a 500 /
// 503 at once (mayRetry: the window has room for the wait), and only then
// drains the answer's body (discard), which a hostile service trickles
// until the attempt's timeout, 20 s; the wait follows, unchecked, and the
// retry is sent 23 to 30 s after the first attempt. transport's package
// doc: "retries run in a 20 s window from the first attempt, and only
// while more than 5 s and at least the wait + 5 s are left".
func TestAttack24DrainedRetryOutsideWindow(t *testing.T) {
	for _, status := range []int{503, 500} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var read atomic.Int64
				var sent []time.Time
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent = append(sent, time.Now())
					return &http.Response{StatusCode: status, Header: http.Header{}, Body: &attack24Trickle{ctx: r.Context(), gap: time.Second, n: &read}, Request: r}, nil
				})
				tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
				req, _ := http.NewRequest("GET", profileURL, nil)
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				t.Logf("status %d: attempts at %v", status, func() (o []time.Duration) {
					for _, s := range sent {
						o = append(o, s.Sub(sent[0]))
					}
					return
				}())
				for i, at := range sent[1:] {
					if d := at.Sub(sent[0]); d > 20*time.Second {
						t.Errorf("status %d with a body trickled a byte a second: retry %d sent %v after the first attempt (call took %v, %v); "+
							"the package doc: \"retries run in a 20 s window from the first attempt, and only while more than 5 s and at least the wait + 5 s are left\" "+
							"(the drain before the retry, up to the attempt timeout, comes after the retry was decided)", status, i+1, d, time.Since(start), err)
					}
				}
			})
		})
	}
}
