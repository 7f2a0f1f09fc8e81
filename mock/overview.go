package mock

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// Overview is what the live page shows, read from the journal of calls:
// the keys its calls were counted against (the latest maxListed, each
// with its counts now), the recent 429s FGRL answered, the faults, and the
// counters by scope. Its lists stop at 256 KiB of names (users, titles,
// scopes; recent 429s first).
type Overview struct {
	Time      time.Time              `json:"time"`
	Keys      []KeyCounts            `json:"keys"`
	MoreKeys  int                    `json:"moreKeys"` // keys not listed
	Throttled []Throttled            `json:"recent429s"`
	Faults    Faults                 `json:"faults"`
	Scopes    map[string]ScopeCounts `json:"scopes"`
}

// KeyCounts is one key's counts, as the admin API and the live page give
// them.
type KeyCounts struct {
	User  string `json:"user"` // the userhash
	Title string `json:"title"`
	Scope string `json:"scope"`
	throttle.Counts
	LastSeen time.Time `json:"lastSeen,omitzero"`
}

// Throttled is a 429 FGRL answered, as the live page and the admin API
// list them.
type Throttled struct {
	Time       time.Time         `json:"time"`
	User       string            `json:"user"` // the userhash
	Title      string            `json:"title"`
	Scope      string            `json:"scope"`
	Limit      string            `json:"limit"` // "burst", "sustain" or "both"
	RetryAfter throttle.Duration `json:"retryAfter"`
}

// ScopeCounts are a scope's answers so far.
type ScopeCounts struct {
	Requests    int64 `json:"requests"`
	Throttled   int64 `json:"throttled"`   // 429: FGRL's, a service fault's or a counted script rule's
	Unavailable int64 `json:"unavailable"` // 503: a store failure or an injected fault
}

// Bounds of an Overview.
const (
	maxListed        = 200       // keys listed
	recentCap        = 100       // recent 429s listed
	maxOverviewBytes = 256 << 10 // of names (users, titles, scopes) listed
)

// Overview returns what the live page shows now.
func (h *Handler) Overview(ctx context.Context) Overview {
	now := h.cfg.now()
	keys, recent := h.journal.seen()
	o := Overview{Time: now.UTC(), Throttled: recent, Faults: h.Faults(), Scopes: h.journal.scopeCounts()}
	if len(keys) > maxListed {
		o.MoreKeys = len(keys) - maxListed
		keys = keys[:maxListed]
	}
	budget := maxOverviewBytes
	o.Throttled, budget = listWithin(o.Throttled, budget, func(t Throttled) int { return len(t.User) + len(t.Title) + len(t.Scope) })
	o.Keys = make([]KeyCounts, 0, len(keys))
	for i, k := range keys {
		if budget -= len(k.User) + len(k.Title) + len(k.Scope); budget < 0 {
			o.MoreKeys += len(keys) - i
			break
		}
		rule, ok := h.ruleOf(k.Scope)
		if !ok {
			continue
		}
		d, err := h.cfg.store.Peek(ctx, throttle.Key{User: k.User, Title: k.Title, Scope: k.Scope}, rule.Limit(), now)
		if err != nil {
			continue
		}
		k.Counts = d.Counts
		o.Keys = append(o.Keys, k)
	}
	return o
}

// listWithin returns the first items of list whose sizes fit in budget, and
// what is left of it.
func listWithin[T any](list []T, budget int, size func(T) int) ([]T, int) {
	for i, v := range list {
		if budget -= size(v); budget < 0 {
			return list[:i], budget
		}
	}
	return list, budget
}

// seen returns the keys the journal's calls were counted against, the
// latest first (KeyCounts without counts, LastSeen their latest call's
// time), and the latest recentCap 429s FGRL answered, newest first.
func (j *journal) seen() ([]KeyCounts, []Throttled) {
	last := map[throttle.Key]time.Time{}
	recent := []Throttled{}
	j.mu.Lock()
	j.latest(func(c *Call) bool {
		if c.flags&decided == 0 || c.flags&forgotten != 0 {
			return true
		}
		k := throttle.Key{User: c.userhash, Title: c.Title, Scope: c.Scope}
		if _, ok := last[k]; !ok {
			last[k] = c.Time
		}
		if c.flags&refused != 0 && len(recent) < recentCap {
			recent = append(recent, Throttled{Time: c.Time, User: c.userhash, Title: c.Title, Scope: c.Scope,
				Limit: limitOf(c.counts), RetryAfter: throttle.Duration(c.wait)})
		}
		return true
	})
	j.mu.Unlock()
	keys := make([]KeyCounts, 0, len(last))
	for k, t := range last {
		keys = append(keys, KeyCounts{User: k.User, Title: k.Title, Scope: k.Scope, LastSeen: t})
	}
	slices.SortFunc(keys, func(a, b KeyCounts) int {
		return cmp.Or(b.LastSeen.Compare(a.LastSeen), strings.Compare(a.User+a.Scope, b.User+b.Scope), strings.Compare(a.Title, b.Title))
	})
	return keys, recent
}

