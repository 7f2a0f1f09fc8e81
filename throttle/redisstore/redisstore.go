// Package redisstore keeps FGRL state in Redis, so that several processes
// share one server rule (mock replicas) or one client budget (a fleet of game
// backends calling for the same users).
//
// Every decision is atomic: a Lua script, loaded once and called with
// EVALSHA, decides it in one round trip. Times are counted in whole
// microseconds (its callers' rounded down), as Redis's TIME gives them;
// the in-memory stores count nanoseconds. A decision that finds fewer than
// two batches in flight to its node goes at once, as one EVALSHA on its
// caller's goroutine, within its caller's context and Timeout; decisions
// that overlap more share their round trips and their script runs: on a
// single server one run decides a whole batch (up to 64), its arguments and answers packed as
// binary doubles, so Redis reads, parses and answers one command per batch
// rather than one per decision; a Cluster's batches are one pipeline per
// node, and a Ring's decisions go to their shards, so a slow or dead node
// (a Cluster master, a Ring's shard) delays only its own keys. A server behind a
// plain client that refuses one command's keys across slots (CROSSSLOT: a
// sharding proxy, or a Cluster node) gets that batch again one key per run,
// and from then on batches made that way. A node whose batch
// fails is not tried again for a second: its keys fail at once with
// ErrUnavailable meanwhile, then one call probes it. Keys carry a
// hash tag, so a key's structures share one Redis Cluster slot; they expire
// with their windows. Decisions use the
// Redis server's clock (TIME), so replicas with skewed clocks agree: that is
// the store's time seam, and the now arguments of the throttle interfaces
// are ignored unless CallerTime is set (for tests and simulations that
// drive time themselves: from the Unix epoch to 2112).
package redisstore

