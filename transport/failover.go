package transport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
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

	owedMu   sync.Mutex
	owed     []owedOp             // operations the shared store is owed, oldest first (at most maxOwed)
	nOwed    atomic.Int32         // len(owed), read without the lock
	inFlight map[throttle.Key]int // the reports of each key calls are paying now
	nReports atomic.Int32         // the reports owed or in flight, read without the lock (pending)

	isolates bool         // the shared store is a FailureIsolator
	down     atomic.Bool  // an outage is logged and not yet over
	probeAt  atomic.Int64 // unix ns before which the shared store is not tried
	lastErr  atomic.Int64 // unix ns of the last error
}

func newFailover(t *Transport, shared throttle.BudgetStore, margin time.Duration) *failover {
	fi, ok := shared.(FailureIsolator)
	return &failover{t: t, shared: shared, local: throttle.MemoryBudgetStore{Margin: margin}, isolates: ok && fi.IsolatesFailures(),
		inFlight: map[throttle.Key]int{}}
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
	// An Event names no user: a store's error may quote the key it was
	// given (its userhash).
	f.t.emit(ctx, Event{Kind: EventBudgetError, Scope: eventScope(k.Scope), Err: xblauth.Secrets{}.Add(k.User).ScrubError(err), Reason: op}, nil)
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

// Reserve books in the shared store while it works. While a report of k
// has not reached it (on its way, or owed after a payment failed), the
// call is booked in both stores and holds the stricter: the shared store
// counts it for the fleet, and the local one has the report; a call the
// local store would refuse, or make wait longer, is refused, and its
// shared booking given back: the refusal carries the wait, which a call
// that may wait that long waits out before it books again (gateBudget),
// then in a shared store that has the report, counted when it is sent.
func (f *failover) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	a, _ := f.reserve(ctx, k, l, now, maxWait)
	return a, nil
}

// reserve is Reserve, and returns the local store's booking kept beside
// the shared one (stricter; zero when none), which the call gives back
// with it if it does not go (call.release): the call, not the failover,
// holds the two, as two calls may get the same slot of a shared store (a
// MemoryBudgetStore's is the instant counted).
func (f *failover) reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, int64) {
	if f.use(now) {
		if f.payOwed(ctx, k, now) {
			a, err := f.shared.Reserve(ctx, k, l, now, maxWait)
			if err == nil && a.Allowed && a.Slot < 0 {
				// The failover marks its local bookings by their sign: a
				// store's own negative slot would be given back to the
				// wrong store. Its booking goes back to it, and the call
				// books locally, as with a store that fails.
				f.shared.Release(ctx, k, l, a.Slot)
				err = fmt.Errorf("the shared budget store booked slot %d: a shared store's slots must not be negative (Transport.Budget)", a.Slot)
			}
			if f.result(ctx, "reserve", k, err, now) == nil {
				if a.Allowed && f.pending(k) {
					return f.stricter(ctx, k, l, now, maxWait, a)
				}
				return a, 0
			}
		}
	} else {
		f.t.emit(ctx, Event{Kind: EventBudgetFallback, Scope: eventScope(k.Scope)}, nil)
	}
	a, _ := f.local.Reserve(ctx, k, l, now, maxWait)
	a.Slot = -a.Slot // booked locally (Release)
	return a, 0
}

// stricter returns the shared store's admission a of a call of k, or,
// when the local store (which has a report of k the shared one lacks)
// would refuse it or make it wait longer, that refusal, a's booking given
// back. A call that goes is counted in both stores: the local one, which
// has the report, counts the calls it lets go while the report is
// pending (given back, they would leave both stores short of them).
func (f *failover) stricter(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration, a throttle.Admission) (throttle.Admission, int64) {
	b, _ := f.local.Reserve(ctx, k, l, now, maxWait)
	if b.Allowed && b.Wait <= a.Wait {
		return a, b.Slot // given back with the shared booking, if the call does not go
	}
	if b.Allowed {
		f.local.Release(ctx, k, l, b.Slot)
	}
	f.send(ctx, owedOp{op: opRelease, k: k, l: l, slot: a.Slot}, true, now)
	return throttle.Admission{Wait: max(b.Wait, a.Wait), Blocked: b.Blocked}, 0
}

