package transport

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// probeEvery is how often a failed shared store is tried again.
const probeEvery = time.Second

// failover is the budget of a Transport with a shared store: the shared
// store while it works, and a local in-memory budget while it does not, so a
// Redis outage neither stops calls nor lets them run unchecked. The outage is
// logged once when it starts and once when it ends; meanwhile the shared
// store is probed at most once a second, so calls do not each wait for its
// timeout.
type failover struct {
	t      *Transport
	shared throttle.BudgetStore
	local  throttle.Budget

	down    atomic.Bool
	probeAt atomic.Int64 // unix ns before which the shared store is not tried
}

// use reports whether to try the shared store at now.
func (f *failover) use(now time.Time) bool {
	return !f.down.Load() || now.UnixNano() >= f.probeAt.Load()
}

// result records the outcome of a shared-store call.
func (f *failover) result(err error, now time.Time) error {
	if err == nil {
		if f.down.CompareAndSwap(true, false) && f.t.Logger != nil {
			f.t.Logger.Info("fgrl: shared budget store recovered")
		}
		return nil
	}
	f.t.stats.budgetErrors.Add(1)
	f.probeAt.Store(now.Add(probeEvery).UnixNano())
	if f.down.CompareAndSwap(false, true) && f.t.Logger != nil {
		f.t.Logger.Warn("fgrl: shared budget store failed; using a local budget until it recovers", "error", err.Error())
	}
	return err
}

func (f *failover) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	if f.use(now) {
		a, err := f.shared.Reserve(ctx, k, l, now, maxWait)
		if f.result(err, now) == nil {
			return a, nil
		}
	}
	return f.local.Reserve(ctx, k, l, now, maxWait)
}

// Release gives the slot back to both stores: a slot is booked in one of
// them, and a slot number unknown to a store changes nothing there.
func (f *failover) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	f.local.Release(ctx, k, l, slot)
	if !f.down.Load() {
		f.shared.Release(ctx, k, l, slot) // a failure here shows at the next Reserve
	}
	return nil
}

func (f *failover) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	f.local.Block(ctx, k, now, until) // kept locally too, for the next outage
	if f.use(now) {
		f.result(f.shared.Block(ctx, k, now, until), now)
	}
	return nil
}

func (f *failover) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	f.local.Sync(ctx, k, l, now, p, used, reset)
	if f.use(now) {
		f.result(f.shared.Sync(ctx, k, l, now, p, used, reset), now)
	}
	return nil
}

func (f *failover) Snapshot(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Snapshot, error) {
	if f.use(now) {
		s, err := f.shared.Snapshot(ctx, k, l, now)
		if f.result(err, now) == nil {
			return s, nil
		}
	}
	return f.local.Snapshot(ctx, k, l, now)
}
