package mock

import (
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// TestReplayRecordFailsClosedWhenFull: the record keeps every signature
// within its window, at most replayCapacity, and at most replayPerKey of
// one key's; a new signature past either is refused (sigFull, with the
// wait until a place frees), never taken by forgetting one that could
// still be replayed, and a place frees when the earliest window ends. Over
// HTTP the refusal is a 503 with Retry-After. Before (a ring of the latest
// 8,192), a flood of signatures of one's own evicted another's, which
// could then be replayed (TestAttackReplayAfterFlood); and one key could
// fill the whole record (TestAttack2OneKeyFillsTheRecordForEveryone).
func TestReplayRecordFailsClosedWhenFull(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	now := t0
	h := Must(New(Config{Now: func() time.Time { return now }}))
	const keys = replayCapacity / replayPerKey
	first := testSig(0, t0.Add(-time.Minute)) // its window ends first: t0+4m
	if f, _ := h.signIn.fresh(first, testKey(0), now); f != sigFresh {
		t.Fatalf("a new signature: %v", f)
	}
	for i := 1; i < replayCapacity; i++ {
		if f, _ := h.signIn.fresh(testSig(i, t0), testKey(i%keys), now); f != sigFresh {
			t.Fatalf("signature %d: %v, want taken", i, f)
		}
	}
	if f, _ := h.signIn.fresh(first, testKey(0), now); f != sigReplay {
		t.Errorf("the first signature again, the record full: %v, want a replay", f)
	}
	for name, k := range map[string]xblsign.ProofKey{"a new key, the record full": testKey(keys), "key 0, its share full": testKey(0)} {
		f, wait := h.signIn.fresh(testSig(replayCapacity, t0), k, now)
		if f != sigFull || wait != 4*time.Minute+replayGrace+time.Nanosecond {
			t.Errorf("%s: %v, wait %v; want refused, 5m0.000000001s (the first window's end and replayGrace)", name, f, wait)
		}
	}

	// Over HTTP: a device's signed call gets 503 and when to come again.
	d := newXALDevice(t, h, func() time.Time { return now })
	body := d.authenticateBody(t, h) // device/authenticate takes a signature of any age, and keeps none
	status, _, hdr := signedPost(t, h, d.key, now, "https://sisu.xboxlive.com/authenticate", body, nil)
	if ra, _ := strconv.Atoi(hdr.Get("Retry-After")); status != http.StatusServiceUnavailable || ra != 301 {
		t.Errorf("a signed call, the record full: %d, Retry-After %q; want 503, 301", status, hdr.Get("Retry-After"))
	}

	now = t0.Add(4*time.Minute + replayGrace + time.Nanosecond) // a minute past the first signature's window
	if f, _ := h.signIn.fresh(testSig(replayCapacity, t0), testKey(0), now); f != sigFresh {
		t.Errorf("after the earliest window ended: %v, want taken", f)
	}
	if f, _ := h.signIn.fresh(testSig(replayCapacity+1, t0), testKey(keys), now); f != sigFull {
		t.Errorf("the place it freed taken again: %v, want refused", f)
	}
}

// TestReplayRecordKeyShare: one key's signatures past replayPerKey are
// refused while another key's are taken.
func TestReplayRecordKeyShare(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	for i := range replayPerKey {
		if f, _ := h.signIn.fresh(testSig(i, now), testKey(0), now); f != sigFresh {
			t.Fatalf("signature %d of one key: %v, want taken", i, f)
		}
	}
	if f, wait := h.signIn.fresh(testSig(replayPerKey, now), testKey(0), now); f != sigFull || wait != 5*time.Minute+replayGrace+time.Nanosecond {
		t.Errorf("one more of the same key: %v, wait %v; want refused, 6m0.000000001s", f, wait)
	}
	if f, _ := h.signIn.fresh(testSig(replayPerKey, now), testKey(1), now); f != sigFresh {
		t.Errorf("another key's: %v, want taken", f)
	}
}

// testSig is a signature header of instant at, told apart by i.
func testSig(i int, at time.Time) string {
	hd := xblsign.Header{Version: 1, Time: at}
	binary.BigEndian.PutUint64(hd.R[:8], uint64(i)+1)
	hd.S[31] = 1
	return hd.String()
}

// testKey is a proof key told apart by i (fresh reads only its X and Y).
func testKey(i int) xblsign.ProofKey { return xblsign.ProofKey{X: "x" + strconv.Itoa(i), Y: "y"} }

// TestReplayRecordBytes: the record full (replayCapacity signatures
// within their windows) holds at most 8 MiB (replays.go says so).
func TestReplayRecordBytes(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range replayCapacity {
		h.signIn.fresh(testSig(i, now), testKey(i%(replayCapacity/replayPerKey)), now)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d signatures held in %.2f MiB (%d bytes each)", replayCapacity, float64(held)/(1<<20), held/replayCapacity)
	if held > 8<<20 {
		t.Errorf("the full record holds %d bytes, want at most 8 MiB", held)
	}
	runtime.KeepAlive(h)
}

// TestReplayAfterLongClockStepBack: a clock set back by less than
// replayGrace replays nothing, the signature still held
// (TestAttack2ReplayAfterClockStepsBack); one set back further finds the
// signature forgotten, and the watermark refuses it: its window ended at
// or before one the record forgot.
func TestReplayAfterLongClockStepBack(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return t0 }}))
	victim := testSig(1, t0) // its window ends at t0+5m
	if f, _ := h.signIn.fresh(victim, testKey(1), t0); f != sigFresh {
		t.Fatalf("the victim's signature: %v", f)
	}
	later := t0.Add(signatureSkew + replayGrace + time.Second)
	if f, _ := h.signIn.fresh(testSig(2, later), testKey(2), later); f != sigFresh { // forgets the victim's
		t.Fatalf("a call at t0+6m1s: %v", f)
	}
	if _, held := h.signIn.replays.until[sha256Prefix(victim)]; held {
		t.Fatal("the victim's signature still held: the test no longer reaches the watermark")
	}
	back := t0.Add(time.Minute)
	if f, _ := h.signIn.fresh(victim, testKey(1), back); f != sigReplay {
		t.Errorf("the victim's signature again, the clock set back to t0+1m: %v, want a replay", f)
	}
	if f, _ := h.signIn.fresh(testSig(3, back), testKey(3), back); f != sigFresh {
		t.Errorf("a new signature at t0+1m (its window ends after the latest forgotten): %v, want taken", f)
	}
}

