package client

// Attacks by helper attack26139 (2026-12-06) on "every call ends within its
// context, and every buffer is bounded in bytes", for the typed calls
// against a hostile service.

import (
	"context"
	"errors"
	"fmt"
	"github.com/xblgo/fgrl/internal/racebuild"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// held: a 200 trickled a byte every 50 ms ends at the caller's 300 ms context (fgrl's transport and a plain one)
// TestAttack26TrickledAnswerEndsWithContext: the service sends a 200's header,
// then a byte every 50 ms for ever. A typed call whose context ends after
// 300 ms must return then, through fgrl's transport and through a plain
// http.Transport. Promise (README/RELIABILITY.md "Every call ends, even
// against a stalled server"; every typed call takes its context).
func TestAttack26TrickledAnswerEndsWithContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		w.Write([]byte(`{"profileUsers":[`))
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte(" ")); err != nil || rc.Flush() != nil {
				return
			}
			select {
			case <-r.Context().Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(srv.Close)
	for name, rt := range map[string]http.RoundTripper{"fgrl": nil, "plain": plainTransport(t)} {
		t.Run(name, func(t *testing.T) {
			c := hostileClient(t, srv, rt, "profile.xboxlive.com")
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := c.As(me).GetProfiles(ctx, []string{other}, []string{"Gamertag"})
			d := time.Since(start)
			if err == nil {
				t.Fatalf("GetProfiles of a trickled, unfinished answer: no error")
			}
			if d > 1500*time.Millisecond {
				t.Errorf("GetProfiles returned %v after its 300 ms context ended against a trickled answer: \"Every call ends, even against a stalled server\"", d.Round(time.Millisecond))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T %v, want an *Error", err, err)
			}
		})
	}
}

// held: an endless 200 body at full speed ends at 16 MiB with an *Error, memory bounded
// TestAttack26EndlessFastAnswerBounded: the service answers 200 with an endless
// body at full speed (a 10 GB one, never ending). The call must end with an
// error after reading about 16 MiB, at once, not at its context's end, and
// leave no more than a few tens of MiB live. Promise: RELIABILITY.md "Bad
// input never panics, hangs or grows memory"; client/do.go's maxResponse.
func TestAttack26EndlessFastAnswerBounded(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "10000000000")
		w.WriteHeader(200)
		w.Write([]byte(`{"profileUsers":[{"id":"`))
		chunk := []byte(strings.Repeat("9", 64<<10))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c := hostileClient(t, srv, nil, "profile.xboxlive.com")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	_, err := c.As(me).GetProfiles(ctx, []string{other}, []string{"Gamertag"})
	d := time.Since(start)
	runtime.ReadMemStats(&m1)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("GetProfiles of an endless answer: %v, want the answer refused as too large", err)
	}
	if d > 5*time.Second {
		t.Errorf("GetProfiles of an endless fast answer took %v: it should stop at 16 MiB", d.Round(time.Millisecond))
	}
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 256<<20 {
		t.Errorf("GetProfiles of an endless answer allocated %d MiB: \"Bad input never ... grows memory\"", got>>20)
	}
	t.Logf("ended in %v after the service wrote %d MiB; allocated %d MiB", d.Round(time.Millisecond), sent.Load()>>20, (m1.TotalAlloc-m0.TotalAlloc)>>20)
}

