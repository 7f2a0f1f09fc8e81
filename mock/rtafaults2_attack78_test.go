package mock

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/throttle"
)

// attack78Reader reads n messages from ws in the background, as a client does,
// and sends how long after since each was read (closed on an error).
func attack78Reader(ws *websocket.Conn, n int, since time.Time, d time.Duration) <-chan time.Duration {
	read := make(chan time.Duration, n)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	go func() {
		defer cancel()
		defer close(read)
		for range n {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
			read <- time.Since(since)
		}
	}()
	return read
}

// Helper 193's TestAtkRTALatencyChangedReleasesHeld is judged: an event is
// given its delay when published, and one held keeps it when the faults
// change (ServiceFault.Service's godoc says so).

// BREAK: two rta latency faults in force, A (5 min, For 10 s) and B (1
// min, until changed): an event published while both are in force is
// held only 10 s, A's end, though B, in force all along, delays its
// events 1 min. The mock keeps the longest latency's end (A's) alone and
// cuts the event short of B's latency.
//
// Promised (ServiceFault.Service): "Latency delays its events, none past
// the fault's end. rta faults of each kind apply together."
func TestAttack78RTATwoLatenciesDifferentEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid1)); code != 0 {
			t.Fatalf("subscribe: %d", code)
		}
		if err := h.SetFaults(Faults{Services: []ServiceFault{
			{Service: RTAService, Latency: throttle.Duration(5 * time.Minute), For: throttle.Duration(10 * time.Second)},
			{Service: RTAService, Latency: throttle.Duration(time.Minute)},
		}}); err != nil {
			t.Fatal(err)
		}
		set := time.Now()
		read := attack78Reader(ws, 1, set, 10*time.Minute)
		h.world.storePresence(presenceRecord{XUID: xuid1, State: "Online"})
		at, ok := <-read
		if !ok {
			t.Fatal("no event")
		}
		if at < time.Minute || at > time.Minute+time.Second {
			t.Errorf("event read %v after it was published under a 1 min latency fault in force throughout (and a 5 min one ending at 10 s); want 1 min", at)
		}
	})
}

// BREAK: with the handler's clock (Config.Now) an hour behind the wall
// clock, an rta latency fault of 1 min for 10 min, in force (Faults lists
// it), delays no event: its end, on the handler's clock, is compared with
// a due time on the wall clock, and the event goes at once.
//
// Promised (ServiceFault.For): "Times are the handler's clock's
// (Config.Now)"; (ServiceFault.Service) "Latency delays its events".
func TestAttack78RTALatencyHandlerClockBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{World: rtaWorld(), Now: func() time.Time { return time.Now().Add(-time.Hour) }}))
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid1)); code != 0 {
			t.Fatalf("subscribe: %d", code)
		}
		if err := h.SetFaults(Faults{Services: []ServiceFault{
			{Service: RTAService, Latency: throttle.Duration(time.Minute), For: throttle.Duration(10 * time.Minute)}}}); err != nil {
			t.Fatal(err)
		}
		if n := len(h.Faults().Services); n != 1 {
			t.Fatalf("Faults lists %d", n)
		}
		set := time.Now()
		read := attack78Reader(ws, 1, set, 10*time.Minute)
		h.world.storePresence(presenceRecord{XUID: xuid1, State: "Online"})
		at, ok := <-read
		if !ok {
			t.Fatal("no event")
		}
		if at < time.Minute {
			t.Errorf("event read %v after it was published under a 1 min latency fault in force (handler clock an hour behind): not delayed", at)
		}
	})
}