// limitOf names the window a 429's counts are past: "burst", "sustain"
// or "both".
func limitOf(c throttle.Counts) string {
	past := func(w throttle.WindowState) bool { return w.Limit > 0 && w.Count > w.Limit }
	switch {
	case past(c.Burst) && past(c.Sustain):
		return "both"
	case past(c.Sustain):
		return "sustain"
	}
	return "burst"
}

// Metrics are the mock's counters, as an exporter (package mockprom, at
// /metrics) reads them on each scrape.
type Metrics struct {
	Scopes      map[string]ScopeCounts // answers so far, by rule scope
	Keys        int                    // keys the journal's calls were counted against, as Overview finds them
	StoreKeys   int                    // keys the in-memory store holds, idle ones not yet dropped included; -1 with another store
	StoreErrors int64                  // failures of the counts' store
	// FaultSwitches counts the changes of the faults (SetFaults, the admin
	// API); FaultsActive are the service faults in force now, by service;
	// FaultsInjected the service faults answered, by scope and kind
	// ("429", "500", "503", "reset", "latency").
	FaultSwitches  int64
	FaultsActive   map[string]int
	FaultsInjected map[[2]string]int64
}

// Metrics returns the counters now.
func (h *Handler) Metrics() Metrics {
	keys, _ := h.journal.seen()
	m := Metrics{Scopes: h.journal.scopeCounts(), Keys: len(keys), StoreKeys: -1, StoreErrors: h.journal.storeErrors.Load(),
		FaultSwitches: h.switches.Load(), FaultsActive: map[string]int{}, FaultsInjected: map[[2]string]int64{}}
	now := h.cfg.now()
	for _, sf := range h.Faults().Services {
		if sf.inForce(now) {
			m.FaultsActive[sf.Service]++
		}
	}
	for scope, sc := range h.journal.scopes {
		for kind := range sc.injected {
			if n := sc.injected[kind].Load(); n > 0 {
				m.FaultsInjected[[2]string{scope, faultKinds[kind]}] = n
			}
		}
	}
	if s, ok := h.cfg.store.(*throttle.MemoryServerStore); ok {
		m.StoreKeys = s.Len()
	}
	return m
}

// scopeCounts returns the answers so far of every scope that had one.
func (j *journal) scopeCounts() map[string]ScopeCounts {
	m := map[string]ScopeCounts{}
	for scope, sc := range j.scopes {
		if c := (ScopeCounts{sc.requests.Load(), sc.throttled.Load(), sc.unavailable.Load()}); c != (ScopeCounts{}) {
			m[scope] = c
		}
	}
	return m
}

// Counts reports the FGRL counts of a key without counting a request: a
// user + title for a rule scope (such as "profile" or "presence/write"). The
// user is the userhash of the user's token (UserHash gives the mock's), as
// for every throttle.Key in this module: the service counts per XUID, and a
// userhash stands for exactly one XUID, so the counts are the same.
func (h *Handler) Counts(k throttle.Key) (throttle.Decision, error) {
	rule, ok := h.ruleOf(k.Scope)
	if !ok {
		return throttle.Decision{}, errors.New("mock: no rule has scope " + safetext.Quote(k.Scope, 64))
	}
	k.Scope = rule.Scope()
	return h.cfg.store.Peek(context.Background(), k, rule.Limit(), h.cfg.now())
}

// ErrCannotReset is ResetCounts' error when the counts' store cannot
// forget keys (it is not a throttle.Resetter).
var ErrCannotReset = errors.New("mock: the counts' store cannot forget keys")

// ResetCounts forgets the FGRL counts of key k, or of every key for nil,
// in the counts' store, which must be a throttle.Resetter (the built-in
// store and redisstore.Store are); the live page stops listing them until
// they are counted again. For a rule with a publisher sustain (the Store
// services) it forgets k's user's count at k's title's publisher too,
// which counted k's calls (those of the publisher's other titles with
// them): k's next request is served.
func (h *Handler) ResetCounts(ctx context.Context, k *throttle.Key) error {
	rs, ok := h.cfg.store.(throttle.Resetter)
	if !ok {
		return ErrCannotReset
	}
	if k == nil {
		if err := rs.ResetAll(ctx); err != nil {
			return err
		}
	} else {
		if err := rs.Reset(ctx, *k); err != nil {
			return err
		}
		if r, ok := h.ruleOf(k.Scope); ok && r.PublisherSustain > 0 {
			if err := rs.Reset(ctx, throttle.Key{User: k.User, Title: h.cfg.publisher(k.Title), Scope: r.PublisherScope()}); err != nil {
				return err
			}
		}
	}
	j := h.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	j.each(func(c *Call) bool {
		if k == nil || c.userhash == k.User && c.Title == k.Title && c.Scope == k.Scope {
			c.flags |= forgotten
		}
		return true
	})
	return nil
}

// ruleOf returns the rule whose scope is scope: one of the limits' rules,
// or their fallback.
func (h *Handler) ruleOf(scope string) (*limits.Rule, bool) {
	if r, ok := h.cfg.limits.ByScope(scope); ok {
		return r, true
	}
	if f := h.cfg.limits.Fallback; f != nil && f.Scope() == scope {
		return f, true
	}
	return nil, false
}
