package transport

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// TestSilentRedisShortDeadlines: the shared store is a Redis that accepts
// connections and never answers, and calls come one at a time, each with
// a deadline shorter than half the store's Timeout. The first few wait
// their deadlines on it (each is its caller's own end); then the store
// marks the node down and the calls go on the local budget, served, and
// the outage is logged once. Before, every call waited its deadline on the
// dead Redis and failed, and nothing was logged.
func TestSilentRedisShortDeadlines(t *testing.T) {
	rc := redis.NewClient(&redis.Options{Addr: redistest.Silent(t), MaxRetries: -1})
	defer rc.Close()
	var logs logBuffer
	tr := &Transport{Base: mock.NewHandler(), TitleID: title, RetryWindow: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Budget: &redisstore.Store{Client: rc, Timeout: 400 * time.Millisecond}}
	served, failed, lastFailed := 0, 0, -1
	for i := range 40 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
		_, err := get(t, tr, ctx, profileURL, strconv.Itoa(2533274790000000+i)) // a user each: no local limit is reached
		cancel()
		switch {
		case err == nil:
			served++
		case errors.Is(err, context.DeadlineExceeded):
			failed, lastFailed = failed+1, i
		default:
			t.Fatalf("call: %v", err)
		}
	}
	t.Logf("%d of 40 calls served, %d failed on their deadlines, the last of them call %d", served, failed, lastFailed)
	// The store judges the node within its 400 ms Timeout of the first
	// unanswered call: about 8 calls of 60 ms, on a machine at rest; 25
	// leaves a CI run's load a second more (before the fix, all 40 failed).
	if lastFailed >= 25 {
		t.Errorf("%d of 40 calls served, %d failed on their deadlines, the last of them call %d; want the store to give up on the silent node after a few and the rest served on the local budget", served, failed, lastFailed)
	}
	if n := strings.Count(logs.String(), "using a local budget"); n != 1 {
		t.Errorf("outage logged %d times, want 1:\n%s", n, logs.String())
	}
}
