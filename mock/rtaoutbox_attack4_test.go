package mock

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/throttle"
)

// attack4Conn returns the one RTA connection h holds, or nil.
func attack4Conn(h *Handler) *rtaConn {
	h.rta.mu.Lock()
	defer h.rta.mu.Unlock()
	for c := range h.rta.conns {
		return c
	}
	return nil
}

// attack4Held is what c truly holds for its reader: the bytes of the
// messages in its outbox and of its delayed events. Only for a
// connection whose writer is not running (delayedConn) or that has
// nothing in its outbox.
func attack4Held(c *rtaConn) (delayed int64, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.delayed {
		delayed += int64(len(e.b))
	}
	return delayed, len(c.delayed)
}

// TestAttack4RTAUnsubscribeWithHeldEventsDropsHealthyReader: a reader that
// reads every message, under an rta latency fault, subscribing,
// letting events be held back for it and unsubscribing (which drops
// them: "A held-back event of a subscription unsubscribed meanwhile is
// dropped", rta.go), is dropped as slow though nothing waits for it.
//
// Promised (mock/rta.go): "waiting is the bytes of the messages in out
// and in delayed: at most rtaOutboxBytes", and the bound is
// "rtaOutbox messages or rtaOutboxBytes waiting for a reader, held back
// by a latency fault or not (a reader that falls further behind is
// dropped)". unfollowLocked removes the held events from c.delayed but
// not their bytes from c.waiting, so the counter drifts up by every
// event an unsubscribe drops, and past 256 KiB of them the connection of
// a reader that is not behind at all is closed.
func TestAttack4RTAUnsubscribeWithHeldEventsDropsHealthyReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(time.Minute)}}}); err != nil {
			t.Fatal(err)
		}
		const perCycle = 200 // held at once: under rtaOutbox
		seq, state := 0, 0
		drifted := false
		for cycle := range 100 {
			seq++
			b, _ := json.Marshal([]any{1, seq, devicesURI(xuid1)})
			if ws.Write(t.Context(), websocket.MessageText, b) != nil {
				t.Fatalf("cycle %d: the connection is gone", cycle)
			}
			_, ans, err := ws.Read(t.Context())
			if err != nil {
				synctest.Wait()
				t.Fatalf("cycle %d: a reader that read every message was dropped (%v), %d RTA connections left; held for it then: nothing but its subscribe's answer", cycle, err, h.RTAConns())
			}
			var a []json.RawMessage
			json.Unmarshal(ans, &a)
			var sub int
			if len(a) == 5 {
				json.Unmarshal(a[3], &sub)
			}
			if sub == 0 {
				t.Fatalf("cycle %d: subscribe answered %s", cycle, ans)
			}
			for range perCycle {
				state++
				h.world.storePresence(presenceRecord{XUID: xuid1, State: []string{"Online", "Offline"}[state%2]})
			}
			c := attack4Conn(h)
			if c == nil {
				t.Fatalf("cycle %d: the connection was dropped while %d events (under rtaOutbox) were held for it", cycle, perCycle)
			}
			seq++
			err = ws.Write(t.Context(), websocket.MessageText, []byte(`[2,`+strconv.Itoa(seq)+`,`+strconv.Itoa(sub)+`]`))
			if err == nil {
				_, ans, err = ws.Read(t.Context())
			}
			if err != nil || !strings.HasPrefix(string(ans), "[2,") {
				synctest.Wait()
				t.Fatalf("cycle %d: a reader that read every message was dropped while unsubscribing (%v), %d RTA connections left; held for it then: %d events (under rtaOutbox, about %d bytes)", cycle, err, h.RTAConns(), perCycle, perCycle*25)
			}
			synctest.Wait() // the writer has taken the answer: the outbox is empty
			held, n := attack4Held(c)
			if w := c.waiting.Load(); w != held && !drifted {
				drifted = true
				t.Errorf("cycle %d: after the unsubscribe, %d events (%d bytes) are held and the outbox is empty, but the connection counts %d bytes waiting", cycle, n, held, w)
				// go on: the drift is what drops the reader below
			}
		}
	})
}

// held: TestAttack4RTAHealthyReaderUnderLatencyStaysOpen: a reader that
// reads everything, under an rta latency fault, through 5,000 events
// (far past rtaOutbox and, at about 24 bytes each, 120 KB in all) held
// back and flushed in turns, is never dropped, and the counter comes
// back to zero: the flush path keeps its count ("a reader that falls
// further behind is dropped", rta.go; a reader not behind is not).
func TestAttack4RTAHealthyReaderUnderLatencyStaysOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		subscribe(t, ws, 1, devicesURI(xuid1))
		if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(time.Second)}}}); err != nil {
			t.Fatal(err)
		}
		state := 0
		for round := range 50 {
			for range 100 {
				state++
				h.world.storePresence(presenceRecord{XUID: xuid1, State: []string{"Online", "Offline"}[state%2]})
			}
			c := attack4Conn(h)
			if c == nil {
				t.Fatalf("round %d: dropped while under 100 events were held", round)
			}
			_, n := attack4Held(c)
			time.Sleep(2 * time.Second)
			for range n {
				if _, _, err := ws.Read(t.Context()); err != nil {
					t.Fatalf("round %d: a reader that reads everything was dropped: %v", round, err)
				}
			}
			synctest.Wait()
			if c := attack4Conn(h); c == nil || c.waiting.Load() != 0 {
				t.Fatalf("round %d: connection %v, waiting %d after every event was read", round, c != nil, c.waiting.Load())
			}
		}
	})
}

// held: TestAttack4RTAHeldBytesBounded: events of 5 KB held back by a
// latency fault for a connection that never reads (a connection with no
// writer: nothing leaves its outbox) and Resyncs and subscribe answers
// in between never hold more than rtaOutboxBytes for it; the connection
// is dropped once they would. Promised (mock/rta.go): "rtaOutbox
// messages or rtaOutboxBytes waiting for a reader, held back by a
// latency fault or not (a reader that falls further behind is
// dropped)".
func TestAttack4RTAHeldBytesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		c := delayedConn(t, h, xuid1) // under a 10-minute latency fault
		key := rtaResource{kind: rtaDevices, xuid: xuid1}.key()
		big := strings.Repeat("r", 5000)
		var maxHeld int64
		for i := range 200 {
			h.rta.publish(key, nil, big)
			if i%3 == 0 {
				h.Resync()
			}
			if i%5 == 0 {
				c.subscribe(rtaRequest{kind: rtaSubscribe, seq: uint32(i + 1), uri: devicesURI(xuid1)})
			}
			d, _ := attack4Held(c)
			var out int64
			for _, b := range attack4Peek(c) {
				out += int64(len(b))
			}
			maxHeld = max(maxHeld, d+out)
			if d+out > rtaOutboxBytes {
				t.Fatalf("after %d events: %d bytes held for a reader (%d delayed, %d in the outbox), over %d", i+1, d+out, d, out, rtaOutboxBytes)
			}
			select {
			case <-c.done:
				t.Logf("dropped after %d events, the most held %d bytes", i+1, maxHeld)
				return
			default:
			}
		}
		t.Errorf("a reader that never reads is still open after 200 events of 5 KB (most held %d bytes)", maxHeld)
	})
}

// attack4Peek returns the messages in c's outbox, putting them back (no
// writer runs on c).
func attack4Peek(c *rtaConn) [][]byte {
	var out [][]byte
	for {
		select {
		case b := <-c.out:
			out = append(out, b)
			continue
		default:
		}
		break
	}
	for _, b := range out {
		c.out <- b
	}
	return out
}
