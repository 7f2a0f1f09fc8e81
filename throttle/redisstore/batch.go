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
// per batch instead of per decision. There is no background goroutine: the
// first caller to find no batch in flight leads; callers arriving meanwhile
// queue, and when a batch ends the leader hands the next one to the oldest
// queued caller, so no caller does more than one batch of others' work.
type batcher struct {
	mu      sync.Mutex
	pending []*job
	leading bool
}

// job is one script run.
type job struct {
	script *redis.Script
	keys   []string
	args   []any
	res    []int64
	err    error
	done   chan struct{} // closed when res and err are set
	lead   chan struct{} // closed when this job's caller must lead
}

// run runs j, batched with whatever else is queued, and returns its result.
// A wait is bounded by the batches ahead of j, each bounded by the store's
// timeout.
func (b *batcher) run(s *Store, j *job) ([]int64, error) {
	j.done, j.lead = make(chan struct{}), make(chan struct{})
	b.mu.Lock()
	b.pending = append(b.pending, j)
	if b.leading {
		b.mu.Unlock()
		select {
		case <-j.done:
			return j.res, j.err
		case <-j.lead:
		}
	} else {
		b.leading = true
		b.mu.Unlock()
	}
	b.lead(s)
	<-j.done
	return j.res, j.err
}

// lead sends every queued job as one pipeline, then passes the lead on.
func (b *batcher) lead(s *Store) {
	b.mu.Lock()
	batch := b.pending
	b.pending = nil
	b.mu.Unlock()
	s.exec(batch)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		b.leading = false
		return
	}
	close(b.pending[0].lead)
}

// exec runs a batch as one pipeline within the store's timeout and settles
// every job. Scripts Redis does not know yet (NOSCRIPT) are retried with
// EVAL, which loads them.
func (s *Store) exec(batch []*job) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
	defer cancel()
	pipe := s.Client.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	for i, j := range batch {
		cmds[i] = j.script.EvalSha(ctx, pipe, j.keys, j.args...)
	}
	pipe.Exec(ctx) // errors are read per command below
	for i, j := range batch {
		res, err := cmds[i].Int64Slice()
		if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			res, err = j.script.Eval(ctx, s.Client, j.keys, j.args...).Int64Slice()
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			err = fmt.Errorf("%w: %v", ErrUnavailable, err)
		} else {
			err = nil
		}
		j.res, j.err = res, err
		close(j.done)
	}
}
