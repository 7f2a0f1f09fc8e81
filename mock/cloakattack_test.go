package mock

import (
	"encoding/json"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/throttle"
)

const xuid2Title2URI = "https://userpresence.xboxlive.com/users/xuid(" + xuid2 + ")/titles/" + title2

// TestCloakUncloakInLapseWindowLeaksTitle: xuid2 cloaks, then plays title2
// behind the cloak (no event, as it should be), then uncloaks in the second
// between their record reading lapsed and its lapse timer firing. The
// uncloak tells nothing (Offline -> Offline), but the timer then tells
// xuid1 "Scarlett:false" and "Ended:title2": xuid1 learns that xuid2
// played title2 behind the cloak (and when: 601 s before the event), and
// hears a second "Scarlett:false" without a "Scarlett:true" between.
func TestCloakUncloakInLapseWindowLeaksTitle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		events := followTitle(t, h, title2)
		tok1, tok2 := Token(xuid2, title1), Token(xuid2, title2)
		state := "https://userpresence.xboxlive.com/users/xuid(" + xuid2 + ")/state"
		if r := do(t, h, "POST", lapseSet, tok1, `{"state":"active"}`); r.status != http.StatusOK {
			t.Fatalf("set: %d", r.status)
		}
		time.Sleep(15 * time.Second)
		if r := do(t, h, "PUT", state, tok1, `{"state":"Cloaked"}`); r.status != http.StatusOK {
			t.Fatalf("cloak: %d", r.status)
		}
		synctest.Wait()
		t.Logf("before the cloaked write: %q", lapseDrain(events))
		time.Sleep(15 * time.Second)
		if r := do(t, h, "POST", lapseSet, tok2, `{"state":"active"}`); r.status != http.StatusOK { // behind the cloak
			t.Fatalf("cloaked write: %d", r.status)
		}
		time.Sleep(heartbeatExpiry + 500*time.Millisecond) // reads lapsed; timer not yet fired
		if r := do(t, h, "PUT", state, tok1, `{"state":"Active"}`); r.status != http.StatusOK {
			t.Fatalf("uncloak: %d", r.status)
		}
		synctest.Wait()
		if got := lapseDrain(events); len(got) != 0 {
			t.Logf("events at the uncloak: %q", got)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := lapseDrain(events); len(got) != 0 {
			t.Errorf("after uncloaking Offline (no event), xuid1 later heard %q: the title played behind the cloak and its time", got)
		}
	})
}

// TestCloakEventsReorderedByExpiringRTALatency: an rta Latency fault
// delays events while it lasts; an event published after it ends is sent
// at once, ahead of the delayed one. xuid2 goes online while it lasts
// ("Scarlett:true" delayed 30 s), cloaks after it ends ("Scarlett:false"
// at once), and the subscriber hears false then true: it holds xuid2
// online for good while every read says Offline.
func TestCloakEventsReorderedByExpiringRTALatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		events := followDevices(t, h)
		if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService,
			Latency: throttle.Duration(30 * time.Second), For: throttle.Duration(10 * time.Second)}}}); err != nil {
			t.Fatal(err)
		}
		do(t, h, "POST", lapseSet, Token(xuid2, title1), `{"state":"active"}`)
		time.Sleep(15 * time.Second) // the fault has ended
		do(t, h, "PUT", "https://userpresence.xboxlive.com/users/xuid("+xuid2+")/state", Token(xuid2, title1), `{"state":"Cloaked"}`)
		time.Sleep(time.Minute)
		synctest.Wait()
		got := lapseDrain(events)
		if len(got) == 0 || got[len(got)-1] != `"Scarlett:false"` {
			t.Errorf("events: %q; the subscriber last heard xuid2 online, a get reads %s", got, h.world.presenceOf(xuid2).State)
		}
	})
}

