package transport

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// DefaultMaxLearnedLimit is the ceiling a zero Transport.MaxLearnedLimit
// means: well above any published limit (300), so a service's report is
// believed, and far below what would switch the budget off.
const DefaultMaxLearnedLimit = 1000

// learnedRefresh is how often a transport reads the limits its store has
// in force (those other transports confirmed, and the ends of its own).
const learnedRefresh = 10 * time.Second

// maxKeyLimits bounds the limits learned for one key each, awaiting
// confirmation.
const maxKeyLimits = 4096

// learner holds what a Transport learned from 429 bodies: the limits in
// force for whole scopes (confirmed, as its LimitStore keeps them), copied
// on write so that a call reads them without a lock; and the limits of
// single keys awaiting confirmation.
type learner struct {
	scopes atomic.Pointer[map[scopeWindow]scopeLimit]
	readAt atomic.Int64 // unix ns after which the store is read again
	reads  atomic.Int64 // reads of the store begun (refreshLearned)

	mu      sync.Mutex
	keys    map[keyWindow]throttle.Learned // at most maxKeyLimits
	nkeys   atomic.Int32
	applied int64 // the latest read applied (refreshLearned): an older one landing after it is dropped

	// local is the LimitStore when Budget is not one, and stands in for
	// Budget while it fails.
	local throttle.MemoryBudgetStore
}

// scopeLimit is a limit in force for a scope's window, and whether the
// transport confirmed it while a fleet's store could not take it (outage):
// the store's reads then leave it to its Until where they have none, as
// they do not a limit read from the store, which ends when the store ends
// it.
type scopeLimit struct {
	throttle.Learned
	outage bool
}

type scopeWindow struct {
	scope string
	p     throttle.Period
}

type keyWindow struct {
	key throttle.Key
	p   throttle.Period
}

// LearnedLimit is a limit the transport learned from a service's 429
// bodies (maxRequests in periodInSeconds) for one window, where the limits
// data had none or another (drift from the published table), or, for one
// user, where a learned limit the 429 did not say was in force (Learned
// may then equal Table). A limit one key's 429 reported applies to that
// key alone (User) until a report of the same limit from another user, or
// from a later window, confirms it for the whole scope (a scope's limit
// confirmed otherwise ends it unless it is stricter); either lasts
// throttle.LearnedFor (two sustain windows) after the last report of it.
// A user's own limit is the Transport's that saw the 429: the others on a
// fleet's store learn it from that user's 429s of their own, and the
// store takes one user's reports of a limit from two windows as the
// scope's (throttle.LimitStore.Learn).
type LearnedLimit struct {
	Scope   string // the rule's scope, or "host:" and the host for a host the data lacks
	User    string // the userhash of the one key it applies to; "" once confirmed, for every key
	Period  throttle.Period
	Table   int // the limits data's (0: none)
	Learned int
	Until   time.Time
}

// LearnedLimits returns the limits learned and in force now, the
// confirmed ones first, by scope and window.
func (t *Transport) LearnedLimits() []LearnedLimit {
	t.init()
	now := time.Now()
	var out []LearnedLimit
	for w, l := range t.scopeMap() {
		if now.Before(l.Until) {
			out = append(out, LearnedLimit{Scope: scopeText(w.scope), Period: w.p, Table: t.tableOf(w.scope, w.p), Learned: l.Limit, Until: l.Until})
		}
	}
	t.learned.mu.Lock()
	for w, l := range t.learned.keys {
		if now.Before(l.Until) {
			out = append(out, LearnedLimit{Scope: scopeText(w.key.Scope), User: userText(w.key.User), Period: w.p, Table: t.tableOf(w.key.Scope, w.p), Learned: l.Limit, Until: l.Until})
		}
	}
	t.learned.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.User == "") != (b.User == "") {
			return a.User == ""
		}
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		if a.User != b.User {
			return a.User < b.User
		}
		return a.Period < b.Period
	})
	return out
}

func (t *Transport) scopeMap() map[scopeWindow]scopeLimit {
	if m := t.learned.scopes.Load(); m != nil {
		return *m
	}
	return nil
}

