package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

func attack46Get(tr *Transport, ctx context.Context, url, xuid string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", mock.Token(xuid, title))
	return tr.RoundTrip(req)
}

// TestAttack46CoalLeaderAndFollowerCancels: CoalesceReads' godoc: "A caller
// waits for another's answer no longer than its own call could take
// (ErrSharedReadTimeout), and never past its context; ... and so does one
// whose wait ended with the other call's caller giving up".
//
// held: the leader's caller giving up did not fail its followers (one of
// them sent again and all got 200); a follower that gave up ended at once
// with its own context's error and cancelled no one else.
func TestAttack46CoalLeaderAndFollowerCancels(t *testing.T) {
	t.Parallel() // its own server and Transport; it waits in real time
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select {
		case <-time.After(400 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	tr := &Transport{TitleID: title, CoalesceReads: true, DisableBudget: true, Base: base}
	url := srv.URL + "/users/me/profile"

	leadCtx, cancelLead := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var leadErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, err := attack46Get(tr, leadCtx, url, xuid1)
		if err == nil {
			resp.Body.Close()
		}
		leadErr = err
	}()
	time.Sleep(100 * time.Millisecond)
	const followers = 4
	errs := make([]error, followers)
	bodies := make([]string, followers)
	ends := make([]time.Duration, followers)
	start := time.Now()
	fctx, cancelF := context.WithCancelCause(context.Background())
	for i := range followers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if i == 0 {
				ctx = fctx
			}
			resp, err := attack46Get(tr, ctx, url, xuid1)
			ends[i] = time.Since(start)
			if err != nil {
				errs[i] = err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			bodies[i] = string(b)
		}()
	}
	time.Sleep(100 * time.Millisecond)
	myCause := errors.New("follower 0 gave up")
	cancelF(myCause) // a follower gives up
	time.Sleep(50 * time.Millisecond)
	cancelLead() // then the leader's caller
	wg.Wait()
	if !errors.Is(leadErr, context.Canceled) {
		t.Errorf("leader: %v, want context.Canceled", leadErr)
	}
	if !errors.Is(errs[0], myCause) || ends[0] > 150*time.Millisecond {
		t.Errorf("follower that gave up: %v after %v; want its own cause at once", errs[0], ends[0])
	}
	for i := 1; i < followers; i++ {
		if errs[i] != nil || bodies[i] != "ok" {
			t.Errorf("follower %d: %q, %v; want ok: the others' giving up is no reason to fail it", i, bodies[i], errs[i])
		}
	}
	// The followers whose wait the leader's giving up ended have a whole
	// call's time of their own (CoalesceReads' godoc): one leads a new
	// request, the others wait for it.
	if got := n.Load(); got != 2 {
		t.Errorf("%d requests sent; want 2 (the cancelled leader's, then one for the followers)", got)
	}
}

// TestAttack46CoalSlowEndlessBody: the godoc: an answer is "read in full ...
// under its attempt timeout and copied to each", and a caller waits "never
// past its context".
//
// held: with a body that trickles forever, the leader's call ended at its
// attempt timeout with an error, a follower with a short deadline ended at
// it, and a later call found no error left behind.
func TestAttack46CoalSlowEndlessBody(t *testing.T) {
	t.Parallel() // its own server and Transport; it waits in real time
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 1 {
			io.WriteString(w, "whole")
			return
		}
		w.WriteHeader(200)
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(20 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	tr := &Transport{TitleID: title, CoalesceReads: true, DisableBudget: true, Base: base,
		Policy: Policy{AttemptTimeout: time.Second, NoRetry: true}}
	url := srv.URL + "/users/me/profile"
	start := time.Now()
	var wg sync.WaitGroup
	var leadErr error
	var leadEnd time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, err := attack46Get(tr, context.Background(), url, xuid1)
		leadEnd = time.Since(start)
		if err == nil {
			resp.Body.Close()
		}
		leadErr = err
	}()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, ferr := attack46Get(tr, ctx, url, xuid1)
	fend := time.Since(start)
	wg.Wait()
	if !errors.Is(ferr, context.DeadlineExceeded) || fend > 500*time.Millisecond {
		t.Errorf("follower with a 200 ms deadline: %v at %v", ferr, fend)
	}
	if leadErr == nil || leadEnd > 2*time.Second {
		t.Errorf("leader with an endless body: %v at %v; want an error at its 1 s attempt timeout", leadErr, leadEnd)
	}
	resp, err := attack46Get(tr, context.Background(), url, xuid1)
	if err != nil {
		t.Fatalf("a later call: %v (an error left behind)", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "whole" {
		t.Errorf("a later call: %q", b)
	}
}

// TestAttack46CoalBodiesIndependent: the godoc: the answer is "read in full
// ... and copied to each".
//
// held: the leader never read nor closed its body, one follower closed
// after a byte, another read half and closed; every other caller read the
// whole body, byte for byte, and reading after Close did not disturb the
// others.
func TestAttack46CoalBodiesIndependent(t *testing.T) {
	t.Parallel()                                                // its own server and Transport; it waits in real time
	payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		time.Sleep(300 * time.Millisecond)
		w.Write(payload)
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: 2 * time.Second, DisableBudget: true, Base: base}
	url := srv.URL + "/users/me/profile"
	const callers = 8
	resps := make([]*http.Response, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := attack46Get(tr, context.Background(), url, xuid1)
			if err != nil {
				t.Error(err)
				return
			}
			resps[i] = r
		}()
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	want := sha256.Sum256(payload)
	var rwg sync.WaitGroup
	for i, r := range resps {
		switch i {
		case 0: // never read, never closed
			continue
		case 1:
			r.Body.Read(make([]byte, 1))
			r.Body.Close()
			continue
		case 2:
			io.CopyN(io.Discard, r.Body, int64(len(payload)/2))
			r.Body.Close()
			continue
		}
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			b, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil || sha256.Sum256(b) != want || r.ContentLength != int64(len(payload)) {
				t.Errorf("caller %d: %d bytes, err %v, ContentLength %d; want the whole %d", i, len(b), err, r.ContentLength, len(payload))
			}
		}()
	}
	rwg.Wait()
	if got := n.Load(); got != 1 {
		t.Errorf("%d requests for %d identical reads", got, callers)
	}
	r, err := attack46Get(tr, context.Background(), url, xuid1) // from the cache, after others closed theirs
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if sha256.Sum256(b) != want {
		t.Errorf("cached copy: %d bytes, not the whole answer", len(b))
	}
}

