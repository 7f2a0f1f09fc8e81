package redisstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// attack64HugeReplies are script answers announcing lengths no reply can have.
var attack64HugeReplies = map[string]string{
	"bulk":  "$9223372036854775806\r\n",
	"array": "*9223372036854775806\r\n",
}

// TestAttack64HugeLengthReply: a hostile (or corrupted) server answers a
// decision with a bulk string, or an array, whose length is near 2^63.
// Godoc: "ErrUnavailable wraps every failure to reach Redis or run a
// script", and Timeout: "A slow or unreachable Redis then fails fast with
// an error wrapping ErrUnavailable". The reply is read by go-redis, which
// allocates the announced length: the process panics (makeslice: len out
// of range) instead of the caller getting ErrUnavailable. Each case runs
// in a child process so that the panic is reported, not fatal to the test
// binary.
func TestAttack64HugeLengthReply(t *testing.T) {
	if kind := os.Getenv("ATTACK64_HUGE"); kind != "" {
		attack64HugeChild(t, kind)
		return
	}
	for _, kind := range []string{"bulk", "array"} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestAttack64HugeLengthReply$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "ATTACK64_HUGE="+kind)
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Contains(string(out), "panic") {
				s := string(out)
				if i := strings.Index(s, "panic"); i >= 0 {
					s = s[i:min(len(s), i+300)]
				}
				t.Errorf("a %s reply of length 2^63-2 to a Take: child exited %v:\n%s", kind, err, s)
			}
		})
	}
}

func attack64HugeChild(t *testing.T, kind string) {
	fake := startAtkFake(t, func(cmd []string) (string, bool) {
		if out, ok := attack64Handshake(cmd); ok {
			return out, false
		}
		return attack64HugeReplies[kind], false
	})
	c := redis.NewClient(&redis.Options{Addr: fake.addr(), MaxRetries: -1})
	defer c.Close()
	s := &Store{Client: c, Timeout: 500 * time.Millisecond}
	_, err := s.Take(context.Background(), throttle.Key{User: "u", Title: "t", Scope: "s"}, throttle.Limit{Burst: 1, Sustain: 1}, time.Now())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Take = %v, want ErrUnavailable", err)
	}
	t.Logf("Take: %v", err)
}

// TestAttack64CancelBoundsNonDecisions: README: "Each operation is bounded
// (`Timeout`, 250 ms by default), with any client (with
// `ContextTimeoutEnabled: true` a slow read also stops at that timeout ...),
// and a caller returns when its own context ends". README's own client
// (ContextTimeoutEnabled: true), a silent Redis, Timeout 3 s, and a caller
// that cancels its context (no deadline) after 50 ms: Reset, ResetAll,
// Learn and Learned must return about then. within() runs them inline for
// such a client, and go-redis turns only a deadline, not a cancel, into
// its socket's: each waits the whole Timeout.
func TestAttack64CancelBoundsNonDecisions(t *testing.T) {
	fake := startAtkFake(t, func(cmd []string) (string, bool) {
		if out, ok := attack64Handshake(cmd); ok {
			return out, false
		}
		return "", false // silent
	})
	c := redis.NewClient(&redis.Options{Addr: fake.addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	s := &Store{Client: c, Timeout: 3 * time.Second}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	ops := map[string]func(ctx context.Context) error{
		"Reset":    func(ctx context.Context) error { return s.Reset(ctx, k) },
		"ResetAll": func(ctx context.Context) error { return s.ResetAll(ctx) },
		"Learn": func(ctx context.Context) error {
			_, err := s.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 5, User: "x", At: time.Now()})
			return err
		},
		"Learned": func(ctx context.Context) error { _, err := s.Learned(ctx, time.Now()); return err },
		"Take (control)": func(ctx context.Context) error {
			_, err := s.Take(ctx, k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now())
			return err
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			start := time.Now()
			err := op(ctx)
			if took := time.Since(start); took > time.Second {
				t.Errorf("%s with its context cancelled at 50 ms returned after %v: %v", name, took.Round(time.Millisecond), err)
			}
		})
	}
}
