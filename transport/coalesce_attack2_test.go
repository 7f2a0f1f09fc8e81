package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// attackCoal2Echo answers 200 with a body that says, for each representation
// header, whether the request carried it at all and with which values, as
// a server that tells "absent" from "present but empty" would.
func attackCoal2Echo(n *atomic.Int32) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n.Add(1)
		var s []string
		for _, name := range []string{"Accept", "Accept-Encoding", "Accept-Language", "X-Xbl-Contract-Version"} {
			vs, ok := r.Header[name]
			s = append(s, fmt.Sprintf("%s present=%v values=%q", name, ok && len(vs) > 0, vs))
		}
		b := strings.Join(s, "; ")
		return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Request: r,
			ContentLength: int64(len(b)), Body: io.NopCloser(strings.NewReader(b))}, nil
	})
}

// TestAttackCoal2EmptyHeaderSameAsAbsent: doc (CoalesceReads) identical GETs
// share only with the "same ... contract version, Accept, Accept-Encoding
// and Accept-Language (every value, under every spelling of the name)";
// headerAll's own doc: "so that two requests that send the header
// differently never have the same text". A request that sends the header
// with an empty value ("X-Xbl-Contract-Version: ", "Accept-Encoding: ")
// and one that does not send it at all have the same key text (""), so
// the second gets the first's answer. RFC 9110 12.5.3: an empty
// Accept-Encoding means "no content coding", an absent one means "any";
// an XBL service answers a missing contract version with its default and
// an empty one otherwise.
func TestAttackCoal2EmptyHeaderSameAsAbsent(t *testing.T) {
	for _, name := range []string{"X-Xbl-Contract-Version", "Accept-Encoding", "Accept", "Accept-Language"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				tr := &Transport{Base: attackCoal2Echo(&n), TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
				_, a, err := attackGet(t, tr, context.Background(), attackURL, http.Header{name: {""}})
				if err != nil {
					t.Fatal(err)
				}
				_, b, err := attackGet(t, tr, context.Background(), attackURL, nil)
				if err != nil {
					t.Fatal(err)
				}
				if n.Load() != 2 {
					t.Errorf("a call without %s got the answer to a call that sent it empty: %d request(s) for 2 different requests\n A sent %s: %q\n B sent none, got: %q",
						name, n.Load(), name+": \"\"", a, b)
				}
			})
		})
	}
}

// TestAttackCoal2EncodingLookalikeHeld: a single value spelt as another
// request's multi-value encoding ("\x001:a\x001:b") never shares with
// that request (held: a value with NUL is encoded too).
func TestAttackCoal2EncodingLookalikeHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		tr := &Transport{Base: attackCoal2Echo(&n), TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
		for _, h := range []http.Header{
			{"Accept": {"a", "b"}},
			{"Accept": {"\x001:a\x001:b"}},
			{"Accept": {"a"}, "accept": {"b"}},
			{"Accept": {"1:a"}},
			{"ACCEPT": {"b"}, "Accept": {"a"}},
		} {
			attackGet(t, tr, context.Background(), attackURL, h)
		}
		// {"Accept": {"a"}, "accept": {"b"}} is sent as {"a","b"} (keys in sorted order): it may share.
		if got := n.Load(); got < 4 {
			t.Errorf("%d requests for 4 different representations", got)
		}
	})
}

// TestAttackCoal2SignerThroughWrappersHeld: a Signer set on a parent of the
// call's context (under WithPolicy, WithCancel, WithValue) still keeps
// the call from sharing (held).
func TestAttackCoal2SignerThroughWrappersHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			b := "sig=" + r.Header.Get("Signature")
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: int64(len(b)), Body: io.NopCloser(strings.NewReader(b))}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
		signer := func(s string) Signer { return func(r *http.Request) error { r.Header.Set("Signature", s); return nil } }
		type k struct{}
		ctxA, cancel := context.WithCancel(WithPolicy(WithSigner(context.Background(), signer("A")), Policy{Priority: 0}))
		defer cancel()
		ctxA = context.WithValue(ctxA, k{}, 1)
		ctxB := WithPolicy(context.WithValue(WithSigner(context.Background(), signer("B")), k{}, 2), Policy{})
		_, a, _ := attackGet(t, tr, ctxA, attackURL, nil)
		_, b, _ := attackGet(t, tr, ctxB, attackURL, nil)
		if a != "sig=A" || b != "sig=B" || n.Load() != 2 {
			t.Errorf("signed calls shared: A %q, B %q, %d requests", a, b, n.Load())
		}
	})
}

