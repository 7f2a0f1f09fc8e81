package proxy

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/throttle"
)

// userOf is how the proxy names k's user in its log and status: its
// userhash, or notUserhash when what the Authorization put in its place is
// not one (it may be a token).
func userOf(user string) string {
	if user == "" || xblauth.UserHash(user) {
		return user
	}
	return notUserhash
}

// notUserhash stands for a user named by anything but a userhash.
const notUserhash = "(not a userhash)"

// maxTracked bounds the keys the proxy remembers for its status: past it,
// the one seen longest ago is forgotten. Only keys named by a userhash
// (xblauth.UserHash: at most 20 digits) are remembered, beside a rule's
// scope and the title, so the table is bounded in bytes too; a call whose
// Authorization puts anything else before the ';' (a token in the
// userhash's place, a made-up name of 16 KiB) is counted by the transport
// and never listed.
const maxTracked = 4096

// keyTracker remembers when each key last had a call.
type keyTracker struct {
	mu   sync.Mutex
	last map[throttle.Key]time.Time
}

// seen notes a call of k at now, when a userhash names its user.
func (kt *keyTracker) seen(k throttle.Key, now time.Time) {
	if !xblauth.UserHash(k.User) {
		return
	}
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