// sha256Prefix is the record's digest of a signature header (fresh's).
func sha256Prefix(sig string) [16]byte {
	h, _ := xblsign.ParseHeader(sig)
	full := sha256.Sum256([]byte(h.Canonical().String()))
	return [16]byte(full[:16])
}

// TestServiceRecordApart: the services' signed calls have a record of
// their own, where one key (a backend signs every user's calls with one)
// may hold more than replayPerKey, and which a flood of sign-ins leaves
// alone; a signature is a replay in it as in the sign-in services'.
func TestServiceRecordApart(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	for i := range replayPerKey + 100 {
		if f, _ := h.signIn.freshService(testSig(i, now), testKey(0), now); f != sigFresh {
			t.Fatalf("a backend's signed call %d: %v, want taken (its key may hold the record)", i, f)
		}
	}
	for i := range replayCapacity {
		h.signIn.fresh(testSig(1<<20+i, now), testKey(1+i%16), now) // the sign-in services' record full
	}
	if f, _ := h.signIn.freshService(testSig(1<<21, now), testKey(0), now); f != sigFresh {
		t.Errorf("a backend's call, the sign-in record full: %v, want taken", f)
	}
	if f, _ := h.signIn.freshService(testSig(5, now), testKey(0), now); f != sigReplay {
		t.Errorf("a backend's signature again: %v, want a replay", f)
	}
}