// Release gives the slot back to the store that booked it: the local one
// at once, the shared one within ctx, the call's own (see send). The
// failover's slot is the shared store's, or, negated, the local store's:
// the two may number different bookings alike (a MemoryBudgetStore's slot
// is the instant it counts, and a 429's block or a window's counts give
// both stores the same next instant), and a release of one must not free
// the other's. A shared store's slots are not negative (redisstore's are
// random ids; a MemoryBudgetStore's instants are after 1970); Reserve
// treats one that is as the store's failure. A local booking kept beside
// a shared one (stricter) is the call's to give back (call.release).
func (f *failover) Release(ctx context.Context, k throttle.Key, l throttle.Limit, slot int64) error {
	if slot < 0 {
		return f.local.Release(ctx, k, l, -slot)
	}
	// Tried while the store may be (a working store, an isolating one, or
	// a probe's time: a Release carries no time of its own).
	f.send(ctx, owedOp{op: opRelease, k: k, l: l, slot: slot}, !f.down.Load() || f.use(time.Now()), time.Time{})
	return nil
}

func (f *failover) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	f.local.Block(ctx, k, now, until) // kept locally too, for the next outage
	f.send(ctx, owedOp{op: opBlock, k: k, now: now, until: until}, f.use(now), now)
	return nil
}

func (f *failover) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	f.local.Sync(ctx, k, l, now, p, used, reset)
	f.send(ctx, owedOp{op: opSync, k: k, l: l, now: now, p: p, used: used, reset: reset}, f.use(now), now)
	return nil
}

// The operations a call reports to the shared store (owedOp.op).
const (
	opRelease = "release"
	opBlock   = "block"
	opSync    = "sync"
	opLearn   = "learn" // a 429 body's limit, for a shared store that is a throttle.LimitStore (call.learn)
)

// owedOp is a Release, Block, Sync or Learn for the shared store. A Learn
// is of no booking's key: its k names the scope alone.
type owedOp struct {
	op         string
	k          throttle.Key
	l          throttle.Limit
	slot       int64
	now, until time.Time
	p          throttle.Period
	used       int
	reset      time.Duration
	learn      throttle.LimitReport
	tried      bool // a Learn the store failed: it may have taken it
}

func (o owedOp) to(ctx context.Context, s throttle.BudgetStore) error {
	switch o.op {
	case opRelease:
		return s.Release(ctx, o.k, o.l, o.slot)
	case opBlock:
		return s.Block(ctx, o.k, o.now, o.until)
	case opLearn:
		ls, ok := s.(throttle.LimitStore)
		if !ok {
			return nil
		}
		_, err := ls.Learn(ctx, o.learn)
		return err
	}
	return s.Sync(ctx, o.k, o.l, o.now, o.p, o.used, o.reset)
}

// report reports whether o is what the service said of a key's budget (a
// Block or Sync), which the key's bookings wait for, rather than a Release
// or a Learn.
func (o owedOp) report() bool { return o.op == opBlock || o.op == opSync }

