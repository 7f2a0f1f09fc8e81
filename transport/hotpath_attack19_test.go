package transport

// An outsider's attack on commit 635610e's hot path: a body's reads
// skipping errors.Is on nil and io.EOF (attempt.cause), and an attempt's
// out flag letting stopTimer skip the queue's lock.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/mock"
)

// attack19Queued counts the attempts waiting in tr's queues.
func attack19Queued(tr *Transport) int {
	tr.timers.mu.Lock()
	defer tr.timers.mu.Unlock()
	n := 0
	for _, q := range tr.timers.q {
		for a := q.head; a != nil; a = a.next {
			n++
		}
	}
	return n
}

// held: a BoundBody answer from a real net/http server on loopback that
// sends part of its body (with a Content-Length, and chunked; HTTP/1.1
// and HTTP/2 over TLS) and stalls:
// the caller's read ends at the attempt timeout with
// context.DeadlineExceeded, never with io.EOF (a truncated body reported
// as complete) nor with context.Canceled.
func TestAttack19BoundBodyLoopbackTruncatedReportsDeadline(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2=%v", h2), func(t *testing.T) { attack19LoopbackTruncated(t, h2) })
	}
}

func attack19LoopbackTruncated(t *testing.T, h2 bool) {
	stop := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("cl") {
			w.Header().Set("Content-Length", "100000")
		}
		w.WriteHeader(200)
		io.WriteString(w, strings.Repeat("a", 4096))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	defer srv.Close()
	defer close(stop)
	if h2 && srv.Client().Transport.(*http.Transport).TLSClientConfig == nil {
		t.Fatal("no TLS client")
	}
	tr := &Transport{Base: srv.Client().Transport, TitleID: title, DisableBudget: true}
	for _, q := range []string{"cl=1", "chunked=1"} {
		for _, timeout := range []time.Duration{80 * time.Millisecond, 81*time.Millisecond + 500*time.Microsecond} { // queued, and a timer of its own
			ctx := WithPolicy(context.Background(), Policy{NoRetry: true, BoundBody: true, AttemptTimeout: timeout})
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/users/me?"+q, nil)
			req.Header.Set("Authorization", mock.Token(xuid1, title))
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if h2 && resp.ProtoMajor != 2 {
				t.Fatalf("not HTTP/2: %s", resp.Proto)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) || len(b) >= 100000 {
				t.Errorf("%s, timeout %v: BoundBody read of a stalled body got %d bytes, %v after %v; "+
					"want context.DeadlineExceeded (Policy.BoundBody: \"BoundBody makes the attempt timeout cover the whole response, body included\")",
					q, timeout, len(b), err, took)
			}
			if took > 3*time.Second {
				t.Errorf("%s: read ended after %v, timeout %v", q, took, timeout)
			}
		}
	}
}

// attack19Body streams n bytes in small reads with a pause, and reads as
// net/http's older bodies and many Bases do once its context ended:
// ctx.Err() (context.Canceled for a cause context), which cause must turn
// into context.DeadlineExceeded. Its last read returns data and io.EOF
// together when eofWithData is set.
type attack19Body struct {
	ctx         context.Context
	n           int
	pause       time.Duration
	eofWithData bool
	mu          sync.Mutex
	closed      atomic.Bool
}

