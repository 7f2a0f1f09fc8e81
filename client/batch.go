package client

import (
	"context"
	"sync"
	"time"
)

// MaxBatchWindow caps Config.BatchWindow: lookups wait for their batch at
// most this long.
const MaxBatchWindow = 100 * time.Millisecond

// batcher merges the single-user lookups of one kind (GetProfile with the
// same settings, GetPresence) that one acting user makes within the batch
// window into one batch call. Lookups of different acting users never
// share a batch.
type batcher[T any] struct {
	mu   sync.Mutex
	open map[string]*batch[T] // by acting user and kind
}

// batch is one batch call being gathered, then made.
type batch[T any] struct {
	xuids  []string
	seen   map[string]bool
	done   chan struct{}
	once   sync.Once
	got    map[string]T
	status int // the batch answer's
	err    error
}

// batchRun makes a batch call: the records by XUID and the answer's status.
type batchRun[T any] func(context.Context, []string) (map[string]T, int, error)

// lookup adds xuid to the batch open under key (opening one, which goes out
// after window or at max XUIDs), waits for it, and returns xuid's record.
// run makes the batch call; missing is the error for a XUID its answer
// (of that status) lacks.
func (b *batcher[T]) lookup(ctx context.Context, key, xuid string, window time.Duration, max int,
	run batchRun[T], missing func(status int) error) (T, error) {
	b.mu.Lock()
	if b.open == nil {
		b.open = make(map[string]*batch[T])
	}
	p := b.open[key]
	if p == nil {
		p = &batch[T]{seen: map[string]bool{}, done: make(chan struct{})}
		b.open[key] = p
		// The batch outlives this caller's cancellation: others wait on it.
		bctx := context.WithoutCancel(ctx)
		time.AfterFunc(window, func() { b.send(bctx, key, p, run) })
	}
	if !p.seen[xuid] {
		p.seen[xuid] = true
		p.xuids = append(p.xuids, xuid)
	}
	if len(p.xuids) >= max {
		delete(b.open, key) // full: it goes now, and the timer finds it gone
		go b.send(context.WithoutCancel(ctx), key, p, run)
	}
	b.mu.Unlock()
	var zero T
	select {
	case <-p.done:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	if p.err != nil {
		return zero, p.err
	}
	v, ok := p.got[xuid]
	if !ok {
		return zero, missing(p.status)
	}
	return v, nil
}

// send makes p's batch call once, whichever of its timer and its filling up
// comes first; once it is out of the open map, no lookup joins it.
func (b *batcher[T]) send(ctx context.Context, key string, p *batch[T], run batchRun[T]) {
	b.mu.Lock()
	if b.open[key] == p {
		delete(b.open, key)
	}
	b.mu.Unlock()
	p.once.Do(func() {
		p.got, p.status, p.err = run(ctx, p.xuids)
		close(p.done)
	})
}
