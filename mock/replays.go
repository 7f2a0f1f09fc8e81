package mock

import (
	"crypto/sha256"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// Replays: a signature is good once. A signed call presented again within
// signatureSkew (after which Verify refuses it as stale) is a replay and
// is refused. The mock keeps the digests of the latest replayWindow
// signatures, 16 bytes each: a replay is caught unless that many signed
// calls came between, which at the sign-in services' limits takes far
// longer than signatureSkew.

// replayWindow is how many of the latest signatures are remembered.
const replayWindow = 1 << 13

// replays is the record of the signatures seen. The zero value is ready;
// it is guarded by signIn.mu.
type replays struct {
	ring []replayEntry
	next int
	seen map[[16]byte]int // digest to its index in ring
}

type replayEntry struct {
	sum [16]byte
	at  time.Time
}

// fresh reports whether the signature sig was not seen within
// signatureSkew of now, and notes it. A signature is known by its
// canonical form (xblsign.Header.Canonical): its twin, which anyone who
// saw it can make, is the same signature presented again.
func (s *signIn) fresh(sig string, now time.Time) bool {
	if h, err := xblsign.ParseHeader(sig); err == nil { // always, after Verify
		sig = h.Canonical().String()
	}
	full := sha256.Sum256([]byte(sig))
	sum := [16]byte(full[:16])
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.replays
	if r.ring == nil {
		r.ring, r.seen = make([]replayEntry, replayWindow), make(map[[16]byte]int, replayWindow)
	}
	if i, ok := r.seen[sum]; ok && now.Sub(r.ring[i].at) < 2*signatureSkew {
		return false
	}
	old := r.ring[r.next]
	if i, ok := r.seen[old.sum]; ok && i == r.next {
		delete(r.seen, old.sum)
	}
	r.ring[r.next] = replayEntry{sum: sum, at: now}
	r.seen[sum] = r.next
	r.next = (r.next + 1) % replayWindow
	return true
}