// tableOf is the limits data's limit of a scope's window (0: none).
func (t *Transport) tableOf(scope string, p throttle.Period) int {
	if r, ok := t.limits.ByScope(scope); ok {
		return windowOf(r.ClientLimit(), p)
	}
	return 0
}

func windowOf(l throttle.Limit, p throttle.Period) int {
	if p == throttle.Burst {
		return l.Burst
	}
	return l.Sustain
}

func setWindow(l *throttle.Limit, p throttle.Period, n int) {
	if p == throttle.Burst {
		l.Burst = n
	} else {
		l.Sustain = n
	}
}

// learning reports whether the transport learns limits.
func (t *Transport) learning() bool { return !t.DisableBudget && t.MaxLearnedLimit >= 0 }

func (t *Transport) ceiling() int {
	if t.MaxLearnedLimit == 0 {
		return DefaultMaxLearnedLimit
	}
	return t.MaxLearnedLimit
}

// limitStore is where learned limits are kept: Budget when it is a
// throttle.LimitStore (shared with the fleet) and its failover is not
// standing in for it at now, else the transport's own.
func (t *Transport) limitStore(now time.Time) throttle.LimitStore {
	ls, ok := t.Budget.(throttle.LimitStore)
	if f, isFailover := t.budget.(*failover); !ok || isFailover && !f.use(now) {
		return &t.learned.local
	}
	return ls
}

// clamp keeps a limit learned for a window whose table limit is table (0:
// none) within its bounds: at least a tenth of the table's, rounded up, and
// above the table's at most the ceiling.
func (t *Transport) clamp(table, n int) int {
	n = max(n, (table+9)/10, 1)
	if n > table {
		n = min(n, max(t.ceiling(), table))
	}
	return n
}

// limitOf returns the limit key counts against: the table's (zero for
// none) with each window learned for its scope, or for key alone, in its
// place.
func (t *Transport) limitOf(ctx context.Context, key throttle.Key, table throttle.Limit, now time.Time) throttle.Limit {
	if !t.learning() {
		return table
	}
	t.refreshLearned(ctx, now)
	l := table
	scopes := t.scopeMap()
	for _, p := range []throttle.Period{throttle.Burst, throttle.Sustain} {
		if w, ok := scopes[scopeWindow{key.Scope, p}]; ok && now.Before(w.Until) {
			setWindow(&l, p, w.Limit)
		}
	}
	if t.learned.nkeys.Load() == 0 {
		return l
	}
	t.learned.mu.Lock()
	defer t.learned.mu.Unlock()
	for _, p := range []throttle.Period{throttle.Burst, throttle.Sustain} {
		if w, ok := t.learned.keys[keyWindow{key, p}]; ok && now.Before(w.Until) {
			setWindow(&l, p, w.Limit)
		}
	}
	return l
}

// refreshLearned reads the limits the store has in force, at most every
// learnedRefresh (one call reads, the others go on), within the call's
// context (applyRead), and drops the key limits that have lasted their
// time; each change is an EventLimitLearned. A read that fails keeps what
// the transport has (each limit still ends at its Until). While the local
// store stands in for a fleet's, nothing is read: what the local store
// confirms reaches the transport as it is learned, and it never had the
// fleet's.
func (t *Transport) refreshLearned(ctx context.Context, now time.Time) {
	next := t.learned.readAt.Load()
	if now.UnixNano() < next || !t.learned.readAt.CompareAndSwap(next, now.Add(learnedRefresh).UnixNano()) {
		return
	}
	seq := t.learned.reads.Add(1)
	before := t.scopeMap() // what a change during the read is told from
	var in []throttle.Learned
	var err error
	ls := t.limitStore(now)
	standIn := t.standsIn(ls)
	if !standIn {
		in, err = ls.Learned(ctx, now)
	}
	if err == nil {
		// The events go after the lock is let go: an observer may read
		// LearnedLimits when it hears one.
		for _, e := range t.applyRead(seq, before, in, standIn, now) {
			t.emit(ctx, e, nil)
		}
	}
	if t.learned.nkeys.Load() == 0 {
		return
	}
	var ended []Event
	t.learned.mu.Lock()
	for w, l := range t.learned.keys {
		if !now.Before(l.Until) {
			delete(t.learned.keys, w)
			ended = append(ended, Event{Kind: EventLimitLearned, Scope: eventScope(w.key.Scope), Reason: fmt.Sprintf("%s %d expired for one user: %s", w.p, l.Limit, t.tableText(w.key.Scope, w.p))})
		}
	}
	t.learned.nkeys.Store(int32(len(t.learned.keys)))
	t.learned.mu.Unlock()
	for _, e := range ended {
		t.emit(ctx, e, nil)
	}
}

