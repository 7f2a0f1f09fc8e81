package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// TestLoadSaysWhatItWaits: a load run standing still for the budget says
// so off a terminal: 40 presence reads, 30 a burst window, and the progress
// lines name the wait and the window while the last 10 wait (before, they
// counted "30/40" for 15 s and said nothing of why).
func TestLoadSaysWhatItWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		code, _, errs := xblcall(t, "call", "--mock", "-n", "40", "-c", "4", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !regexp.MustCompile(`calls 30/40: 30 served, 0 refused locally, 0 throttled, 0 failed; waiting 1[0-5] s for presence/read's burst window\n`).MatchString(errs) {
			t.Errorf("no progress line names the wait:\n%s", errs)
		}
	})
}

// TestProgressOnTerminal: on a terminal the bar's description says what
// the run waits for, and goes back to its name once the wait ends.
func TestProgressOnTerminal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		b := newBar(&out, true, 10, "calls", "calls")
		says := "waiting 12 s for presence/read's burst window"
		stop := new(tally).progress(&out, b, time.Second, func(time.Time) string { return says })
		time.Sleep(1500 * time.Millisecond)
		stop()
		b.finish()
		if got := out.String(); !strings.Contains(got, "calls (waiting 12 s for presence/read's burst window)") {
			t.Errorf("the bar never said the wait: %q", got)
		}
	})
}

// lockedBuffer is a bytes.Buffer safe for the bar's writes beside the test's read.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWaitingSays: the wait in words, for each reason, and nothing once it
// ended.
func TestWaitingSays(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	full := func() (throttle.Snapshot, error) {
		return throttle.Snapshot{Counts: throttle.Counts{Sustain: throttle.WindowState{Count: 30, Limit: 30}}}, nil
	}
	none := func() (throttle.Snapshot, error) { return throttle.Snapshot{}, errors.New("no key") }
	for _, tc := range []struct {
		name string
		w    *waiting
		snap func() (throttle.Snapshot, error)
		at   time.Time
		want string
	}{
		{"a burst wait", &waiting{until: t0.Add(11500 * time.Millisecond), scope: "presence/read", reason: "budget"}, none, t0,
			"waiting 12 s for presence/read's burst window"},
		{"a full sustain window", &waiting{until: t0.Add(3 * time.Second), scope: "social", reason: "budget"}, full, t0,
			"waiting 3 s for social's sustain window"},
		{"a wait past a burst window", &waiting{until: t0.Add(200 * time.Second), scope: "social", reason: "budget"}, none, t0,
			"waiting 200 s for social's sustain window"},
		{"a background call", &waiting{until: t0.Add(5 * time.Second), scope: "profile", reason: "background"}, none, t0,
			"waiting 5 s for profile's burst window (the background share)"},
		{"a Retry-After", &waiting{until: t0.Add(20 * time.Second), scope: "profile", reason: "retry-after"}, none, t0,
			"waiting 20 s for profile's Retry-After"},
		{"a host without a rule", &waiting{until: t0.Add(time.Second), reason: "retry-after"}, none, t0,
			"waiting 1 s for the service's Retry-After"},
		{"ended", &waiting{until: t0, scope: "profile", reason: "budget"}, full, t0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.w.say(tc.at, tc.snap); got != tc.want {
				t.Errorf("say() = %q, want %q", got, tc.want)
			}
		})
	}
	var w waiting // the wait that ends last is the one said
	w.observe(t.Context(), transport.Event{Kind: transport.EventWait, Scope: "a", Reason: "budget", Wait: time.Hour})
	w.observe(t.Context(), transport.Event{Kind: transport.EventWait, Scope: "b", Reason: "budget", Wait: time.Second})
	w.observe(t.Context(), transport.Event{Kind: transport.EventRetry, Scope: "c", Wait: 2 * time.Hour})
	if w.scope != "a" {
		t.Errorf("kept the wait of %q, want a's (the longest wait event)", w.scope)
	}
}
