package mock

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// Bounds on what the observatory keeps.
const (
	maxTracked      = 10_000  // keys the live page and the admin API list
	maxTrackedBytes = 4 << 20 // of those keys' names (users, titles, scopes)
	recentCap       = 100     // recent 429s
)

// observatory is what /metrics, the live page and the admin API read: per
// scope counters, the keys seen lately, and the latest 429s. It costs an
// atomic add and a map update per request, and runs no goroutine.
type observatory struct {
	scopes        sync.Map // scope → *scopeCounts
	storeErrors   atomic.Int64
	faultSwitches atomic.Int64 // SetFaults calls
	faults        sync.Map     // scope + "\x00" + kind → *atomic.Int64: service faults injected

	mu     sync.Mutex
	keys   map[throttle.Key]keySeen
	bytes  int       // of the keys' names
	swept  time.Time // the last sweep of a full keys map
	recent [recentCap]Throttled
	next   int // in recent
	total  int // 429s recorded
}

type scopeCounts struct{ requests, throttled, unavailable atomic.Int64 }

type keySeen struct {
	rule *limits.Rule
	last time.Time
}

// Throttled is a 429 the mock answered, as the live page and the admin API
// list them.
type Throttled struct {
	Time       time.Time         `json:"time"`
	User       string            `json:"user"` // the userhash
	Title      string            `json:"title"`
	Scope      string            `json:"scope"`
	Limit      string            `json:"limit"` // "burst", "sustain" or "both"
	RetryAfter throttle.Duration `json:"retryAfter"`
}

func (o *observatory) scope(s string) *scopeCounts {
	if v, ok := o.scopes.Load(s); ok {
		return v.(*scopeCounts)
	}
	v, _ := o.scopes.LoadOrStore(s, new(scopeCounts))
	return v.(*scopeCounts)
}

// seen notes that k was counted at now. At maxTracked keys, keys idle for a
// sustain period make room (swept at most once a second, so a flood of new
// keys costs no scan per request); failing that, the new key is not listed.
func (o *observatory) seen(k throttle.Key, r *limits.Rule, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys == nil {
		o.keys = map[throttle.Key]keySeen{}
	}
	_, known := o.keys[k]
	size := keyBytes(k)
	full := func() bool { return len(o.keys) >= maxTracked || o.bytes+size > maxTrackedBytes }
	if !known && full() {
		if now.Sub(o.swept) < time.Second {
			return
		}
		o.swept = now
		for key, s := range o.keys {
			if now.Sub(s.last) > throttle.SustainPeriod {
				delete(o.keys, key)
				o.bytes -= keyBytes(key)
			}
		}
		if full() {
			return
		}
	}
	if !known {
		o.bytes += size
	}
	o.keys[k] = keySeen{rule: r, last: now}
}

// keyBytes is what a key's names weigh in the observatory.
func keyBytes(k throttle.Key) int { return len(k.User) + len(k.Title) + len(k.Scope) }

// throttle records a 429.
func (o *observatory) throttle(k throttle.Key, d throttle.Decision, now time.Time) {
	limit := "burst"
	switch {
	case d.Burst.Limit > 0 && d.Burst.Count > d.Burst.Limit && d.Sustain.Limit > 0 && d.Sustain.Count > d.Sustain.Limit:
		limit = "both"
	case d.Sustain.Limit > 0 && d.Sustain.Count > d.Sustain.Limit:
		limit = "sustain"
	}
	o.scope(k.Scope).throttled.Add(1)
	o.mu.Lock()
	o.recent[o.next] = Throttled{Time: now.UTC(), User: k.User, Title: k.Title, Scope: k.Scope, Limit: limit, RetryAfter: throttle.Duration(d.RetryAfter)}
	o.next = (o.next + 1) % recentCap
	o.total++
	o.mu.Unlock()
}

// recentThrottled returns the latest 429s, newest first.
func (o *observatory) recentThrottled() []Throttled {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := min(o.total, recentCap)
	out := make([]Throttled, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, o.recent[(o.next-i+recentCap)%recentCap])
	}
	return out
}

// tracked returns the keys seen lately with their rules, the latest first.
func (o *observatory) tracked() []trackedKey {
	o.mu.Lock()
	out := make([]trackedKey, 0, len(o.keys))
	for k, s := range o.keys {
		out = append(out, trackedKey{k, s})
	}
	o.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].last.Equal(out[j].last) {
			return out[i].last.After(out[j].last)
		}
		return out[i].key.User+out[i].key.Scope < out[j].key.User+out[j].key.Scope
	})
	return out
}

type trackedKey struct {
	key throttle.Key
	keySeen
}

// forget drops k (or every key, for nil) from the lists.
func (o *observatory) forget(k *throttle.Key) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if k == nil {
		clear(o.keys)
		o.bytes = 0
		return
	}
	if _, ok := o.keys[*k]; ok {
		delete(o.keys, *k)
		o.bytes -= keyBytes(*k)
	}
}

// injected notes a service fault of kind ("429", "503", "reset", ...)
// answered at scope.
func (o *observatory) injected(scope, kind string) {
	k := scope + "\x00" + kind
	v, ok := o.faults.Load(k)
	if !ok {
		v, _ = o.faults.LoadOrStore(k, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}
