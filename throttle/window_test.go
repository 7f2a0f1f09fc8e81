package throttle

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var (
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 = t0.Add(1 * time.Second)
	t2 = t0.Add(2 * time.Second)
	t3 = t0.Add(14 * time.Second)
	t4 = t0.Add(15 * time.Second)
	t5 = t0.Add(29 * time.Second)
	t7 = t0.Add(299 * time.Second)
	t8 = t0.Add(300 * time.Second)
)

type take struct {
	t       time.Time
	allowed bool
	burst   int // burst count after the request
	sustain int
	limiter Period
	retry   time.Duration
}

func runWindows(t *testing.T, l Limit, a Align, takes []take) {
	t.Helper()
	var w fixedWindows
	for i, tk := range takes {
		d := w.Take(tk.t, l, a)
		got := take{tk.t, d.Allowed, d.Burst.Count, d.Sustain.Count, d.Limiter, d.RetryAfter}
		if diff := cmp.Diff(tk, got, cmp.AllowUnexported(take{})); diff != "" {
			t.Errorf("step %d: Take(%v) mismatch (-want +got):\n%s", i, tk.t.Sub(t0), diff)
		}
	}
}

func TestWindowsTimeline(t *testing.T) {
	l := Limit{Burst: 2, Sustain: 3}
	runWindows(t, l, FirstRequest, []take{
		{t0, true, 1, 1, None, 0},
		{t1, true, 2, 2, None, 0},
		{t2, false, 3, 3, Burst, 13 * time.Second}, // burst at 2: refused, still counted
		{t3, false, 4, 4, Both(), 286 * time.Second},
		{t4, false, 1, 5, Sustain, 285 * time.Second}, // new burst window at 15 s
		{t7, false, 1, 6, Sustain, time.Second},       // burst window starts at 299
		{t8, true, 2, 1, None, 0},                     // sustain window restarts at 300
	})
}

// Both is the limiter when both are over: the one ending last, here sustain.
func Both() Period { return Sustain }

func TestWindowsFirstRequestStart(t *testing.T) {
	// The burst window opens at the first request (t1), not at t0.
	l := Limit{Burst: 1, Sustain: 100}
	runWindows(t, l, FirstRequest, []take{
		{t1, true, 1, 1, None, 0},
		{t4, false, 2, 2, Burst, time.Second}, // window [1, 16)
		{t0.Add(16 * time.Second), true, 1, 3, None, 0},
	})
}

func TestWindowsClockAligned(t *testing.T) {
	l := Limit{Burst: 1, Sustain: 100}
	runWindows(t, l, ClockAligned, []take{
		{t1, true, 1, 1, None, 0},
		{t3, false, 2, 2, Burst, time.Second}, // window [0, 15)
		{t4, true, 1, 3, None, 0},             // [15, 30)
	})
}

// TestWindowsAtTheEpoch: a key's first window opens at its first request
// even within a period of the Unix epoch, where a simulation's virtual
// clock may start.
func TestWindowsAtTheEpoch(t *testing.T) {
	l := Limit{Burst: 1, Sustain: 2}
	var w fixedWindows
	for i, tk := range []take{
		{time.Unix(5, 0), true, 1, 1, None, 0},
		{time.Unix(19, 0), false, 2, 2, Burst, time.Second}, // window [5 s, 20 s)
		{time.Unix(20, 0), false, 1, 3, Sustain, 285 * time.Second},
	} {
		d := w.Take(tk.t, l, FirstRequest)
		got := take{tk.t, d.Allowed, d.Burst.Count, d.Sustain.Count, d.Limiter, d.RetryAfter}
		if diff := cmp.Diff(tk, got, cmp.AllowUnexported(take{})); diff != "" {
			t.Errorf("step %d mismatch (-want +got):\n%s", i, diff)
		}
	}
}

