package transport

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestNilBodyIsEmpty: bad input never panics. A base RoundTripper
// that returns a response with a nil Body (stubs, recorders and mocks do;
// http.Client accepts it and fills in an empty body, golang.org/issue/38095)
// makes the transport panic: the attempt wraps the nil body and reads it
// (to drain a retried 503, to read a shared answer, or in the caller's
// hands for a 200).
func TestNilBodyIsEmpty(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		coalesce bool
	}{
		{"503 drained before a retry", 503, false},
		{"200 read by a coalescing leader", 200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: tc.status, Header: http.Header{}, Request: r}, nil // Body nil
				})
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: tc.coalesce}
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("RoundTrip panicked on a response with a nil Body: %v", p)
					}
				}()
				readAs(context.Background(), tr, nil)
			})
		})
	}
}

// TestLeaderPanicLandsItsFlight: every coalesced read ends when
// its leader's call ends. When the leader's call panics (its base, its
// Observe hook, its Logger or RefreshToken; an http.Server recovers a
// handler's panic and goes on), the flight never lands: each follower
// waits out its whole bound (40 s by default; 5 min 20 s with LongCall or
// Policy.MaxWait) before ErrSharedReadTimeout, and the flight stays in the
// map.
func TestLeaderPanicLandsItsFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := true
		var mu sync.Mutex
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			p := first
			first = false
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			if p {
				panic("base failed")
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true}
		var wg sync.WaitGroup
		wg.Go(func() {
			defer func() { recover() }() // as an http.Server does for a handler
			readAs(context.Background(), tr, nil)
		})
		synctest.Wait()
		start := time.Now()
		_, err := readAs(context.Background(), tr, nil)
		wg.Wait()
		if d := time.Since(start); d > time.Second {
			t.Errorf("the follower of a leader that panicked after 100 ms ended after %v (%v); want it to end with its leader", d, err)
		}
		if n := len(tr.reads.flights); n != 0 {
			t.Errorf("%d flights left in the map after every call ended", n)
		}
	})
}