func (b *attack19Body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.n == 0 {
		return 0, io.EOF
	}
	if b.pause > 0 {
		select {
		case <-time.After(b.pause):
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	k := min(len(p), b.n, 7)
	for i := range k {
		p[i] = 'z'
	}
	b.n -= k
	if b.n == 0 && b.eofWithData {
		return k, io.EOF
	}
	return k, nil
}

func (b *attack19Body) Close() error { b.closed.Store(true); return nil }

// held: BoundBody reads that end because the attempt's timer fired, from a
// base whose body returns its context's Err (context.Canceled) rather than
// its cause, whether the timer fires between reads or during one: every
// such read reports context.DeadlineExceeded, none io.EOF or
// context.Canceled, and a body read to its end before the timer reports
// io.EOF with all its bytes, and none fails before half its timeout
// (a loaded machine may stall a read past it: that is not judged).
func TestAttack19BoundBodyCanceledBaseReportsDeadline(t *testing.T) {
	const timeout = 40 * time.Millisecond
	for _, pause := range []time.Duration{0, 3 * time.Millisecond, 15 * time.Millisecond} {
		for _, eofWithData := range []bool{false, true} {
			for _, n := range []int{5, 50, 500} {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
						Body: &attack19Body{ctx: r.Context(), n: n, pause: pause, eofWithData: eofWithData}}, nil
				})
				tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
				ctx := WithPolicy(context.Background(), Policy{NoRetry: true, BoundBody: true, AttemptTimeout: timeout})
				start := time.Now() // before the attempt's timer starts
				resp, err := tr.RoundTrip(attack15Request(t, ctx, "b"))
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				took := time.Since(start)
				resp.Body.Close()
				switch {
				case err == nil && len(b) != n:
					t.Errorf("pause %v n %d: body reported complete (EOF) with %d of %d bytes", pause, n, len(b), n)
				case err != nil && !errors.Is(err, context.DeadlineExceeded):
					t.Errorf("pause %v n %d eofWithData %v: read ended with %v (%d bytes, %v); want context.DeadlineExceeded "+
						"(attempt.cause: \"context.DeadlineExceeded in place of the context.Canceled of a base that returns its context's Err\")",
						pause, n, eofWithData, err, len(b), took)
				case err != nil && took < timeout/2: // the read ended well before the timer was due
					t.Errorf("pause %v n %d: a body read failed %v into its %v timeout: %v", pause, n, took, timeout, err)
				}
			}
		}
	}
}

// held: many goroutines on one Transport, each call with a timeout that
// queues (whole milliseconds: 2 ms, 5 ms, which fire during the reads,
// and 7 s and 30 s, which never fire during the test) or not (a
// fraction of a millisecond), BoundBody or handed over, its body then
// read to its end, closed during a read from another goroutine, closed
// twice, closed at about the timer's firing, or read then closed
// concurrently with a second Close. Run with -race. After every call has
// ended and its body been closed, no attempt is left in a queue (memory
// held: attempttimers_attack15/18), every read error of a BoundBody body
// is context.DeadlineExceeded or the caller's own Close
// (context.Canceled), and the Transport's timers still end a fresh
// attempt at its timeout.
func TestAttack19OutFlagConcurrentCloseRead(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n := 1 + rand.IntN(60)
		pause := time.Duration(rand.IntN(3)) * time.Millisecond / 2
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
			Body: &attack19Body{ctx: r.Context(), n: n, pause: pause, eofWithData: rand.IntN(2) == 0}}, nil
	})
	tr := &Transport{Base: base, TitleID: title, DisableBudget: true}
	timeouts := []time.Duration{2 * time.Millisecond, 5 * time.Millisecond, 7 * time.Second, 30 * time.Second, 3*time.Millisecond + 300*time.Microsecond}
	var wg sync.WaitGroup
	var bad atomic.Int64
	var mu sync.Mutex
	var first []string
	report := func(s string) {
		if bad.Add(1) <= 5 {
			mu.Lock()
			first = append(first, s)
			mu.Unlock()
		}
	}
	const workers, per = 16, 150
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				timeout := timeouts[rand.IntN(len(timeouts))]
				bound := rand.IntN(2) == 0
				ctx := WithPolicy(context.Background(), Policy{NoRetry: true, BoundBody: bound, AttemptTimeout: timeout})
				req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s&w=%d&i=%d", profileURL, w, i), nil)
				req.Header.Set("Authorization", mock.Token(xuid1, title))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						report(fmt.Sprintf("RoundTrip: %v", err))
					}
					continue
				}
				var closedByUs atomic.Bool
				check := func(err error) {
					if err == nil || err == io.EOF || errors.Is(err, context.DeadlineExceeded) {
						return // io.EOF: of a Read of our own, a body read to its end
					}
					if closedByUs.Load() && errors.Is(err, context.Canceled) {
						return
					}
					report(fmt.Sprintf("bound %v timeout %v: read error %v", bound, timeout, err))
				}
				switch rand.IntN(5) {
				case 0: // read to the end, then Close
					_, err := io.ReadAll(resp.Body)
					check(err)
					if ab, ok := resp.Body.(*attemptBody); ok && err == nil {
						if b := ab.ReadCloser.(*attack19Body); b.n != 0 {
							report(fmt.Sprintf("bound %v timeout %v: body reported complete (EOF) with %d bytes unread", bound, timeout, b.n))
						}
					}
					resp.Body.Close()
				case 1: // Close from another goroutine during the read
					done := make(chan struct{})
					go func() {
						time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
						closedByUs.Store(true)
						resp.Body.Close()
						close(done)
					}()
					_, err := io.ReadAll(resp.Body)
					check(err)
					<-done
				case 2: // Close twice, concurrently
					var cw sync.WaitGroup
					closedByUs.Store(true)
					for range 2 {
						cw.Add(1)
						go func() { defer cw.Done(); resp.Body.Close() }()
					}
					cw.Wait()
					resp.Body.Close()
				case 3: // Close at about the timer's firing
					time.Sleep(timeout % time.Second)
					closedByUs.Store(true)
					resp.Body.Close()
				case 4: // read a little, Close racing a second Close and a read
					buf := make([]byte, 3)
					_, err := resp.Body.Read(buf)
					check(err)
					closedByUs.Store(true)
					var cw sync.WaitGroup
					cw.Add(2)
					go func() { defer cw.Done(); resp.Body.Close() }()
					go func() { defer cw.Done(); _, err := resp.Body.Read(buf); check(err) }()
					resp.Body.Close()
					cw.Wait()
				}
			}
		}()
	}
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Errorf("%d bad reads; first: %v", n, first)
	}
	// the long-timeout attempts are all ended: none may wait in a queue
	if n := attack19Queued(tr); n != 0 {
		t.Errorf("%d attempts left in the Transport's queues after every call ended and its body was closed "+
			"(attempt.release: \"release ends the attempt's timer and context\"; attempttimers.go: an attempt whose call ended is unlinked)", n)
	}
	// the timers still end an attempt
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true, BoundBody: true, AttemptTimeout: 5 * time.Millisecond})
	stall := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
			Body: &attack19Body{ctx: r.Context(), n: 1 << 20, pause: 100 * time.Millisecond}}, nil
	})
	tr.Base = stall
	start := time.Now()
	resp, err := tr.RoundTrip(attack15Request(t, ctx, "after"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("after the storm, a 5 ms BoundBody attempt read %v after %v; want context.DeadlineExceeded at its timeout", err, time.Since(start))
	}
}

