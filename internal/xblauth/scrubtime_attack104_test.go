package xblauth

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// held: Scrub's time against secrets x text: every secret present (each
// replacement lowers the text again) in an upper-case text: doubling the
// secrets (500 -> 1000) over the same 256 KiB text, and doubling the text
// (256 -> 512 KiB) with the same 1000 secrets, each about doubles the time
// (under 4x: linear in secrets x text, not worse), and every secret is
// gone.
func TestAttack104ScrubTimeLinearInSecretsTimesText(t *testing.T) {
	mk := func(nSecrets, textBytes int) (Secrets, string) {
		var ss Secrets
		var b strings.Builder
		for i := range nSecrets {
			x := fmt.Sprintf("SECRET%08dQQ", i)
			ss = append(ss, x)
			b.WriteString(x)
			b.WriteString(" ")
		}
		for b.Len() < textBytes {
			b.WriteString("ABCDEFGHIJ ")
		}
		return ss.Lowered(), b.String()
	}
	timeIt := func(ss Secrets, s string) time.Duration {
		best := time.Duration(1 << 62)
		for range 2 {
			start := time.Now()
			out := ss.Scrub(s)
			if d := time.Since(start); d < best {
				best = d
			}
			if strings.Contains(out, "SECRET0") {
				t.Fatalf("a secret left in the scrubbed text")
			}
		}
		return best
	}
	base := timeIt(mk(500, 256<<10))
	moreSecrets := timeIt(mk(1000, 256<<10))
	moreText := timeIt(mk(1000, 512<<10))
	t.Logf("500x256K %v, 1000x256K %v, 1000x512K %v", base, moreSecrets, moreText)
	if moreSecrets > 4*base+20*time.Millisecond || moreText > 4*moreSecrets+20*time.Millisecond {
		t.Errorf("Scrub superlinear: 500 secrets x 256 KiB %v, 1000 x 256 KiB %v, 1000 x 512 KiB %v (sent.go: \"each scrub linear in it\")", base, moreSecrets, moreText)
	}
}