import (
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// DefaultTimeout bounds each Redis operation of a Store whose Timeout is 0.
const DefaultTimeout = 250 * time.Millisecond

var (
	//go:embed common.lua
	commonSrc string // put before each script: its clock and answer framing
	//go:embed take.lua
	takeSrc string
	//go:embed reserve.lua
	budgetSrc string
	//go:embed learn.lua
	learnSrc string
	//go:embed learned.lua
	learnedSrc string
)

// Store is a throttle.ServerStore and a throttle.BudgetStore in Redis. Set
// Client; the other fields have working zero values. A Store is safe for
// concurrent use; its fields must not change after the first call.
type Store struct {
	// Client is the Redis connection: a *redis.Client, *redis.ClusterClient
	// or *redis.Ring. Required.
	Client redis.UniversalClient
	// Prefix starts every key; empty means "fgrl". It may not contain '{' or
	// '}': a key's hash tag, which keeps its structures in one Redis Cluster
	// slot, must be the store's own (a braced prefix would put every key in
	// one slot, or split a key's structures across slots).
	Prefix string
	// Align chooses where server-rule windows start.
	Align throttle.Align
	// Margin lengthens both periods of the client budget: zero means
	// throttle.DefaultMargin, negative none (see throttle.MemoryBudgetStore.Margin).
	Margin time.Duration
	// Timeout bounds each operation; 0 means DefaultTimeout. A slow or
	// unreachable Redis then fails fast with an error wrapping ErrUnavailable.
	// A decision whose caller's deadline ends it first, having given Redis
	// less than half of Timeout, ends with the caller's own context error
	// and does not mark the node down by itself: it starts a check that
	// asks the node for a PING within Timeout, on no caller's clock, and
	// only no answer to that marks the node down.
	Timeout time.Duration
	// CallerTime decides with the now passed in instead of Redis TIME, for
	// tests and simulations that drive time themselves: a time from the
	// Unix epoch to 2^52 microseconds after it (in 2112), which the
	// scripts' numbers hold exactly with every span they add; an operation
	// at another time fails with an error (not wrapping ErrUnavailable:
	// Redis was not asked).
	CallerTime bool

	nodes   sync.Map     // node address ("" for a single server) -> *node
	undoing atomic.Int64 // releases giveBack runs
	perTag  atomic.Bool  // the server refused a run across hash tags: batch per tag
}

// ErrUnavailable wraps every failure to reach Redis or run a script.
var ErrUnavailable = errors.New("redisstore: redis unavailable")

// One Script per Lua source: it holds the source and its SHA1, and Run sends
// EVALSHA, loading the script only when Redis does not have it yet. They are
// made here, after every source above is read, so that a test binary that
// edits the sources at initialisation (internal/mutagen's edits of the
// scripts) has done so first. learnScript applies one report of a learned
// limit; learnedScript lists the limits in force; both read the clock as
// the decisions do (common.lua).
var (
	takeScript    = &script{redis.NewScript(commonSrc + takeSrc), 1}
	budgetScript  = &script{redis.NewScript(commonSrc + budgetSrc), 2}
	learnScript   = redis.NewScript(commonSrc + learnSrc)
	learnedScript = redis.NewScript(commonSrc + learnedSrc)
)

// key returns the Redis key of k for a structure; the tag in braces is a
// digest of k, so odd characters in IDs can neither collide nor split slots.
func (s *Store) key(k throttle.Key, kind string) string {
	h := fnv.New128a()
	for _, f := range []string{k.User, k.Title, k.Scope} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	prefix := s.Prefix
	if prefix == "" {
		prefix = "fgrl"
	}
	return prefix + ":{" + hex.EncodeToString(h.Sum(nil)) + "}:" + kind
}

// serverTime is the now the scripts read as "Redis's clock" (common.lua's
// SERVER): 2^62 microseconds before 1970, far from every time CallerTime
// takes (maxCallerTime), as a double too.
const serverTime = -1 << 62

// maxCallerTime bounds the times CallerTime decides at: from the Unix epoch
// to 2^52 microseconds after it (in 2112), so that a time and any span a
// script adds to it (a window, a margin, a block, a wait, a learned
// limit's life: each under 2^52 µs, 142 years) stay within the 2^53 a
// double holds exactly (a batch packs its numbers as doubles: pack). A time
// outside is refused with an error, not decided at a time rounded to
// another.
const maxCallerTime = 1 << 52

// now returns the now a script is given for t: Redis's clock (serverTime)
// without CallerTime, else t in microseconds, or an error for a time
// outside 0..maxCallerTime.
func (s *Store) now(t time.Time) (int64, error) {
	if !s.CallerTime {
		return serverTime, nil
	}
	us := t.UnixMicro()
	if us < 0 || us > maxCallerTime || t.Before(time.Unix(0, 0)) {
		return 0, fmt.Errorf("redisstore: CallerTime decides from %s to %s (microseconds a double holds exactly), not at %s",
			time.Unix(0, 0).UTC().Format(time.DateOnly), time.UnixMicro(maxCallerTime).UTC().Format(time.DateOnly), t.UTC().Format(time.RFC3339Nano))
	}
	return us, nil
}

// noTime is the now of an operation that reads no clock (a release): with
// CallerTime, one before every time it takes, so that nothing is trimmed as
// old; without, Redis's.
func (s *Store) noTime() int64 {
	if s.CallerTime {
		return -maxCallerTime
	}
	return serverTime
}

func (s *Store) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

// run runs a decision, batched with concurrent callers' (see batcher), and
// returns its integers. The caller's wait is bounded by ctx and by the
// store's timeout for each batch it waits on: a decision sent before ctx
// ends runs on without its caller (j.sent says it was sent).
func (s *Store) run(ctx context.Context, j *job) ([]int64, error) {
	if s.Client == nil {
		return nil, fmt.Errorf("%w: no client", ErrUnavailable)
	}
	if strings.ContainsAny(s.Prefix, "{}") {
		return nil, fmt.Errorf("redisstore: Prefix %s may not contain '{' or '}' (hash tags are the store's own)", safetext.Quote(s.Prefix, 64))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n, err := s.node(ctx, j.keys[0])
	if err != nil {
		return nil, err
	}
	return s.runOn(ctx, n, j)
}

// runOn runs j on n, the node of its keys.
func (s *Store) runOn(ctx context.Context, n *node, j *job) ([]int64, error) {
	if err := n.admit(); err != nil {
		return nil, err
	}
	return n.batch.run(ctx, j, func(ctx context.Context, batch []*job) { s.exec(ctx, n, batch) })
}

// maxUndoing bounds the releases a Store runs at once for callers that may
// hold no slot (giveBack): past it, such a slot stays booked until its
// window passes, which spends budget but never overspends it.
const maxUndoing = 1024

// giveBack releases the admission id of a Reserve that was sent and whose
// caller got no admission (its context ended first, or no answer came
// within Timeout): Redis may have run it, booking an admission that counts
// until until (the Reserve's time plus its longest wait and the sustain
// window). The release goes on a goroutine of its own, within the store's
// timeout, at most maxUndoing at once. One that fails with the key's node
// judged down is owed (node.owe) and sent again when a batch next finds the
// node up, until until; one the node answers with an error (a script's, a
// read-only replica's) is not. It may also reach Redis before the Reserve
// it undoes (another connection): reserve.lua then keeps a mark of the id,
// and the Reserve books nothing.
func (s *Store) giveBack(ctx context.Context, k throttle.Key, l throttle.Limit, id int64, until time.Time) {
	if s.undoing.Add(1) > maxUndoing {
		s.undoing.Add(-1)
		return
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer s.undoing.Add(-1)
		tctx, cancel := context.WithTimeout(ctx, s.timeout())
		defer cancel()
		j := s.budgetJob(opRelease, k, l, s.noTime(), id)
		n, err := s.node(tctx, j.keys[0])
		if err != nil {
			return
		}
		if _, err := s.runOn(tctx, n, j); err != nil && n.downUntil.Load() != 0 {
			n.owe(owed{ctx: ctx, k: k, l: l, id: id, until: until})
		}
	}()
}

// countsUntil is when an admission a Reserve sent at now with maxWait may
// have booked stops counting: booked at most maxWait ahead, it counts for
// the sustain window and the margin.
func (s *Store) countsUntil(now time.Time, maxWait time.Duration) time.Time {
	return now.Add(maxWait + throttle.Sustain.Duration() + throttle.MarginOr(s.Margin))
}

// owed is a release giveBack could not send: the node was down.
type owed struct {
	ctx   context.Context // the caller's values, no end
	k     throttle.Key
	l     throttle.Limit
	id    int64
	until time.Time // when the admission it undoes stops counting
}

// payOwed sends again the releases owed to n, now that a batch found it up;
// those whose admissions no longer count are dropped.
func (s *Store) payOwed(n *node, now time.Time) {
	for _, o := range n.takeOwed() {
		if now.Before(o.until) {
			s.giveBack(o.ctx, o.k, o.l, o.id, o.until)
		}
	}
}

func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

// Take counts one request for k and decides it by the server rule.
func (s *Store) Take(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Decision, error) {
	return s.take(ctx, k, l, now, 0)
}

// Peek reports k's counts without counting a request.
func (s *Store) Peek(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Decision, error) {
	return s.take(ctx, k, l, now, 1)
}

func (s *Store) take(ctx context.Context, k throttle.Key, l throttle.Limit, t time.Time, peek int64) (throttle.Decision, error) {
	now, err := s.now(t)
	if err != nil {
		return throttle.Decision{}, err
	}
	v, err := s.run(ctx, &job{script: takeScript, keys: []string{s.key(k, "s")}, args: pack(int64(l.Burst), int64(l.Sustain), int64(s.Align), peek, now)})
	if err != nil {
		return throttle.Decision{}, err
	}
	if len(v) != 6 {
		return throttle.Decision{}, fmt.Errorf("%w: take returned %d values", ErrUnavailable, len(v))
	}
	return throttle.Decide(v[0] == 1, v[1] == 1,
		throttle.WindowState{Count: int(v[2]), Limit: l.Burst, Reset: us(v[4])},
		throttle.WindowState{Count: int(v[3]), Limit: l.Sustain, Reset: us(v[5])}), nil
}

// The client-budget operations reserve.lua knows.
const (
	opReserve = iota + 1
	opRelease
	opBlock
	opSync
	opSnapshot
)

// budgetJob is one client-budget operation on k (see reserve.lua).
// now is the script's (Store.now, Store.noTime).
func (s *Store) budgetJob(op int64, k throttle.Key, l throttle.Limit, now int64, args ...int64) *job {
	keys := []string{s.key(k, "log"), s.key(k, "meta")}
	all := append([]int64{op, int64(l.Burst), int64(l.Sustain), throttle.MarginOr(s.Margin).Microseconds(), now}, args...)
	return &job{script: budgetScript, keys: keys, args: pack(all...)}
}

// budget runs one client-budget operation on k at t.
func (s *Store) budget(ctx context.Context, op int64, k throttle.Key, l throttle.Limit, t time.Time, args ...int64) ([]int64, error) {
	now, err := s.now(t)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, s.budgetJob(op, k, l, now, args...))
}

// Reserve books the earliest slot for a call for k within maxWait. When ctx
// ends after the decision was sent and before its answer, Reserve returns
// ctx's error at once; a slot Redis books for it, before or after, is
// released (giveBack), as is one for a decision that got no answer within
// Timeout.
func (s *Store) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	id, maxWait := admissionID(), max(maxWait, 0)
	at, err := s.now(now)
	if err != nil {
		return throttle.Admission{}, err
	}
	j := s.budgetJob(opReserve, k, l, at, s.span(at, maxWait, maxCallerTime), id)
	v, err := s.run(ctx, j)
	if err != nil {
		if j.sent.Load() {
			s.giveBack(ctx, k, l, id, s.countsUntil(time.Now(), maxWait))
		}
		return throttle.Admission{}, err
	}
	switch {
	case len(v) == 3 && v[0] == 0:
		return throttle.Admission{Wait: us(v[1]), Blocked: v[2] == 1}, nil
	case len(v) == 4 && v[0] == 1:
		return throttle.Admission{Allowed: true, Wait: us(v[1]), Slot: v[3]}, nil
	}
	return throttle.Admission{}, fmt.Errorf("%w: reserve returned %d values", ErrUnavailable, len(v))
}