// held: an attempt handed over while its queue's timer fires (the timeout
// of a millisecond, the body's hand-over and Close racing fire's unlink):
// after every body is closed no attempt is left in a queue, and each
// attempt's context has ended (released, or timed out).
func TestAttack19HandOverRacesFire(t *testing.T) {
	var ctxs sync.Map
	var seq atomic.Int64
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		ctxs.Store(seq.Add(1), r.Context())
		time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
			Body: &attack19Body{ctx: r.Context(), n: 3}}, nil
	})
	trs := make([]*Transport, 4)
	for i := range trs {
		trs[i] = &Transport{Base: base, TitleID: title, DisableBudget: true}
	}
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := trs[w%len(trs)]
			for i := range 200 {
				timeout := time.Duration(1+i%3) * time.Millisecond
				if i%7 == 0 {
					timeout = 20 * time.Second
				}
				ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: timeout})
				resp, err := tr.RoundTrip(attack15Request(t, ctx, "h"))
				if err != nil {
					continue
				}
				if i%2 == 0 {
					io.ReadAll(resp.Body)
				}
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	for i, tr := range trs {
		if n := attack19Queued(tr); n != 0 {
			t.Errorf("Transport %d: %d attempts left in its queues after every body was closed", i, n)
		}
	}
	open := 0
	ctxs.Range(func(_, v any) bool {
		if v.(context.Context).Err() == nil {
			open++
		}
		return true
	})
	if open != 0 {
		t.Errorf("%d attempts' contexts still open after their bodies were closed "+
			"(send: \"Closing the body, or reading it to the end, releases the context\")", open)
	}
}