// held: events held by a latency fault that shortens mid-stream (5 min,
// then 1 s, then none) keep their order, none lost or duplicated.
// Promised (docs/MOCK.md): "a connection's events keep the order they
// were published in, whatever delay each got".
func TestAttack78RTALatencyShortensKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid1)); code != 0 {
			t.Fatalf("subscribe: %d", code)
		}
		states := []string{"Online", "Offline", "Online", "Offline", "Online", "Offline"}
		lat := []time.Duration{5 * time.Minute, 5 * time.Minute, time.Second, time.Second, 0, 0}
		var got []string
		var mu sync.Mutex
		done := make(chan struct{})
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			for range len(states) {
				_, b, err := ws.Read(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				got = append(got, string(b))
				mu.Unlock()
			}
		}()
		for i, s := range states {
			f := Faults{}
			if lat[i] > 0 {
				f.Services = []ServiceFault{{Service: RTAService, Latency: throttle.Duration(lat[i])}}
			}
			if err := h.SetFaults(f); err != nil {
				t.Fatal(err)
			}
			h.world.storePresence(presenceRecord{XUID: xuid1, State: s})
			time.Sleep(time.Second)
		}
		<-done
		mu.Lock()
		defer mu.Unlock()
		if len(got) != len(states) {
			t.Fatalf("read %d events, want %d: %q", len(got), len(states), got)
		}
		for i, b := range got {
			on := slices.Contains([]string{"Online"}, states[i])
			if on != strings.Contains(b, "true") {
				t.Errorf("event %d is %s, want the %s one (order kept)", i+1, b, states[i])
			}
		}
	})
}

// held: a connection's held events are bounded: under a 10 min latency,
// 3 × rtaOutbox events published hold at most rtaOutbox, and the reader
// is dropped as slow. Promised (rtaConn.event): "At most rtaOutbox ...
// wait, past which the reader is dropped as slow".
func TestAttack78RTAHeldEventsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid1)); code != 0 {
			t.Fatalf("subscribe: %d", code)
		}
		if err := h.SetFaults(Faults{Services: []ServiceFault{
			{Service: RTAService, Latency: throttle.Duration(10 * time.Minute)}}}); err != nil {
			t.Fatal(err)
		}
		maxHeld := 0
		for i := range 3 * rtaOutbox {
			st := "Online"
			if i%2 == 1 {
				st = "Offline"
			}
			h.world.storePresence(presenceRecord{XUID: xuid1, State: st})
			h.rta.each(func(c *rtaConn) {
				c.mu.Lock()
				maxHeld = max(maxHeld, len(c.delayed))
				c.mu.Unlock()
			})
		}
		synctest.Wait()
		if maxHeld > rtaOutbox {
			t.Errorf("a connection held %d events, more than rtaOutbox %d", maxHeld, rtaOutbox)
		}
		if n := h.RTAConns(); n != 0 {
			t.Errorf("the slow reader was not dropped: %d open", n)
		}
	})
}

// attack78DiceRun interleaves presence reads (ErrorRate faults) and RTA
// subscriptions (1001 at Rate 0.5) on h and returns what each got.
func attack78DiceRun(t *testing.T, h *Handler, ws *websocket.Conn, first int) []int {
	var out []int
	for i := range 16 {
		req, _ := http.NewRequest("GET", "https://userpresence.xboxlive.com/users/me", nil)
		req.Header.Set("Authorization", Token(fmt.Sprintf("25332747%08d", first+i), "1234567890"))
		resp, err := h.RoundTrip(req)
		if err != nil {
			out = append(out, -1)
		} else {
			resp.Body.Close()
			out = append(out, resp.StatusCode)
		}
		code, sub, _ := subscribe(t, ws, first+i+1, devicesURI(xuid1))
		out = append(out, code)
		if code == 0 {
			write(t, ws, fmt.Sprintf("[2,%d,%d]", 10000+first+i, sub))
			read(t, ws)
		}
	}
	return out
}