// applyRead puts in force in, the store's limits read by read number seq
// (none while the local store stands in), begun when the scopes' map was
// before, and returns the changes as events. The store's limit of a window
// holds where it has one, and a limit read from it ends when a read lacks
// it; one the transport confirmed while a fleet's store could not take it
// (scopeLimit.outage) stays until its Until where the store has none. A
// limit the transport put in force while the read was on its way (learn)
// is newer than the read and stays; a read begun before one already
// applied is dropped. A key limit of a window the store has a scope limit
// of is dropped unless it is stricter (a user's own limit, awaiting
// confirmation, that the scope's does not yet say).
func (t *Transport) applyRead(seq int64, before map[scopeWindow]scopeLimit, in []throttle.Learned, standIn bool, now time.Time) []Event {
	t.learned.mu.Lock()
	defer t.learned.mu.Unlock()
	if seq < t.learned.applied {
		return nil
	}
	t.learned.applied = seq
	var events []Event
	var m map[scopeWindow]scopeLimit
	var kept map[scopeWindow]bool // windows where the transport's limit held over the read
	for {
		old := t.learned.scopes.Load()
		m = make(map[scopeWindow]scopeLimit, len(in))
		for _, l := range in {
			// A limit already ended (a store whose clock is behind this
			// one's), of a scope longer than a report's may be, or past the
			// bound on scopes (a store answering more than it may) is none.
			if !now.Before(l.Until) || len(l.Scope) > throttle.MaxScopeLen || len(m) >= 2*throttle.MaxLearned {
				continue
			}
			l.Limit = t.clamp(t.tableOf(l.Scope, l.Period), l.Limit)
			m[scopeWindow{l.Scope, l.Period}] = scopeLimit{Learned: l}
		}
		events = events[:0]
		kept = map[scopeWindow]bool{}
		var prev map[scopeWindow]scopeLimit // nil reads as empty
		if old != nil {
			prev = *old
		}
		for w, l := range prev {
			r, read := m[w]
			live := now.Before(l.Until)
			switch {
			case live && (changedSince(before, w, l) || standIn || !read && l.outage) && (read || len(m) < 2*throttle.MaxLearned):
				m[w] = l
				kept[w] = true
			case read:
				if r.Limit != l.Limit {
					events = append(events, Event{Kind: EventLimitLearned, Scope: t.storeScope(w.scope), Reason: fmt.Sprintf("%s %d for every user of the scope, read from the shared store (was %d; %s)", w.p, r.Limit, l.Limit, t.tableText(w.scope, w.p))})
				}
			default:
				events = append(events, Event{Kind: EventLimitLearned, Scope: eventScope(w.scope), Reason: fmt.Sprintf("%s %d expired for the scope: %s", w.p, l.Limit, t.tableText(w.scope, w.p))})
			}
		}
		for w, r := range m {
			if _, had := prev[w]; !had && !kept[w] {
				events = append(events, Event{Kind: EventLimitLearned, Scope: t.storeScope(w.scope), Reason: fmt.Sprintf("%s %d for every user of the scope, read from the shared store (%s)", w.p, r.Limit, t.tableText(w.scope, w.p))})
			}
		}
		if t.learned.scopes.CompareAndSwap(old, &m) {
			break
		}
	}
	read := map[scopeWindow]int{}
	for w, l := range m {
		if !kept[w] {
			read[w] = l.Limit
		}
	}
	events = append(events, t.dropKeyLimitsLocked(read)...)
	return events
}

// changedSince reports whether l, the limit of w now, was put in force
// after the map before was taken.
func changedSince(before map[scopeWindow]scopeLimit, w scopeWindow, l scopeLimit) bool {
	prev, ok := before[w]
	return !ok || prev != l
}

