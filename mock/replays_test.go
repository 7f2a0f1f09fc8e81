package mock

import (
	"encoding/binary"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// TestReplayRecordFailsClosedWhenFull: the record keeps every signature
// within its window, at most replayCapacity; a new signature past that is
// refused (sigFull, with the wait until a place frees), never taken by
// forgetting one that could still be replayed, and a place frees when the
// earliest window ends. Over HTTP the refusal is a 503 with Retry-After.
// Before (a ring of the latest 8,192), a flood of signatures of one's own
// evicted another's, which could then be replayed
// (TestAttackReplayAfterFlood).
func TestReplayRecordFailsClosedWhenFull(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	now := t0
	h := Must(New(Config{Now: func() time.Time { return now }}))
	sig := func(i int, at time.Time) string {
		hd := xblsign.Header{Version: 1, Time: at}
		binary.BigEndian.PutUint64(hd.R[:8], uint64(i)+1)
		hd.S[31] = 1
		return hd.String()
	}
	first := sig(0, t0.Add(-time.Minute)) // its window ends first: t0+4m
	if f, _ := h.signIn.fresh(first, now); f != sigFresh {
		t.Fatalf("a new signature: %v", f)
	}
	for i := 1; i < replayCapacity; i++ {
		if f, _ := h.signIn.fresh(sig(i, t0), now); f != sigFresh {
			t.Fatalf("signature %d: %v, want taken", i, f)
		}
	}
	if f, _ := h.signIn.fresh(first, now); f != sigReplay {
		t.Errorf("the first signature again, the record full: %v, want a replay", f)
	}
	f, wait := h.signIn.fresh(sig(replayCapacity, t0), now)
	if f != sigFull || wait != 4*time.Minute+time.Nanosecond {
		t.Errorf("one more, the record full of live signatures: %v, wait %v; want refused, 4m0.000000001s", f, wait)
	}

	// Over HTTP: a device's signed call gets 503 and when to come again.
	d := newXALDevice(t, h, func() time.Time { return now })
	dt, _ := d.deviceToken(t, h) // device/authenticate takes a signature of any age, and keeps none
	status, _, hdr := signedPost(t, h, d.key, now, "https://sisu.xboxlive.com/authenticate", d.sisuAuthenticateRequest(dt, "a-verifier-of-forty-three-characters-or-more-0123"), nil)
	if ra, _ := strconv.Atoi(hdr.Get("Retry-After")); status != http.StatusServiceUnavailable || ra != 241 {
		t.Errorf("a signed call, the record full: %d, Retry-After %q; want 503, 241", status, hdr.Get("Retry-After"))
	}

	now = t0.Add(4*time.Minute + time.Nanosecond) // the first signature's window has passed
	if f, _ := h.signIn.fresh(sig(replayCapacity, t0), now); f != sigFresh {
		t.Errorf("after the earliest window ended: %v, want taken", f)
	}
	if f, _ := h.signIn.fresh(sig(replayCapacity+1, t0), now); f != sigFull {
		t.Errorf("the place it freed taken again: %v, want refused", f)
	}
}

// TestReplayRecordBytes: the record full (replayCapacity signatures
// within their windows) holds at most 6 MiB (replays.go says 5).
func TestReplayRecordBytes(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range replayCapacity {
		hd := xblsign.Header{Version: 1, Time: now}
		binary.BigEndian.PutUint64(hd.R[:8], uint64(i)+1)
		hd.S[31] = 1
		h.signIn.fresh(hd.String(), now)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d signatures held in %.2f MiB (%d bytes each)", replayCapacity, float64(held)/(1<<20), held/replayCapacity)
	if held > 6<<20 {
		t.Errorf("the full record holds %d bytes, want at most 6 MiB", held)
	}
	runtime.KeepAlive(h)
}
