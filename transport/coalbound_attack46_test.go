package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestAttack46CoalFollowerOfCancelledLeaderSendsItsOwn: the Transport's
// CoalesceReads godoc promises: "A caller waits for another's answer no
// longer than its own call could take (ErrSharedReadTimeout), and never
// past its context; a caller whose deadline is later than the one it
// waited for sends its own when that one ended in an error or a status
// XSAPI retries, and so does one whose wait ended with the other call's
// caller giving up: that call is a whole call of its own, so a caller that
// waited takes at most twice its own call's time."
//
// Here the follower F waits for leader L1 (its own bound is 8 s:
// NoRetry, AttemptTimeout 8 s). At 5.3 s L1 is older than 5 s, so a
// third caller L2 leads a flight of its own for the same key. Then, at 5.6 s, L1's
// caller gives up. F's context is alive; by the godoc F now makes "a whole
// call of its own". Instead it re-joins L2's flight with what is left of
// its first bound and fails with ErrSharedReadTimeout, never having sent
// anything: the leader's cancellation fails a follower with no reason of
// its own.
func TestAttack46CoalFollowerOfCancelledLeaderSendsItsOwn(t *testing.T) {
	t.Parallel() // its own server and Transport; it waits in real time
	var n atomic.Int32
	arrived := make(chan int, 8)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1))
		arrived <- i
		if i <= 2 { // L1's and L2's requests hang until released
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()

	tr := &Transport{TitleID: title, CoalesceReads: true, DisableBudget: true, Base: base}
	pol := Policy{NoRetry: true, AttemptTimeout: 8 * time.Second}
	url := srv.URL + "/users/me/profile"
	send := func(ctx context.Context) (int, error) {
		req, _ := http.NewRequestWithContext(WithPolicy(ctx, pol), "GET", url, nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	wait := func(want int) {
		select {
		case i := <-arrived:
			if i != want {
				t.Fatalf("request %d reached the server, want %d", i, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("request %d never reached the server", want)
		}
	}

	start := time.Now()
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); send(ctx1) }() // L1
	wait(1)

	var fStatus int
	var fErr error
	var fEnd time.Time
	go func() { // F: joins L1
		defer wg.Done()
		fStatus, fErr = send(context.Background())
		fEnd = time.Now()
	}()
	time.Sleep(300 * time.Millisecond)
	if got := n.Load(); got != 1 {
		t.Fatalf("F sent its own request at once (%d requests): it did not join L1", got)
	}

	time.Sleep(time.Until(start.Add(5300 * time.Millisecond)))  // L1 is now older than 5 s
	go func() { defer wg.Done(); send(context.Background()) }() // L2: leads a flight of its own
	wait(2)

	time.Sleep(time.Until(start.Add(5600 * time.Millisecond)))
	cancel1() // L1's caller gives up; F's context is alive
	time.Sleep(time.Until(start.Add(9200 * time.Millisecond)))
	close(release) // L2's request answers only now, after F had its chance
	wg.Wait()
	if fErr != nil || fStatus != 200 {
		t.Errorf("follower whose leader's caller gave up at 5.6 s: status %d, err %v (ended at %v, %d requests sent in all); want its own whole call: 200",
			fStatus, fErr, fEnd.Sub(start).Round(10*time.Millisecond), n.Load())
		if errors.Is(fErr, ErrSharedReadTimeout) {
			t.Logf("F failed with ErrSharedReadTimeout without ever sending a request")
		}
	}
}
