package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/safetext"
)

// batcher coalesces concurrent callers' decisions into one pipeline per
// batch, and on a single server into one script run per batch (see
// commands): each decision stays atomic and one round trip, but the round
// trip is shared, so a busy store pays one write and one read system call
// per batch instead of per decision, and Redis one command. Up to
// maxInFlight batches run at once, each on a connection of its own, so
// Redis works on one batch while the client reads the answers of another
// and gathers the next. There is no
// background goroutine: a caller that finds fewer than maxInFlight batches
// running leads one; callers arriving meanwhile queue, and when a batch ends
// its leader hands the next one to the oldest queued caller, so no caller
// does more than one batch of others' work.
type batcher struct {
	mu      sync.Mutex
	pending []*job
	leaders int // batches running
}

// maxInFlight is the number of batches a node runs at once. One leaves Redis
// idle while the client handles a batch's answers; with two, Redis works on
// one while the client reads the other. Four and eight measured no better by
// hand: they split the same queue into thinner batches.
const maxInFlight = 2

// job is one decision: a script's run for one key's structures.
type job struct {
	script *script
	keys   []string
	args   []byte // packed: see pack
	res    []int64
	err    error
	// wake is signalled once: with nil when res and err are set, or with
	// the batch this job's caller must lead (which holds the job).
	wake chan []*job
}

// script is a Lua script that makes any number of decisions in one run: its
// KEYS are each decision's keys in turn, its ARGV one packed argument per
// decision, and its answer one packed string holding, per decision, the
// number of its values and then the values (see common.lua and take.lua).
type script struct {
	*redis.Script
	keys int // keys per decision
}

// maxPerCommand is the most decisions one script run carries: Redis runs a
// script to its end before serving anyone else, so a long batch is split.
const maxPerCommand = 64

// run runs j, batched with whatever else is queued, and returns its result.
// exec sends a batch and settles its jobs (Store.exec, for a node). A wait
// is bounded by the batches ahead of j, each bounded by the store's timeout.
func (b *batcher) run(j *job, exec func(batch []*job)) ([]int64, error) {
	j.wake = make(chan []*job, 1)
	b.mu.Lock()
	b.pending = append(b.pending, j)
	var batch []*job
	if b.leaders < maxInFlight {
		b.leaders++
		batch, b.pending = b.pending, nil
		b.mu.Unlock()
	} else {
		b.mu.Unlock()
		if batch = <-j.wake; batch == nil {
			return j.res, j.err
		}
	}
	b.lead(batch, exec)
	return j.res, j.err
}

// lead sends a batch, then hands whatever queued meanwhile to its oldest
// caller as the next batch; the queue is taken whole at once, so no job is
// in two batches.
func (b *batcher) lead(batch []*job, exec func(batch []*job)) {
	exec(batch)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		b.leaders--
		return
	}
	next := b.pending
	b.pending = nil
	next[0].wake <- next
}

// exec runs a batch as one pipeline within the store's timeout and settles
// every job. With a client that ignores context deadlines (go-redis without
// ContextTimeoutEnabled, whose reads wait for its own ReadTimeout, 3 s by
// default), the pipeline runs in a goroutine of its own and the batch is
// settled as unavailable when the timeout passes; the goroutine ends when
// go-redis gives up. A client that honours deadlines runs inline, with no
// goroutine.
func (s *Store) exec(n *node, batch []*job) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
	defer cancel()
	var res []result
	if honoursDeadlines(s.Client) {
		res = s.pipeline(ctx, batch)
	} else {
		out := make(chan []result, 1)
		go func() { out <- s.pipeline(ctx, batch) }()
		select {
		case res = <-out:
		case <-ctx.Done():
			res = make([]result, len(batch))
			for i := range res {
				res[i].err = s.unavailable(ctx.Err())
				res[i].down = true
			}
		}
	}
	if res[0].down { // a batch holds at least one job
		n.failed()
	} else {
		n.ok()
	}
	settle(batch, res)
}

type result struct {
	res  []int64
	err  error
	down bool // the node could not be reached (not a script's own error)
}

// command is one script run carrying some of a batch's decisions.
type command struct {
	script *script
	jobs   []int // indices into the batch
	keys   []string
	args   []any
	cmd    *redis.Cmd
}

// commands groups a batch's decisions into script runs, and reports whether
// a run may hold keys of several hash tags. On a single server any keys may
// share a run; a Cluster or Ring spreads keys over servers, so there only
// decisions on one key's structures (one hash tag) share a run. So does a
// plain client once its server has refused a run's keys as crossing slots
// (CROSSSLOT: a Cluster node, or a proxy in front of shards).
func (s *Store) commands(batch []*job) ([]*command, bool) {
	_, single := s.Client.(*redis.Client)
	single = single && !s.perTag.Load()
	type group struct {
		script *script
		tag    string
	}
	open := make(map[group]*command)
	var cmds []*command
	for i, j := range batch {
		g := group{script: j.script}
		if !single {
			g.tag = hashTag(j.keys[0])
		}
		c := open[g]
		if c == nil || len(c.jobs) == maxPerCommand {
			c = &command{script: j.script}
			open[g] = c
			cmds = append(cmds, c)
		}
		c.jobs = append(c.jobs, i)
	}
	return cmds, single
}