// at returns o as sent at now, and whether it still says anything: a
// block that has ended, or counts of a window that has reset, are
// dropped; the rest is measured from now (a store may measure a block or
// a window's reset from when it arrives: redisstore does by Redis's clock).
func (o owedOp) at(now time.Time) (owedOp, bool) {
	// A paying call's time may have been read before the report's (it
	// read its clock, then waited for the store): never lengthen it.
	now = later(now, o.now)
	switch o.op {
	case opLearn:
		// Sent with its own time: a limit lasts LearnedFor after the
		// report of it, not after the outage that held it back.
		return o, now.Before(o.learn.At.Add(throttle.LearnedFor))
	case opBlock:
		if !o.until.After(now) {
			return o, false
		}
	case opSync:
		o.reset -= now.Sub(o.now)
		if o.reset <= 0 {
			return o, false
		}
	}
	if o.report() {
		o.now = now
	}
	return o, true
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// send gives o to the shared store within ctx, the call's own, so that a
// stalled store never holds a call past its context; reach is false while
// the store is down (an outage: it is not tried). The store is owed o when
// it is down, or fails o, or the call's context ends before the store
// answers: the next call of this Transport to reach the store sends
// it (payOwed), first when it is of that call's key, so that what the
// service reported reaches the budget before the key's next booking. A
// store may so get an operation twice when the first did arrive: a Block
// or Sync twice is one, and a Release names a booking
// (Transport.Budget). A failure with the call's context alive is the
// store's own (result).
func (f *failover) send(ctx context.Context, o owedOp, reach bool, now time.Time) {
	if !reach {
		f.owe(o)
		return
	}
	if err := o.to(ctx, f.shared); err != nil {
		f.owe(o)
		if o.report() {
			f.result(ctx, o.op, o.k, err, now)
		} // a failed Release shows at the next Reserve
	}
}

// sameReport reports whether a and b report one limit of one window by
// one user.
func sameReport(a, b throttle.LimitReport) bool {
	return a.Scope == b.Scope && a.Period == b.Period && a.Limit == b.Limit && a.User == b.User
}

// maxOwed bounds the operations owed to the shared store; past it the
// oldest release or learn is dropped (a release's slot ages out of the
// store's windows, as an unsent call's would; a learned limit stays in
// this transport, and reaches the fleet with the next 429 that reports
// it), or with none, the oldest report (the local store keeps it, and
// serves the key in the next outage).
const maxOwed = 256

// maxPaid bounds the owed operations one call sends: a key owes at most
// three reports (one block, one count of each window: merged), so a key's
// reports all go before its booking.
const maxPaid = 4

// owe keeps o for the next call that reaches the shared store. A report
// merges with the key's owed one of its kind (merged), so a key owes at
// most three.
func (f *failover) owe(o owedOp) {
	f.owedMu.Lock()
	defer f.owedMu.Unlock()
	for i, p := range f.owed {
		switch {
		case o.report() && p.k == o.k && p.op == o.op && (o.op == opBlock || p.p == o.p):
			f.owed[i] = merged(p, o)
			return
		case o.op == opLearn && p.op == opLearn && sameReport(p.learn, o.learn):
			o.tried = o.tried || p.tried
			f.owed[i] = o // the later report of the same limit by the same user
			return
		}
	}
	if len(f.owed) == maxOwed {
		// The oldest release or learn goes first: a release dropped
		// leaves the store stricter, a report dropped lets calls into a
		// limit. With none, a release or learn is not kept; a report
		// takes the oldest report's place.
		i := slices.IndexFunc(f.owed, func(o owedOp) bool { return !o.report() })
		if i < 0 && !o.report() {
			return
		}
		if i < 0 {
			f.nReports.Add(-1) // a report's place taken
		}
		f.owed = slices.Delete(f.owed, max(i, 0), max(i, 0)+1)
	}
	f.owed = append(f.owed, o)
	f.nOwed.Store(int32(len(f.owed)))
	if o.report() {
		f.nReports.Add(1)
	}
}

// sameWindow is how far apart two reports may put the end of one of the
// service's windows: RateLimit's reset is in whole seconds, and each
// report is timed when its answer arrived.
const sameWindow = 2 * time.Second

// merged is what two reports of a key's kind (its blocks, or its counts
// of one window) say together, whichever order they came in: the later
// end of a block; of counts, those of the window that ends later (a fixed
// window's successor has begun only once it has ended), or, of one
// window, the most used. Never less strict than either.
func merged(a, b owedOp) owedOp {
	if a.op == opBlock {
		if a.until.After(b.until) {
			return a
		}
		return b
	}
	ea, eb := a.now.Add(a.reset), b.now.Add(b.reset)
	switch {
	case eb.Sub(ea) >= sameWindow:
		return b
	case ea.Sub(eb) >= sameWindow:
		return a
	case a.used > b.used:
		return a
	}
	return b
}

// payOwed sends what the shared store is owed, within ctx, the context of
// the call about to book for k there at now: first k's reports, then its
// releases, then the oldest of other keys, at most maxPaid in all and
// none under a context already ended. At the first that fails it stops:
// that one and the rest are owed again, and the failure is reported as
// the store's (result) unless ctx's end caused it. It reports whether the
// call may book in the shared store: false after a failure of a store
// that does not isolate failures (the call books locally, as after a
// failed probe: one try of a store that is down, not five).
func (f *failover) payOwed(ctx context.Context, k throttle.Key, now time.Time) bool {
	if f.nOwed.Load() == 0 || ctx.Err() != nil {
		return true
	}
	f.owedMu.Lock()
	var pay []owedOp
	for _, reports := range []bool{true, false} {
		f.owed = slices.DeleteFunc(f.owed, func(o owedOp) bool {
			if o.k == k && o.report() == reports && len(pay) < maxPaid {
				pay = append(pay, o)
				return true
			}
			return false
		})
	}
	for len(pay) < maxPaid {
		i := slices.IndexFunc(f.owed, func(o owedOp) bool { return o.k != k })
		if i < 0 {
			break
		}
		pay = append(pay, f.owed[i])
		f.owed = slices.Delete(f.owed, i, i+1)
	}
	f.nOwed.Store(int32(len(f.owed)))
	for _, o := range pay {
		if o.report() {
			f.inFlight[o.k]++ // still counted in nReports, until landed
		}
	}
	f.owedMu.Unlock()
	defer f.landed(pay)
	for i, o := range pay {
		o, ok := o.at(now)
		if !ok || o.op == opLearn && !f.learnNews(ctx, o, now) {
			continue
		}
		if err := o.to(ctx, f.shared); err != nil {
			pay[i].tried = pay[i].tried || pay[i].op == opLearn // the store may have taken it (learnNews)
			for _, o := range pay[i:] {
				f.owe(o)
			}
			f.result(ctx, o.op, o.k, err, now)
			return f.isolates
		}
	}
	return true
}

// learnNews reports whether an owed report o still tells the shared store
// something: the shared store has no limit of its window in force, and,
// when the store was tried with it and failed, the local store has its
// limit confirmed. A report the store failed may be one that did reach
// it, its answer lost: sent again, a store that times reports on arrival,
// as redisstore does, would take it for the same user's report a window
// later and confirm a limit one report made; one the store was never sent
// (the failover stood in) cannot have. A limit the shared store has holds
// there, whether reported before o or after: which came last cannot be
// told across two clocks (redisstore times a limit by Redis's), and a
// report sent again would be timed on arrival, as the newest; one older
// than o ends at its Until, or at the fleet's next 429 that reports the
// limit. A shared store that cannot be read is sent o, which it then
// fails too (owed again).
func (f *failover) learnNews(ctx context.Context, o owedOp, now time.Time) bool {
	r := o.learn
	window := func(l throttle.Learned) bool { return l.Scope == r.Scope && l.Period == r.Period }
	if o.tried {
		in, _ := f.t.learned.local.Learned(ctx, now)
		if !slices.ContainsFunc(in, func(l throttle.Learned) bool { return window(l) && l.Limit == r.Limit }) {
			return false
		}
	}
	ls, ok := f.shared.(throttle.LimitStore)
	if !ok {
		return false
	}
	in, err := ls.Learned(ctx, now)
	return err != nil || !slices.ContainsFunc(in, window)
}

// pending reports whether the shared store lacks a report of k: one on
// its way there (a call is paying it), or still owed (its payment failed,
// or waits its turn). Until it lands, k's bookings and snapshots are the
// local store's, which has it.
func (f *failover) pending(k throttle.Key) bool {
	if f.nReports.Load() == 0 {
		return false
	}
	f.owedMu.Lock()
	defer f.owedMu.Unlock()
	return f.inFlight[k] > 0 || slices.ContainsFunc(f.owed, func(o owedOp) bool { return o.k == k && o.report() })
}

// landed ends the flight of the reports in pay.
func (f *failover) landed(pay []owedOp) {
	f.owedMu.Lock()
	defer f.owedMu.Unlock()
	for _, o := range pay {
		if o.report() {
			if f.inFlight[o.k]--; f.inFlight[o.k] == 0 {
				delete(f.inFlight, o.k)
			}
			f.nReports.Add(-1)
		}
	}
}

// Snapshot reads the shared store, after what it is owed of k (as a
// booking does), or the local one, which has a report of k the shared
// one lacks.
func (f *failover) Snapshot(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Snapshot, error) {
	if f.use(now) && f.payOwed(ctx, k, now) && !f.pending(k) {
		s, err := f.shared.Snapshot(ctx, k, l, now)
		if f.result(ctx, "snapshot", k, err, now) == nil {
			return s, nil
		}
	}
	return f.local.Snapshot(ctx, k, l, now)
}
