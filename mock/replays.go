package mock

import (
	"cmp"
	"container/heap"
	"crypto/sha256"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// Replays: a signature is good once. Verify takes a signature whose time is
// within signatureSkew of the mock's clock, either side; the mock keeps the
// digest of every signature it took (16 bytes) until that window has passed
// for it, so a signature presented again while Verify would still take it is
// always a replay. A record keeps at most replayCapacity, and the sign-in
// services' at most replayPerKey of one key's: when a key has that many
// within their windows, or the record that many of all keys, a new signed
// call is
// refused as the mock's own overload (503 with Retry-After), never taken by
// forgetting one that could still be replayed. A signature is forgotten
// replayGrace after its window ends, so that calls that read the clock a
// moment apart, or a clock set back by less than that, replay nothing; a
// signature whose window ended at or before one the record has forgotten
// is refused too: with a clock set back further (Config.Now, a wall clock
// set back), it may be one the record has forgotten.

// replayCapacity is how many signatures within their windows a record
// keeps (TestReplayRecordBytes: 8 MiB in all at most): 99 signed calls a
// second, every second of a window of ten minutes and replayGrace.
const replayCapacity = 1 << 16

// replayPerKey is how many of the sign-in services' may be one key's: one
// device signing without end fills its own share, not the record, and
// other devices still sign in.
const replayPerKey = replayCapacity / 16

// replayGrace is how long past its window's end a signature is kept.
const replayGrace = time.Minute

// replays is a record of the signatures taken. The zero value is ready,
// with a share of replayPerKey a key; it is guarded by signIn.mu. There are
// two: the sign-in services' (signIn.replays), where anyone may make a
// device and its key, and the services' signed calls' (signIn.services),
// whose keys XSTS bound to a partner's S-token and where one backend signs
// every user's calls with one key, which may hold the whole record. A
// flood of either leaves the other's alone.
type replays struct {
	keyShare int // a key's places at most (0: replayPerKey)

	until  map[[16]byte]int64    // a digest to the end of its signature's window (unix ns)
	ends   replayHeap            // the same, earliest end first
	perKey map[[16]byte]*endHeap // a key's digest to the ends of its signatures held
	forgot int64                 // the latest end of a signature forgotten (unix ns)
}

type replayEntry struct {
	sum, key [16]byte
	end      int64 // unix ns
}

// endHeap is a container/heap of one key's ends, earliest first. The
// record forgets signatures earliest end first, so a key's earliest end is
// the one forgotten when one of its signatures is.
type endHeap []int64

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *endHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
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

// fresh is note for the sign-in services' record.
func (s *signIn) fresh(sig string, key xblsign.ProofKey, now time.Time) (freshness, time.Duration) {
	return s.note(&s.replays, sig, key, now)
}

// freshService is note for the record of the services' signed calls.
func (s *signIn) freshService(sig string, key xblsign.ProofKey, now time.Time) (freshness, time.Duration) {
	return s.note(&s.services, sig, key, now)
}

// note reports whether the signature sig, made with key, was taken
// before within its window in r, and notes it when not. A signature is known
// by its canonical form (xblsign.Header.Canonical): its twin, which
// anyone who saw it can make, is the same signature presented again. Its
// window ends signatureSkew after its own time, when Verify stops taking
// it; wait is, for sigFull, the time until a place frees.
func (s *signIn) note(r *replays, sig string, key xblsign.ProofKey, now time.Time) (_ freshness, wait time.Duration) {
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
	if r.until == nil {
		r.until, r.perKey = make(map[[16]byte]int64), make(map[[16]byte]*endHeap)
	}
	t := now.UnixNano()
	grace := int64(replayGrace)
	for len(r.ends) > 0 && r.ends[0].end+grace < t { // a minute past its window: Verify refuses it as stale
		e := heap.Pop(&r.ends).(replayEntry)
		delete(r.until, e.sum)
		if k := r.perKey[e.key]; k.Len() == 1 {
			delete(r.perKey, e.key)
		} else {
			heap.Pop(k) // e's end: the key's earliest
		}
		r.forgot = max(r.forgot, e.end)
	}
	if _, ok := r.until[sum]; ok || end.UnixNano() <= r.forgot {
		return sigReplay, 0
	}
	k := r.perKey[kid]
	switch {
	case k != nil && k.Len() >= cmp.Or(r.keyShare, replayPerKey):
		return sigFull, time.Duration((*k)[0]+grace-t) + time.Nanosecond
	case len(r.ends) >= replayCapacity:
		return sigFull, time.Duration(r.ends[0].end+grace-t) + time.Nanosecond
	}
	if k == nil {
		k = new(endHeap)
		r.perKey[kid] = k
	}
	r.until[sum] = end.UnixNano()
	heap.Push(k, end.UnixNano())
	heap.Push(&r.ends, replayEntry{sum: sum, key: kid, end: end.UnixNano()})
	return sigFresh, 0
}
