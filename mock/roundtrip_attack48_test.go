package mock

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack48CountingBody counts its Close calls; Read returns data, or blocks
// until released (stall) or closed (closeEnds).
type attack48CountingBody struct {
	data      *strings.Reader
	stall     bool
	closeEnds bool
	closes    atomic.Int32
	closed    chan struct{}
	release   chan struct{}
	once      sync.Once
}

func newAtkBody(data string, stall, closeEnds bool) *attack48CountingBody {
	return &attack48CountingBody{data: strings.NewReader(data), stall: stall, closeEnds: closeEnds,
		closed: make(chan struct{}), release: make(chan struct{})}
}

func (b *attack48CountingBody) Read(p []byte) (int, error) {
	if !b.stall {
		return b.data.Read(p)
	}
	if b.closeEnds {
		select {
		case <-b.closed:
			return 0, errors.New("read on closed body")
		case <-b.release:
			return 0, io.EOF
		}
	}
	<-b.release // a body that ignores Close
	return 0, io.EOF
}

func (b *attack48CountingBody) Close() error {
	b.closes.Add(1)
	b.once.Do(func() { close(b.closed) })
	return nil
}

const attack48BatchURL = "https://peoplehub.xboxlive.com/users/me/people/batch"

// Promise (mock.Handler.RoundTrip godoc): "When req's context ends while
// the mock reads its body, the body is closed, as net/http's transport
// closes it, and RoundTrip returns the context's error", and
// net/http.RoundTripper: "RoundTrip must always close the body, including
// on errors". A request whose context is already done when RoundTrip is
// called returns the context's error (as net/http's transport does), but
// its body is never closed: net/http's Transport closes it
// (req.closeBody() before returning the context's error).
func TestAttack48RoundTripDoneContextClosesBody(t *testing.T) {
	h := Must(New(Config{}))
	body := newAtkBody(`{"xuids":["`+xuid2+`"]}`, false, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", attack48BatchURL, body)
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := h.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("RoundTrip with a done context: err %v, want context.Canceled", err)
	}
	if n := body.closes.Load(); n == 0 {
		t.Errorf("RoundTrip with a done context returned %v without closing the request body (Close called %d times)", err, n)
	}
}

// held: the RoundTrip godoc's promise for a body that stalls and ends at
// Close: the context's error within the deadline, the body closed, no
// goroutine left behind, and no data race (run with -race).
func TestAttack48RoundTripStalledBodyClosedNoLeak(t *testing.T) {
	h := Must(New(Config{}))
	before := runtime.NumGoroutine()
	for i := range 8 { // under the batch API's burst: a 429 answers without reading the body
		body := newAtkBody("", true, true)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, "POST", attack48BatchURL, body)
		req.Header.Set("Authorization", Token(xuid1, title1))
		start := time.Now()
		resp, err := h.RoundTrip(req)
		cancel()
		status := 0
		if resp != nil {
			status = resp.StatusCode
			resp.Body.Close()
		}
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Fatalf("call %d: status %d, err %v after %v, want the context's error soon", i, status, err, time.Since(start))
		}
		if body.closes.Load() == 0 {
			t.Fatal("the stalled body was not closed")
		}
		close(body.release)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after, %d before", n, before)
	}
}

// held: a context that ends after the body was read, while the mock
// answers (Faults.Latency of 2 s: "it ends early if the request's context
// is done"): RoundTrip returns the context's error about when it ends,
// never the late answer, and the body is closed.
func TestAttack48RoundTripContextEndsDuringAnswer(t *testing.T) {
	h := Must(New(Config{}))
	if err := h.SetFaults(Faults{Latency: throttle.Duration(2 * time.Second)}); err != nil {
		t.Skip("no peoplehub fault:", err)
	}
	body := newAtkBody(`{"xuids":["`+xuid2+`"]}`, false, false)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", attack48BatchURL, body)
	req.Header.Set("Authorization", Token(xuid1, title1))
	start := time.Now()
	resp, err := h.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	t.Logf("returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if err == nil {
		t.Errorf("RoundTrip answered %d after its context ended", resp.StatusCode)
	}
	if body.closes.Load() == 0 {
		t.Error("body not closed")
	}
}
