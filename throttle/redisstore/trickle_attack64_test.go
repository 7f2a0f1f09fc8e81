package redisstore

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// held: Timeout godoc: "Timeout bounds each operation ... A slow or
// unreachable Redis then fails fast with an error wrapping ErrUnavailable."
// A server that answers every script run with a bulk string of 4096 bytes
// trickled one byte per 10 ms (each read makes progress, so no read ever
// times out on its own): Take and Learned, with either client setting and
// a context with no deadline, end within about Timeout (300 ms) with
// ErrUnavailable.
func TestAttack64TrickledReplyBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					req := strings.ToUpper(string(buf[:n]))
					switch {
					case strings.Contains(req, "HELLO"):
						c.Write([]byte("-ERR unknown command\r\n"))
					case strings.Contains(req, "EVAL"):
						c.Write([]byte("$4096\r\n"))
						for range 4096 {
							select {
							case <-stop:
								return
							case <-time.After(10 * time.Millisecond):
							}
							if _, err := c.Write([]byte{'x'}); err != nil {
								return
							}
						}
					default:
						c.Write([]byte("+OK\r\n"))
					}
				}
			}()
		}
	}()
	for _, honour := range []bool{false, true} {
		c := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ContextTimeoutEnabled: honour, MaxRetries: -1})
		s := &Store{Client: c, Timeout: 300 * time.Millisecond}
		start := time.Now()
		_, err := s.Take(context.Background(), throttle.Key{User: "u"}, throttle.Limit{Burst: 1, Sustain: 1}, time.Now())
		if took := time.Since(start); took > 800*time.Millisecond || !errors.Is(err, ErrUnavailable) {
			t.Errorf("ContextTimeoutEnabled=%v: Take took %v: %v", honour, took, err)
		} else {
			t.Logf("ContextTimeoutEnabled=%v: Take took %v: %v", honour, took.Round(time.Millisecond), err)
		}
		s = &Store{Client: c, Timeout: 300 * time.Millisecond} // a fresh store: the Take marked its node down
		start = time.Now()
		_, err = s.Learned(context.Background(), time.Now())
		if took := time.Since(start); took > 800*time.Millisecond || !errors.Is(err, ErrUnavailable) {
			t.Errorf("ContextTimeoutEnabled=%v: Learned took %v: %v", honour, took, err)
		} else {
			t.Logf("ContextTimeoutEnabled=%v: Learned took %v: %v", honour, took.Round(time.Millisecond), err)
		}
		c.Close()
	}
}
