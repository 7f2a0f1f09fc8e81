package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// TestErrorsDoNotMarkDown: promise (e): a server that answers, 30 ms
// late, every script run with NOSCRIPT, then its EVAL with a script error,
// a CROSSSLOT or a MOVED redirect, and callers whose short deadlines (10 ms)
// or cancels end most decisions first. None of that is the node not
// answering: it must never be marked down, so a patient caller after them
// gets the server's own error, not "is down".
func TestErrorsDoNotMarkDown(t *testing.T) {
	for _, reply := range []string{"-ERR user_script:1: boom\r\n", "-CROSSSLOT Keys in request don't hash to the same slot\r\n", "-MOVED 3999 127.0.0.1:1\r\n"} {
		t.Run(strings.Fields(reply)[0][1:], func(t *testing.T) {
			f := startFakeRedis(t, func(cmd []string) string {
				switch cmd[0] {
				case "HELLO":
					return "-ERR unknown command 'HELLO'\r\n"
				case "CLIENT", "SELECT":
					return "+OK\r\n"
				case "PING":
					return "+PONG\r\n"
				case "EVALSHA":
					time.Sleep(30 * time.Millisecond)
					return "-NOSCRIPT No matching script.\r\n"
				}
				time.Sleep(30 * time.Millisecond)
				return reply
			})
			for _, honour := range []bool{false, true} {
				c := redis.NewClient(&redis.Options{Addr: f.addr(), MaxRetries: -1, ContextTimeoutEnabled: honour})
				s := &Store{Client: c, Timeout: 400 * time.Millisecond}
				k := throttle.Key{User: "u", Title: "t", Scope: "s"}
				l := throttle.Limit{Burst: 10, Sustain: 10}
				for i := range 12 {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
					if i%3 == 0 {
						time.AfterFunc(2*time.Millisecond, cancel)
					}
					s.Reserve(ctx, k, l, time.Now(), 0)
					cancel()
				}
				time.Sleep(100 * time.Millisecond) // any check under way ends
				_, err := s.Reserve(context.Background(), k, l, time.Now(), 0)
				if err == nil || strings.Contains(err.Error(), "is down") || strings.Contains(err.Error(), "no answer") {
					t.Errorf("ContextTimeoutEnabled %v: after short deadlines on a server that answers %q, a patient caller got %v; want the server's own error", honour, strings.TrimSpace(reply), err)
				}
				c.Close()
			}
		})
	}
}
