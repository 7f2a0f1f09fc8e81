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

// FuzzSlidingLogOps runs arbitrary admissions, releases, server syncs,
// blocks and limit changes on one key's log and checks after each that its
// ring stays in time order: recent(k) reads the k-th newest admission by
// position, so a ring out of order would let the budget count fewer calls
// in a window than it holds.
func FuzzSlidingLogOps(f *testing.F) {
	f.Add([]byte{0, 10, 0, 10, 1, 0, 2, 50, 0, 3, 3, 0, 4, 7, 0, 0})
	f.Add([]byte{2, 200, 9, 0, 0, 0, 1, 1, 0, 5, 4, 1, 2, 3})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*1024 {
			ops = ops[:3*1024]
		}
		var s slidingLog
		l := Limit{Burst: 3, Sustain: 8}
		now := t0
		var slots []int64
		for i := 0; i+2 < len(ops); i += 3 {
			op, a, b := ops[i]%6, int(ops[i+1]), int(ops[i+2])
			now = now.Add(time.Duration(a) * 50 * time.Millisecond)
			switch op {
			case 0, 1: // an admission, waiting up to b seconds for its slot
				if adm := s.Reserve(now, l, time.Duration(a%3)*time.Second, time.Duration(b)*time.Second); adm.Allowed {
					slots = append(slots, adm.Slot)
				}
			case 2: // a booked call not sent
				if len(slots) > 0 {
					k := b % len(slots)
					s.Release(slots[k])
					slots = append(slots[:k], slots[k+1:]...)
				}
			case 3: // the server reports a window's count
				p := Burst
				if b%2 == 1 {
					p = Sustain
				}
				s.Sync(now, l, p, a%12, time.Duration(b%300+1)*time.Second)
			case 4: // a Retry-After
				s.Block(now.Add(time.Duration(b) * 100 * time.Millisecond))
			case 5: // the limits change (a learned limit, a share)
				l = Limit{Burst: a % 6, Sustain: b%12 + 1}
			}
			for k := int(s.n); k > 1; k-- {
				if s.recent(k) > s.recent(k-1) {
					t.Fatalf("op %d: the ring is out of order at %d: %d after %d", i/3, k, s.recent(k-1), s.recent(k))
				}
			}
		}
	})
}