// hashTag returns the part of key between its first braces.
func hashTag(key string) string {
	_, after, _ := strings.Cut(key, "{")
	tag, _, _ := strings.Cut(after, "}")
	return tag
}

// send queues c's script run on pipe.
func (c *command) send(ctx context.Context, pipe redis.Pipeliner, batch []*job) {
	c.keys = make([]string, len(c.jobs)*c.script.keys)
	c.args = make([]any, len(c.jobs))
	for k, i := range c.jobs {
		copy(c.keys[k*c.script.keys:], batch[i].keys)
		c.args[k] = batch[i].args
	}
	c.cmd = c.script.EvalSha(ctx, pipe, c.keys, c.args...)
}

// pipeline sends the batch's script runs as one pipeline. Scripts Redis does
// not know yet (NOSCRIPT) are retried with EVAL, which loads them.
func (s *Store) pipeline(ctx context.Context, batch []*job) []result {
	cmds, crossing := s.commands(batch)
	pipe := s.Client.Pipeline()
	for _, c := range cmds {
		c.send(ctx, pipe, batch)
	}
	_, perr := pipe.Exec(ctx) // a failure to connect or authenticate; commands' own errors are read below
	out := make([]result, len(batch))
	var crossed []int // decisions of runs a server refused as crossing slots
	for _, c := range cmds {
		res, err := c.cmd.Text()
		if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			res, err = c.script.Eval(ctx, s.Client, c.keys, c.args...).Text()
		}
		if err != nil && crossing && strings.HasPrefix(err.Error(), "CROSSSLOT") {
			s.perTag.Store(true) // a proxy or Cluster node behind a plain client: batch per key from now on
			crossed = append(crossed, c.jobs...)
			continue
		}
		if cerr := c.cmd.Err(); cerr == nil && err != nil && perr != nil {
			err = perr // the command never ran: say why (WRONGPASS, TLS, ...), not how its empty reply reads
		}
		down := unreachable(err)
		if err == nil {
			err = split(res, c.jobs, out) // an answer, but not the script's shape
		}
		if err != nil {
			for _, i := range c.jobs {
				out[i] = result{nil, s.unavailable(err), down}
			}
		}
	}
	if len(crossed) > 0 { // once more, one hash tag per run (perTag is set: no run crosses again)
		sub := make([]*job, len(crossed))
		for k, i := range crossed {
			sub[k] = batch[i]
		}
		for k, r := range s.pipeline(ctx, sub) {
			out[crossed[k]] = r
		}
	}
	return out
}

// pack encodes a decision's arguments as the scripts read them: little-endian
// doubles, which hold every integer they are given exactly (all are below
// 2^53: limits, microseconds, counts).
func pack(v ...int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(float64(x)))
	}
	return b
}

// split hands each decision of a script run its outcome. res holds, per
// decision, the number of its values and then the values, as pack writes
// them; or, for a decision that failed, minus the length of its error
// message, then the message padded with zero bytes to whole values.
func split(res string, jobs []int, out []result) error {
	for k, i := range jobs {
		h, ok := double(res)
		if !ok {
			return fmt.Errorf("the script answered %d of %d decisions", k, len(jobs))
		}
		res = res[8:]
		whole := h == math.Trunc(h)
		switch {
		case whole && h < 0 && -h <= float64(len(res)):
			n := int(-h)
			out[i].err = fmt.Errorf("%w: %s", ErrUnavailable, safetext.Clip(res[:n], maxScriptError))
			res = res[min((n+7)/8*8, len(res)):]
		case whole && h >= 0 && h <= float64(len(res)/8):
			v := make([]int64, int(h))
			for j := range v {
				x, _ := double(res)
				v[j], res = int64(x), res[8:]
			}
			out[i].res = v
		default:
			return fmt.Errorf("the script answered %d of %d decisions, then %v", k, len(jobs), h)
		}
	}
	if len(res) != 0 {
		return fmt.Errorf("the script answered %d bytes more than %d decisions hold", len(res), len(jobs))
	}
	return nil
}

// maxScriptError is the most of a script's error message an error quotes.
const maxScriptError = 200

// double reads the little-endian double res starts with.
func double(res string) (float64, bool) {
	if len(res) < 8 {
		return 0, false
	}
	var w [8]byte
	copy(w[:], res)
	return math.Float64frombits(binary.LittleEndian.Uint64(w[:])), true
}

// unavailable wraps a Redis failure in ErrUnavailable and says what failed:
// a deadline becomes "no answer within Timeout", with the likely causes.
func (s *Store) unavailable(err error) error {
	switch {
	case err == nil || errors.Is(err, redis.Nil):
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: no answer within %v (is Redis up, and are the address and TLS setting right?)", ErrUnavailable, s.timeout())
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

func settle(batch []*job, res []result) {
	for i, j := range batch {
		j.res, j.err = res[i].res, res[i].err
		j.wake <- nil
	}
}

// unreachable reports whether err says the node was not reached or did not
// answer, as opposed to an answer that was an error (a script's, or a
// refused password, which retrying sooner cannot fix either).
func unreachable(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	var rerr redis.Error
	return !errors.As(err, &rerr)
}

// honoursDeadlines reports whether c's reads and writes end at a context's
// deadline.
func honoursDeadlines(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}
