package redisstore

import (
	"context"
	"slices"
	"sync"
)

// batcher coalesces concurrent callers' decisions into one pipeline per
// batch, and on a single server into one script run per batch (see
// commands): each decision stays atomic and one round trip, but the round
// trip is shared, so a busy store pays one write and one read system call
// per batch instead of per decision, and Redis one command. Up to
// maxInFlight batches run at once, each on a connection of its own, so
// Redis works on one batch while the client reads the answers of another
// and gathers the next. There is no background goroutine, and batching
// starts only when calls overlap: a caller that finds fewer than
// maxInFlight batches running finds nobody queued (see lead), so it sends
// its own decision at once, alone, on its own goroutine and under its own
// context, as one EVALSHA (see pipeline). Callers arriving while
// maxInFlight batches run queue, and when a batch ends its leader hands the
// whole queue, as the next batch, to the oldest queued caller, so no caller
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
	// wake, made only for a job that queues, is signalled once: with nil
	// when res and err are set, or with the batch this job's caller must
	// lead (which holds the job). A job sent at once is settled on its
	// caller's goroutine, with no signal.
	wake chan []*job
}

// run runs j, batched with whatever else is queued, and returns its result.
// exec sends a batch and settles its jobs (Store.exec, for a node); its
// context is the caller's when the batch is the caller's own decision
// alone, else one that no caller's end cancels (others' decisions ride in
// it). A queued wait is bounded by the batches ahead of j, each bounded by
// the store's timeout, and by ctx while j is still queued: a caller whose
// ctx ends then leaves the queue, its decision never sent.
func (b *batcher) run(ctx context.Context, j *job, exec func(ctx context.Context, batch []*job)) ([]int64, error) {
	b.mu.Lock()
	if b.leaders < maxInFlight { // nobody is queued: j goes now, alone
		b.leaders++
		b.mu.Unlock()
		b.lead(ctx, []*job{j}, exec)
		return j.res, j.err
	}
	j.wake = make(chan []*job, 1)
	b.pending = append(b.pending, j)
	b.mu.Unlock()
	select {
	case batch := <-j.wake:
		if batch != nil {
			b.lead(ctx, batch, exec)
		}
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
	// Already in a batch (or handed one to lead): it ends within the timeout.
	if batch := <-j.wake; batch != nil {
		b.lead(ctx, batch, exec)
	}
	return j.res, j.err
}

// lead sends a batch, then hands whatever queued meanwhile to its oldest
// caller as the next batch; the queue is taken whole at once, so no job is
// in two batches. A batch ends with leaders lowered only when nobody is
// queued, so the queue is empty whenever fewer than maxInFlight batches run.
func (b *batcher) lead(ctx context.Context, batch []*job, exec func(ctx context.Context, batch []*job)) {
	if len(batch) > 1 {
		ctx = context.WithoutCancel(ctx) // the leader's end must not end the others' decisions
	}
	exec(ctx, batch)
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