// held: the transport keys a call by UserHashOf as it keyed it by Parse:
// Authorization values that differ only in white space after the token
// (ASCII and Unicode), in the scheme's case or in spaces before x=, are
// one user's key; values of different userhashes, including ones that
// differ only by a Unicode space or NUL inside the userhash, or that are
// malformed only once the token is trimmed, are not another user's key.
func TestAttack19KeyOfByUserHashOf(t *testing.T) {
	tr := &Transport{TitleID: title}
	keyOf := func(auth string) string {
		req, _ := http.NewRequest("GET", profileURL, nil)
		if auth != "" {
			req.Header["Authorization"] = []string{auth}
		}
		k, _ := tr.KeyOf(req)
		return k.User
	}
	for _, h := range []string{
		"XBL3.0 x=123;tok", "XBL3.0 x=123;tok \t", "xbl3.0   x=123;tok\u3000\u0085", " \u00a0XBL3.0 x=123;tok\u2028",
		"XBL3.0 x=123;\u00a0tok", "XBL3.0 x=123;tok;x=456",
	} {
		if got := keyOf(h); got != "123" {
			t.Errorf("KeyOf(%q).User = %q, want 123", h, got)
		}
	}
	for _, h := range []string{
		"XBL3.0 x=123\u00a0;tok", "XBL3.0 x=123\x00;tok", "XBL3.0 x=1234;tok", "XBL3.0 x=12;3;tok",
	} {
		uhs, _, _ := xblauth.Parse(h)
		if got := keyOf(h); got != uhs || got == "123" {
			t.Errorf("KeyOf(%q).User = %q, Parse's userhash %q", h, got, uhs)
		}
	}
	for _, h := range []string{
		"XBL3.0 x=123; \t", "XBL3.0 x=123;\u00a0\u3000", "XBL3.0 x=123;\u0085", "XBL3.0 x=123;", "XBL3.0 x=123",
	} {
		if got := keyOf(h); got != "" {
			t.Errorf("KeyOf(%q).User = %q: a malformed Authorization keyed as user %q", h, got, got)
		}
	}
}

// held: more timeouts than maxAttemptQueues on one Transport, concurrently
// (those beyond the queues get timers of their own): a stalled BoundBody
// attempt of every timeout ends with context.DeadlineExceeded near its
// timeout, and attempts of long timeouts whose bodies are closed (read
// part-way, or not at all) leave no attempt in a queue.
func TestAttack19ManyTimeoutsBeyondQueues(t *testing.T) {
	stall := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if strings.Contains(r.URL.RawQuery, "short") {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
				Body: &attack19Body{ctx: r.Context(), n: 1 << 20, pause: 20 * time.Millisecond}}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
			Body: &attack19Body{ctx: r.Context(), n: 40}}, nil
	})
	tr := &Transport{Base: stall, TitleID: title, DisableBudget: true}
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range 12 {
		for rep := range 4 {
			wg.Add(2)
			go func() { // a long timeout, closed at once or after a read
				defer wg.Done()
				ctx := WithPolicy(context.Background(), Policy{NoRetry: true, BoundBody: rep%2 == 0, AttemptTimeout: time.Duration(10+i) * time.Second})
				resp, err := tr.RoundTrip(attack15Request(t, ctx, "long"))
				if err != nil {
					errs <- err.Error()
					return
				}
				if rep >= 2 {
					resp.Body.Read(make([]byte, 5))
				}
				resp.Body.Close()
			}()
			go func() { // a short one that must end at its timeout
				defer wg.Done()
				timeout := time.Duration(20+5*i) * time.Millisecond
				ctx := WithPolicy(context.Background(), Policy{NoRetry: true, BoundBody: true, AttemptTimeout: timeout})
				resp, err := tr.RoundTrip(attack15Request(t, ctx, "short"))
				if err != nil {
					errs <- err.Error()
					return
				}
				start := time.Now()
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > timeout+2*time.Second {
					errs <- fmt.Sprintf("timeout %v: BoundBody read ended with %v after %v; want context.DeadlineExceeded", timeout, err, time.Since(start))
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := attack19Queued(tr); n != 0 {
		t.Errorf("%d attempts left in the queues after every body was closed", n)
	}
}