// attackCoal2SlowTail is a body whose last bytes come after wait, and which
// ends with its request's context, as net/http's does.
type attackCoal2SlowTail struct {
	ctx  context.Context
	wait time.Duration
	done bool
}

func (s *attackCoal2SlowTail) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	select {
	case <-time.After(s.wait):
		s.done = true
		return copy(p, "tail"), nil
	case <-s.ctx.Done():
		return 0, context.Cause(s.ctx)
	}
}

// TestAttackCoal2TooLargeBodyCutByAttemptTimeout: doc (Policy.BoundBody)
// "Without it the timeout stops when the headers arrive and a 200 body
// streams at the caller's pace, bounded only by the request's own
// context." and (CoalesceReads) "An answer too large to read in full ...
// stays its caller's". With CoalesceReads, a GET whose answer is larger
// than MaxCoalescedBody is still sent with BoundBody (lead), so its
// caller, which did not ask for BoundBody and has no deadline, has the
// rest of its streamed body cut at the attempt timeout. Without
// CoalesceReads the same call reads it all.
func TestAttackCoal2TooLargeBodyCutByAttemptTimeout(t *testing.T) {
	for _, coalesce := range []bool{false, true} {
		t.Run(fmt.Sprintf("coalesce=%v", coalesce), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const head = MaxCoalescedBody + 1<<10
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					body := io.MultiReader(io.LimitReader(zeros{}, head), &attackCoal2SlowTail{ctx: r.Context(), wait: 20 * time.Second})
					return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1, Body: io.NopCloser(body)}, nil
				})
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: coalesce}
				ctx := WithPolicy(context.Background(), Policy{AttemptTimeout: 5 * time.Second})
				req, _ := http.NewRequestWithContext(ctx, "GET", attackURL, nil)
				req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				n, err := io.Copy(io.Discard, resp.Body)
				if err != nil || n != head+4 {
					t.Errorf("a streamed %d-byte body (no BoundBody, no deadline) ended after %d bytes with %v: cut by the attempt timeout", head+4, n, err)
				}
			})
		})
	}
}

// heapNow is the live heap after a collection.
func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestAttackCoal2UnsharedBuffersUnbounded: doc (CoalesceReads) an answer is
// "read in full (at most MaxCoalescedBody, and 64 MiB over all answers
// being read at once, counting the memory that holds them)"; project
// standard: every buffer bounded in bytes. An answer too large to share
// goes to its caller with the 16 MiB the coalescer read of it still held
// (a MultiReader over that buffer), and no longer counted: each such
// answer being read pins MaxCoalescedBody+1 bytes, without bound over
// answers (here 6 answers still being read hold ~96 MiB the bound never
// saw). Without CoalesceReads the same answers stream and hold nothing.
func TestAttackCoal2UnsharedBuffersUnbounded(t *testing.T) {
	const answers = 6
	const size = MaxCoalescedBody + 1<<20
	for _, coalesce := range []bool{false, true} {
		t.Run(fmt.Sprintf("coalesce=%v", coalesce), func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: size,
					Body: io.NopCloser(io.LimitReader(zeros{}, size))}, nil
			})
			tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: coalesce}
			before := heapNow()
			var resps []*http.Response
			for i := range answers {
				req, _ := http.NewRequest("GET", fmt.Sprintf("%s&i=%d", attackURL, i), nil)
				req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resps = append(resps, resp)
			}
			held := int64(heapNow()) - int64(before)
			buffered := tr.reads.buffered.Load()
			for _, r := range resps {
				n, _ := io.Copy(io.Discard, r.Body)
				r.Body.Close()
				if n != size {
					t.Errorf("read %d of %d bytes", n, size)
				}
			}
			runtime.KeepAlive(resps)
			t.Logf("%d answers being read hold %d MiB of heap; the coalescer counts %d bytes buffered", answers, held>>20, buffered)
			if held > maxBufferedBytes+8<<20 {
				t.Errorf("%d answers being read hold %d MiB, past the 64 MiB bound over answers being read (counted: %d bytes)", answers, held>>20, buffered)
			}
		})
	}
}

