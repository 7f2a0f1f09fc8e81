package proxy

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// Status is what the proxy's admin API (GET /_fgrl/api/status), its live
// page and xblcall proxy --status show: every key with a call in the last
// sustain period (the latest maxListed), its budget now, the limits the
// transport learned from the services' 429s, and the counters of calls.
// It names users by userhash, never by token.
type Status struct {
	Time      time.Time      `json:"time"`
	Keys      []KeyBudget    `json:"keys"`
	MoreKeys  int            `json:"moreKeys"` // keys not listed
	Learned   []LearnedLimit `json:"learned"`
	Calls     Stats          `json:"calls"`
	Transport TransportStats `json:"transport"`
}

// KeyBudget is one key's budget in the transport: both windows' counts
// (throttle.Counts), the wait before its next call, the Retry-After a
// service set on it, and when it last had a call.
type KeyBudget struct {
	User  string `json:"user"` // the userhash
	Title string `json:"title"`
	Scope string `json:"scope"`
	throttle.Counts
	Wait         throttle.Duration `json:"wait"`
	BlockedUntil time.Time         `json:"blockedUntil,omitzero"`
	LastCall     time.Time         `json:"lastCall"`
}

// LearnedLimit is a limit the transport learned from a service's 429
// (transport.LearnedLimit), as the status writes it.
type LearnedLimit struct {
	Scope   string    `json:"scope"`
	User    string    `json:"user,omitempty"` // the one userhash it applies to; empty once confirmed for every key
	Period  string    `json:"period"`         // "burst" or "sustain"
	Table   int       `json:"table"`          // the limits data's (0: none)
	Learned int       `json:"learned"`
	Until   time.Time `json:"until"`
}

// Stats counts the proxy's calls and tunnels since it started.
type Stats struct {
	Served         int64 `json:"served"`         // answered by the service (a 429 of its own counts as throttled)
	RefusedLocally int64 `json:"refusedLocally"` // answered 429 (or a cached status) by the proxy, nothing sent
	Throttled      int64 `json:"throttled"`      // ended in the service's 429
	Failed         int64 `json:"failed"`         // ended in an error (502) or past MaxCallTime (504)
	Cancelled      int64 `json:"cancelled"`      // the application gave up first
	Tunnelled      int64 `json:"tunnelled"`      // tunnels to other hosts, untouched
	TunnelsRefused int64 `json:"tunnelsRefused"` // CONNECTs refused
	Misdirected    int64 `json:"misdirected"`    // handshakes and requests for another host than their tunnel's
}

// TransportStats are the transport's counters (transport.Stats).
type TransportStats struct {
	Attempts      int64 `json:"attempts"`
	Retries       int64 `json:"retries"`
	Waits         int64 `json:"waits"`
	LocalRefusals int64 `json:"localRefusals"`
	Server429s    int64 `json:"server429s"`
	BudgetErrors  int64 `json:"budgetErrors"`
	LimitsLearned int64 `json:"limitsLearned"`
	Coalesced     int64 `json:"coalesced"`
}

// counters are Stats, counted as they happen.
type counters struct {
	served, refusedLocally, throttled, failed, cancelled atomic.Int64
	tunnelled, tunnelsRefused, misdirected               atomic.Int64
}

func (c *counters) add(n *atomic.Int64) { n.Add(1) }

// ended counts a call by how it ended.
func (c *counters) ended(outcome string) {
	switch outcome {
	case "served":
		c.served.Add(1)
	case "refused_locally":
		c.refusedLocally.Add(1)
	case "throttled":
		c.throttled.Add(1)
	case "cancelled":
		c.cancelled.Add(1)
	default:
		c.failed.Add(1)
	}
}

// maxListed bounds the keys a Status lists: each is one read of the
// budget store.
const maxListed = 100

// Stats returns the proxy's counters now.
func (s *Server) Stats() Stats {
	c := &s.stats
	return Stats{Served: c.served.Load(), RefusedLocally: c.refusedLocally.Load(), Throttled: c.throttled.Load(),
		Failed: c.failed.Load(), Cancelled: c.cancelled.Load(), Tunnelled: c.tunnelled.Load(),
		TunnelsRefused: c.tunnelsRefused.Load(), Misdirected: c.misdirected.Load()}
}

// Status returns the proxy's status now.
func (s *Server) Status() Status {
	now := time.Now()
	st := Status{Time: now.UTC(), Keys: []KeyBudget{}, Learned: []LearnedLimit{}, Calls: s.Stats()}
	keys := s.keys.latest(now.Add(-throttle.SustainPeriod))
	if len(keys) > maxListed {
		st.MoreKeys, keys = len(keys)-maxListed, keys[:maxListed]
	}
	for _, k := range keys {
		snap, err := s.tr.Snapshot(k.key)
		if err != nil {
			st.MoreKeys++
			continue
		}
		kb := KeyBudget{User: k.key.User, Title: k.key.Title, Scope: k.key.Scope, Counts: snap.Counts,
			Wait: throttle.Duration(snap.Wait), LastCall: k.last.UTC()}
		if !snap.BlockedUntil.IsZero() {
			kb.BlockedUntil = snap.BlockedUntil.UTC()
		}
		st.Keys = append(st.Keys, kb)
	}
	for _, l := range s.tr.LearnedLimits() {
		st.Learned = append(st.Learned, LearnedLimit{Scope: l.Scope, User: userOf(l.User), Period: l.Period.String(), Table: l.Table,
			Learned: l.Learned, Until: l.Until.UTC()})
	}
	t := s.tr.Stats()
	st.Transport = TransportStats{Attempts: t.Attempts, Retries: t.Retries, Waits: t.Waits, LocalRefusals: t.LocalRefusals,
		Server429s: t.Server429s, BudgetErrors: t.BudgetErrors, LimitsLearned: t.LimitsLearned, Coalesced: t.Coalesced}
	return st
}

// statusCache keeps the status encoded for a while, so that many pages
// polling at once read the budget store once.
type statusCache struct {
	mu   sync.Mutex
	at   time.Time
	data []byte
}

// statusFresh bounds the age of the status the admin API serves.
const statusFresh = 900 * time.Millisecond

// statusJSON returns the status encoded at most statusFresh ago.
func (s *Server) statusJSON() []byte {
	c := &s.status
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.data == nil || now.Sub(c.at) >= statusFresh {
		c.data, _ = json.Marshal(s.Status()) // a Status always marshals
		c.at = now
	}
	return c.data
}
