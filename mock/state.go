package mock

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// state is the services' in-memory data. Each kind of record is held in a
// boundedMap, capped both in entries and in bytes, so neither a flood of
// distinct users nor a few huge documents can grow the mock's memory without
// bound. A record that does not fit evicts arbitrary others of its kind.
type state struct {
	mu       sync.Mutex
	presence boundedMap[presenceRecord]
	progress boundedMap[map[string]int] // xuid + "/" + title: achievement id -> percent
	sessions boundedMap[json.RawMessage]
	handles  boundedMap[*searchHandle] // MPSD search handles by id
	// handleSeq numbers the search handles made, for their ids: two
	// handles never share one, whatever the clock says.
	handleSeq uint32
	// cloaked are the users who set their presence state "Cloaked", apart
	// from their presence records, which the state may evict: a cloak is
	// never forgotten to make room. At most maxCloaks, each counted in the
	// presence records' bytes (cloakBytes) and never evicted, in at most
	// half of them (reserve); one more is refused.
	cloaked   map[string]struct{}
	maxCloaks int
}

// cloakBytes is what a cloak of xuid holds: its XUID (a copy, not the
// token it was cut from) and its place in the set (about 56 bytes a
// cloak, TestCloakSetBoundedInBytes).
func cloakBytes(xuid string) int64 { return int64(len(xuid)) + 64 }

// cloak records xuid's cloak, making room for its bytes among the presence
// records; it reports false, recording nothing, past the bounds.
func (s *state) cloak(xuid string) bool {
	if _, ok := s.cloaked[xuid]; ok {
		return true
	}
	if len(s.cloaked) >= s.maxCloaks || !s.presence.reserve(cloakBytes(xuid)) {
		return false
	}
	s.cloaked[strings.Clone(xuid)] = struct{}{}
	return true
}

// uncloak forgets xuid's cloak, if any.
func (s *state) uncloak(xuid string) {
	if _, ok := s.cloaked[xuid]; ok {
		delete(s.cloaked, xuid)
		s.presence.unreserve(cloakBytes(xuid))
	}
}

// DefaultMaxStateBytes is the default cap on the bytes of stored service
// state (presence, achievement progress, sessions), shared equally by kind.
const DefaultMaxStateBytes = 64 << 20

func newState(maxEntries int, maxBytes int64) *state {
	maxEntries = max(1024, maxEntries)
	per := max(maxBytes/4, 64<<10)
	return &state{
		presence: newBounded[presenceRecord](maxEntries, per),
		progress: newBounded[map[string]int](maxEntries, per),
		sessions: newBounded[json.RawMessage](maxEntries, per),
		handles:  newBounded[*searchHandle](maxEntries, per),
		cloaked:  map[string]struct{}{},
		// as many as the presence records it holds: a few dozen bytes each
		maxCloaks: maxEntries,
	}
}

// record is xuid's stored presence record (ok: there is one); a cloaked
// user whose record was evicted has an Offline one, cloaked. The caller
// holds mu.
func (s *state) record(xuid string) (presenceRecord, bool) {
	p, ok := s.presence.get(xuid)
	_, cloaked := s.cloaked[xuid]
	if !ok && cloaked {
		return presenceRecord{XUID: xuid, State: "Offline", Cloaked: true}, true
	}
	p.Cloaked = cloaked
	return p, ok
}

// boundedMap is a map capped in entries and in the bytes its values hold
// (as the caller measures them). It is not safe for concurrent use: state's
// mutex guards it.
type boundedMap[V any] struct {
	m          map[string]entry[V]
	maxEntries int
	maxBytes   int64
	bytes      int64 // the entries' and what is reserved
	reserved   int64
	// onEvict, when set, is called with each entry put evicts to make
	// room (not one it replaces, nor those clearAll drops).
	onEvict func(k string, v V)
}

type entry[V any] struct {
	v    V
	size int64
}

func newBounded[V any](maxEntries int, maxBytes int64) boundedMap[V] {
	return boundedMap[V]{m: make(map[string]entry[V]), maxEntries: maxEntries, maxBytes: maxBytes}
}

func (b *boundedMap[V]) get(k string) (V, bool) {
	e, ok := b.m[k]
	return e.v, ok
}

// put stores v under k, counting size bytes (plus the key's), and evicts
// other entries until it fits. It reports false, storing nothing, for a
// value larger than the budget less what is reserved (at most half).
func (b *boundedMap[V]) put(k string, v V, size int64) bool {
	size += int64(len(k))
	if size > b.maxBytes-b.reserved {
		return false
	}
	b.delete(k)
	b.evictFor(1, size)
	b.m[k] = entry[V]{v, size}
	b.bytes += size
	return true
}

// reserve counts size bytes held apart from the entries (a cloak, beside
// the presence records), evicting entries until they fit; it reports
// false, reserving nothing, past half the budget: the other half is the
// entries', so that an entry the budget takes always fits. unreserve gives
// them back.
func (b *boundedMap[V]) reserve(size int64) bool {
	if b.reserved+size > b.maxBytes/2 {
		return false
	}
	b.evictFor(0, size)
	b.bytes += size
	b.reserved += size
	return true
}

func (b *boundedMap[V]) unreserve(size int64) {
	b.bytes -= size
	b.reserved -= size
}

// evictFor evicts entries until n more of size bytes in all fit.
func (b *boundedMap[V]) evictFor(n int, size int64) {
	for k, e := range b.m {
		if len(b.m)+n <= b.maxEntries && b.bytes+size <= b.maxBytes {
			return
		}
		b.delete(k)
		if b.onEvict != nil {
			b.onEvict(k, e.v)
		}
	}
}

// withPrefix returns the keys that start with prefix, sorted.
func (b *boundedMap[V]) withPrefix(prefix string) []string {
	var out []string
	for k := range b.m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (b *boundedMap[V]) delete(k string) {
	if e, ok := b.m[k]; ok {
		b.bytes -= e.size
		delete(b.m, k)
	}
}

// clear drops every record. The caller holds mu.
func (s *state) clear() {
	s.presence.clearAll()
	s.progress.clearAll()
	s.sessions.clearAll()
	s.handles.clearAll()
	clear(s.cloaked)
}

func (b *boundedMap[V]) clearAll() {
	clear(b.m)
	b.bytes, b.reserved = 0, 0
}
