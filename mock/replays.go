package mock

import (
	"container/heap"
	"crypto/sha256"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// Replays: a signature is good once. Verify takes a signature whose time is
// within signatureSkew of the mock's clock, either side; the mock keeps the
// digest of every signature it took (16 bytes) until that window has passed
// for it, so a signature presented again while Verify would still take it is
// always a replay. At most replayCapacity are kept, and at most
// replayPerKey of one key's: when a key has that many within their
// windows, or the record that many of all keys, a new signed call is
// refused as the mock's own overload (503 with Retry-After), never taken by
// forgetting one that could still be replayed. A signature whose window
// ended before one the record has forgotten is refused too: with a clock
// that stepped back (Config.Now, a wall clock set back), it may be one the
// record has forgotten.

// replayCapacity is how many signatures within their windows the mock
// remembers (96 bytes each, 6 MiB in all: TestReplayRecordBytes): 109
// signed calls a second, every second of a ten-minute window.
const replayCapacity = 1 << 16

// replayPerKey is how many of them may be one key's: one device or
// service signing without end fills its own share, not the record, and
// other devices still sign in.
const replayPerKey = replayCapacity / 16

// replays is the record of the signatures taken. The zero value is ready;
// it is guarded by signIn.mu.
type replays struct {
	until  map[[16]byte]int64 // a digest to the end of its signature's window (unix ns)
	ends   replayHeap         // the same, earliest end first
	perKey map[[16]byte]int   // a key's digest to its signatures held
	forgot int64              // the latest end of a signature forgotten (unix ns)
}

type replayEntry struct {
	sum, key [16]byte
	end      int64 // unix ns
}

// replayHeap is a container/heap of entries, earliest end first.
type replayHeap []replayEntry

func (h replayHeap) Len() int           { return len(h) }
func (h replayHeap) Less(i, j int) bool { return h[i].end < h[j].end }
func (h replayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *replayHeap) Push(x any)        { *h = append(*h, x.(replayEntry)) }
func (h *replayHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// freshness is what fresh says of a signature.
type freshness int

const (
	sigFresh  freshness = iota // not seen: taken, and noted
	sigReplay                  // seen within its window, or perhaps seen (forgotten): refused
	sigFull                    // not seen, but its key's share or the record is full: refused
)

// fresh reports whether the signature sig, made with key, was taken
// before within its window, and notes it when not. A signature is known
// by its canonical form (xblsign.Header.Canonical): its twin, which
// anyone who saw it can make, is the same signature presented again. Its
// window ends signatureSkew after its own time, when Verify stops taking
// it; wait is, for sigFull, the time until a place frees.
func (s *signIn) fresh(sig string, key xblsign.ProofKey, now time.Time) (_ freshness, wait time.Duration) {
	end := now.Add(2 * signatureSkew) // a header that does not parse (never, after Verify)
	if h, err := xblsign.ParseHeader(sig); err == nil {
		sig, end = h.Canonical().String(), h.Time.Add(signatureSkew)
	}
	full := sha256.Sum256([]byte(sig))
	sum := [16]byte(full[:16])
	kfull := sha256.Sum256([]byte(key.X + "\x00" + key.Y))
	kid := [16]byte(kfull[:16])
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.replays
	if r.until == nil {
		r.until, r.perKey = make(map[[16]byte]int64), make(map[[16]byte]int)
	}
	t := now.UnixNano()
	for len(r.ends) > 0 && r.ends[0].end < t { // past its window: Verify refuses it as stale
		e := heap.Pop(&r.ends).(replayEntry)
		delete(r.until, e.sum)
		if r.perKey[e.key]--; r.perKey[e.key] == 0 {
			delete(r.perKey, e.key)
		}
		r.forgot = max(r.forgot, e.end)
	}
	if _, ok := r.until[sum]; ok || end.UnixNano() <= r.forgot {
		return sigReplay, 0
	}
	switch {
	case r.perKey[kid] >= replayPerKey:
		return sigFull, r.keyFrees(kid, t)
	case len(r.ends) >= replayCapacity:
		return sigFull, time.Duration(r.ends[0].end-t) + time.Nanosecond
	}
	r.until[sum] = end.UnixNano()
	r.perKey[kid]++
	heap.Push(&r.ends, replayEntry{sum: sum, key: kid, end: end.UnixNano()})
	return sigFresh, 0
}

// keyFrees returns the time from t until the earliest window of key's
// signatures ends. It reads the whole record (replayCapacity entries at
// most), only when a key is refused.
func (r *replays) keyFrees(key [16]byte, t int64) time.Duration {
	first := int64(0)
	for _, e := range r.ends {
		if e.key == key && (first == 0 || e.end < first) {
			first = e.end
		}
	}
	return time.Duration(first-t) + time.Nanosecond
}