// TestCloakSetBoundedInBytes: a mock whose state is capped at 256 KiB
// (presence: 64 KiB) and MaxKeys at 131,072 (16,384 records) takes cloaks
// only while their bytes fit in the presence budget, and refuses the rest
// (503), forgetting none: the cloaks hold no more than the budget. Before,
// 16,384 users (each a token XUID of 64 bytes, a substring keeping the
// token's payload) all cloaked and held 2 MB that MaxStateBytes did not
// count. The control is the same users each clearing their presence
// instead (a stored record, bounded).
func TestCloakSetBoundedInBytes(t *testing.T) {
	racebuild.Skip(t, "heap figures over 32,768 calls")
	const n = 16384
	grow := func(cloak bool) (held int64, budget int64, refused int) {
		h := Must(New(Config{MaxKeys: 8 * n, MaxStateBytes: 256 << 10}))
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		title := strings.Repeat("7", 64)
		for i := range n {
			x := strconv.Itoa(i) + strings.Repeat("x", 64-len(strconv.Itoa(i)))
			var r result
			if cloak {
				r = do(t, h, "PUT", "https://userpresence.xboxlive.com/users/me/state", Token(x, title), `{"state":"Cloaked"}`)
			} else {
				r = do(t, h, "DELETE", lapseSet, Token(x, title), "")
			}
			switch {
			case cloak && r.status == http.StatusServiceUnavailable:
				refused++
			case r.status != http.StatusOK:
				t.Fatalf("user %d: %d %s", i, r.status, r.body)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		budget = h.world.state.presence.maxBytes
		if cloak {
			h.world.state.mu.Lock()
			kept := len(h.world.state.cloaked)
			h.world.state.mu.Unlock()
			if kept != n-refused {
				t.Errorf("%d cloaks kept of %d made", kept, n-refused)
			}
		}
		runtime.KeepAlive(h)
		return int64(ms.HeapAlloc) - int64(before), budget, refused
	}
	// The heap figures are the live heap after a GC, of a process whose
	// other goroutines (earlier tests' servers and timers) may allocate
	// between the two readings: one pair was once 836 KB apart with the
	// cloaks bounded (CI, 2026-12-07). A cloak set that grew without a
	// bound holds its ~2 MB in every pair; so the least of up to three
	// pairs is judged.
	var held, budget int64
	var refused int
	for try := range 3 {
		control, b, _ := grow(false)
		grown, _, r := grow(true)
		if try == 0 || grown-control < held {
			held, budget, refused = grown-control, b, r
		}
		t.Logf("pair %d: heap grown %d with %d cloaks asked (%d refused), %d with as many clears: the cloaks hold %d (presence byte budget %d)", try, grown, n, r, control, grown-control, b)
		if held <= 4*budget {
			break
		}
	}
	if held > 4*budget {
		t.Errorf("%d cloaks hold %d bytes, over 4x the presence state's byte bound (%d); MaxStateBytes does not count them", n-refused, held, budget)
	}
	if refused == 0 || refused == n {
		t.Errorf("%d of %d cloaks refused, want those past the presence budget only", refused, n)
	}
}

// TestCloakEventsReorderedByConstantRTALatency: under a constant rta
// Latency fault, two events of one subscription published in the same
// instant (xuid2's write, then their cloak) each wait in their own timer,
// whose callbacks run in goroutines of their own: the subscriber may hear
// them in either order.
func TestCloakEventsReorderedByConstantRTALatency(t *testing.T) {
	for i := range 100 {
		synctest.Test(t, func(t *testing.T) {
			h := rtaHandler(t)
			events := followDevices(t, h)
			if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(time.Second)}}}); err != nil {
				t.Fatal(err)
			}
			do(t, h, "POST", lapseSet, Token(xuid2, title1), `{"state":"active"}`)
			do(t, h, "PUT", "https://userpresence.xboxlive.com/users/xuid("+xuid2+")/state", Token(xuid2, title1), `{"state":"Cloaked"}`)
			time.Sleep(time.Minute)
			synctest.Wait()
			got := lapseDrain(events)
			if len(got) == 0 || got[len(got)-1] != `"Scarlett:false"` {
				t.Errorf("run %d: events %q; the subscriber last heard xuid2 online, a get reads %s", i, got, h.world.presenceOf(xuid2).State)
			}
		})
	}
}

