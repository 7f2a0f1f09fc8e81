package client

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/transport"
)

// MaxBatchWindow caps Config.BatchWindow: lookups wait for their batch at
// most this long.
const MaxBatchWindow = 100 * time.Millisecond

// batcher merges the single-user lookups of one kind (GetProfile with the
// same settings, GetPresence) that one acting user makes within the batch
// window into one batch call.
//
// A batch call is one request made for every lookup in it, so it merges
// only lookups that would each have made theirs alike: of one acting user
// (whose token it carries), one kind and one transport.Policy (a FailFast
// lookup never waits for a retry made for another, and a patient one is
// never refused for a FailFast one). Each lookup still ends on its own
// context: the batch call runs until the latest deadline of the lookups in
// it, and is cancelled once none of them waits (or, before it is sent, not
// made at all).
//
// What a batch sends is its own: call is the batcher's, set by New, and
// builds the request from the batch key and the batch's own list of XUIDs,
// never from a lookup's closure or arguments, which its caller owns again
// once the lookup returns (a settings slice reused by a caller whose
// lookup left must not change the request another lookup waits for).
type batcher[T any] struct {
	call    batchCall[T]
	api     api                    // the call a lookup is, for its errors
	missing func(status int) error // the error for a XUID an answer of that status lacks
	limit   int                    // XUIDs a batch holds at most

	mu   sync.Mutex
	open map[batchKey]*batch[T] // batches gathering lookups; requires mu
}

// batchCall makes the batch call of key's acting user and kind for xuids:
// the records by XUID and the answer's status.
type batchCall[T any] func(ctx context.Context, key batchKey, xuids []string) (map[string]T, int, error)

// batchKey names the batch a lookup may join.
type batchKey struct {
	user   string // the acting user's XUID, as As got it
	kind   string // what the lookup asks (settings), in one unambiguous form
	policy transport.Policy
}

// settingsKind is the kind of a profile lookup: its settings, each with its
// length, so that no two lists of names share one.
func settingsKind(settings []string) string {
	var b strings.Builder
	for _, s := range settings {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	return b.String()
}

// kindSettings is settingsKind's inverse: the settings a profile batch's
// kind names, a list of its own.
func kindSettings(kind string) []string {
	settings := []string{}
	for kind != "" {
		n, rest, _ := strings.Cut(kind, ":")
		l, err := strconv.Atoi(n)
		if err != nil || l < 0 || l > len(rest) {
			break // not settingsKind's: no kind of a lookup
		}
		settings = append(settings, rest[:l])
		kind = rest[l:]
	}
	return settings
}

// batch is one batch call being gathered, then made.
type batch[T any] struct {
	// Under the batcher's mu:
	xuids   []string // at most the batch's limit; fixed once sent
	seen    map[string]bool
	waiting int       // lookups waiting for the answer
	latest  time.Time // the latest deadline of the lookups that joined
	endless bool      // a lookup with no deadline joined
	sent    bool      // out of the open map: made, or given up
	timer   *time.Timer

	ctx    context.Context    // the first lookup's values, none of its cancellation
	cancel context.CancelFunc // cancels ctx: once no lookup waits, or the call is over

	done   chan struct{} // closed once got, status and err are set
	got    map[string]T
	status int // the batch answer's
	err    error
}

// lookup adds xuid to the batch of the acting user, kind and ctx's policy
// (opening one, which goes out after window or at the batcher's limit of
// XUIDs), waits for it until ctx is done, and returns xuid's record.
func (b *batcher[T]) lookup(ctx context.Context, user, kind, xuid string, window time.Duration) (T, error) {
	key := batchKey{user: user, kind: kind, policy: transport.PolicyOf(ctx)}
	p := b.join(ctx, key, xuid, window)
	var zero T
	select {
	case <-p.done:
	case <-ctx.Done():
		b.leave(key, p)
		return zero, transportError(b.api, ctx.Err(), nil) // an *Error, as every failure of a call
	}
	if p.err != nil {
		return zero, p.err
	}
	v, ok := p.got[xuid]
	if !ok {
		return zero, b.missing(p.status)
	}
	return v, nil
}

// join adds xuid and ctx's deadline to the batch open under key, opening
// one if none is, and sends it now if that fills it.
func (b *batcher[T]) join(ctx context.Context, key batchKey, xuid string, window time.Duration) *batch[T] {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open == nil {
		b.open = make(map[batchKey]*batch[T])
	}
	p := b.open[key]
	if p == nil {
		p = &batch[T]{seen: map[string]bool{}, done: make(chan struct{})}
		p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
		b.open[key] = p
		p.timer = time.AfterFunc(window, func() { b.fire(key, p) })
	}
	p.waiting++
	if dl, ok := ctx.Deadline(); !ok {
		p.endless = true
	} else if dl.After(p.latest) {
		p.latest = dl
	}
	if !p.seen[xuid] {
		p.seen[xuid] = true
		p.xuids = append(p.xuids, xuid)
	}
	if len(p.xuids) >= b.limit {
		ctx, cancel := b.seal(key, p)
		go b.send(ctx, cancel, key, p)
	}
	return p
}

// fire ends p's window: p goes out unless it filled up first or every
// lookup in it left.
func (b *batcher[T]) fire(key batchKey, p *batch[T]) {
	b.mu.Lock()
	if p.sent {
		b.mu.Unlock()
		return
	}
	ctx, cancel := b.seal(key, p)
	b.mu.Unlock()
	b.send(ctx, cancel, key, p)
}

// seal takes p out of the open map, so that no lookup joins it, and
// returns the context its call runs under: p's, ending at the latest
// deadline of its lookups. Requires b.mu held and p not sent.
func (b *batcher[T]) seal(key batchKey, p *batch[T]) (context.Context, context.CancelFunc) {
	p.sent = true
	p.timer.Stop()
	if b.open[key] == p {
		delete(b.open, key)
	}
	if p.endless {
		return p.ctx, p.cancel
	}
	return context.WithDeadline(p.ctx, p.latest)
}

// leave is a lookup's leaving p before its answer: the last one to leave
// cancels p's call, or takes p out of the open map unsent.
func (b *batcher[T]) leave(key batchKey, p *batch[T]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p.waiting--
	if p.waiting > 0 {
		return
	}
	if !p.sent {
		p.sent = true
		p.timer.Stop()
		if b.open[key] == p {
			delete(b.open, key)
		}
	}
	p.cancel()
}

// send makes p's batch call, key's, under ctx and hands its answer to the
// lookups. p.xuids is fixed once p is sealed.
func (b *batcher[T]) send(ctx context.Context, cancel context.CancelFunc, key batchKey, p *batch[T]) {
	p.got, p.status, p.err = b.call(ctx, key, p.xuids)
	cancel()
	p.cancel()
	close(p.done)
}
