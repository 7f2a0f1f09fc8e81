package proxy

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// maxTracked bounds the keys the proxy remembers for its status: past it,
// the one seen longest ago is forgotten. A key's names are bounded (a
// userhash of at most 20 digits, a rule's scope, the title), so the table
// is bounded in bytes too.
const maxTracked = 4096

// keyTracker remembers when each key last had a call.
type keyTracker struct {
	mu   sync.Mutex
	last map[throttle.Key]time.Time
}

// seen notes a call of k at now.
func (kt *keyTracker) seen(k throttle.Key, now time.Time) {
	kt.mu.Lock()
	defer kt.mu.Unlock()
	if kt.last == nil {
		kt.last = make(map[throttle.Key]time.Time)
	}
	if _, ok := kt.last[k]; !ok && len(kt.last) >= maxTracked {
		var oldest throttle.Key
		var at time.Time
		for key, t := range kt.last {
			if at.IsZero() || t.Before(at) {
				oldest, at = key, t
			}
		}
		delete(kt.last, oldest)
	}
	kt.last[k] = now
}

// trackedKey is a key and its last call.
type trackedKey struct {
	key  throttle.Key
	last time.Time
}

// latest returns the keys with a call since since, the latest first.
func (kt *keyTracker) latest(since time.Time) []trackedKey {
	kt.mu.Lock()
	out := make([]trackedKey, 0, len(kt.last))
	for k, t := range kt.last {
		if !t.Before(since) {
			out = append(out, trackedKey{k, t})
		}
	}
	kt.mu.Unlock()
	slices.SortFunc(out, func(a, b trackedKey) int {
		if c := b.last.Compare(a.last); c != 0 {
			return c
		}
		return compareKeys(a.key, b.key)
	})
	return out
}

func compareKeys(a, b throttle.Key) int {
	return cmp.Or(strings.Compare(a.Scope, b.Scope), strings.Compare(a.User, b.User), strings.Compare(a.Title, b.Title))
}