// TestCloakUncloakThenClearLeaksTitle: as TestCloakUncloakInLapseWindowLeaksTitle,
// with a clock that Config.Now moves by hand (the lapse timer never fires):
// the window is then unbounded. xuid2 plays title2 behind the cloak,
// uncloaks 11 minutes later (Offline: no event), and clears 15 s after
// that; before, the clear told xuid1 "Ended:title2".
func TestCloakUncloakThenClearLeaksTitle(t *testing.T) {
	var now atomic.Int64 // read by the mock's goroutines while the test moves it on
	now.Store(time.Now().UnixNano())
	h := Must(New(Config{World: rtaWorld(), Now: func() time.Time { return time.Unix(0, now.Load()) }}))
	ws := dialRTA(t, pipeServer(t, h), xuid1)
	subscribe(t, ws, 1, devicesURI(xuid2))
	subscribe(t, ws, 2, xuid2Title2URI)
	tok1, tok2 := Token(xuid2, title1), Token(xuid2, title2)
	state := "https://userpresence.xboxlive.com/users/xuid(" + xuid2 + ")/state"
	step := func(d time.Duration, method, url, tok, body string) {
		t.Helper()
		now.Add(int64(d))
		if r := do(t, h, method, url, tok, body); r.status != http.StatusOK {
			t.Fatalf("%s %s %s: %d %s", method, url, body, r.status, r.body)
		}
	}
	step(0, "PUT", state, tok1, `{"state":"Cloaked"}`)
	step(15*time.Second, "POST", lapseSet, tok2, `{"state":"active"}`) // behind the cloak
	step(11*time.Minute, "PUT", state, tok1, `{"state":"Active"}`)     // reads Offline, lapsed
	h.Resync()
	for a := read(t, ws); string(a[0]) != "4"; a = read(t, ws) {
		t.Errorf("event before the clear: %s", a[2])
	}
	step(15*time.Second, "DELETE", lapseSet, tok1, "")
	h.Resync()
	var got []string
	for a := read(t, ws); string(a[0]) != "4"; a = read(t, ws) {
		got = append(got, string(a[2]))
	}
	if len(got) != 0 {
		t.Errorf("an Offline user's clear told xuid1 %q: the title played behind the cloak", got)
	}
}

// TestCloakDuringSubscribeAnswer: a cloak made while a subscribe is
// between reading the presence that answers it and sending that answer
// waits for the answer, and its event follows it. Before, the event
// ("Scarlett:false") reached the connection ahead of the answer, whose
// subscription id the client had yet to learn, and the answer then said
// Online: the client held a cloaked user online. The Config.Now hook runs
// the cloak when the subscribe reads the clock (presenceOf, after it has
// read the record), in a goroutine of its own, and waits for it up to a
// second: with the subscribe holding the presence lock it cannot finish
// until the answer is sent.
func TestCloakDuringSubscribeAnswer(t *testing.T) {
	var h *Handler
	var armed atomic.Bool
	cloaked := make(chan struct{})
	h = Must(New(Config{World: rtaWorld(), Now: func() time.Time {
		if armed.Load() && strings.Contains(string(debug.Stack()), "rtaState") && armed.CompareAndSwap(true, false) {
			go func() {
				defer close(cloaked)
				req, _ := http.NewRequest("PUT", "https://userpresence.xboxlive.com/users/xuid("+xuid2+")/state", strings.NewReader(`{"state":"Cloaked"}`))
				req.Header.Set("Authorization", Token(xuid2, title1))
				if resp, err := h.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}()
			select {
			case <-cloaked:
			case <-time.After(time.Second):
			}
		}
		return time.Now()
	}}))
	ws := dialRTA(t, pipeServer(t, h), xuid1)
	do(t, h, "POST", lapseSet, Token(xuid2, title1), `{"state":"active"}`)
	armed.Store(true)
	write(t, ws, `[1,1,"`+devicesURI(xuid2)+`"]`)
	var msgs []string
	for len(msgs) < 2 {
		a := read(t, ws)
		b, _ := json.Marshal(a)
		msgs = append(msgs, string(b))
	}
	<-cloaked
	if !strings.HasPrefix(msgs[0], "[1,") || msgs[1] != `[3,1,"Scarlett:false"]` {
		t.Errorf("messages: %s; want the subscribe's answer, then the cloak's event", msgs)
	}
}