// standsIn reports whether ls, the limit store limitStore chose, is the
// transport's own standing in for a fleet's LimitStore (Budget) that
// fails.
func (t *Transport) standsIn(ls throttle.LimitStore) bool {
	_, fleet := t.Budget.(throttle.LimitStore)
	return fleet && ls == &t.learned.local
}

// dropKeyLimits drops the limits of single keys of the scopes' windows in
// scope, each of which a limit for the whole scope is now in force in,
// unless a key's is stricter (a user's own limit, which the scope's does
// not say); it returns an EventLimitLearned for each that was looser (an
// equal one goes on as the scope's). One pass over the keys, whatever the
// number of windows.
func (t *Transport) dropKeyLimits(scope map[scopeWindow]int) []Event {
	if t.learned.nkeys.Load() == 0 || len(scope) == 0 {
		return nil
	}
	t.learned.mu.Lock()
	defer t.learned.mu.Unlock()
	return t.dropKeyLimitsLocked(scope)
}

// dropKeyLimitsLocked is dropKeyLimits with t.learned.mu held.
func (t *Transport) dropKeyLimitsLocked(scope map[scopeWindow]int) []Event {
	var events []Event
	for k, l := range t.learned.keys {
		if n, ok := scope[scopeWindow{k.key.Scope, k.p}]; ok && l.Limit >= n {
			delete(t.learned.keys, k)
			if l.Limit > n { // an equal one goes on as the scope's: no change for its user
				events = append(events, Event{Kind: EventLimitLearned, Scope: eventScope(k.key.Scope), Reason: fmt.Sprintf("%s %d for one user ended: the scope's %d is in force", k.p, l.Limit, n)})
			}
		}
	}
	t.learned.nkeys.Store(int32(len(t.learned.keys)))
	return events
}

// storeScope is a scope a fleet's store named as an Event names it: a
// rule's scope of this transport's limits data, or "" (a host no rule
// covers, or a scope of another limits data's): an observer's series stay
// those of the limits data, and no store's text reaches them.
func (t *Transport) storeScope(scope string) string {
	if _, ok := t.limits.ByScope(scope); ok {
		return scope
	}
	return ""
}

// scopeText is a learned scope as observers get it: a host the limits data
// lacks ("host:" and the host) escaped, never clipped (at most four bytes
// for each of MaxScopeLen), so that two scopes stay two.
func scopeText(scope string) string { return safetext.Clip(scope, 4*throttle.MaxScopeLen) }

func (t *Transport) tableText(scope string, p throttle.Period) string {
	if n := t.tableOf(scope, p); n > 0 {
		return fmt.Sprintf("the limits data's %d", n)
	}
	return "none in the limits data"
}

