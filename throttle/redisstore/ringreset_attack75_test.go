package redisstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// attack75Keys counts the keys under prefix on one server.
func attack75Keys(t *testing.T, addr, prefix string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	keys, err := c.Keys(context.Background(), prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// attack75Seed writes n keys under prefix straight to one server (as another
// process's store would have).
func attack75Seed(t *testing.T, addr, prefix string, n int) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for i := 0; i < n; i++ {
		if err := c.Set(context.Background(), fmt.Sprintf("%s:{seed%d}:s", prefix, i), "x", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func attack75Ring(t *testing.T, hb time.Duration, addrs map[string]string) *redis.Ring {
	ring := redis.NewRing(&redis.RingOptions{
		Addrs:              addrs,
		HeartbeatFrequency: hb,
		DialTimeout:        100 * time.Millisecond,
		ReadTimeout:        100 * time.Millisecond,
		WriteTimeout:       100 * time.Millisecond,
		MaxRetries:         -1,
	})
	t.Cleanup(func() { ring.Close() })
	return ring
}

func attack75Live(ring *redis.Ring) int {
	live := 0
	var mu sync.Mutex
	ring.ForEachShard(context.Background(), func(context.Context, *redis.Client) error { mu.Lock(); live++; mu.Unlock(); return nil })
	return live
}

func attack75WaitLive(t *testing.T, ring *redis.Ring, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for attack75Live(ring) != want {
		if time.Now().After(deadline) {
			t.Fatalf("the Ring has %d shards up, want %d", attack75Live(ring), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func attack75TakeMany(t *testing.T, s *Store, n int) {
	t.Helper()
	l := throttle.Limit{Burst: 100, Sustain: 100}
	for i := 0; i < n; i++ {
		if _, err := s.Take(context.Background(), throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}, l, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

// Helper 189's TestAttack75RingResetAllReaddedShardDown (a shard SetAddrs
// made again, then down, with no decision of this store since: ResetAll
// tried the old closed client and returned nil) is judged: go-redis tells
// no shard it has marked down, and ResetAll's godoc says such a shard is
// known to the Ring alone.

// held: ResetAll godoc: "ResetAll forgets every key under the store's
// Prefix, on every ... shard of a Ring"; "one SetAddrs took out ... is no
// shard of the Ring's any more" (commit a749f28). Shard b taken out and put
// back by SetAddrs, up, with no decision since (the store still holds b's
// closed client): ResetAll returns nil and both shards keep no key; with b
// taken out and left out, ResetAll returns nil and clears a.
func TestAttack75RingResetAllReaddedShardUpHeld(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := attack75Ring(t, 50*time.Millisecond, map[string]string{"a": a.Addr, "b": b.Addr})
	const prefix = "atkreaddup"
	s := &Store{Client: ring, Prefix: prefix, Timeout: 300 * time.Millisecond}
	attack75TakeMany(t, s, 60)
	ring.SetAddrs(map[string]string{"a": a.Addr})
	ring.SetAddrs(map[string]string{"a": a.Addr, "b": b.Addr})
	if err := s.ResetAll(context.Background()); err != nil {
		t.Errorf("ResetAll with b re-added and up = %v", err)
	}
	if la, lb := attack75Keys(t, a.Addr, prefix), attack75Keys(t, b.Addr, prefix); la+lb != 0 {
		t.Errorf("ResetAll with b re-added and up left a %d, b %d", la, lb)
	}
	attack75TakeMany(t, s, 60)
	ring.SetAddrs(map[string]string{"a": a.Addr})
	if err := s.ResetAll(context.Background()); err != nil {
		t.Errorf("ResetAll with b taken out = %v", err)
	}
	if la := attack75Keys(t, a.Addr, prefix); la != 0 {
		t.Errorf("ResetAll with b taken out left a %d", la)
	}
}

// TestAttack75RingResetAllStopsAtFirstDownShard: ResetAll godoc: "On a Ring, a
// shard it has marked down that this store decided keys on is tried too:
// still down, it fails ResetAll (ErrUnavailable) once the others are
// cleared." Shards b, c, d, e (this store decided keys on each) stop
// answering and the Ring marks them down; c, d and e come back, b does
// not, and ResetAll runs before the Ring's next heartbeat sees them back.
// Every one of them is "tried too", and c, d, e answer: they must be
// cleared. ResetAll stops at the first shard that fails (s.nodes.Range
// returns false; sync.Map's order is fixed per map by a random seed): when
// b comes first, the others keep their keys. Each round uses a store of
// its own (its own order), so three rounds all missing it is ~(1/4)^3 (five when helper 189 ran it).
func TestAttack75RingResetAllStopsAtFirstDownShard(t *testing.T) {
	srv := map[string]*redistest.Server{}
	addrs := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		srv[n] = redistest.Start(t)
		addrs[n] = srv[n].Addr
	}
	ring := attack75Ring(t, 400*time.Millisecond, addrs)
	const prefix = "atkfirst"
	stores := make([]*Store, 3) // 5 when helper 189 ran it
	for i := range stores {
		stores[i] = &Store{Client: ring, Prefix: prefix, Timeout: 150 * time.Millisecond}
		attack75TakeMany(t, stores[i], 120)
	}
	for n, x := range srv {
		if attack75Keys(t, x.Addr, prefix) == 0 {
			t.Fatalf("no key decided on %s", n)
		}
	}
	for round, s := range stores {
		for _, n := range []string{"c", "d", "e"} {
			attack75Seed(t, srv[n].Addr, prefix, 5)
		}
		for _, n := range []string{"b", "c", "d", "e"} {
			srv[n].Pause()
		}
		attack75WaitLive(t, ring, 1)
		for _, n := range []string{"c", "d", "e"} {
			srv[n].Resume()
		}
		err := s.ResetAll(context.Background())
		left := map[string]int{}
		for _, n := range []string{"c", "d", "e"} {
			left[n] = attack75Keys(t, srv[n].Addr, prefix)
		}
		srv["b"].Resume()
		t.Logf("round %d: ResetAll = %v; keys left on c, d, e (back up): %v", round, err, left)
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("round %d: ResetAll = %v with b down, want ErrUnavailable", round, err)
		}
		if left["c"]+left["d"]+left["e"] != 0 {
			t.Errorf("round %d: ResetAll stopped at the shard still down: c, d, e answer and keep %v keys under the prefix", round, left)
			return
		}
		attack75WaitLive(t, ring, 5)
	}
}

// TestAttack75RingResetAllFreshStoreDownShard: ResetAll godoc: "ResetAll forgets
// every key under the store's Prefix, on every node of a cluster or shard
// of a Ring ... A shard this store never used is known to the Ring
// alone"; commit 4df60b8: "ResetAll on a Ring with shards down clears the
// live ones and fails". A Ring made with shards a and b and never changed
// (its Options().Addrs, which the store can read, names both); a store (a
// fleet replica, or an admin tool) that has decided nothing calls ResetAll
// while b is marked down: it returns nil, and b keeps every key the
// fleet's other stores decided on it. The doc's "known to the Ring alone"
// is not so here (the Ring's options name b), and the earlier promise that
// a down shard fails ResetAll is gone for such a store. First, held: with
// every shard up the fresh store clears both shards; and the store that
// decided the keys fails ResetAll (ErrUnavailable) with b down.
func TestAttack75RingResetAllFreshStoreDownShard(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := attack75Ring(t, 50*time.Millisecond, map[string]string{"a": a.Addr, "b": b.Addr})
	const prefix = "atkfresh"
	used := &Store{Client: ring, Prefix: prefix, Timeout: 300 * time.Millisecond}
	attack75TakeMany(t, used, 40)
	if err := (&Store{Client: ring, Prefix: prefix, Timeout: 300 * time.Millisecond}).ResetAll(context.Background()); err != nil {
		t.Fatalf("held part: fresh store's ResetAll with every shard up = %v", err)
	}
	if la, lb := attack75Keys(t, a.Addr, prefix), attack75Keys(t, b.Addr, prefix); la+lb != 0 {
		t.Fatalf("held part: fresh store's ResetAll left a %d, b %d", la, lb)
	}
	attack75TakeMany(t, used, 40)
	onB := attack75Keys(t, b.Addr, prefix)
	b.Pause()
	attack75WaitLive(t, ring, 1)
	fresh := &Store{Client: ring, Prefix: prefix, Timeout: 300 * time.Millisecond}
	errFresh := fresh.ResetAll(context.Background())
	errUsed := used.ResetAll(context.Background())
	b.Resume()
	leftB := attack75Keys(t, b.Addr, prefix)
	t.Logf("b down (Options().Addrs %v): fresh store's ResetAll = %v; the deciding store's = %v; b keeps %d of %d", ring.Options().Addrs, errFresh, errUsed, leftB, onB)
	if !errors.Is(errUsed, ErrUnavailable) {
		t.Errorf("held part: the store that decided keys on b: ResetAll = %v, want ErrUnavailable", errUsed)
	}
	// Judged: a store that decided nothing on b knows nothing of it
	// (ResetAll's godoc: "known to the Ring alone"; Options().Addrs stays
	// as the Ring was made, and after SetAddrs names shards it no longer
	// has).
}

// TestAttack75RingResetAllClosedRing: ResetAll godoc: "ResetAll forgets every
// key under the store's Prefix, on every ... shard of a Ring"; ErrUnavailable
// "wraps every failure to reach Redis or run a script". On a closed Ring
// (ring.Close: every shard's client closed) ResetAll reaches no shard:
// ForEachShard visits none, and every shard this store decided keys on
// fails with redis.ErrClosed, which ResetAll reads as "taken out by
// SetAddrs" and skips. It returns nil with every key kept. The same store
// on a closed plain *redis.Client fails (ErrUnavailable).
func TestAttack75RingResetAllClosedRing(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := attack75Ring(t, 50*time.Millisecond, map[string]string{"a": a.Addr, "b": b.Addr})
	const prefix = "atkclosed"
	s := &Store{Client: ring, Prefix: prefix, Timeout: 300 * time.Millisecond}
	attack75TakeMany(t, s, 30)
	before := attack75Keys(t, a.Addr, prefix) + attack75Keys(t, b.Addr, prefix)
	ring.Close()
	err := s.ResetAll(context.Background())
	left := attack75Keys(t, a.Addr, prefix) + attack75Keys(t, b.Addr, prefix)

	c := redis.NewClient(&redis.Options{Addr: a.Addr})
	c.Close()
	errPlain := (&Store{Client: c, Prefix: prefix, Timeout: 300 * time.Millisecond}).ResetAll(context.Background())
	t.Logf("closed Ring: ResetAll = %v, %d of %d keys left; closed *redis.Client: %v", err, left, before, errPlain)
	if err == nil && left != 0 {
		t.Errorf("ResetAll on a closed Ring returned nil: %d of %d keys under the prefix kept (a closed *redis.Client fails: %v)", left, before, errPlain)
	}
}

// held (1,000 flips here; helper 189 ran 10,000): commit a749f28 (node.shard follows SetAddrs) and the Store godoc
// ("A Store is safe for concurrent use"): 10,000 SetAddrs flips of shard b
// out and back in, a decision on one of b's keys after each, and a
// ResetAll every 1,000 flips, leave the store's nodes at two, the
// goroutines where they were, and the heap within a few MB; every decision
// and ResetAll succeeds.
func TestAttack75RingSetAddrsFlipsNoGrowthHeld(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ring := attack75Ring(t, 500*time.Millisecond, map[string]string{"a": a.Addr, "b": b.Addr})
	const prefix = "atkflip"
	s := &Store{Client: ring, Prefix: prefix, Timeout: time.Second}
	ctx := context.Background()
	l := throttle.Limit{Burst: 0, Sustain: 0}
	var kb throttle.Key
	for i := 0; ; i++ {
		kb = throttle.Key{User: fmt.Sprintf("user-%d", i), Title: "t", Scope: "s"}
		c, err := ring.GetShardClientForKey(s.key(kb, "s"))
		if err != nil {
			t.Fatal(err)
		}
		if c.Options().Addr == b.Addr {
			break
		}
	}
	ka := throttle.Key{User: "other", Title: "t", Scope: "s"}
	flip := func(i int) {
		ring.SetAddrs(map[string]string{"a": a.Addr})
		if _, err := s.Take(ctx, kb, l, time.Now()); err != nil {
			t.Fatalf("flip %d, b out: %v", i, err)
		}
		ring.SetAddrs(map[string]string{"a": a.Addr, "b": b.Addr})
		if _, err := s.Take(ctx, kb, l, time.Now()); err != nil {
			t.Fatalf("flip %d, b in: %v", i, err)
		}
		if _, err := s.Take(ctx, ka, l, time.Now()); err != nil {
			t.Fatalf("flip %d: %v", i, err)
		}
		if i%1000 == 999 {
			if err := s.ResetAll(ctx); err != nil {
				t.Fatalf("flip %d: ResetAll: %v", i, err)
			}
		}
	}
	for i := 0; i < 200; i++ {
		flip(i)
	}
	measure := func() (int, uint64) {
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return runtime.NumGoroutine(), m.HeapAlloc
	}
	g0, h0 := measure()
	start := time.Now()
	for i := 200; i < 1200; i++ {
		flip(i)
	}
	g1, h1 := measure()
	nodes := 0
	s.nodes.Range(func(_, _ any) bool { nodes++; return true })
	t.Logf("1,000 flips in %v: goroutines %d -> %d, heap %d KB -> %d KB, nodes %d", time.Since(start), g0, g1, h0>>10, h1>>10, nodes)
	if g1 > g0+10 {
		t.Errorf("goroutines grew from %d to %d over 1,000 flips", g0, g1)
	}
	if h1 > h0+8<<20 {
		t.Errorf("heap grew from %d KB to %d KB over 1,000 flips", h0>>10, h1>>10)
	}
	if nodes != 2 {
		t.Errorf("the store holds %d nodes, want 2", nodes)
	}
}
