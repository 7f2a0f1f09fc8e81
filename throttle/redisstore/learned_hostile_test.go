package redisstore

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestLearnedWithinTimeout: "Timeout bounds each operation" (Store),
// and TestTimeoutHoldsWithAPlainClient checks it for decisions. Learn and
// Learned run their scripts on the client directly, under
// context.WithTimeout, which the client README shows (ContextTimeoutEnabled
// off) does not honour: while Redis is stuck (DEBUG SLEEP 2) each waits for
// Redis to wake, and with Redis unreachable behind a silent network, for
// the client's own 3 to 5 s. The transport makes them on a call's path
// (every 429, and one call in ten seconds), past the call's deadline.
func TestLearnedWithinTimeout(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	s := &Store{Client: c, Timeout: 250 * time.Millisecond}
	r := throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 5, User: "a", At: time.Now()}
	if _, err := s.Learn(context.Background(), r); err != nil { // the scripts are loaded, the connection open
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		op   func() error
	}{
		{"Learn", func() error { _, err := s.Learn(context.Background(), r); return err }},
		{"Learned", func() error { _, err := s.Learned(context.Background(), time.Now()); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sleeper := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer sleeper.Close()
			slept := make(chan error, 1)
			go func() { slept <- sleeper.Do(context.Background(), "DEBUG", "SLEEP", "2").Err() }()
			time.Sleep(100 * time.Millisecond) // Redis is asleep
			start := time.Now()
			err := tc.op()
			took := time.Since(start)
			if !errors.Is(err, ErrUnavailable) || took > time.Second {
				t.Errorf("%s during DEBUG SLEEP: %v after %v; want ErrUnavailable within its 250 ms timeout", tc.name, err, took.Round(time.Millisecond))
			}
			if err := <-slept; err != nil {
				t.Fatalf("DEBUG SLEEP: %v", err)
			}
		})
	}
}

// TestLearnedStoresAgreeToTheMicrosecond: learn.lua keeps "the same rule" as
// throttle.MemoryBudgetStore (storetest.Learned), with the caller's time
// (CallerTime). It reads the time in whole microseconds: a candidate at
// t0+900 ns and the same user's report 100 ns short of a burst window
// later are a period apart for it (both truncated) but not for the memory
// store: Redis confirms the limit for every user of the scope where the
// memory store keeps it the user's.
func TestLearnedStoresAgreeToTheMicrosecond(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 900, time.UTC)
	reports := []throttle.LimitReport{
		{Scope: "profile", Period: throttle.Burst, Limit: 3, User: "a", At: t0},
		{Scope: "profile", Period: throttle.Burst, Limit: 3, User: "a", At: t0.Add(throttle.BurstPeriod - 100*time.Nanosecond)},
	}
	var got [2]int
	for i, s := range []throttle.LimitStore{&Store{Client: c, CallerTime: true}, &throttle.MemoryBudgetStore{}} {
		for _, r := range reports {
			in, err := s.Learn(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = in.Limit
		}
	}
	if got[0] != got[1] {
		t.Errorf("the same user's report 100 ns short of a window after its candidate: redisstore puts %d in force for the scope, the memory store %d", got[0], got[1])
	}
}

// TestLearnedBoundedWhateverTheHashHolds: Learned returns at most both
// windows of throttle.MaxLearned scopes even when the hash holds more (a
// hash written by something other than Learn, whose script keeps to the
// bound), and skips fields it cannot read.
func TestLearnedBoundedWhateverTheHashHolds(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	s := &Store{Client: c, Prefix: "flood"}
	ctx := context.Background()
	until := time.Now().Add(time.Hour).UnixMicro()
	fields := []any{"b:junk", "not a record", "x:wrong-kind", "5:" + strconv.FormatInt(until, 10) + ":0:0:"}
	for i := range 2*throttle.MaxLearned + 100 {
		fields = append(fields, "b:scope"+strconv.Itoa(i), "5:"+strconv.FormatInt(until, 10)+":0:0:")
	}
	if err := c.HSet(ctx, s.learnedKey(), fields...).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Learned(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2*throttle.MaxLearned {
		t.Errorf("Learned returned %d limits from a hash of %d fields, want the bound, %d", len(got), len(fields)/2, 2*throttle.MaxLearned)
	}
	for _, l := range got {
		if l.Period != throttle.Burst || l.Limit != 5 {
			t.Errorf("a limit read from a field it cannot read: %+v", l)
			break
		}
	}
}

// TestLearnedHashExpires: the hash of learned limits expires a minute after
// its records would all have ended (throttle.LearnedFor after the last
// report), so a fleet that stops learning leaves nothing in Redis.
func TestLearnedHashExpires(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	s := &Store{Client: c, Prefix: "ttl"}
	if _, err := s.Learn(context.Background(), throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 5, User: "a", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ttl, err := c.PTTL(context.Background(), s.learnedKey()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl < throttle.LearnedFor || ttl > throttle.LearnedFor+time.Minute {
		t.Errorf("the learned hash expires in %v, want between LearnedFor (%v) and a minute more", ttl, throttle.LearnedFor)
	}
}
