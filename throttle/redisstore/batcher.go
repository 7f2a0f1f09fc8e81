package redisstore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// batcher coalesces concurrent callers' decisions into one pipeline per
// batch, and on a single server into one script run per batch (see
// commands): each decision stays atomic and one round trip, but the round
// trip is shared, so a busy store pays one write and one read system call
// per batch instead of per decision, and Redis one command. Up to
// maxInFlight batches run at once, each on a connection of its own, so
// Redis works on one batch while the client reads the answers of another
// and gathers the next. Batching starts only when calls overlap: a caller
// that finds fewer than maxInFlight batches running finds nobody queued
// (see next), so it sends its own decision at once, alone, on its own
// goroutine and under its own context, as one EVALSHA (see pipeline).
// Callers arriving while maxInFlight batches run queue, and when a batch
// ends, the whole queue goes as the next batch to a goroutine that runs
// batches for as long as callers queue (work), so that each queued caller
// waits only for its own answer or its own context's end, whichever comes
// first.
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
	ctx    context.Context // its caller's
	script *script
	keys   []string
	args   []byte // packed: see pack
	res    []int64
	err    error
	// wake, made only for a job that queues, is signalled once, when res
	// and err are set (see settle). A job sent at once is settled on its
	// caller's goroutine, with no signal.
	wake chan struct{}
	// done is claimed once, by whichever comes first: its answer (settle)
	// or its caller's leaving with the decision sent (run).
	done atomic.Bool
	// sent is set when a batch takes the job (under the batcher's lock for
	// a queued job, so a caller that finds itself out of the queue sees
	// it): from then on Redis may run it, whatever its caller is told.
	sent atomic.Bool
}

// run runs j, batched with whatever else is queued, and returns its result.
// exec sends a batch and settles its jobs (Store.exec, for a node); its
// context is the caller's when the batch is one caller's decision alone,
// else one that no caller's end cancels (others' decisions ride in it).
// The caller's wait ends with ctx: a decision still queued then leaves the
// queue, never sent; one already sent (job.sent) goes on without its
// caller, whose error then does not say whether Redis ran it.
func (b *batcher) run(ctx context.Context, j *job, exec func(ctx context.Context, batch []*job)) ([]int64, error) {
	j.ctx = ctx
	b.mu.Lock()
	if b.leaders < maxInFlight { // nobody is queued: j goes now, alone
		b.leaders++
		b.mu.Unlock()
		j.sent.Store(true)
		exec(ctx, []*job{j})
		if batch := b.next(); batch != nil {
			go b.work(batch, exec)
		}
		return j.res, j.err
	}
	j.wake = make(chan struct{}, 1)
	b.pending = append(b.pending, j)
	b.mu.Unlock()
	select {
	case <-j.wake:
		return j.res, j.err
	case <-ctx.Done():
	}
	b.mu.Lock()
	if i := slices.Index(b.pending, j); i >= 0 { // never sent: leave the queue
		b.pending = slices.Delete(b.pending, i, i+1)
		b.mu.Unlock()
		return nil, ctx.Err()
	}
	b.mu.Unlock()
	if j.done.CompareAndSwap(false, true) { // sent: it runs on without its caller
		return nil, ctx.Err()
	}
	<-j.wake // answered meanwhile
	return j.res, j.err
}

// next takes the queue whole, as the next batch, after a batch ends; with
// nobody queued, the batch's place is given up and next returns nil. The
// queue is taken whole at once, so no job is in two batches, and a place is
// given up only when nobody is queued, so the queue is empty whenever fewer
// than maxInFlight batches run.
func (b *batcher) next() []*job {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		b.leaders--
		return nil
	}
	batch := b.pending
	b.pending = nil
	for _, j := range batch {
		j.sent.Store(true)
	}
	return batch
}

// work runs queued batches one after another until nobody is queued. A
// batch of one is sent under its caller's context; a batch of several under
// its oldest caller's values and no caller's end.
func (b *batcher) work(batch []*job, exec func(ctx context.Context, batch []*job)) {
	for ; batch != nil; batch = b.next() {
		ctx := batch[0].ctx
		if len(batch) > 1 {
			ctx = context.WithoutCancel(ctx)
		}
		exec(ctx, batch)
	}
}