// held: two mocks with the same seed and the same requests (presence
// reads under ErrorRate, RTA subscriptions under a 1001 at Rate 0.5,
// both drawing from the dice) get the same answers; a new Seed set again
// on a used mock, and Reset, restart the dice so the run repeats.
// Promised (Faults.Seed): "Seed seeds the fault dice, so a run can be
// repeated."; (Handler.SetFaults) "A new Seed restarts the fault dice.";
// (Handler.Reset) the dice restart.
func TestAttack78DiceSameSeedSameRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := Faults{ErrorRate: 0.4, Seed: 99, Services: []ServiceFault{{Service: RTAService, Status: rtaThrottled, Rate: 0.5}}}
		run := func(h *Handler, ws *websocket.Conn, first int) []int {
			if err := h.SetFaults(f); err != nil {
				t.Fatal(err)
			}
			return attack78DiceRun(t, h, ws, first)
		}
		a := rtaHandler(t)
		wa := dialRTA(t, pipeServer(t, a), xuid1)
		b := rtaHandler(t)
		wb := dialRTA(t, pipeServer(t, b), xuid1)
		ra := run(a, wa, 0)
		rb := run(b, wb, 100)
		if !slices.Equal(ra, rb) {
			t.Errorf("same seed, same requests: %v and %v", ra, rb)
		}
		if err := a.SetFaults(Faults{Seed: 5}); err != nil {
			t.Fatal(err)
		}
		if again := run(a, wa, 200); !slices.Equal(again, ra) {
			t.Errorf("seed 99 set again: %v, first %v", again, ra)
		}
		f.Seed = 0
		if err := b.Reset(t.Context()); err != nil {
			t.Fatal(err)
		}
		r0 := run(b, wb, 300)
		if err := b.Reset(t.Context()); err != nil {
			t.Fatal(err)
		}
		if again := run(b, wb, 400); !slices.Equal(again, r0) {
			t.Errorf("after Reset: %v, before %v", again, r0)
		}
	})
}

// BREAK: the injected errors of ErrorRate do not alternate between 500
// and 503: the flip turns on every admitted request the dice roll for,
// errors or not, so two injected errors in a row (with a request served
// between them) can both be 500 (or both 503).
//
// Promised (Faults.ErrorRate): "ErrorRate is the fraction of admitted
// requests answered 500 or 503 (alternately) instead of being served."
func TestAttack78ErrorRateAlternates(t *testing.T) {
	h := Must(New(Config{}))
	if err := h.SetFaults(Faults{ErrorRate: 0.5, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	var errs, all []int
	for i := range 40 {
		req, _ := http.NewRequest("GET", "https://userpresence.xboxlive.com/users/me", nil)
		req.Header.Set("Authorization", Token(fmt.Sprintf("25332747%08d", i), "1234567890"))
		resp, err := h.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		all = append(all, resp.StatusCode)
		if resp.StatusCode == 500 || resp.StatusCode == 503 {
			errs = append(errs, resp.StatusCode)
		}
	}
	for i := 1; i < len(errs); i++ {
		if errs[i] == errs[i-1] {
			t.Fatalf("injected errors %v (all answers %v): two %d in a row, not alternating", errs, all, errs[i])
		}
	}
}

// held (under -race): SetFaults flipping rta faults of every kind while
// events are published, held and flushed, and subscriptions are
// refused, races nothing.
func TestAttack78RTAFaultsFlipRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		ws := dialRTA(t, hc, xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid1)); code != 0 {
			t.Fatalf("subscribe: %d", code)
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			for {
				if _, _, err := ws.Read(ctx); err != nil {
					return
				}
			}
		}()
		fs := []Faults{
			{Seed: 1, Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(time.Second)}, {Service: RTAService, Status: rtaThrottled, Rate: 0.5}}},
			{Seed: 2, Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(3 * time.Second), For: throttle.Duration(time.Second)}, {Service: RTAService, Status: 503}}},
			{},
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range 60 {
				h.SetFaults(fs[i%len(fs)])
				time.Sleep(100 * time.Millisecond)
			}
		})
		wg.Go(func() {
			for i := range 120 {
				st := "Online"
				if i%2 == 1 {
					st = "Offline"
				}
				h.world.storePresence(presenceRecord{XUID: xuid1, State: st})
				time.Sleep(50 * time.Millisecond)
			}
		})
		wg.Wait()
		time.Sleep(10 * time.Second)
		h.SetFaults(Faults{})
	})
}
