package mock

// An outside attack on the mock's Real-Time Activity service (helper
// attack51): a slow reader beside a healthy one, and a subscriber flooding
// subscribes and unsubscribes.

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"
)

// held: docs/MOCK.md / RELIABILITY.md "a reader that stops reading while
// events pile up: dropped once 256 messages wait: memory bounded per
// connection", and rta.go's publish never waits for a reader (rtaConn:
// "messages are put in it without waiting").
// TestAttack51RTASlowReaderHoldsNoOneElse: two connections follow xuid2's
// devices; one never reads. xuid2's presence goes Online and Offline 300 times: the reader
// gets all 600 events, in order, and none is held up (no mock time passes
// for the writes); the slow one is dropped.
func TestAttack51RTASlowReaderHoldsNoOneElse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		slow := dialRTA(t, hc, xuid1)
		if code, _, _ := subscribe(t, slow, 1, devicesURI(xuid2)); code != 0 {
			t.Fatalf("subscribe: code %d", code)
		}
		fast := dialRTA(t, hc, xuid2)
		if code, _, _ := subscribe(t, fast, 1, devicesURI(xuid2)); code != 0 {
			t.Fatalf("subscribe: code %d", code)
		}
		got := make(chan string, 1000)
		go func() {
			defer close(got)
			for {
				_, b, err := fast.Read(t.Context())
				if err != nil {
					return
				}
				var a []json.RawMessage
				json.Unmarshal(b, &a)
				if len(a) == 3 {
					got <- string(a[2])
				}
			}
		}()
		start := time.Now()
		const rounds = 300
		for range rounds {
			// Written to the world directly, as TestRTASlowReaderDropped
			// does: FGRL would refuse this many writes.
			h.world.storePresence(presenceRecord{XUID: xuid2, State: "Online"})
			h.world.storePresence(presenceRecord{XUID: xuid2, State: "Offline"})
			synctest.Wait()
		}
		took := time.Since(start)
		n := 0
		for n < 2*rounds+1 { // one event more than sent would be counted too
			select {
			case ev := <-got:
				want := `"Scarlett:true"`
				if n%2 == 1 {
					want = `"Scarlett:false"`
				}
				if ev != want {
					t.Fatalf("event %d: %s, want %s", n, ev, want)
				}
				n++
			default:
				goto done
			}
		}
	done:
		if n != 2*rounds {
			t.Errorf("the reading connection got %d events, want %d", n, 2*rounds)
		}
		if took > 0 {
			t.Errorf("the writes took %v of the mock's time beside a slow reader", took)
		}
		if c := h.RTAConns(); c != 1 {
			t.Errorf("%d RTA connections open, want the slow one dropped (1)", c)
		}
	})
}

// held: docs/MOCK.md "The 1,001st subscription of a connection ... is
// answered code 2 ... an unsubscribe or a close makes room"; rtahub.go
// follow/unfollow.
// TestAttack51RTASubscribeFloodLeavesNothing: one connection subscribes to the
// same resource 1,000 times, is refused the 1,001st, unsubscribes them
// all, and repeats 5 times: each round is served the same, and the hub
// holds no subscription and no resource index afterwards.
func TestAttack51RTASubscribeFloodLeavesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		seq := 0
		for round := range 5 {
			var subs []int
			for range maxRTASubs {
				seq++
				code, sub, _ := subscribe(t, ws, seq, devicesURI(xuid2))
				if code != 0 {
					t.Fatalf("round %d: subscribe %d: code %d", round, len(subs)+1, code)
				}
				subs = append(subs, sub)
			}
			seq++
			if code, _, _ := subscribe(t, ws, seq, devicesURI(xuid2)); code != rtaSubscriptionLimit {
				t.Fatalf("round %d: subscribe past the bound: code %d", round, code)
			}
			for _, s := range subs {
				seq++
				b, _ := json.Marshal([]any{2, seq, s})
				write(t, ws, string(b))
				if a := read(t, ws); string(a[2]) != "0" {
					t.Fatalf("round %d: unsubscribe %d: %s", round, s, a)
				}
			}
		}
		h.rta.mu.Lock()
		nsubs, follows := h.rta.nsubs, len(h.rta.follows)
		h.rta.mu.Unlock()
		if nsubs != 0 || follows != 0 {
			t.Errorf("after every unsubscribe the hub holds %d subscriptions and %d resources", nsubs, follows)
		}
	})
}