func TestWindowsBurstEndsLast(t *testing.T) {
	// Sustain window opened long before the burst window: when both are over
	// and the burst window ends last, it is the limiter.
	l := Limit{Burst: 2, Sustain: 2}
	var w fixedWindows
	w.Take(t0, Limit{}, FirstRequest)                // sustain opens at 0
	w.Take(t0.Add(290*time.Second), l, FirstRequest) // burst reopens at 290
	w.Take(t0.Add(290*time.Second), l, FirstRequest)
	d := w.Take(t0.Add(291*time.Second), l, FirstRequest)
	if d.Allowed || d.Limiter != Burst || d.RetryAfter != 14*time.Second {
		t.Errorf("Take = %+v, want refused by burst (ends at 305, after sustain's 300), retry 14s", d)
	}
}

func TestWindowsPeek(t *testing.T) {
	var w fixedWindows
	l := Limit{Burst: 1, Sustain: 5}
	w.Take(t0, l, FirstRequest)
	d := w.Peek(t1, l, FirstRequest)
	if d.Allowed || d.Burst.Count != 1 || d.Sustain.Count != 1 {
		t.Errorf("Peek = %+v, want refused with counts 1, 1", d)
	}
	if d2 := w.Peek(t1, l, FirstRequest); d2.Burst.Count != 1 {
		t.Errorf("Peek counted a request: %+v", d2)
	}
	if !w.Idle(t8) || w.Idle(t7) {
		t.Errorf("Idle(300s), Idle(299s) = %v, %v; want true, false", w.Idle(t8), w.Idle(t7))
	}
}

// workedExample is the worked example of the Xbox services "Fine-Grained Rate Limiting" page: requests per 15 s interval.
var workedExample = []struct {
	start, requests, throttled int
}{
	{0, 35, 5}, {15, 28, 0}, {30, 21, 0}, {45, 36, 20}, {60, 24, 24}, {285, 4, 4},
}

func TestWindowsWorkedExample(t *testing.T) {
	l := Limit{Burst: 30, Sustain: 100}
	var w fixedWindows
	var sustain int
	for _, iv := range workedExample {
		throttled := 0
		for i := 0; i < iv.requests; i++ {
			// Spread the interval's requests over its first 10 s.
			at := t0.Add(time.Duration(iv.start)*time.Second + time.Duration(i)*10*time.Second/time.Duration(iv.requests))
			d := w.Take(at, l, FirstRequest)
			sustain = d.Sustain.Count
			if !d.Allowed {
				throttled++
			}
		}
		if throttled != iv.throttled {
			t.Errorf("interval %d s: throttled %d, want %d (sustain count %d)", iv.start, throttled, iv.throttled, sustain)
		}
	}
	if sustain != 148 {
		t.Errorf("final sustain count %d, want 148", sustain)
	}
}

// refModel is a deliberately naive model of the server rule: it keeps every
// request time and recounts.
type refModel struct {
	burstStart, sustainStart time.Time
	burst, sustain           int
}

func (m *refModel) take(now time.Time, l Limit) bool {
	if m.burst == 0 || !now.Before(m.burstStart.Add(BurstPeriod)) {
		m.burstStart, m.burst = now, 0
	}
	if m.sustain == 0 || !now.Before(m.sustainStart.Add(SustainPeriod)) {
		m.sustainStart, m.sustain = now, 0
	}
	ok := m.burst < l.Burst && m.sustain < l.Sustain
	m.burst++
	m.sustain++
	return ok
}

func TestWindowsAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		l := Limit{Burst: 1 + r.IntN(20), Sustain: 1 + r.IntN(60)}
		var w fixedWindows
		var m refModel
		now := t0
		for i := 0; i < 500; i++ {
			now = now.Add(time.Duration(r.Int64N(int64(4 * time.Second))))
			d := w.Take(now, l, FirstRequest)
			if want := m.take(now, l); d.Allowed != want {
				t.Fatalf("trial %d step %d at %v, %+v: Allowed %v, model %v", trial, i, now.Sub(t0), l, d.Allowed, want)
			}
			if d.Burst.Count != m.burst || d.Sustain.Count != m.sustain {
				t.Fatalf("trial %d step %d: counts %d/%d, model %d/%d", trial, i, d.Burst.Count, d.Sustain.Count, m.burst, m.sustain)
			}
		}
	}
}

func TestMod(t *testing.T) {
	if got := mod(-1, 15); got != 14 {
		t.Errorf("mod(-1, 15) = %d, want 14", got)
	}
}