// attackCoal2Idle returns (0, nil) until stop is closed: io.Reader's
// "discouraged" case, which never blocks and never looks at a context.
type attackCoal2Idle struct {
	stop  chan struct{}
	reads atomic.Int64
}

func (r *attackCoal2Idle) Read(p []byte) (int, error) {
	r.reads.Add(1)
	select {
	case <-r.stop:
		return 0, io.EOF
	default:
		runtime.Gosched()
		return 0, nil
	}
}

// TestAttackCoal2IdleBodyOutlivesContext: project standard "every call ends
// within its context"; doc (lead) "The body is read in full under the
// attempt timeout (BoundBody) and the leader's context". A base whose
// body answers Read with (0, nil) forever keeps a coalesced GET inside
// RoundTrip, spinning, long after its context ended (and after the attempt
// timeout): buffer never looks at the context. Without CoalesceReads the
// call returns at once and the body is the caller's.
func TestAttackCoal2IdleBodyOutlivesContext(t *testing.T) {
	body := &attackCoal2Idle{stop: make(chan struct{})}
	var once sync.Once
	stop := func() { once.Do(func() { close(body.stop) }) }
	defer stop()
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1, Body: io.NopCloser(body)}, nil
	})
	tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true}
	ctx, cancel := context.WithTimeout(WithPolicy(context.Background(), Policy{AttemptTimeout: 200 * time.Millisecond}), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", attackURL, nil)
	req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.resp != nil {
			r.resp.Body.Close()
		}
		t.Logf("ended: %v", r.err)
	case <-time.After(3 * time.Second):
		t.Errorf("RoundTrip still running 3 s after its 300 ms context ended (%v), %d reads of (0, nil) so far", context.Cause(ctx), body.reads.Load())
		stop()
		r := <-done
		if r.resp != nil {
			r.resp.Body.Close()
		}
	}
}

// attackCoal2Bad is a body that gives n zero bytes per Read, then fails as
// its mode says: an error with bytes, an error alone, or a panic.
type attackCoal2Bad struct {
	left int
	mode string
}

func (b *attackCoal2Bad) Read(p []byte) (int, error) {
	if b.left > 0 {
		n := min(len(p), b.left)
		clear(p[:n])
		b.left -= n
		return n, nil
	}
	switch b.mode {
	case "panic":
		panic("atk body panic")
	case "n-and-err":
		return copy(p, "xy"), io.ErrUnexpectedEOF
	}
	return 0, io.ErrClosedPipe
}

// TestAttackCoal2BufferedAccountingHeld: the bytes counted as being read
// (maxBufferedBytes) return to zero however a leader's read ends: an
// error mid-read, an error with bytes, a panic in the body's Read (held).
func TestAttackCoal2BufferedAccountingHeld(t *testing.T) {
	for _, mode := range []string{"err", "n-and-err", "panic"} {
		t.Run(mode, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1,
					Body: io.NopCloser(&attackCoal2Bad{left: 3 << 20, mode: mode})}, nil
			})
			tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
			for range 3 {
				func() {
					defer func() { recover() }()
					req, _ := http.NewRequest("GET", attackURL, nil)
					req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}()
			}
			if n := tr.reads.buffered.Load(); n != 0 {
				t.Errorf("after 3 failed reads, %d bytes still counted as being read", n)
			}
			tr.reads.mu.Lock()
			flights := len(tr.reads.flights)
			tr.reads.mu.Unlock()
			if flights != 0 {
				t.Errorf("%d flights left under way", flights)
			}
		})
	}
}