// learn takes the limit a 429's body reports for the call's key. A limit
// other than the one the call counted against, or the learned one in force
// reported again, goes to the limit store as a throttle.LimitReport: until
// another user's report, or one from a later window, confirms it there it
// applies to this key alone; confirmed, to every key of the scope. It is
// kept within a tenth of the table's limit and the ceiling. Each change is
// one EventLimitLearned carrying the body. A call that named no user (no
// token: its key's user is "") teaches nothing: the services count a user's
// calls, and LearnedLimits would report its key's limit as a confirmed
// one's, for every key.
func (c *call) learn(b *ratelimit.Body) {
	if b == nil || b.MaxRequests <= 0 || !c.t.learning() || len(c.key.Scope) > throttle.MaxScopeLen || c.key.User == "" {
		return
	}
	if b.Aspect != "" && b.Aspect != ratelimit.AspectTitle {
		return // another counter's limit (a publisher's, counting other titles' calls too): not the key's
	}
	var p throttle.Period
	switch b.PeriodInSeconds {
	case 15:
		p = throttle.Burst
	case 300:
		p = throttle.Sustain
	default:
		return // a window the accounting does not know
	}
	table, was := windowOf(c.table, p), windowOf(c.full, p)
	n := c.t.clamp(table, b.MaxRequests)
	if n == was && was == table {
		return // no drift, and nothing learned to keep alive
	}
	now := c.clk.Now()
	r := throttle.LimitReport{Scope: c.key.Scope, Period: p, Limit: n, User: xblauth.UserDigest(c.key.User), At: now}
	// Within the call's context: a shared store that is slow or gone costs
	// the call no more than its own deadline, and the local store keeps
	// the report.
	ls := c.t.limitStore(now)
	in, err := ls.Learn(c.ctx, r)
	if err != nil {
		c.emit(Event{Kind: EventBudgetError, Err: err, Reason: "learn"})
		in, _ = c.t.learned.local.Learn(c.ctx, r)
	}
	// Only a fleet's LimitStore fails (the local store never does).
	outage := err != nil || c.t.standsIn(ls)
	if outage {
		// A fleet's store that could not take the report is owed it, as
		// a key's block or counts are (failover.owe), and sent it unless
		// it has a limit of the window by then (failover.learnNews).
		c.t.budget.(*failover).owe(owedOp{op: opLearn, k: throttle.Key{Scope: r.Scope}, learn: r, tried: err != nil})
	}
	var what string
	var ended []Event
	if in.Limit == n {
		what, ended = c.t.setScope(c.key.Scope, p, in, outage, now)
	} else {
		what = c.t.setKey(keyWindow{c.key, p}, throttle.Learned{Scope: c.key.Scope, Period: p, Limit: n, Until: now.Add(throttle.LearnedFor)}, now)
	}
	setWindow(&c.full, p, n)
	c.limit = c.t.share(c.full)
	for _, e := range ended {
		c.t.emit(c.ctx, e, nil) // of other users' limits: not this call's
	}
	if what == "" {
		return // nothing changed: kept alive
	}
	was0 := "none in the limits data"
	if table > 0 {
		was0 = fmt.Sprintf("the limits data's %d", table)
	}
	c.emit(Event{Kind: EventLimitLearned, Body: b, Reason: fmt.Sprintf("%s %d in %d s %s (%s)", p, n, b.PeriodInSeconds, what, was0)})
}

// setScope puts a confirmed limit in force for every key of its scope and
// drops the key limits it replaces (dropKeyLimits: not a stricter one);
// outage says a fleet's store could not take the report that confirmed it
// (scopeLimit). It says what changed, or "" for nothing (the same limit,
// kept alive), and returns the events of the key limits it ended.
func (t *Transport) setScope(scope string, p throttle.Period, in throttle.Learned, outage bool, now time.Time) (string, []Event) {
	w := scopeWindow{scope, p}
	in.Limit = t.clamp(t.tableOf(scope, p), in.Limit)
	var changed bool
	for {
		old := t.learned.scopes.Load()
		m := make(map[scopeWindow]scopeLimit)
		if old != nil {
			maps.Copy(m, *old)
		}
		prev, ok := m[w]
		changed = !ok || prev.Limit != in.Limit || !now.Before(prev.Until)
		if !ok && len(m) >= 2*throttle.MaxLearned {
			return "", nil
		}
		m[w] = scopeLimit{Learned: in, outage: outage}
		if t.learned.scopes.CompareAndSwap(old, &m) {
			break
		}
	}
	ended := t.dropKeyLimits(map[scopeWindow]int{w: in.Limit})
	if !changed {
		return "", ended
	}
	return "for every user of the scope (confirmed)", ended
}

// setKey puts a limit in force for one key until it is confirmed; it says
// what changed, or "" for nothing.
func (t *Transport) setKey(w keyWindow, l throttle.Learned, now time.Time) string {
	t.learned.mu.Lock()
	defer t.learned.mu.Unlock()
	prev, ok := t.learned.keys[w]
	if !ok && len(t.learned.keys) >= maxKeyLimits {
		for k, old := range t.learned.keys {
			if !now.Before(old.Until) {
				delete(t.learned.keys, k)
			}
		}
		if len(t.learned.keys) >= maxKeyLimits {
			return ""
		}
	}
	if t.learned.keys == nil {
		t.learned.keys = make(map[keyWindow]throttle.Learned)
	}
	t.learned.keys[w] = l
	t.learned.nkeys.Store(int32(len(t.learned.keys)))
	if ok && prev.Limit == l.Limit && now.Before(prev.Until) {
		return ""
	}
	return "for this user until another confirms it"
}
