package redisstore

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// evalshaCalls reads Redis's count of EVALSHA commands run.
func evalshaCalls(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// TestInflight2CancelledLoneCallerReturns (claim 1): a lone caller whose context
// is cancelled (no deadline of its own) while its decision is in flight
// returns when its context ends, with either client setting.
func TestInflight2CancelledLoneCallerReturns(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honour), func(t *testing.T) {
			s, delay, k, l := slowedStore(t, honour, 2*time.Second)
			delay.Store(int64(1500 * time.Millisecond))
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := s.Reserve(ctx, k, l, time.Now(), 0)
			took := time.Since(start)
			cancel()
			if took > 100*time.Millisecond+300*time.Millisecond {
				t.Errorf("a caller cancelled at 100 ms returned after %v (err %v); want at its context's end", took.Round(time.Millisecond), err)
			}
			delay.Store(0)
			want := 0
			if err == nil {
				want = 1 // the caller was answered (late): it holds its admission
			}
			if got := countWhenAnswered(t, s, k, l, want); got != want {
				t.Errorf("budget counts %d admissions; want %d (caller's error %v)", got, want, err)
			}
		})
	}
}

// TestInflight2ScriptErrorReleaseNotOwedForever (claims 2, 3, 5): a release
// answered with a script's error (here WRONGTYPE: the node is up and
// answering) is not a release refused because the node is down; owing it
// makes every later batch on the node send it again, and it is owed again
// with a fresh time, so it is never dropped. After callers return, Redis
// should see no more commands from the store.
func TestInflight2ScriptErrorReleaseNotOwedForever(t *testing.T) {
	for _, cause := range []string{"WRONGTYPE", "READONLY"} {
		t.Run(cause, func(t *testing.T) { scriptErrorReleases(t, cause) })
	}
}

func scriptErrorReleases(t *testing.T, cause string) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	admin := srv.Client()
	s := &Store{Client: c, Timeout: time.Second}
	ctx := context.Background()
	bad := throttle.Key{User: "bad"}
	good := throttle.Key{User: "good"}
	l := throttle.Limit{Burst: 1000, Sustain: 1000}
	if _, err := s.Reserve(ctx, good, l, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	switch cause {
	case "WRONGTYPE": // a key of another type: the script answers with an error
		if err := admin.Set(ctx, s.key(bad, "log"), "not a sorted set", 0).Err(); err != nil {
			t.Fatal(err)
		}
	case "READONLY": // the server demoted to a replica (a failover): writes are refused
		bad = good
		if err := admin.Do(ctx, "REPLICAOF", "127.0.0.1", "1").Err(); err != nil {
			t.Fatal(err)
		}
	}
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := s.Reserve(ctx, bad, l, time.Now(), 0); err == nil {
				t.Error("a reserve on a key of another type succeeded")
			} else if cause == "READONLY" {
				t.Log(err)
			}
		})
	}
	wg.Wait()
	for range 3 { // ordinary traffic on the (up) node
		s.Snapshot(ctx, good, l, time.Now()) // answered, with a script's error when read-only
	}
	time.Sleep(500 * time.Millisecond) // callers have returned; releases settle
	n0 := evalshaCalls(t, admin)
	time.Sleep(time.Second)
	n1 := evalshaCalls(t, admin)
	undoing := s.undoing.Load()
	if n1-n0 > 0 {
		t.Errorf("Redis ran %d EVALSHA in 1 s after every caller returned (%d releases running): releases answered with a script's error (node up) send each other again and again", n1-n0, undoing)
	}
	// Ten ordinary decisions, one after another, on the up node.
	for range 10 {
		s.Snapshot(ctx, good, l, time.Now())
	}
	time.Sleep(300 * time.Millisecond)
	n2 := evalshaCalls(t, admin)
	if n2-n1 > 10 {
		t.Errorf("10 ordinary decisions cost Redis %d EVALSHA: each batch that finds the node up sends the owed releases again", n2-n1)
	}
	time.Sleep(300 * time.Millisecond)
	nd, _ := s.nodes.Load("")
	owes := len(nd.(*node).takeOwed())
	t.Logf("goroutines %d -> %d; owed at the end: %d", before, runtime.NumGoroutine(), owes)
	if owes > 0 {
		t.Errorf("%d releases owed to a node that is up and answering", owes)
	}
}
