package mock

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
)

// TestAttack2ReplayAfterClockStepsBack: the record of signatures forgets a
// signature once the mock's clock has passed its window's end, but Verify
// judges a signature's age against the clock of the moment. When the
// clock steps back (Config.Now replaying virtual time, or a wall clock
// corrected by NTP: the record uses the wall reading, UnixNano), a
// signature forgotten while the clock was ahead is inside Verify's window
// again and is taken a second time. A replay must stay a replay.
func TestAttack2ReplayAfterClockStepsBack(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	now := t0
	h := Must(New(Config{Now: func() time.Time { return now }}))
	victim := newXALDevice(t, h, func() time.Time { return now })
	const url = "https://sisu.xboxlive.com/authenticate"
	vbody := victim.authenticateBody(t, h)
	var sig string
	if status, b, _ := signedPost(t, h, victim.key, now, url, vbody, func(r *http.Request) { sig = r.Header.Get("Signature") }); status != http.StatusOK {
		t.Fatalf("victim's call: %d %s", status, b)
	}
	// The clock runs ahead 6 minutes; any signed call there prunes the
	// record of what has ended by then.
	now = t0.Add(6 * time.Minute)
	other := newXALDevice(t, h, func() time.Time { return now })
	other.id = "{44444444-945d-4379-b708-d4ee92c12d99}"
	if status, b, _ := signedPost(t, h, other.key, now, url, other.authenticateBody(t, h), nil); status != http.StatusOK {
		t.Fatalf("a call 6 min later: %d %s", status, b)
	}
	// The clock steps back to t0+1m: the victim's signature is 1 min old.
	now = t0.Add(time.Minute)
	if status, b, _ := signedPost(t, h, nil, now, url, vbody, func(r *http.Request) { r.Header.Set("Signature", sig) }); status != http.StatusForbidden {
		t.Errorf("the victim's signature again after the clock stepped back: %d %.160s, want 403 (a replay)", status, b)
	}
}

// TestAttack2OneKeyFillsTheRecordForEveryone: one device, with one key and
// one device token, makes replayCapacity signed SISU calls (nothing limits
// them), each signed 5 min ahead so that its window lasts the longest
// (10 min). The record is then full, and every other user's signed
// sign-in is refused 503 for up to 10 minutes: one outsider locks all
// devices out of sign-in. A signer's share of the record (per key, or per
// device token) must be bounded so that another device still signs in.
// The signer stops once refused past twice its share (without a share,
// only at the full record).
func TestAttack2OneKeyFillsTheRecordForEveryone(t *testing.T) {
	racebuild.Skip(t, "a volume test: 65,536 signed calls on one goroutine")
	if testing.Short() {
		t.Skip("65,536 signed calls")
	}
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	attacker := newXALDevice(t, h, func() time.Time { return now })
	attacker.id = "{55555555-945d-4379-b708-d4ee92c12d99}"
	abody := attacker.authenticateBody(t, h)
	taken, refused := 0, 0
	for i := 0; i < replayCapacity; i++ {
		switch status, _, _ := signedPost(t, h, attacker.key, now.Add(signatureSkew), "https://sisu.xboxlive.com/authenticate", abody, nil); status {
		case http.StatusOK:
			taken++
		case http.StatusServiceUnavailable:
			refused++
		}
		if refused > 0 && i >= 2*replayPerKey {
			break // a quota of its own stopped it, and went on refusing: good
		}
	}
	t.Logf("one key: %d signed calls taken, %d refused 503", taken, refused)
	victim := newXALDevice(t, h, func() time.Time { return now })
	status, b, hdr := signedPost(t, h, victim.key, now, "https://sisu.xboxlive.com/authenticate",
		victim.authenticateBody(t, h), nil)
	if status != http.StatusOK {
		ra, _ := strconv.Atoi(hdr.Get("Retry-After"))
		t.Errorf("another device's sign-in after one key's %d signed calls: %d (Retry-After %d s) %.120s; want 200: one signer must not lock every user out", taken, status, ra, b)
	}
}

// TestAttack2ReplayRecordConcurrent: the same 2,000 signatures noted from 8
// goroutines at once leave the record's map and heap naming the same
// entries, and each signature taken once. Held (run with -race). (With
// goroutines on clocks apart, signatures are taken again: that is
// TestAttack2ReplayAfterClockStepsBack's defect.)
func TestAttack2ReplayRecordConcurrent(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return t0 }}))
	var wg sync.WaitGroup
	var taken atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				at := t0.Add(time.Duration(i) * time.Millisecond)
				if f, _ := h.signIn.fresh(testSig(i, at), testKey(g), t0); f == sigFresh {
					taken.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	r := &h.signIn.replays
	if len(r.until) != len(r.ends) {
		t.Errorf("map %d entries, heap %d", len(r.until), len(r.ends))
	}
	for _, e := range r.ends {
		if end, ok := r.until[e.sum]; !ok || end != e.end {
			t.Fatalf("heap entry %x not in the map as %d (%d, %v)", e.sum, e.end, end, ok)
		}
	}
	if taken.Load() < 2000 {
		t.Errorf("%d of 2000 distinct signatures taken", taken.Load())
	}
	if taken.Load() > 2000 {
		t.Errorf("%d takings of 2000 distinct signatures: some taken twice", taken.Load())
	}
}
