package analyze

import (
	"testing"
	"time"
)

// countedRec is a call at at whose time() counts the reads, so a test can
// tell how many steps windows takes.
type countedRec struct {
	at    int64
	reads *int
}

func (r countedRec) time() int64 { *r.reads++; return r.at }

// TestWindowsLinear: windows reads each call's time a bounded number of
// times, whatever the threshold: n calls within one 300 s span under a
// threshold no span reaches (limits at throttle.MaxLimit) take O(n) steps,
// not n²/2. Before, 15,000 calls took 1.5 s (TestAttack3SpansUnderHighLimits'
// attack); the step count is what can fail here, not a clock.
func TestWindowsLinear(t *testing.T) {
	for _, threshold := range []int{10, 100_000} {
		reads := 0
		const n = 15_000
		recs := make([]countedRec, n)
		for i := range recs {
			recs[i] = countedRec{at: int64(i) * int64(5*time.Millisecond), reads: &reads}
		}
		windows(recs, 300*time.Second, threshold, false)
		if reads > 8*n {
			t.Errorf("threshold %d: %d reads of the calls' times for %d calls, want at most %d", threshold, reads, n, 8*n)
		}
	}
}

// TestWindowsFindTheDensestSpan: of overlapping spans over the threshold
// the one holding the most calls is kept, wherever it starts: 28 calls,
// then 300 within 20 s starting 290 s in, give a span of 300 under the
// threshold of 27 (90 % of the profile rule's sustain of 30).
func TestWindowsFindTheDensestSpan(t *testing.T) {
	var recs []rec
	for i := range 28 {
		recs = append(recs, rec{at: int64(i) * int64(100*time.Millisecond)})
	}
	for i := range 300 {
		recs = append(recs, rec{at: int64(290*time.Second) + int64(i)*int64(20*time.Second)/300})
	}
	most := 0
	for _, w := range windows(recs, 300*time.Second, 27, false) {
		most = max(most, len(w))
	}
	if most < 300 {
		t.Errorf("the densest 300 s span holds %d calls, want 300 or more", most)
	}
}