// Release gives back a slot Reserve booked for k (Admission.Slot is the
// admission's id in the key's log). A slot booked before Redis lost the
// key's state (a restart, a failover to a lagging replica, a reset) matches
// no admission booked since: ids are random, not counted by Redis.
func (s *Store) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	_, err := s.run(ctx, s.budgetJob(opRelease, k, l, s.noTime(), slot))
	return err
}

// Block refuses calls for k until until, measured from now (the service's
// Retry-After runs from when its answer arrived).
func (s *Store) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	at, err := s.now(now)
	if err != nil {
		return err
	}
	_, err = s.run(ctx, s.budgetJob(opBlock, k, throttle.Limit{}, at, s.span(at, until.Sub(now), maxCallerTime+1)))
	return err
}

// span returns d in microseconds from a script's now at, ending no later
// than end, so that the sums a script makes of it stay within what a
// double holds: a block ends by maxCallerTime + 1 µs (past every time
// CallerTime takes, so it refuses them all), and a wait by maxCallerTime
// (no slot is offered at a time CallerTime would refuse). Without
// CallerTime (Redis's clock, before 2112) the span is bounded by
// maxCallerTime itself.
func (s *Store) span(at int64, d time.Duration, end int64) int64 {
	us := d.Microseconds() // a negative one as given: a block in the past
	if at == serverTime {
		return min(us, maxCallerTime)
	}
	return min(us, end-at)
}

