package transport

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// probeEvery is how often a failed shared store is tried again; quietFor is
// how long it must then work without an error before the outage is logged
// as over.
const (
	probeEvery = time.Second
	quietFor   = 5 * time.Second
)

// FailureIsolator is implemented by a shared BudgetStore that protects
// itself when part of it fails: it fails at once, without waiting, for the
// keys it cannot serve, and probes the failed part itself (as
// redisstore.Store does per Redis node). The transport then keeps sending
// every call to it, so keys on healthy nodes keep the shared budget, and
// falls back to the local budget per call.
type FailureIsolator interface {
	IsolatesFailures() bool
}

// failover is the budget of a Transport with a shared store: the shared
// store while it works, and a local in-memory budget while it does not, so a
// Redis outage neither stops calls nor lets them run unchecked. An outage is
// logged once when it starts and once when the store has then worked for
// quietFor without an error, so a partial outage (one Cluster node down)
// logs one line, not one per call. Meanwhile a store that does not isolate
// failures itself is probed at most once a second, so calls do not each wait
// for its timeout.
type failover struct {
	t      *Transport
	shared throttle.BudgetStore
	local  throttle.MemoryBudgetStore

	owedMu sync.Mutex
	owed   []owedRelease // releases the shared store is owed, oldest first (at most maxOwed)
	nOwed  atomic.Int32  // len(owed), read without the lock

	isolates bool         // the shared store is a FailureIsolator
	down     atomic.Bool  // an outage is logged and not yet over
	probeAt  atomic.Int64 // unix ns before which the shared store is not tried
	lastErr  atomic.Int64 // unix ns of the last error
}

func newFailover(t *Transport, shared throttle.BudgetStore, margin time.Duration) *failover {
	fi, ok := shared.(FailureIsolator)
	return &failover{t: t, shared: shared, local: throttle.MemoryBudgetStore{Margin: margin}, isolates: ok && fi.IsolatesFailures()}
}

// use reports whether to try the shared store at now.
func (f *failover) use(now time.Time) bool {
	return f.isolates || now.UnixNano() >= f.probeAt.Load()
}

// result records the outcome of a shared-store call (op: "reserve",
// "block", "sync", "snapshot"): a failure is an EventBudgetError.
func (f *failover) result(ctx context.Context, op string, k throttle.Key, err error, now time.Time) error {
	if err == nil {
		if f.down.Load() && now.UnixNano()-f.lastErr.Load() >= int64(quietFor) &&
			f.down.CompareAndSwap(true, false) && f.t.Logger != nil {
			f.t.Logger.Info("fgrl: shared budget store recovered")
		}
		return nil
	}
	if callersEnd(ctx, err) {
		return err // the caller's own end (a cancel, its deadline), not the store's failure
	}
	f.t.emit(ctx, Event{Kind: EventBudgetError, Scope: eventScope(k.Scope), Err: err, Reason: op}, nil)
	f.lastErr.Store(now.UnixNano())
	f.probeAt.Store(now.Add(probeEvery).UnixNano())
	if f.down.CompareAndSwap(false, true) && f.t.Logger != nil {
		f.t.Logger.Warn("fgrl: shared budget store failed; using a local budget for the calls it cannot serve until it recovers",
			"error", safetext.Clip(err.Error(), 1024)) // the store's text, as a call's error is clipped
	}
	return err
}

// callersEnd reports whether err is the caller's own end rather than the
// store's failure: a cancel, or the caller's context's error returned as
// is. A store's own timeout that wraps context.DeadlineExceeded in its own
// words is its failure even when the caller's deadline has passed too (a
// caller whose deadline is near the store's timeout would otherwise hide a
// dead store for good: no log line, no budget error, no probe pacing).
func callersEnd(ctx context.Context, err error) bool {
	cerr := ctx.Err()
	return cerr != nil && (err == cerr || errors.Is(cerr, context.Canceled) && errors.Is(err, context.Canceled))
}

func (f *failover) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	if f.use(now) {
		f.payOwed(ctx)
		a, err := f.shared.Reserve(ctx, k, l, now, maxWait)
		if f.result(ctx, "reserve", k, err, now) == nil {
			return a, nil
		}
	} else {
		f.t.emit(ctx, Event{Kind: EventBudgetFallback, Scope: eventScope(k.Scope)}, nil)
	}
	return f.local.Reserve(ctx, k, l, now, maxWait)
}

// Release gives the slot back to both stores: a slot is booked in one of
// them, and a slot number unknown to a store changes nothing there. The
// local store at once; the shared store within ctx, the call's own. When
// the call has already ended (cancelled while it waited for its slot), the
// shared store is owed the release, which the next call to reach it sends
// (payOwed). A call so never waits past its context for a stalled store,
// and a slot booked in a working one still goes back. A release the
// call's end cuts short is not sent again: the store may have taken it,
// and a slot released twice could free another call's; one it did not
// take ages out of its windows (the budget stays strict).
func (f *failover) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	f.local.Release(ctx, k, l, slot)
	switch {
	case !f.isolates && f.down.Load():
	case ctx.Err() != nil:
		f.owe(owedRelease{k, l, slot})
	default:
		f.shared.Release(ctx, k, l, slot) // a failure here shows at the next Reserve
	}
	return nil
}

// maxOwed bounds the releases owed to the shared store; past it the oldest
// is dropped (its slot ages out of the store's windows, as an unsent
// call's would: the budget stays on the strict side).
const maxOwed = 256

// owedRelease is a release the shared store is owed.
type owedRelease struct {
	k    throttle.Key
	l    throttle.Limit
	slot int64
}

// owe keeps r for the next call that reaches the shared store.
func (f *failover) owe(r owedRelease) {
	f.owedMu.Lock()
	defer f.owedMu.Unlock()
	if len(f.owed) == maxOwed {
		f.owed = append(f.owed[:0], f.owed[1:]...)
	}
	f.owed = append(f.owed, r)
	f.nOwed.Store(int32(len(f.owed)))
}

// payOwed sends the oldest release owed to the shared store, within ctx
// (the call that reaches the store next): one a call, so that no call
// carries more than one extra operation, and none under a context already
// ended. Like a call's own release, one that ctx's end cuts short is not
// sent again.
func (f *failover) payOwed(ctx context.Context) {
	if f.nOwed.Load() == 0 || ctx.Err() != nil {
		return
	}
	f.owedMu.Lock()
	if len(f.owed) == 0 {
		f.owedMu.Unlock()
		return
	}
	r := f.owed[0]
	f.owed = f.owed[1:]
	f.nOwed.Store(int32(len(f.owed)))
	f.owedMu.Unlock()
	f.shared.Release(ctx, r.k, r.l, r.slot)
}

func (f *failover) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	f.local.Block(ctx, k, now, until) // kept locally too, for the next outage
	if f.use(now) {
		f.result(ctx, "block", k, f.shared.Block(ctx, k, now, until), now)
	}
	return nil
}

func (f *failover) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	f.local.Sync(ctx, k, l, now, p, used, reset)
	if f.use(now) {
		f.result(ctx, "sync", k, f.shared.Sync(ctx, k, l, now, p, used, reset), now)
	}
	return nil
}

func (f *failover) Snapshot(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Snapshot, error) {
	if f.use(now) {
		s, err := f.shared.Snapshot(ctx, k, l, now)
		if f.result(ctx, "snapshot", k, err, now) == nil {
			return s, nil
		}
	}
	return f.local.Snapshot(ctx, k, l, now)
}