// TestAttack46CoalHugeBodiesBounded: the godoc: an answer is read "in full (at
// most MaxCoalescedBody, and 64 MiB over all answers being read at once,
// counting the memory that holds them)"; "An answer too large to read in
// full ... stays its caller's."
//
// held: 8 users each reading a 24 MiB answer at once: each got all of its
// bytes uncut, and the heap held, once every call had returned, far less
// than the 192 MiB the answers weigh.
func TestAttack46CoalHugeBodiesBounded(t *testing.T) {
	const size = 24 << 20
	chunk := bytes.Repeat([]byte{'z'}, 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: 5 * time.Second, DisableBudget: true, Base: base}
	url := srv.URL + "/users/me/profile"
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const users = 8
	resps := make([]*http.Response, users)
	var wg sync.WaitGroup
	for i := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := attack46Get(tr, context.Background(), url, "25332747900000"+string(rune('1'+i))+"0")
			if err != nil {
				t.Error(err)
				return
			}
			resps[i] = r
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if held > 96<<20 {
		t.Errorf("8 answers of 24 MiB being read: the heap grew %d MiB; want at most the 64 MiB bound and some slack", held>>20)
	}
	for i, r := range resps {
		n, err := io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if err != nil || n != size {
			t.Errorf("user %d: %d bytes, %v; want %d", i, n, err, size)
		}
	}
}

// TestAttack46CoalErrorsAnd429NotLeftBehind: the package godoc: "a Retry-After on
// a retryable status is cached per key; until it passes ... every other call
// fails at once with the cached status"; CoalesceReads: an error is the
// answer of the calls that waited for it, and ReadCacheTTL keeps "each 200
// answer" only.
//
// held: a broken connection's error reached no call made after it; a 429
// (Retry-After: 1) refused the next call locally, and none once the second
// had passed; neither was kept by the read cache.
func TestAttack46CoalErrorsAnd429NotLeftBehind(t *testing.T) {
	t.Parallel() // its own server and Transport; it waits in real time
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1: // a broken connection
			c, _, _ := w.(http.Hijacker).Hijack()
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		case 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: 10 * time.Second, DisableBudget: true, Base: base,
		Policy: Policy{FailFast: true}}
	url := srv.URL + "/users/me/profile"
	call := func() (string, error) {
		r, err := attack46Get(tr, context.Background(), url, xuid1)
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(b), nil
	}
	if _, err := call(); err == nil {
		t.Fatal("broken connection: no error")
	}
	_, err := call()
	var te *ThrottleError
	if !errors.As(err, &te) || te.Local || te.Status != 429 {
		t.Fatalf("second call: %v; want the service's 429 (the first call's error not reused)", err)
	}
	_, err = call()
	if !errors.As(err, &te) || !te.Local {
		t.Errorf("call inside Retry-After: %v; want a local refusal", err)
	}
	time.Sleep(1100 * time.Millisecond)
	if b, err := call(); err != nil || b != "ok" {
		t.Errorf("call after Retry-After passed: %q, %v; want the service's ok", b, err)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("%d requests sent; want 3", got)
	}
}

// TestAttack46CoalNoGoroutineLeft: Transport's godoc: "It starts no goroutines".
//
// held: after coalesced and cached reads, cancelled ones among them, and
// once the base's idle connections are closed, no goroutine is left.
func TestAttack46CoalNoGoroutineLeft(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	runtime.GC()
	before := runtime.NumGoroutine()
	tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: time.Second, DisableBudget: true, Base: base}
	url := srv.URL + "/users/me/profile"
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%4)*40*time.Millisecond+10*time.Millisecond)
			defer cancel()
			if i%3 == 0 {
				ctx = context.Background()
			}
			r, err := attack46Get(tr, ctx, url, xuid1)
			if err == nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		}()
	}
	wg.Wait()
	base.CloseIdleConnections()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		base.CloseIdleConnections()
	}
	if got := runtime.NumGoroutine(); got > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the calls ended, %d before\n%s", got, before, buf[:runtime.Stack(buf, true)])
	}
}
