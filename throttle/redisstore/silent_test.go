package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// TestSilentNodeDownForShortDeadlines: a server that accepts connections
// and never answers, and callers one at a time whose deadlines are all
// shorter than half the store's Timeout, so that each decision ends by
// its caller's own deadline (callersEnd) and none alone judges the node.
// The first such end starts a check that asks the node for a PING within
// the store's whole Timeout; unanswered, it marks the node down, and the
// next decisions fail at once with ErrUnavailable (the transport then uses
// its local budget) instead of each waiting its whole deadline on a dead
// Redis. Before, every decision waited its deadline, for good.
func TestSilentNodeDownForShortDeadlines(t *testing.T) {
	f := startFakeRedis(t, func([]string) string { return "" })
	c := redis.NewClient(&redis.Options{Addr: f.addr(), MaxRetries: -1})
	defer c.Close()
	const timeout, deadline = 400 * time.Millisecond, 60 * time.Millisecond
	s := &Store{Client: c, Timeout: timeout}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 5, Sustain: 50}
	judged := int(timeout/deadline) + 2 // the check's Timeout, from the first decision's end, has passed
	for i := range judged + 3 {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		start := time.Now()
		_, err := s.Reserve(ctx, k, l, time.Now(), 0)
		took := time.Since(start)
		cerr := ctx.Err()
		cancel()
		switch {
		case i == 0 && err != cerr:
			t.Errorf("decision %d: %v, want the caller's own %v", i, err, cerr)
		case i < judged && err != cerr && !errors.Is(err, ErrUnavailable):
			t.Errorf("decision %d: %v, want the caller's own %v or ErrUnavailable", i, err, cerr)
		case i >= judged && (!errors.Is(err, ErrUnavailable) || took > deadline/2):
			t.Errorf("decision %d, over %v after the first unanswered: %v after %v; want ErrUnavailable at once (the node down)", i, timeout, err, took.Round(time.Millisecond))
		}
	}
}