// Sync absorbs a server report of one window for k; see throttle.Sliding.Sync.
func (s *Store) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	// The admissions a sync adds take the ids from a random one up.
	_, err := s.budget(ctx, opSync, k, l, now, p.Duration().Microseconds(), int64(used), reset.Microseconds(), admissionID())
	return err
}

// admissionID returns a random id for an admission in a key's log, below
// 2^52 - MaxLimit, so that a double carries it (and a sync's run of ids
// from it) exactly. Ids drawn within one key's window repeat with odds of
// about one in a million at 100 000 admissions, and a repeat only merges two
// admissions.
func admissionID() int64 {
	return 1 + rand.Int64N(1<<52-int64(throttle.MaxLimit))
}

// Snapshot reports k's budget. BlockedUntil is in the local clock: now plus
// the block's remaining time by the Redis clock.
func (s *Store) Snapshot(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Snapshot, error) {
	v, err := s.budget(ctx, opSnapshot, k, l, now)
	if err != nil {
		return throttle.Snapshot{}, err
	}
	if len(v) != 6 {
		return throttle.Snapshot{}, fmt.Errorf("%w: snapshot returned %d values", ErrUnavailable, len(v))
	}
	snap := throttle.Snapshot{
		Counts: throttle.Counts{Burst: throttle.WindowState{Count: int(v[0]), Limit: l.Held().Burst, Reset: us(v[1])},
			Sustain: throttle.WindowState{Count: int(v[2]), Limit: l.Held().Sustain, Reset: us(v[3])}},
		Wait: us(v[5]),
	}
	if v[4] > 0 {
		snap.BlockedUntil = now.Add(us(v[4]))
	}
	return snap, nil
}

