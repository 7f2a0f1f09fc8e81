package throttle

import (
	"testing"
	"time"
)

// FuzzTimeline checks the two rules' invariants on arbitrary request times.
func FuzzTimeline(f *testing.F) {
	f.Add([]byte{0, 1, 2, 200, 0, 0, 3}, uint8(2), uint8(3))
	f.Fuzz(func(t *testing.T, gaps []byte, burst, sustain uint8) {
		if len(gaps) > 4096 {
			gaps = gaps[:4096] // the span check below is quadratic
		}
		l := Limit{Burst: int(burst % 20), Sustain: int(sustain%40) + 1}
		var w fixedWindows
		var s slidingLog
		now := t0
		var admitted []time.Time
		for _, g := range gaps {
			now = now.Add(time.Duration(g) * 100 * time.Millisecond)
			d := w.Take(now, l, FirstRequest)
			if !d.Allowed && (d.RetryAfter <= 0 || d.RetryAfter > SustainPeriod) {
				t.Fatalf("refused with RetryAfter %v", d.RetryAfter)
			}
			if a := s.Admit(now, l, 0); a.Allowed {
				admitted = append(admitted, now)
				if (l.Burst > 0 && inSpan(admitted, now, BurstPeriod) > l.Burst) || inSpan(admitted, now, SustainPeriod) > l.Sustain {
					t.Fatalf("budget exceeded %+v at %v", l, now.Sub(t0))
				}
			}
		}
	})
}
