package redisstore

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/storetest"
)

func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	n := 0
	storetest.ServerRule(t, func(a throttle.Align) throttle.ServerStore {
		n++
		return &Store{Client: c, Align: a, CallerTime: true, Prefix: "conf" + string(rune('a'+n))}
	})
	storetest.BudgetRule(t, func(margin time.Duration) throttle.BudgetStore {
		// A Timeout of seconds: the suite checks the rule, and one case
		// fills a log with MaxLimit admissions in one script.
		return &Store{Client: c, CallerTime: true, Prefix: "budget", Margin: margin, Timeout: 10 * time.Second}
	})
	t.Run("learned", func(t *testing.T) { storetest.Learned(t, &Store{Client: c, Prefix: "learned", CallerTime: true}) })
	t.Run("reset", func(t *testing.T) {
		other := &Store{Client: c, CallerTime: true, Prefix: "other"}
		k := throttle.Key{User: "u", Title: "t", Scope: "x"}
		l := throttle.Limit{Burst: 5, Sustain: 5}
		other.Take(context.Background(), k, l, time.Unix(1e9, 0))
		storetest.Reset(t, &Store{Client: c, CallerTime: true, Prefix: "mine"})
		if d, _ := other.Peek(context.Background(), k, l, time.Unix(1e9, 0)); d.Burst.Count != 1 {
			t.Errorf("ResetAll of prefix mine reset prefix other: count %d", d.Burst.Count)
		}
	})
}

