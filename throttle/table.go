package throttle

import (
	"hash/maphash"
	"sync"
	"time"
)

// entry is what a table holds per key: a state that can tell when it no longer
// matters (idle) and how recently it was used (last), for eviction.
type entry[V any] interface {
	*V
	idle(t int64) bool
	last() int64
}

// table is a bounded map from Key to a state *V, under one mutex. Keys are
// stored as 64-bit seeded hashes, not strings, so every key costs the same
// few bytes whatever its names: the bound on keys bounds bytes. Two keys
// collide with probability about n²/2⁶⁵ (3·10⁻⁸ at a million keys), and a
// collision merges their counts, which can only make a limit stricter.
//
// Idle states are dropped lazily: each insertion examines two random entries
// and deletes them if idle. When the table is full, an insertion first
// deletes idle entries among a random sample and, if none is idle, evicts
// the sampled entry used least recently (its counts restart).
type table[V any, P entry[V]] struct {
	seed    maphash.Seed
	maxKeys int
	mu      sync.Mutex
	m       map[uint64]*V
	// origin is the store's time 0: its first decision's time, less what
	// it is past a whole number of sustain periods since the Unix epoch
	// (set: once set).
	origin time.Time
	set    bool
}

// shift is now as the store's states take it: its time since the
// store's origin, held to minShift..maxShift (about 73 years back, 200
// ahead), from the Unix epoch; so every instant (sliding.go) is exact to
// the nanosecond from 73 years before the store's first decision to 200
// after, whatever year that is (a simulation may start at the zero Time).
// Requires t.mu held.
func (t *table[V, P]) shift(now time.Time) time.Time {
	if !t.set {
		t.origin, t.set = originOf(now), true
	}
	return shiftFrom(t.origin, now)
}

// look is shift for a call that decides nothing (Snapshot, Peek): before
// the store's first decision, when no key has a state, it shifts from an
// origin of its own and fixes none, so that a look at an odd time (the
// zero Time) does not place the store's span. Requires t.mu held.
func (t *table[V, P]) look(now time.Time) time.Time {
	if !t.set {
		return shiftFrom(originOf(now), now)
	}
	return t.shift(now)
}

// originOf is the origin a store whose first decision is at now takes:
// now less what it is past a whole number of sustain periods since the
// Unix epoch, so that ClockAligned windows keep their places.
func originOf(now time.Time) time.Time {
	sec := now.Unix()
	return time.Unix(sec-sec%int64(SustainPeriod/time.Second), 0)
}

// shiftFrom is now's time since origin, held to minShift..maxShift, from
// the Unix epoch.
func shiftFrom(origin, now time.Time) time.Time {
	return time.Unix(0, int64(min(max(now.Sub(origin), minShift), maxShift)))
}

// unshift is the time a shifted time stands for. Requires t.mu held.
func (t *table[V, P]) unshift(at time.Time) time.Time {
	return t.origin.Add(time.Duration(at.UnixNano()))
}

func (t *table[V, P]) init(maxKeys int) {
	t.seed = maphash.MakeSeed()
	t.maxKeys = max(1, maxKeys)
	t.m = make(map[uint64]*V)
}

// lock locks the table and returns k's seeded hash. maphash.Comparable
// hashes each field's contents in turn, so field boundaries cannot be forged
// with separator characters.
func (t *table[V, P]) lock(k Key) uint64 {
	h := maphash.Comparable(t.seed, k)
	t.mu.Lock()
	return h
}

// get returns the state under h, creating it when missing. Requires t.mu
// held.
func (t *table[V, P]) get(h uint64, now int64) P {
	if v, ok := t.m[h]; ok {
		return v
	}
	t.sweep(now, 2)
	if len(t.m) >= t.maxKeys {
		t.makeRoom(now)
	}
	v := new(V)
	t.m[h] = v
	return v
}

// sweep deletes idle entries among up to n random ones. Requires t.mu held.
func (t *table[V, P]) sweep(now int64, n int) {
	for h, v := range t.m {
		if P(v).idle(now) {
			delete(t.m, h)
		}
		if n--; n == 0 {
			break
		}
	}
}

// makeRoom frees at least one slot in a full table. Requires t.mu held.
func (t *table[V, P]) makeRoom(now int64) {
	const sample = 32
	var oldest uint64
	oldestAt, n, freed := int64(0), 0, false
	for h, v := range t.m {
		switch {
		case P(v).idle(now):
			delete(t.m, h)
			freed = true
		case n == 0 || P(v).last() < oldestAt:
			oldest, oldestAt = h, P(v).last()
		}
		if n++; n == sample {
			break
		}
	}
	if !freed {
		delete(t.m, oldest)
	}
}

func (t *table[V, P]) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
