package mock

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/throttle"
)

// BREAK: two rta faults in force, one refusing subscriptions (1001), one
// refusing upgrades (503): only the one listed last applies. With the 503
// last, an open connection's subscription is answered success though the
// 1001 fault is in force (Faults lists it); with the 1001 last, an
// upgrade is accepted though the 503 fault is in force.
//
// Promised (ServiceFault.Service): "RTAService ("rta") ...: its Status
// 1001 (Throttled) or 1002 (ServiceUnavailable) answers subscriptions
// (a share Rate of them) with that code, 503 refuses its websocket's
// upgrade"; (Handler.Faults) "the faults in force".
func TestAttack73RTATwoFaultsBothApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		ws := dialRTA(t, hc, xuid1)
		if err := h.SetFaults(Faults{Services: []ServiceFault{
			{Service: RTAService, Status: rtaThrottled},
			{Service: RTAService, Status: 503, For: throttle.Duration(time.Minute)},
		}}); err != nil {
			t.Fatal(err)
		}
		if n := len(h.Faults().Services); n != 2 {
			t.Fatalf("Faults lists %d", n)
		}
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid1)); code != rtaThrottled {
			t.Errorf("subscribe under a 1001 fault in force (a 503 fault listed after it): code %d, want 1001", code)
		}
		if err := h.SetFaults(Faults{Services: []ServiceFault{
			{Service: RTAService, Status: 503, For: throttle.Duration(time.Minute)},
			{Service: RTAService, Status: rtaThrottled},
		}}); err != nil {
			t.Fatal(err)
		}
		ws2, resp, err := websocket.Dial(t.Context(), "ws://"+RTAHost+RTAPath, &websocket.DialOptions{HTTPClient: hc,
			Subprotocols: []string{RTASubprotocol}, HTTPHeader: http.Header{"Authorization": {Token(xuid2, title1)}}})
		if err == nil {
			ws2.CloseNow()
			t.Errorf("upgrade under a 503 fault in force (a 1001 fault listed after it): accepted (%d)", resp.StatusCode)
		}
	})
}

// BREAK: an rta latency fault that has ended still delays the events of
// an open connection: one published during the fault holds back every
// event after it, so an event published after the fault ended (Faults
// lists none) still waits out the ended fault's latency, 5 minutes.
//
// Promised (Handler.Faults) "the faults in force: a service fault whose
// For has passed is not among them"; (ServiceFault.For) "For is how long
// the fault lasts from when it is set" — an ended fault applies nowhere,
// the open RTA connections included.
func TestAttack73RTAEndedLatencyStillDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid1)); code != 0 {
			t.Fatalf("subscribe: %d", code)
		}
		if err := h.SetFaults(Faults{Services: []ServiceFault{
			{Service: RTAService, Latency: throttle.Duration(5 * time.Minute), For: throttle.Duration(10 * time.Second)}}}); err != nil {
			t.Fatal(err)
		}
		// The test reads as a client does, all along (a connection whose
		// reader stalls is dropped).
		set := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		read := make(chan time.Duration, 2)
		go func() {
			for range 2 {
				if _, _, err := ws.Read(ctx); err != nil {
					close(read)
					return
				}
				read <- time.Since(set)
			}
		}()
		h.world.storePresence(presenceRecord{XUID: xuid1, State: "Online"}) // during the fault
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if f := h.Faults(); len(f.Services) != 0 {
			t.Fatalf("Faults 20s into a 10s fault: %+v", f.Services)
		}
		h.world.storePresence(presenceRecord{XUID: xuid1, State: "Offline"}) // after it ended
		for i := range 2 {
			at, ok := <-read
			if !ok || at > 21*time.Second {
				t.Fatalf("event %d read %v after a 10s latency fault was set (ok %v): held past the fault's end", i+1, at, ok)
			}
		}
	})
}

// held: an rta Reset whose Until has passed when it is set drops no
// connection; one in force does. Promised (ServiceFault.Service): "Reset
// drops every connection open when the faults are set"; an ended fault
// applies nowhere.
func TestAttack73RTAPastResetKeepsConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		dialRTA(t, pipeServer(t, h), xuid1)
		synctest.Wait()
		if err := h.SetFaults(Faults{Services: []ServiceFault{
			{Service: RTAService, Reset: true, Until: time.Now().Add(-time.Second)}}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := h.RTAConns(); n != 1 {
			t.Errorf("an ended rta Reset dropped the connection (%d open)", n)
		}
		if err := h.SetFaults(Faults{Services: []ServiceFault{
			{Service: RTAService, Reset: true, For: throttle.Duration(time.Second)}}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := h.RTAConns(); n != 0 {
			t.Errorf("an rta Reset in force left %d open", n)
		}
	})
}
