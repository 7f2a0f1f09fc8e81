package replay

import (
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// observer is the service as the simulation sees it: the mock, with a tally
// per service scope and, unless noKeys, per key (user + service scope) and
// per 15 s interval of what reached it. Its memory grows with the keys and
// the intervals they were called in, not with the calls.
type observer struct {
	h      *mock.Handler
	now    func() time.Time
	start  time.Time
	title  string
	limits *limits.Limits
	noKeys bool // Options.NoKeys: no tally per key

	mu     sync.Mutex
	keys   map[keyID]*keyTally
	scopes map[string]*scopeTally
}

// scopeTally is what reached one scope ("" for a request of no rule).
type scopeTally struct{ requests, throttled int }

type keyID struct{ user, scope string }

type keyTally struct {
	intervals map[int]*tally
	last      int
	burst     int // the rule's limits
	sustain   int
}

type tally struct {
	requests, throttled int
	burst, sustain      int // the key's counts after the interval's last request
	burstHit, sustHit   bool
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.h.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	user, scope := o.identify(req)
	throttled := resp.StatusCode == http.StatusTooManyRequests
	if o.noKeys {
		o.mu.Lock()
		o.scope(scope, throttled)
		o.mu.Unlock()
		return resp, nil
	}
	d, _ := o.h.Counts(throttle.Key{User: user, Title: o.title, Scope: scope})
	o.mu.Lock()
	defer o.mu.Unlock()
	o.scope(scope, throttled)
	i := int(o.now().Sub(o.start) / throttle.BurstPeriod)
	k := o.key(keyID{user, scope}, d)
	t := k.intervals[i]
	if t == nil {
		t = &tally{}
		k.intervals[i] = t
	}
	k.last = max(k.last, i)
	t.requests++
	t.burst, t.sustain = d.Burst.Count, d.Sustain.Count
	if throttled {
		t.throttled++
		t.burstHit = t.burstHit || (d.Burst.Limit > 0 && d.Burst.Count > d.Burst.Limit)
		t.sustHit = t.sustHit || (d.Sustain.Limit > 0 && d.Sustain.Count > d.Sustain.Limit)
	}
	return resp, nil
}

// scope counts a request that reached scope. Requires o.mu held.
func (o *observer) scope(scope string, throttled bool) {
	if o.scopes == nil {
		o.scopes = map[string]*scopeTally{}
	}
	t := o.scopes[scope]
	if t == nil {
		t = &scopeTally{}
		o.scopes[scope] = t
	}
	t.requests++
	if throttled {
		t.throttled++
	}
}

// key returns k's tally, made on first use. Requires o.mu held.
func (o *observer) key(k keyID, d throttle.Decision) *keyTally {
	if o.keys == nil {
		o.keys = map[keyID]*keyTally{}
	}
	kt := o.keys[k]
	if kt == nil {
		kt = &keyTally{intervals: map[int]*tally{}, burst: d.Burst.Limit, sustain: d.Sustain.Limit}
		o.keys[k] = kt
	}
	return kt
}

// identify returns the user (the token's userhash, as every key names it)
// and scope of a request.
func (o *observer) identify(req *http.Request) (string, string) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	r, ok := o.limits.Match(req.Method, host, req.URL.Path)
	if !ok {
		return "", ""
	}
	uhs, _, _ := xblauth.Parse(req.Header.Get("Authorization"))
	return uhs, r.Scope()
}

// results returns one table per key, the busiest first (then by scope and
// user).
func (o *observer) results(users map[string]string) []KeyResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]KeyResult, 0, len(o.keys))
	for id, k := range o.keys {
		rows, calls := k.rows()
		user := users[id.user]
		if user == "" {
			user = id.user
		}
		out = append(out, KeyResult{User: user, Scope: id.scope, Burst: k.burst, Sustain: k.sustain, Requests: calls, Rows: rows})
	}
	sortKeys(out)
	return out
}

// sortKeys sorts keys' tables the busiest first, then by scope and user.
func sortKeys(out []KeyResult) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Requests != b.Requests {
			return a.Requests > b.Requests
		}
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		return a.User < b.User
	})
}

// rows returns the key's per-interval table, idle runs collapsed into one
// row, and its requests.
func (k *keyTally) rows() ([]Row, int) {
	secs := int(throttle.BurstPeriod / time.Second)
	var rows []Row
	calls, sustain := 0, 0
	for i := 0; i <= k.last; i++ {
		t := k.intervals[i]
		if t == nil { // idle: the sustain count as of the last request
			if n := len(rows); n > 0 && rows[n-1].Requests == 0 {
				rows[n-1].End = (i + 1) * secs
				continue
			}
			rows = append(rows, Row{Start: i * secs, End: (i + 1) * secs, SustainCount: sustain, Limit: "-"})
			continue
		}
		calls += t.requests
		sustain = t.sustain
		rows = append(rows, Row{Start: i * secs, End: (i + 1) * secs, Requests: t.requests, BurstCount: t.burst,
			SustainCount: t.sustain, Throttled: t.throttled, Limit: limitName(t)})
	}
	return rows, calls
}
func limitName(t *tally) string {
	switch {
	case t.throttled == 0:
		return "-"
	case t.burstHit && t.sustHit:
		return "both"
	case t.burstHit:
		return "burst"
	case t.sustHit:
		return "sustain"
	}
	return "-"
}
