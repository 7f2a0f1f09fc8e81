package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/safetext"
)

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

// exec runs a batch as one pipeline within the store's timeout and ctx, and
// settles every job. ctx is a caller's own only when the batch is that
// caller's decision alone (see batcher.run); when it ends first (see
// callersEnd), the caller gets its error and the node is not judged by it.
// With a client that ignores context deadlines (go-redis without
// ContextTimeoutEnabled, whose reads wait for its own ReadTimeout, 3 s by
// default), or a ctx that can end before its deadline (a cancel: go-redis
// turns only a deadline into its socket's), the pipeline runs in a
// goroutine of its own and the batch is settled as unavailable when the
// timeout passes or ctx ends; the goroutine ends when go-redis gives up
// (with ContextTimeoutEnabled, at the store's timeout). A client that
// honours deadlines, under a ctx no one can cancel (a batch of several
// callers', or context.Background), runs inline, with no goroutine.
func (s *Store) exec(ctx context.Context, n *node, batch []*job) {
	start := time.Now()
	tctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	var res []result
	if honoursDeadlines(s.Client) && ctx.Done() == nil {
		res = s.pipeline(tctx, n.client(s), batch)
	} else {
		out := make(chan []result, 1)
		go func() { out <- s.pipeline(tctx, n.client(s), batch) }()
		select {
		case res = <-out:
		case <-tctx.Done():
			res = make([]result, len(batch))
			for i := range res {
				res[i].err = s.unavailable(tctx.Err())
				res[i].down = true
			}
		}
	}
	if res[0].err != nil && ctx.Err() == nil {
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			// A client that honours deadlines sets them on its socket, whose
			// read can fail before ctx's own timer marks ctx done: the
			// caller's deadline ended it all the same (callersEnd).
			<-ctx.Done()
		}
	}
	switch {
	case res[0].err != nil && s.callersEnd(ctx, start): // the caller's own end, not the node's failure...
		if res[0].down && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			s.unanswered(n, batch[0].keys[0]) // ...unless the node answers no one (checked within Timeout)
		}
		res[0] = result{err: ctx.Err()}
	case res[0].down: // a batch holds at least one job
		n.failed()
	default:
		n.ok()
		s.payOwed(n, time.Now())
	}
	settle(batch, res)
}

// callersEnd reports whether a decision that began at start and failed
// ended by its caller's context rather than by the node: a cancel, or a
// deadline that gave the node less than half its Timeout. A caller whose
// deadline is the store's own Timeout (or near it) would otherwise hide a
// silent node for good: every decision waits its whole deadline, none
// marks the node down, and the transport never logs the outage.
func (s *Store) callersEnd(ctx context.Context, start time.Time) bool {
	if ctx.Err() == nil {
		return false
	}
	d, _ := ctx.Deadline() // none: the zero time, long before start
	return errors.Is(ctx.Err(), context.Canceled) || d.Sub(start) < s.timeout()/2
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

// send sends c's script run through to: queued on a pipeline, or at once on
// the client.
func (c *command) send(ctx context.Context, to redis.Scripter, batch []*job) {
	c.keys = make([]string, len(c.jobs)*c.script.keys)
	c.args = make([]any, len(c.jobs))
	for k, i := range c.jobs {
		copy(c.keys[k*c.script.keys:], batch[i].keys)
		c.args[k] = batch[i].args
	}
	c.cmd = c.script.EvalSha(ctx, to, c.keys, c.args...)
}

// pipeline sends the batch's script runs through to (the node's client:
// node.client) as one pipeline; a batch of one run
// goes as one EVALSHA on the client, which costs the client less than a
// pipeline of one. Scripts Redis does not know yet (NOSCRIPT) are retried
// with EVAL, which loads them.
func (s *Store) pipeline(ctx context.Context, to redis.UniversalClient, batch []*job) (out []result) {
	defer func() {
		if r := recover(); r != nil { // clientPanic: the node sent what no answer can be
			out = make([]result, len(batch))
			for i := range out {
				out[i] = result{err: clientPanic(r), down: true}
			}
		}
	}()
	cmds, crossing := s.commands(batch)
	var perr error // a failure to connect or authenticate; commands' own errors are read below
	if len(cmds) == 1 {
		cmds[0].send(ctx, to, batch)
	} else {
		pipe := to.Pipeline()
		for _, c := range cmds {
			c.send(ctx, pipe, batch)
		}
		_, perr = pipe.Exec(ctx)
	}
	out = make([]result, len(batch))
	var crossed []int // decisions of runs a server refused as crossing slots
	for _, c := range cmds {
		res, err := c.cmd.Text()
		if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			res, err = c.script.Eval(ctx, to, c.keys, c.args...).Text()
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
		for k, r := range s.pipeline(ctx, to, sub) {
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
	return fmt.Errorf("%w: %w", ErrUnavailable, clipped{err})
}

// clipped is a Redis error whose text (a server's own line, of any length
// and bytes) an error quotes clipped and escaped; it still unwraps to err.
type clipped struct{ err error }

func (c clipped) Error() string { return safetext.Clip(c.err.Error(), maxScriptError) }
func (c clipped) Unwrap() error { return c.err }

// settle hands each job its result, and wakes its caller if it queued (a
// caller that has left is not woken).
func settle(batch []*job, res []result) {
	for i, j := range batch {
		j.res, j.err = res[i].res, res[i].err
		if !j.done.CompareAndSwap(false, true) {
			continue
		}
		if j.wake != nil {
			j.wake <- struct{}{}
		}
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