// TestTwoStoresOneLimit: goroutines deciding through two stores (two
// connections, as two processes would) admit exactly the limit, by the Redis
// clock.
func TestTwoStoresOneLimit(t *testing.T) {
	srv := redistest.Start(t)
	stores := []*Store{{Client: srv.Client()}, {Client: srv.Client()}}
	k := throttle.Key{User: "u", Title: "t", Scope: "profile"}
	l := throttle.Limit{Burst: 30, Sustain: 100}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Go(func() {
			for i := 0; i < 10; i++ {
				d, err := stores[g%2].Take(context.Background(), k, l, time.Now())
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 30 {
		t.Errorf("allowed %d of 160, want exactly the burst limit 30", got)
	}
	var admitted atomic.Int64
	for g := 0; g < 16; g++ {
		wg.Go(func() {
			for i := 0; i < 10; i++ {
				a, err := stores[g%2].Reserve(context.Background(), k, l, time.Now(), 0)
				if err == nil && a.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got != 30 {
		t.Errorf("budget admitted %d of 160, want exactly 30", got)
	}
}

// TestKeysExpire: a key's structures expire with its windows, plus a
// second: the server rule's with its sustain window, the budget's with its
// newest admission's sustain span (margin included).
func TestKeysExpire(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	s := &Store{Client: c}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	s.Take(context.Background(), k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now())
	ttl, err := c.PTTL(context.Background(), s.key(k, "s")).Result()
	if err != nil || ttl <= 300*time.Second || ttl > 301*time.Second {
		t.Errorf("PTTL = %v, %v; want the sustain period and a second", ttl, err)
	}
	s.Reserve(context.Background(), k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now(), 0)
	ttl, err = c.PTTL(context.Background(), s.key(k, "log")).Result()
	if err != nil || ttl <= 301*time.Second || ttl > 302*time.Second {
		t.Errorf("PTTL of the budget = %v, %v; want the sustain period, the margin and a second", ttl, err)
	}
	if a, b := s.key(k, "log"), s.key(k, "meta"); a[:len(a)-3] != b[:len(b)-4] {
		t.Errorf("keys %q and %q do not share a hash tag", a, b)
	}
}

// TestRedisClock: without CallerTime, decisions take Redis's clock (TIME,
// in microseconds): the window a decision opens is the one a store given
// that instant as its now sees.
func TestRedisClock(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	k := throttle.Key{User: "u", Title: "t", Scope: "clock"}
	l := throttle.Limit{Burst: 5, Sustain: 50}
	before, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Store{Client: c}).Take(ctx, k, l, time.Time{}); err != nil { // its now is not read
		t.Fatal(err)
	}
	d, err := (&Store{Client: c, CallerTime: true}).Peek(ctx, k, l, before.Add(10*time.Second))
	if err != nil || d.Burst.Count != 1 || d.Burst.Reset < 5*time.Second || d.Burst.Reset >= 6*time.Second {
		t.Errorf("Peek 10 s after Redis's clock = %+v, %v; want the window opened then, 5 s left", d, err)
	}
}

func TestRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	var dials atomic.Int64
	// One dial per connection and no command retries: go-redis dials in a
	// goroutine of its own and, by default, goes on retrying (5 dials, with
	// backoff) after the call that wanted the connection has given up, so
	// the first Take's leftover dials would be counted against Reserve.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: time.Second, DialerRetries: 1, MaxRetries: -1,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}})
	defer c.Close()
	s := &Store{Client: c, Timeout: 200 * time.Millisecond}
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	if _, err := s.Take(context.Background(), k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if _, err := s.Take(context.Background(), k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("with Redis down: %v, want ErrUnavailable", err)
	}
	// The node is left alone for a second: a call within it fails without
	// trying to connect (go-redis's own pool also stops dialling for a
	// while, so the error, the circuit's, is what tells the two apart).
	before := dials.Load()
	if _, err := s.Reserve(context.Background(), k, throttle.Limit{Burst: 1}, time.Now(), 0); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "Redis is down") {
		t.Errorf("Reserve with Redis down: %v, want ErrUnavailable from the store's circuit", err)
	}
	if n := dials.Load() - before; n != 0 {
		t.Errorf("Reserve right after a failure dialled Redis %d times, want 0 (the node is left alone for a second)", n)
	}
	srv.Restart()
	// Back within a second: the next probe finds it.
	deadline := time.Now().Add(probeEvery + 500*time.Millisecond)
	for {
		_, err := s.Take(context.Background(), k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now())
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestNoClient(t *testing.T) {
	if _, err := (&Store{}).Take(context.Background(), throttle.Key{}, throttle.Limit{Sustain: 1}, time.Now()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("no client: %v", err)
	}
}

// TestBatchedResultsStayApart: concurrent decisions share pipelines, yet each
// caller gets its own key's answer.
func TestBatchedResultsStayApart(t *testing.T) {
	srv := redistest.Start(t)
	s := &Store{Client: srv.Client()}
	var wg sync.WaitGroup
	for g := 0; g < 50; g++ {
		wg.Go(func() {
			k := throttle.Key{User: strconv.Itoa(g), Title: "t", Scope: "s"}
			for i := 1; i <= 5; i++ {
				d, err := s.Take(context.Background(), k, throttle.Limit{Burst: 3, Sustain: 100}, time.Now())
				if err != nil || d.Burst.Count != i || d.Allowed != (i <= 3) {
					t.Errorf("key %d call %d: %+v, %v", g, i, d, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestTimeoutHoldsWithAPlainClient: with the client README shows
// (redis.NewClient with an address, ContextTimeoutEnabled off), Timeout still
// bounds a decision while Redis is stuck in a DEBUG SLEEP (it took 5 s, the
// client's own read timeout, before).
func TestTimeoutHoldsWithAPlainClient(t *testing.T) {
	srv := redistest.Start(t)
	for _, honour := range []bool{false, true} {
		t.Run("ContextTimeoutEnabled="+strconv.FormatBool(honour), func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: honour})
			defer c.Close()
			s := &Store{Client: c, Timeout: 250 * time.Millisecond}
			k := throttle.Key{User: "u", Title: "t", Scope: "profile"}
			if _, err := s.Take(context.Background(), k, throttle.Limit{Burst: 10, Sustain: 30}, time.Now()); err != nil {
				t.Fatal(err)
			}
			sleeper := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer sleeper.Close()
			slept := make(chan error, 1)
			go func() { slept <- sleeper.Do(context.Background(), "DEBUG", "SLEEP", "2").Err() }()
			time.Sleep(100 * time.Millisecond) // Redis is asleep
			_, err := s.Take(context.Background(), k, throttle.Limit{Burst: 10, Sustain: 30}, time.Now())
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("decision during DEBUG SLEEP: %v, want ErrUnavailable", err)
			}
			select {
			case <-slept:
				t.Error("the decision waited for Redis to wake (2 s), not its 250 ms timeout")
			default:
			}
			if err := <-slept; err != nil {
				t.Fatalf("DEBUG SLEEP: %v", err)
			}
		})
	}
}

// TestSayWhatFailed: a wrong password, a missing one and a braced prefix
// each give an error that names the cause (a wrong password read
// "unexpected type=<nil> for Slice" before).
func TestSayWhatFailed(t *testing.T) {
	srv := redistest.Start(t, "--requirepass", "secret")
	k := throttle.Key{User: "u", Title: "t", Scope: "profile"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	tests := []struct {
		name, password, prefix, want string
	}{
		{"wrong password", "wrong", "", "WRONGPASS"},
		{"no password", "", "", "NOAUTH"},
		{"empty hash tag", "secret", "{}", "may not contain '{' or '}'"},
		{"braced prefix", "secret", "{fgrl}", "may not contain '{' or '}'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: tt.password})
			defer c.Close()
			s := &Store{Client: c, Prefix: tt.prefix}
			_, err := s.Take(context.Background(), k, l, time.Now())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Take = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestResetAllEscapesPrefix: a prefix with glob characters resets its own
// keys only, not those of stores whose prefixes the pattern would match.
func TestResetAllEscapesPrefix(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	k := throttle.Key{User: "u", Title: "t", Scope: "x"}
	l := throttle.Limit{Burst: 5, Sustain: 5}
	now := time.Unix(1e9, 0)
	for _, prefix := range []string{"*", "fg?l", "[a-z]*", `back\slash`} {
		t.Run(prefix, func(t *testing.T) {
			mine := &Store{Client: c, CallerTime: true, Prefix: prefix}
			others := []*Store{{Client: c, CallerTime: true, Prefix: "fgrl"}, {Client: c, CallerTime: true, Prefix: "other"}}
			for _, s := range append(others, mine) {
				if _, err := s.Take(ctx, k, l, now); err != nil {
					t.Fatal(err)
				}
			}
			if err := mine.ResetAll(ctx); err != nil {
				t.Fatal(err)
			}
			if d, _ := mine.Peek(ctx, k, l, now); d.Burst.Count != 0 {
				t.Errorf("its own count survived: %d", d.Burst.Count)
			}
			for _, o := range others {
				if d, _ := o.Peek(ctx, k, l, now); d.Burst.Count == 0 {
					t.Errorf("ResetAll of prefix %q wiped prefix %q", prefix, o.Prefix)
				}
				o.ResetAll(ctx)
			}
		})
	}
}

// TestResetAllPages: ResetAll deletes more keys than one SCAN page holds,
// and no other prefix's.
func TestResetAllPages(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := range 3 * resetBatch {
		pipe.Set(ctx, "mine:{"+strconv.Itoa(i)+"}:s", "x", 0)
	}
	pipe.Set(ctx, "other:{0}:s", "x", 0)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := (&Store{Client: c, Prefix: "mine"}).ResetAll(ctx); err != nil {
		t.Fatal(err)
	}
	if keys, err := c.Keys(ctx, "*").Result(); err != nil || len(keys) != 1 || keys[0] != "other:{0}:s" {
		t.Errorf("keys left: %d (%v), want only other:{0}:s", len(keys), err)
	}
}

// TestReleaseAfterStateLoss: a slot booked before Redis lost the key's
// state (here FLUSHALL, as a restart without persistence or a failover to a
// lagging replica) released afterwards frees none of the admissions booked
// since: a burst of 3 still admits 3, not 4.
func TestReleaseAfterStateLoss(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	s := &Store{Client: c, CallerTime: true, Margin: -1}
	k := throttle.Key{User: "u", Title: "t", Scope: "x"}
	l := throttle.Limit{Burst: 3, Sustain: 30}
	now := time.Unix(1e9, 0)
	var before []throttle.Admission
	for range 3 {
		a, err := s.Reserve(ctx, k, l, now, 0)
		if err != nil || !a.Allowed {
			t.Fatalf("%+v %v", a, err)
		}
		before = append(before, a)
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if a, err := s.Reserve(ctx, k, l, now, 0); err != nil || !a.Allowed {
			t.Fatalf("after the loss: %+v %v", a, err)
		}
	}
	for _, a := range before {
		if err := s.Release(ctx, k, l, a.Slot); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := s.Reserve(ctx, k, l, now, 0); err != nil || a.Allowed {
		t.Errorf("a 4th call admitted against a burst of 3 (%+v, %v): an old slot's release freed a new one", a, err)
	}
}

// TestLearnedPerPrefix: stores with different prefixes keep their learned
// limits apart, the default prefix's included.
func TestLearnedPerPrefix(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	stores := []*Store{{Client: c}, {Client: c, Prefix: "a"}, {Client: c, Prefix: "b"}}
	now := time.Now()
	for i, s := range stores {
		for _, u := range []string{"u1", "u2"} { // confirmed: in force
			if _, err := s.Learn(ctx, throttle.LimitReport{Scope: "profile", Period: throttle.Burst, Limit: 10 + i, User: u, At: now}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, s := range stores {
		got, err := s.Learned(ctx, now)
		if err != nil || len(got) != 1 || got[0].Limit != 10+i {
			t.Errorf("prefix %q: Learned = %v, %v; want its own burst %d", s.Prefix, got, err, 10+i)
		}
	}
}

// TestAdmissionIDs: an admission's id is never zero (a Slot of zero means
// nothing was booked) nor negative, and stays below 2^52 - MaxLimit, so that
// a double carries it and a sync's run of ids from it exactly.
func TestAdmissionIDs(t *testing.T) {
	for range 1000 {
		if id := admissionID(); id < 1 || id >= 1<<52-throttle.MaxLimit {
			t.Fatalf("admissionID() = %d, want it in [1, 2^52 - %d)", id, throttle.MaxLimit)
		}
	}
}