// held: eight lookups in a batch the service stalls each return at their own deadline; the batch call ends after the last leaves
// TestAttack26BatchLookupsLeaveStalledBatch: with BatchWindow, eight GetProfile
// lookups merge into one batch call the service never answers. Each lookup
// has its own deadline (200 ms to 900 ms); each must return at its own, and
// once the last has left the batch call must be cancelled (the service sees
// its request end). Promise (Config.BatchWindow): "Each lookup returns at
// its own deadline or cancellation; the batch call runs until the latest
// deadline of its lookups ... and is cancelled once none of them is
// waiting".
func TestAttack26BatchLookupsLeaveStalledBatch(t *testing.T) {
	reqEnded := make(chan time.Time, 8)
	var reqs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		io.Copy(io.Discard, r.Body) // net/http sees the client leave only once the body is read
		<-r.Context().Done()
		reqEnded <- time.Now()
	}))
	t.Cleanup(srv.Close)
	base := plainTransport(t)
	c, err := New(Config{TitleID: title, Transport: base, Endpoints: map[string]string{"profile.xboxlive.com": srv.URL},
		BatchWindow: 20 * time.Millisecond,
		Tokens: TokenFunc(func(context.Context, string) (Token, error) {
			return Token{Authorization: hostileToken}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	u := c.As(me)
	var wg sync.WaitGroup
	late := make([]time.Duration, 8)
	start := time.Now()
	var lastDeadline time.Time
	for i := range 8 {
		dl := start.Add(time.Duration(200+100*i) * time.Millisecond)
		if dl.After(lastDeadline) {
			lastDeadline = dl
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithDeadline(context.Background(), dl)
			defer cancel()
			x := fmt.Sprintf("25334054%08d", 2000+i)
			_, err := u.GetProfile(ctx, x, []string{"Gamertag"})
			late[i] = time.Since(dl)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("lookup %d: %v, want an *Error wrapping the deadline", i, err)
			}
		}()
	}
	wg.Wait()
	for i, l := range late {
		if l > 500*time.Millisecond {
			t.Errorf("lookup %d returned %v after its own deadline: Config.BatchWindow, \"Each lookup returns at its own deadline or cancellation\"", i, l.Round(time.Millisecond))
		}
	}
	select {
	case e := <-reqEnded:
		if d := e.Sub(lastDeadline); d > time.Second {
			t.Errorf("the stalled batch call ended %v after the last lookup left: \"is cancelled once none of them is waiting\"", d.Round(time.Millisecond))
		}
	case <-time.After(3 * time.Second):
		t.Errorf("the stalled batch call still under way 3 s after its last lookup left: Config.BatchWindow, \"is cancelled once none of them is waiting\"")
	}
	if n := reqs.Load(); n != 1 {
		t.Logf("%d requests for 8 lookups", n)
	}
}

// held: ever-growing continuation tokens; the listing stops at the caller's break
// TestAttack26PagesGrowingTokenEachPageBounded: a listing whose every page holds
// one item and a continuation token 64 KiB longer than the last, never
// ending. The caller stops after 20 items: the iterator must stop fetching
// then (no request after the break), each request bounded.
func TestAttack26PagesGrowingTokenEachPageBounded(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		tok := strings.Repeat("t", int(i)*(64<<10))
		fmt.Fprintf(w, `{"achievements":[{"id":"%d","serviceConfigId":%q,"name":"A%d","titleAssociations":[]}],`+
			`"pagingInfo":{"continuationToken":%q}}`, i, scid, i, tok)
	}))
	t.Cleanup(srv.Close)
	c := hostileClient(t, srv, plainTransport(t), "achievements.xboxlive.com")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	items := 0
	for _, err := range c.As(me).AllAchievements(ctx, me, title, 1) {
		if err != nil {
			t.Logf("ended with %v", err)
			break
		}
		items++
		if items == 20 {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	if got := n.Load(); got > 20 {
		t.Errorf("the listing made %d requests for the 20 items the caller took before it stopped", got)
	}
}

// held: a page answered 429/503 with Retry-After: 3600 ends the listing at the caller's context
// TestAttack26PagedRetryAfterEndsWithContext: a listing's second page is
// answered 429 with Retry-After: 3600 (and a 503 with one in another run);
// the caller's context ends 400 ms after it began. The listing must end
// then, with an *Error, not wait out the service's hour. Promise: README /
// RELIABILITY.md "Every call ends, even against a stalled server"; every
// typed call takes its context.
func TestAttack26PagedRetryAfterEndsWithContext(t *testing.T) {
	for _, status := range []int{429, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					fmt.Fprintf(w, `{"achievements":[{"id":"1","serviceConfigId":%q,"name":"A1","titleAssociations":[]}],`+
						`"pagingInfo":{"continuationToken":"B"}}`, scid)
					return
				}
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(status)
			}))
			t.Cleanup(srv.Close)
			c := hostileClient(t, srv, nil, "achievements.xboxlive.com")
			ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
			defer cancel()
			start := time.Now()
			var last error
			for _, err := range c.As(me).AllAchievements(ctx, me, title, 1) {
				if err != nil {
					last = err
				}
			}
			d := time.Since(start)
			if last == nil {
				t.Fatalf("the listing ended without an error after %d requests", n.Load())
			}
			if d > 2*time.Second {
				t.Errorf("the listing ended %v after it began, its context 400 ms: \"Every call ends\"", d.Round(time.Millisecond))
			}
			var e *Error
			if !errors.As(last, &e) {
				t.Errorf("error %T %v, want an *Error", last, last)
			}
			t.Logf("%v after %v and %d requests", last, d.Round(time.Millisecond), n.Load())
		})
	}
}

// held: a TokenSource that stalls until its context ends: calls and batched lookups end at their deadline, the batch's Token call is cancelled
// TestAttack26TokenSourceStallsBatchAndCall: the TokenSource stalls (until its
// context ends, as a sign-in against a stalled service would). A plain
// call and three lookups merged by BatchWindow, each with a 200 ms
// deadline, must return then, and the batch's own Token call must see its
// context end once they left. Promise (Config.BatchWindow): "Each lookup
// returns at its own deadline or cancellation; ... cancelled once none of
// them is waiting".
func TestAttack26TokenSourceStallsBatchAndCall(t *testing.T) {
	var inToken atomic.Int64
	c, err := New(Config{TitleID: title, Transport: plainTransport(t),
		Endpoints:   map[string]string{"profile.xboxlive.com": "http://127.0.0.1:9"},
		BatchWindow: 10 * time.Millisecond,
		Tokens: TokenFunc(func(ctx context.Context, _ string) (Token, error) {
			inToken.Add(1)
			defer inToken.Add(-1)
			<-ctx.Done()
			return Token{}, ctx.Err()
		})})
	if err != nil {
		t.Fatal(err)
	}
	u := c.As(me)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			x := fmt.Sprintf("25334054%08d", 3000+i)
			var err error
			if i == 0 {
				_, err = u.GetProfiles(ctx, []string{x}, []string{"Gamertag"})
			} else {
				_, err = u.GetProfile(ctx, x, []string{"Gamertag"})
			}
			if err == nil {
				t.Errorf("call %d: no error", i)
			}
		}()
	}
	wg.Wait()
	if d := time.Since(start); d > time.Second {
		t.Errorf("calls with 200 ms deadlines returned after %v with a stalled TokenSource", d.Round(time.Millisecond))
	}
	deadline := time.Now().Add(2 * time.Second)
	for inToken.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := inToken.Load(); n > 0 {
		t.Errorf("%d Token calls still waiting 2 s after every lookup left: the batch call was not cancelled (Config.BatchWindow: \"cancelled once none of them is waiting\")", n)
	}
}
