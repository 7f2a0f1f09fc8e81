package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// batcher coalesces the scripts that concurrent callers run into pipelines:
// each decision stays one atomic script and one round trip, but the round
// trip is shared, so a busy store pays one write and one read system call
// per batch instead of per decision. Up to maxInFlight batches run at once,
// each on a connection of its own, so Redis works on one batch while the
// client reads the answers of another and gathers the next. There is no
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

// job is one script run.
type job struct {
	script *redis.Script
	keys   []string
	args   []any
	res    []int64
	err    error
	// wake is signalled once: with nil when res and err are set, or with
	// the batch this job's caller must lead (which holds the job).
	wake chan []*job
}

// run runs j, batched with whatever else is queued, and returns its result.
// A wait is bounded by the batches ahead of j, each bounded by the store's
// timeout.
func (b *batcher) run(s *Store, n *node, j *job) ([]int64, error) {
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
	b.lead(s, n, batch)
	return j.res, j.err
}

// lead sends a batch as one pipeline, then hands whatever queued meanwhile
// to its oldest caller as the next batch; the queue is taken whole at once,
// so no job is in two batches.
func (b *batcher) lead(s *Store, n *node, batch []*job) {
	s.exec(n, batch)
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
	if len(res) > 0 && res[0].down {
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

// pipeline sends the batch's scripts as one pipeline. Scripts Redis does not
// know yet (NOSCRIPT) are retried with EVAL, which loads them.
func (s *Store) pipeline(ctx context.Context, batch []*job) []result {
	pipe := s.Client.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	for i, j := range batch {
		cmds[i] = j.script.EvalSha(ctx, pipe, j.keys, j.args...)
	}
	_, perr := pipe.Exec(ctx) // a failure to connect or authenticate; commands' own errors are read below
	out := make([]result, len(batch))
	for i, j := range batch {
		res, err := cmds[i].Int64Slice()
		if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			res, err = j.script.Eval(ctx, s.Client, j.keys, j.args...).Int64Slice()
		}
		if cerr := cmds[i].Err(); cerr == nil && err != nil && perr != nil {
			err = perr // the command never ran: say why (WRONGPASS, TLS, ...), not how its empty reply reads
		}
		out[i] = result{res, s.unavailable(err), unreachable(err)}
	}
	return out
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
