package mock

import (
	"testing"
	"time"
)

// TestAttack3KeyFullRefusal: a key whose share is full is refused, with
// the record near full, by its own earliest end (the wait until its first
// place frees), and the refusal leaves the record as it was. A third attack
// found each such refusal reading the whole record under signIn.mu (47 µs
// against 1 µs for a call taken); what a refusal costs is now
// BenchmarkReplayNote's refused-key-full, beside a call taken.
func TestAttack3KeyFullRefusal(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	fillKeyShares(t, h, now)
	held := len(h.signIn.replays.ends)
	for i := range 3 {
		at := now.Add(time.Duration(i) * time.Second)
		f, wait := h.signIn.fresh(testSig(1<<31+i, at), testKey(0), at)
		if want := signatureSkew + replayGrace - time.Duration(i)*time.Second + time.Nanosecond; f != sigFull || wait != want {
			t.Errorf("key 0 full, %d s on: %v, wait %v; want sigFull (%v), wait %v (its first signature's window and replayGrace, counted up)", i, f, wait, sigFull, want)
		}
	}
	if got := len(h.signIn.replays.ends); got != held {
		t.Errorf("the record holds %d after the refusals, %d before", got, held)
	}
}

// fillKeyShares fills h's sign-in record at now to one place short of
// full: key 0's share full (replayPerKey), each other key's one short.
func fillKeyShares(tb testing.TB, h *Handler, now time.Time) {
	const keys = replayCapacity / replayPerKey
	for i := 0; i <= replayCapacity-keys; i++ {
		if f, _ := h.signIn.fresh(testSig(i, now), testKey(i%keys), now); f != sigFresh {
			tb.Fatalf("signature %d: %v", i, f)
		}
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