// Interface checks.
var (
	_ throttle.ServerStore = (*Store)(nil)
	_ throttle.BudgetStore = (*Store)(nil)
)

// Reset forgets k's server counts (and budget, when the store keeps one for
// k): its next request starts new windows.
func (s *Store) Reset(ctx context.Context, k throttle.Key) error {
	_, err := within(ctx, s, func(ctx context.Context) (int64, error) {
		return s.Client.Del(ctx, s.key(k, "s"), s.key(k, "log"), s.key(k, "meta")).Result()
	})
	return s.unavailable(err)
}

// resetBatch is the keys ResetAll asks SCAN for per round trip.
const resetBatch = 500

// globEscape escapes the characters SCAN's MATCH pattern treats as glob
// syntax, so that a prefix matches only itself.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ { // bytes, not runes: a prefix need not be UTF-8
		if strings.IndexByte(`*?[]\^-`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ResetAll forgets every key under the store's Prefix, on every node of a
// cluster or shard of a Ring (one after another), a SCAN page at a time. On
// a Ring, the shards it has up are cleared, and a shard it has marked down
// that this store decided keys on (by the client the Ring gave for it at
// the store's last decision there) is tried too: still down, it fails
// ResetAll (ErrUnavailable) once every other is tried; so does a Ring with
// no shard up. A shard this store never decided on, or one SetAddrs has
// made again since, is known to the Ring alone (go-redis tells no shard it
// has marked down, and Options().Addrs stays as the Ring was made).
func (s *Store) ResetAll(ctx context.Context) error {
	prefix := s.Prefix
	if prefix == "" {
		prefix = "fgrl"
	}
	del := func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			// Each page's round trips within the store's Timeout.
			next, err := within(ctx, s, func(ctx context.Context) (uint64, error) {
				keys, next, err := c.Scan(ctx, cursor, globEscape(prefix)+":{*", resetBatch).Result()
				if err != nil || len(keys) == 0 {
					return next, err
				}
				pipe := c.Pipeline() // one DEL per key: a cluster node refuses a DEL across slots
				for _, k := range keys {
					pipe.Del(ctx, k)
				}
				_, err = pipe.Exec(ctx)
				return next, err
			})
			if err != nil {
				return err
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	var each func(context.Context, func(context.Context, *redis.Client) error) error
	switch c := s.Client.(type) {
	case *redis.Client:
		return s.unavailable(del(ctx, c))
	case *redis.ClusterClient:
		each = c.ForEachMaster
	case *redis.Ring:
		each = c.ForEachShard
	default:
		return errors.New("redisstore: ResetAll needs a *redis.Client, *redis.ClusterClient or *redis.Ring")
	}
	// The masters (a Ring's shards), a cluster's state reloaded within
	// Timeout (a silent seed node held ResetAll for go-redis's own
	// read timeouts, 10 s); a failure's text clipped, as a page's is.
	masters, err := within(ctx, s, func(ctx context.Context) ([]*redis.Client, error) {
		var mu sync.Mutex
		var ms []*redis.Client
		err := each(ctx, func(_ context.Context, c *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			ms = append(ms, c)
			return nil
		})
		return ms, err
	})
	for _, m := range masters {
		if err != nil {
			break
		}
		err = del(ctx, m)
	}
	if _, ring := s.Client.(*redis.Ring); ring && err == nil {
		// ForEachShard visits the shards the Ring has up: none (a closed
		// Ring, every shard down) clears nothing. A shard this store
		// decided keys on that the Ring has marked down is cleared too,
		// or fails ResetAll once every other is tried; one SetAddrs took
		// out (its client closed) is no shard of the Ring's any more.
		if len(masters) == 0 {
			err = errors.New("no shard of the Ring is up")
		}
		s.nodes.Range(func(_, v any) bool {
			c := v.(*node).shard.Load()
			if c == nil || slices.Contains(masters, c) {
				return true
			}
			if e := del(ctx, c); e != nil && !errors.Is(e, redis.ErrClosed) && err == nil {
				err = e
			}
			return true
		})
	}
	return s.unavailable(err)
}
