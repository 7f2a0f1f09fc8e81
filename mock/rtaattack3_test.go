package mock

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// TestAttackRTASubscriptionIDWrapsOntoAHeldOne: subscription ids come from
// one uint32 counter of the hub (nextSub) that a long-lived mock (xblcall
// mock; a client subscribing and unsubscribing in a loop) carries past
// 2^32, where it wraps. The wrapped counter hands a connection an id it
// already holds: c.subs[id] is overwritten, the first subscription's entry
// in the hub's index is never removed (its unsubscribe removes only the
// second), and hub.nsubs, which bounds "100,000 of all connections",
// never comes back down once the connection closes. Promises broken:
// "1,000 subscriptions a connection and 100,000 of all connections ... an
// unsubscribe or a close makes room" (RELIABILITY.md) and "A held-back
// event of a subscription unsubscribed meanwhile is dropped: it never
// follows the unsubscribe's answer" (rta.go): here an event of the
// resource unsubscribed follows the unsubscribe's answer.
func TestAttackRTASubscriptionIDWrapsOntoAHeldOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		code, first, _ := subscribe(t, ws, 1, devicesURI(xuid2)) // the friend's devices
		if code != 0 {
			t.Fatalf("subscribe: code %d", code)
		}
		// The counter after 2^32 - 1 subscriptions of the mock's life.
		h.rta.nextSub.Store(math.MaxUint32)
		ids := map[int]string{first: devicesURI(xuid2)}
		var dup int = -1
		for i, uri := range []string{
			"http://social.xboxlive.com/users/xuid(" + xuid1 + ")/friends",
			devicesURI(xuid1),
		} {
			code, sub, _ := subscribe(t, ws, i+2, uri)
			if code != 0 {
				t.Fatalf("subscribe %s: code %d", uri, code)
			}
			if prev, held := ids[sub]; held {
				t.Errorf("subscribe %s answered id %d, which the connection already holds for %s", uri, sub, prev)
				dup = sub
			}
			ids[sub] = uri
		}
		if dup < 0 {
			return
		}
		// Unsubscribe the id: answered 0; then the friend signs in.
		write(t, ws, `[2,9,`+jsonNum(dup)+`]`)
		if a := read(t, ws); string(a[2]) != "0" {
			t.Fatalf("unsubscribe %d: %s", dup, a)
		}
		do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid2, title1), `{"state":"active"}`)
		rctx, cancel := context.WithTimeout(t.Context(), time.Second)
		if _, b, err := ws.Read(rctx); err == nil {
			t.Errorf("after the unsubscribe of %d was answered 0, the connection got %s", dup, b)
		}
		cancel()
		synctest.Wait()
		h.rta.mu.Lock()
		n, left := h.rta.nsubs, len(h.rta.follows)
		h.rta.mu.Unlock()
		// The connection holds one subscription (the friends one); the
		// hub counts and indexes more.
		if n != 1 {
			t.Errorf("after the unsubscribe the hub counts %d subscriptions, the connection holds 1", n)
		}
		if left != 1 {
			t.Errorf("after the unsubscribe the hub indexes %d resources, the connection follows 1", left)
		}
		ws.CloseNow()
		synctest.Wait()
		h.rta.mu.Lock()
		n, left = h.rta.nsubs, len(h.rta.follows)
		var held []string
		for k := range h.rta.follows {
			held = append(held, k)
		}
		h.rta.mu.Unlock()
		if n != 0 || left != 0 {
			t.Errorf("after the connection closed the hub counts %d subscriptions and indexes %v (held for good, against the 100,000 bound)", n, held)
		}
	})
}
