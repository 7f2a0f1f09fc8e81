package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestStoreTimeoutIsOutage: a server that accepts connections and never
// answers, Timeout 200 ms, and callers whose own deadline is that same
// 200 ms (or a hair later): every decision waits the whole Timeout, so the
// store's own timeout has passed, the node did not answer within it, and it
// must be marked down (later decisions fail at once with ErrUnavailable)
// and say so. Before: the caller's deadline had passed too, so each failure
// read as "the caller's own end": context.DeadlineExceeded, the node never
// marked down, and every call waited its whole deadline on a dead Redis.
func TestStoreTimeoutIsOutage(t *testing.T) {
	f := startFakeRedis(t, func([]string) string { return "" })
	c := redis.NewClient(&redis.Options{Addr: f.addr(), MaxRetries: -1})
	defer c.Close()
	const timeout = 200 * time.Millisecond
	s := &Store{Client: c, Timeout: timeout}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 5, Sustain: 50}
	var slow, ctxErrs int
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		start := time.Now()
		_, err := s.Reserve(ctx, k, l, time.Now(), 0)
		took := time.Since(start)
		cancel()
		if err == nil {
			t.Fatalf("Reserve %d on a silent server succeeded", i)
		}
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrUnavailable) {
			ctxErrs++
		}
		if i > 0 && took > timeout/2 {
			slow++
		}
		t.Logf("Reserve %d: %v after %v", i, err, took.Round(time.Millisecond))
	}
	if ctxErrs > 0 || slow > 0 {
		t.Errorf("a silent Redis with callers giving it the whole Timeout: %d of 5 decisions ended as the caller's own deadline, %d of the 4 after the first waited the whole Timeout; want the node marked down (ErrUnavailable at once)", ctxErrs, slow)
	}
}

// TestCallersEndKeepsNodeUp: the other side of the rule above, on a
// silent server: a caller that cancels (its context holding a far
// deadline), or whose deadline gives the node less than half its Timeout,
// ends by its own context; the node is not judged by it (not marked down).
func TestCallersEndKeepsNodeUp(t *testing.T) {
	f := startFakeRedis(t, func([]string) string { return "" })
	c := redis.NewClient(&redis.Options{Addr: f.addr(), MaxRetries: -1})
	defer c.Close()
	// The store's timeout is far from the caller's end, so that a loaded
	// machine's late timer (CI's race step: a cancel due at 150 ms of a
	// 200 ms timeout fired after it) cannot make the store's own timeout
	// come first.
	const timeout = time.Second
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 5, Sustain: 50}
	for name, mk := range map[string]func() (context.Context, context.CancelFunc){
		"cancel": func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			time.AfterFunc(timeout/5, cancel)
			return ctx, cancel
		},
		"short deadline": func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), timeout*2/5)
		},
	} {
		s := &Store{Client: c, Timeout: timeout}
		for i := range 2 {
			ctx, cancel := mk()
			_, err := s.Reserve(ctx, k, l, time.Now(), 0)
			cerr := ctx.Err()
			cancel()
			if err != cerr || err == nil {
				t.Errorf("%s, decision %d: %v, want the caller's own %v (the node not judged by it)", name, i, err, cerr)
			}
		}
	}
}

// TestClusterResetAllErrorClipped: a Cluster whose seed node answers
// every command with a 100 kB error line ending in terminal escapes.
// ResetAll's error must quote it clipped and escaped, and wrap
// ErrUnavailable, as every other operation's does.
func TestClusterResetAllErrorClipped(t *testing.T) {
	huge := "ERR " + strings.Repeat("A", 100_000) + "\x1b[2J\x1b]0;owned\x07"
	f := startFakeRedis(t, func(cmd []string) string {
		switch cmd[0] {
		case "HELLO":
			return "-ERR unknown command 'HELLO'\r\n"
		case "CLIENT", "PING", "SELECT", "READONLY":
			return "+OK\r\n"
		}
		return "-" + huge + "\r\n"
	})
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{f.addr()}, MaxRedirects: -1})
	defer c.Close()
	s := &Store{Client: c, Timeout: 2 * time.Second}
	errs := map[string]error{"ResetAll": s.ResetAll(context.Background())}
	_, errs["Learned"] = s.Learned(context.Background(), time.Now())
	errs["Reset"] = s.Reset(context.Background(), throttle.Key{User: "u"})
	for name, err := range errs {
		if err == nil {
			t.Errorf("%s: nil error from a server refusing everything", name)
			continue
		}
		msg := err.Error()
		if len(msg) > 1000 || strings.ContainsAny(msg, "\x1b\x07") || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: error of %d bytes (escapes: %v, ErrUnavailable: %v), want at most a few hundred bytes, no control characters, wrapping ErrUnavailable", name, len(msg), strings.ContainsAny(msg, "\x1b\x07"), errors.Is(err, ErrUnavailable))
		}
	}
}

// TestClusterResetAllBounded: a Cluster whose seed node accepts
// connections and never answers; Timeout 200 ms. ResetAll must fail within
// about its Timeout, as Reset and every decision do, not wait for
// go-redis's own read timeouts while it reloads the cluster's state.
func TestClusterResetAllBounded(t *testing.T) {
	f := startFakeRedis(t, func([]string) string { return "" })
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{f.addr()}, MaxRedirects: -1})
	defer c.Close()
	s := &Store{Client: c, Timeout: 200 * time.Millisecond}
	start := time.Now()
	err := s.ResetAll(context.Background())
	if took := time.Since(start); !errors.Is(err, ErrUnavailable) || took > time.Second {
		t.Errorf("ResetAll on a silent cluster: %v after %v, want ErrUnavailable within about its 200 ms Timeout", err, took)
	}
}

// TestClusterResetAllForgets: ResetAll on a healthy Cluster of three
// masters forgets every key under the Prefix on every master, and only
// those: 60 keys' counts, spread over the slots, all start again.
func TestClusterResetAllForgets(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c := cl.Client()
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "other:{x}", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s := &Store{Client: c}
	l := throttle.Limit{Burst: 100, Sustain: 1000}
	for i := range 60 {
		if _, err := s.Take(ctx, throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "s"}, l, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ResetAll(ctx); err != nil {
		t.Fatalf("ResetAll: %v", err)
	}
	for i := range 60 {
		d, err := s.Peek(ctx, throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "s"}, l, time.Now())
		if err != nil || d.Burst.Count != 0 {
			t.Fatalf("key %d after ResetAll: %+v, %v; want forgotten", i, d, err)
		}
	}
	if v, err := c.Get(ctx, "other:{x}").Result(); err != nil || v != "1" {
		t.Errorf("a key outside the Prefix after ResetAll: %q, %v; want kept", v, err)
	}
}
