package transport_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/transport"
)

// TestAttack88FollowersOfAStalledLeaderEndByTheirDeadlines: CoalesceReads'
// godoc: "A caller waits for another's answer no longer than its own call
// could take (ErrSharedReadTimeout), and never past its context".
//
// held: the leader's base never answers (it honours nothing); followers
// with deadlines of 1 s and 3 s end at them, one without a deadline gets
// ErrSharedReadTimeout at 40 s (the 20 s window and one 20 s attempt), and a
// read made 6 s after the stalled one sends its own and is answered.
func TestAttack88FollowersOfAStalledLeaderEndByTheirDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stuck := make(chan struct{})
		var first atomic.Bool
		base := &attack88Base{hold: func(r *http.Request) {
			if first.CompareAndSwap(false, true) {
				<-stuck // ignores its context
			}
		}}
		tr := attack88Transport(base)
		auth := attack88Auth("1111", "token-a")
		start := time.Now()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth)) }()
		time.Sleep(10 * time.Millisecond)
		type result struct {
			took time.Duration
			err  error
		}
		results := make([]result, 3)
		var fw sync.WaitGroup
		for i, d := range []time.Duration{time.Second, 3 * time.Second, 0} {
			fw.Add(1)
			go func() {
				defer fw.Done()
				ctx := context.Background()
				if d > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, d)
					defer cancel()
				}
				_, err := attack88Do(t, tr, attack88Req(ctx, attack88URL, auth))
				results[i] = result{time.Since(start), err}
			}()
		}
		time.Sleep(6 * time.Second)
		late, err := attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
		if err != nil || late == "" {
			t.Errorf("a read 6 s after the stalled one: %q, %v; want its own answer", late, err)
		}
		fw.Wait()
		for i, want := range []time.Duration{time.Second, 3 * time.Second, 40 * time.Second} {
			r := results[i]
			if r.err == nil || r.took > want+10*time.Millisecond+time.Millisecond {
				t.Errorf("follower %d: ended after %v with %v; want an error by %v", i, r.took, r.err, want)
			}
		}
		if !errors.Is(results[2].err, transport.ErrSharedReadTimeout) {
			t.Errorf("the follower without a deadline: %v, want ErrSharedReadTimeout", results[2].err)
		}
		close(stuck)
		wg.Wait()
	})
}

// TestAttack88PanickingBaseEndsEveryFollower: the godoc's "A caller waits for
// another's answer no longer than its own call could take" (RELIABILITY:
// "the flight lands however its leader's call ends").
//
// held: the leader's base panics (its caller recovers); its three followers
// each end at once with their own answer, and a later read works.
func TestAttack88PanickingBaseEndsEveryFollower(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		base := &attack88Base{hold: func(r *http.Request) {
			if calls.Add(1) == 1 {
				time.Sleep(100 * time.Millisecond)
				panic("base blew up")
			}
		}}
		tr := attack88Transport(base)
		auth := attack88Auth("1111", "token-a")
		start := time.Now()
		var recovered any
		bodies := make([]string, 3)
		errs := make([]error, 3)
		took := make([]time.Duration, 3)
		fs := []func(){func() {
			defer func() { recovered = recover() }()
			attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
		}}
		for i := range 3 {
			fs = append(fs, func() {
				time.Sleep(10 * time.Millisecond)
				bodies[i], errs[i] = attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth))
				took[i] = time.Since(start)
			})
		}
		attack88Concurrently(fs...)
		if recovered == nil {
			t.Log("the panic did not reach the leader's caller")
		}
		for i := range 3 {
			if errs[i] != nil || bodies[i] == "" || took[i] > time.Second {
				t.Errorf("follower %d: %q, %v after %v", i, bodies[i], errs[i], took[i])
			}
		}
		if b, err := attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth)); err != nil || b == "" {
			t.Errorf("a later read: %q, %v", b, err)
		}
	})
}

// TestAttack88UnreadBodyOfOneCallerHarmsNoOther: a shared answer is "read in
// full ... and copied to each".
//
// held: of five callers sharing one read, one never reads nor closes its
// body, one reads three bytes and closes: the others get the whole body,
// from the flight and then from the cache.
func TestAttack88UnreadBodyOfOneCallerHarmsNoOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		want := fmt.Sprintf("%0100000d", 7)
		base := &attack88Base{
			hold:   func(*http.Request) { time.Sleep(100 * time.Millisecond) },
			answer: func(r *http.Request) *http.Response { return attack88OK(r, want, nil) },
		}
		tr := attack88Transport(base)
		auth := attack88Auth("1111", "token-a")
		bodies := make([]string, 5)
		var fs []func()
		for i := range 5 {
			fs = append(fs, func() {
				time.Sleep(time.Duration(i) * time.Millisecond)
				resp, err := tr.RoundTrip(attack88Req(context.Background(), attack88URL, auth))
				if err != nil {
					t.Error(err)
					return
				}
				switch i {
				case 0: // never read, never closed
				case 1:
					p := make([]byte, 3)
					resp.Body.Read(p)
					resp.Body.Close()
					resp.Body.Close()
				default:
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					bodies[i] = string(b)
				}
			})
		}
		attack88Concurrently(fs...)
		for i := 2; i < 5; i++ {
			if bodies[i] != want {
				t.Errorf("caller %d got %d bytes of %d", i, len(bodies[i]), len(want))
			}
		}
		if got, err := attack88Do(t, tr, attack88Req(context.Background(), attack88URL, auth)); err != nil || got != want {
			t.Errorf("from the cache: %d bytes, %v", len(got), err)
		}
		if n := base.n.Load(); n != 1 {
			t.Errorf("%d requests sent, want 1", n)
		}
	})
}
