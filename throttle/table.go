package throttle

import (
	"hash/maphash"
	"sync"
)

// nShards splits a table so that two cores rarely contend on one lock.
const nShards = 64

// entry is what a table holds per key: a state that can tell when it no longer
// matters (idle) and how recently it was used (last), for eviction.
type entry[V any] interface {
	*V
	idle(t int64) bool
	last() int64
}

// table is a bounded, sharded map from Key to a state *V. Keys are stored as
// 64-bit seeded hashes, not strings, which keeps an idle key small;
// two keys collide with probability about n²/2⁶⁵ (3·10⁻⁸ at a million keys),
// and a collision merges their counts, which can only make a limit stricter.
//
// Idle states are dropped lazily: each insertion examines two random entries
// and deletes them if idle. When a shard is full, an insertion first deletes
// idle entries among a random sample and, if none is idle, evicts the sampled
// entry used least recently (its counts restart).
type table[V any, P entry[V]] struct {
	seed     maphash.Seed
	perShard int
	shards   [nShards]shard[V]
}

// shard holds states by pointer: a decision on an existing key then only
// reads the map, so two cores never write the same map header, which would
// bounce its cache line between them.
type shard[V any] struct {
	mu sync.Mutex
	m  map[uint64]*V
	_  [48]byte // keep shards on separate cache lines
}

func (t *table[V, P]) init(maxKeys int) {
	t.seed = maphash.MakeSeed()
	t.perShard = max(1, maxKeys/nShards) // so the shards hold at most maxKeys (64 below 64)
	for i := range t.shards {
		t.shards[i].m = make(map[uint64]*V)
	}
}

// hash is k's seeded hash. maphash.Comparable hashes each field's contents
// in turn, so field boundaries cannot be forged with separator characters.
func (t *table[V, P]) hash(k Key) uint64 {
	return maphash.Comparable(t.seed, k)
}

// lock locks the shard that holds k and returns it with k's hash.
func (t *table[V, P]) lock(k Key) (*shard[V], uint64) {
	h := t.hash(k)
	s := &t.shards[h%nShards]
	s.mu.Lock()
	return s, h
}

// get returns the state under h, creating it when missing. Requires s.mu
// held.
func (t *table[V, P]) get(s *shard[V], h uint64, now int64) P {
	if v, ok := s.m[h]; ok {
		return v
	}
	t.sweep(s, now, 2)
	if len(s.m) >= t.perShard {
		t.makeRoom(s, now)
	}
	v := new(V)
	s.m[h] = v
	return v
}

// sweep deletes idle entries among up to n random ones. Requires s.mu held.
func (t *table[V, P]) sweep(s *shard[V], now int64, n int) (deleted int) {
	for h, v := range s.m {
		if P(v).idle(now) {
			delete(s.m, h)
			deleted++
		}
		if n--; n == 0 {
			break
		}
	}
	return deleted
}

// makeRoom frees at least one slot in a full shard. Requires s.mu held.
func (t *table[V, P]) makeRoom(s *shard[V], now int64) {
	const sample = 32
	var oldest uint64
	oldestAt, n, deleted := int64(0), 0, 0
	for h, v := range s.m {
		switch {
		case P(v).idle(now):
			delete(s.m, h)
			deleted++
		case n == 0 || P(v).last() < oldestAt:
			oldest, oldestAt = h, P(v).last()
		}
		if n++; n == sample {
			break
		}
	}
	if deleted == 0 {
		delete(s.m, oldest)
	}
}

func (t *table[V, P]) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}
