package redisstore

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// fakeRedis is a loopback TCP server speaking just enough RESP: answer says
// what to write back for a command (its name upper-cased and its
// arguments); an empty answer means never answer.
type fakeRedis struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func startFakeRedis(t *testing.T, answer func(cmd []string) string) *fakeRedis {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRedis{ln: ln}
	f.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			f.wg.Go(func() { serveFakeRedis(c, answer) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *fakeRedis) addr() string { return f.ln.Addr().String() }

func serveFakeRedis(c net.Conn, answer func(cmd []string) string) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if !strings.HasPrefix(line, "*") {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		cmd := make([]string, 0, n)
		for i := 0; i < n; i++ {
			hdr, err := r.ReadString('\n')
			if err != nil {
				return
			}
			size, _ := strconv.Atoi(strings.TrimSpace(hdr[1:]))
			b := make([]byte, size+2)
			if _, err := io.ReadFull(r, b); err != nil {
				return
			}
			cmd = append(cmd, string(b[:size]))
		}
		if len(cmd) > 0 {
			cmd[0] = strings.ToUpper(cmd[0])
		}
		if out := answer(cmd); out != "" {
			if _, err := c.Write([]byte(out)); err != nil {
				return
			}
		}
	}
}

// TestRedisErrorClipped: a server whose answer to a script run is an
// error line of 100 kB ending in terminal escapes; the store's error must
// quote it clipped (the store clips its scripts' own messages to 200 bytes),
// not hand the whole line, escapes and all, to the caller's logs.
func TestRedisErrorClipped(t *testing.T) {
	huge := "ERR " + strings.Repeat("A", 100_000) + "\x1b[2J\x1b]0;owned\x07"
	f := startFakeRedis(t, func(cmd []string) string {
		switch cmd[0] {
		case "HELLO":
			return "-ERR unknown command 'HELLO'\r\n"
		case "CLIENT", "PING", "SELECT":
			return "+OK\r\n"
		}
		return "-" + huge + "\r\n"
	})
	c := redis.NewClient(&redis.Options{Addr: f.addr(), MaxRetries: -1})
	defer c.Close()
	s := &Store{Client: c, Timeout: 2 * time.Second}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 1, Sustain: 1}
	_, terr := s.Take(context.Background(), k, l, time.Now())
	_, rerr := s.Reserve(context.Background(), k, l, time.Now(), 0)
	for name, err := range map[string]error{"Take": terr, "Reserve": rerr} {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", name, err)
			continue
		}
		if msg := err.Error(); len(msg) > 1000 || strings.ContainsAny(msg, "\x1b\x07") {
			t.Errorf("%s: error of %d bytes (escapes: %v), want it clipped to a few hundred bytes, no control characters", name, len(msg), strings.ContainsAny(msg, "\x1b\x07"))
		}
	}
}

// TestClusterLookupBounded: a Cluster client whose seed node accepts
// connections but never answers. Timeout (200 ms) bounds each operation, so
// the first decision must fail within it, not wait for go-redis's own read
// timeout (3 s) while it looks up the key's master.
func TestClusterLookupBounded(t *testing.T) {
	f := startFakeRedis(t, func([]string) string { return "" })
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{f.addr()}, MaxRedirects: -1})
	defer c.Close()
	s := &Store{Client: c, Timeout: 200 * time.Millisecond}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	start := time.Now()
	_, err := s.Reserve(context.Background(), k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now(), 0)
	took := time.Since(start)
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("Reserve on a silent cluster: %v, want ErrUnavailable", err)
	}
	if took > time.Second {
		t.Errorf("Reserve on a silent cluster took %v, want about its 200 ms Timeout", took)
	}
	start = time.Now()
	_, err = s.Learned(context.Background(), time.Now())
	if took := time.Since(start); err == nil || took > time.Second {
		t.Errorf("Learned on a silent cluster: %v after %v, want an error within about its 200 ms Timeout", err, took)
	}
}

// TestResetBounded: Reset and ResetAll against a server that accepts
// connections and never answers, through README's plain client
// (ContextTimeoutEnabled off): Timeout (200 ms) bounds each operation, so
// each must fail within about it, not after go-redis's read timeout (3 s,
// and retries).
func TestResetBounded(t *testing.T) {
	f := startFakeRedis(t, func([]string) string { return "" })
	c := redis.NewClient(&redis.Options{Addr: f.addr()})
	defer c.Close()
	s := &Store{Client: c, Timeout: 200 * time.Millisecond}
	start := time.Now()
	err := s.Reset(context.Background(), throttle.Key{User: "u", Title: "t", Scope: "s"})
	if took := time.Since(start); err == nil || took > time.Second {
		t.Errorf("Reset on a silent server: %v after %v, want an error within about its 200 ms Timeout", err, took)
	}
	start = time.Now()
	err = s.ResetAll(context.Background())
	if took := time.Since(start); err == nil || took > time.Second {
		t.Errorf("ResetAll on a silent server: %v after %v, want an error within about its 200 ms Timeout", err, took)
	}
}
