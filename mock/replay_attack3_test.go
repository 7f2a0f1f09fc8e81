package mock

import (
	"testing"
	"time"
)

// TestAttack3KeyFullRefusalCost: a key whose share is full is refused with
// keyFrees, which reads the whole record under signIn.mu. With the record
// near full, each refused call holds the lock for a scan of 65,536
// entries; a refused call must cost about what a taken one costs (a
// per-key heap or a per-key earliest end), not a scan of every key's.
func TestAttack3KeyFullRefusalCost(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	const keys = replayCapacity / replayPerKey
	for i := 0; i <= replayCapacity-keys; i++ { // key 0: 4,096 (full), the others 4,095
		if f, _ := h.signIn.fresh(testSig(i, now), testKey(i%keys), now); f != sigFresh {
			t.Fatalf("signature %d: %v", i, f)
		}
	}
	const n = 2000
	// Taken calls, for comparison: another mock, n keys' first signatures.
	h2 := Must(New(Config{Now: func() time.Time { return now }}))
	start := time.Now()
	for i := 0; i < n; i++ {
		if f, _ := h2.signIn.fresh(testSig(i, now), testKey(i), now); f != sigFresh {
			t.Fatalf("a taken call: %v", f)
		}
	}
	perTaken := time.Since(start) / n
	start = time.Now()
	for i := 0; i < n; i++ {
		if f, _ := h.signIn.fresh(testSig(1<<31+i, now), testKey(0), now); f != sigFull {
			t.Fatalf("key 0 full: %v", f)
		}
	}
	perRefused := time.Since(start) / n
	t.Logf("taken %v a call, refused (key full) %v a call: %.0f refusals/s/core, each holding signIn.mu", perTaken, perRefused, float64(time.Second)/float64(perRefused))
	if perRefused > 20*max(perTaken, 2*time.Microsecond) {
		t.Errorf("a refused call costs %v under the lock, a taken one %v: one client's refused calls scan the whole record each time", perRefused, perTaken)
	}
}

// TestAttack3WatermarkSparesAnOverlappingCall: verifiedUnder reads the
// clock (now) before Verify and takes signIn.mu only in fresh, so two
// calls on a clock that never goes back reach the record out of order:
// B reads tB, A reads tA = tB-1ms and is preempted; B's fresh forgets a
// signature whose window ended between them (the watermark moves past
// tA); A's own signature, which Verify took at tA (made 5 min minus 0.2 ms
// before tA: a device whose clock runs that far behind), ends before
// the watermark and is refused as a replay though it was never
// presented. The watermark must not refuse what Verify took unless the
// clock went back further than the calls overlap.
func TestAttack3WatermarkSparesAnOverlappingCall(t *testing.T) {
	tA := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	tB := tA.Add(time.Millisecond)
	h := Must(New(Config{Now: func() time.Time { return tA }}))
	// Someone's signature at the window's edge, taken earlier; its window ends at tA+0.5ms.
	if f, _ := h.signIn.fresh(testSig(1, tA.Add(-signatureSkew+500*time.Microsecond)), testKey(1), tA.Add(-time.Second)); f != sigFresh {
		t.Fatalf("an earlier call: %v", f)
	}
	// B, which read the clock after A, reaches the record first.
	if f, _ := h.signIn.fresh(testSig(2, tB), testKey(2), tB); f != sigFresh {
		t.Fatalf("B: %v", f)
	}
	// A: its signature within Verify's window at tA, never presented.
	sigA := testSig(3, tA.Add(-signatureSkew+200*time.Microsecond))
	if f, _ := h.signIn.fresh(sigA, testKey(3), tA); f != sigFresh {
		t.Errorf("A's signature, never presented, Verify having taken it at tA (1 ms before B's clock): %v, want taken (sigFresh=%v)", f, sigFresh)
	}
}

// TestAttack3KeyShareFreesAndRetryAfter: held. A key's full share, refused
// with the wait until its earliest window ends (not 0, not the latest),
// is a place again just after that wait; once all its windows have
// passed its count is gone (no drift, no lock-out); a signature refused
// while the share was full is taken once when presented after, and a
// taken signature presented with another key is still a replay.
func TestAttack3KeyShareFreesAndRetryAfter(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return t0 }}))
	for i := range replayPerKey {
		at := t0.Add(time.Duration(i) * time.Millisecond) // windows end t0+5m+i ms
		if f, _ := h.signIn.fresh(testSig(i, at), testKey(0), t0); f != sigFresh {
			t.Fatalf("signature %d: %v", i, f)
		}
	}
	late := testSig(replayPerKey, t0.Add(time.Minute))
	f, wait := h.signIn.fresh(late, testKey(0), t0.Add(time.Minute))
	if want := 4*time.Minute + replayGrace + time.Nanosecond; f != sigFull || wait != want {
		t.Errorf("share full at t0+1m: %v, wait %v; want refused, %v", f, wait, want)
	}
	if f, _ := h.signIn.fresh(testSig(5, t0.Add(5*time.Millisecond)), testKey(1), t0.Add(time.Minute)); f != sigReplay {
		t.Errorf("a taken signature with another key: %v, want a replay", f)
	}
	at := t0.Add(time.Minute + wait)
	if f, _ := h.signIn.fresh(late, testKey(0), at); f != sigFresh {
		t.Errorf("the refused signature after Retry-After: %v, want taken", f)
	}
	if f, _ := h.signIn.fresh(late, testKey(0), at); f != sigReplay {
		t.Errorf("the same again: %v, want a replay", f)
	}
	after := t0.Add(20 * time.Minute)
	if f, _ := h.signIn.fresh(testSig(1<<20, after), testKey(2), after); f != sigFresh {
		t.Fatalf("a call 20 min on: %v", f)
	}
	r := &h.signIn.replays
	if n, ok := r.perKey[[16]byte{}]; ok || len(r.perKey) != 1 || len(r.ends) != 1 || len(r.until) != 1 {
		t.Errorf("after every window of key 0 passed: perKey %v (%d, %v), heap %d, map %d; want only the new call's", r.perKey, n, ok, len(r.ends), len(r.until))
	}
	for i := range replayPerKey {
		if f, _ := h.signIn.fresh(testSig(2<<20+i, after), testKey(0), after); f != sigFresh {
			t.Fatalf("key 0 again, signature %d: %v (share never freed)", i, f)
		}
	}
}
