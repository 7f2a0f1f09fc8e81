package mock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack3RTADelayedEventNotDeliveredOnAReusedID: an event an rta latency
// fault holds back for subscription S (a friend's devices), S unsubscribed
// (answered 0), then the id counter, come around after 2^32 subscriptions
// of the mock's life, hands S to the connection's next subscription (its
// own devices, a resource of another kind): the held-back event must not
// follow, under S, as an event of the new subscription.
// Promise: mock/rta.go, rtaConn.event: "A held-back event of a
// subscription unsubscribed meanwhile is dropped: it never follows the
// unsubscribe's answer"; RELIABILITY.md "Real-Time Activity" row "an
// unsubscribe answered while an event of its subscription waits under an
// rta latency fault ... a delayed event of a subscription no longer held is
// dropped", and rtahub.go follow: "The counter wraps after 2^32
// subscriptions of the mock's life". Wire: XSAPI
// real_time_activity_connection.cpp routes an event [3, SUB_ID, DATA] by
// SUB_ID alone.
func TestAttack3RTADelayedEventNotDeliveredOnAReusedID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		code, s, _ := subscribe(t, ws, 1, devicesURI(xuid2))
		if code != 0 {
			t.Fatalf("subscribe the friend's devices: code %d", code)
		}
		if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(30 * time.Second)}}}); err != nil {
			t.Fatal(err)
		}
		do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid2, title1), `{"state":"active"}`)
		write(t, ws, `[2,2,`+jsonNum(s)+`]`)
		if a := read(t, ws); string(a[2]) != "0" {
			t.Fatalf("unsubscribe %d: %s", s, a)
		}
		h.rta.nextSub.Store(uint32(s - 1)) // the counter, come around
		code, s2, _ := subscribe(t, ws, 3, devicesURI(xuid1))
		if code != 0 {
			t.Fatalf("subscribe own devices: code %d", code)
		}
		if s2 != s {
			t.Skipf("the new subscription got id %d, not the reused %d", s2, s)
		}
		rctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if _, b, err := ws.Read(rctx); err == nil {
			t.Errorf("the friend's event held back for unsubscribed id %d reached the connection as an event of its new subscription (own devices, id %d): %s", s, s2, b)
		}
	})
}

// TestAttack3RTAPeerThatNeverAnswersPingsIsDropped: a client that upgrades,
// subscribes, then never reads again (so answers no ping) is dropped
// within a ping period and the write timeout: no connection is held for
// good.
// held: mock/rta.go "rtaPing between pings of an idle peer ... a ping not
// answered, ends it".
func TestAttack3RTAPeerThatNeverAnswersPingsIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid2)); code != 0 {
			t.Fatalf("subscribe: code %d", code)
		}
		time.Sleep(rtaPing + rtaWriteTimeout + time.Second)
		synctest.Wait()
		if n := h.RTAConns(); n != 0 {
			t.Errorf("%d RTA connections open after a peer ignored pings for %v", n, rtaPing+rtaWriteTimeout)
		}
	})
}

// TestAttack3RTARequestNotJSONRefused: a client message that is an RTA array
// followed by a stray closing bracket or brace ("[2,1,1]]", "[1,1,URI]}")
// is not JSON (json.Valid says so) and no XSAPI form: it must be refused,
// and over the wire close the websocket with 1007, as "[1,1," does.
// Promise: RELIABILITY.md "Real-Time Activity" row "a message that is not
// JSON, not a subscribe or unsubscribe, binary, over 4 KiB ... the
// websocket is closed with 1007, 1003 or 1009", and its fuzz table
// "mock.FuzzParseRTARequest ... only XSAPI's two forms are taken";
// rtawire.go parseRTARequest "refuses anything but a subscribe or an
// unsubscribe in XSAPI's array form". Public fact: RFC 8259 §2, a JSON
// text is one value; encoding/json's Decoder.More reports false before ']'
// or '}', so the check d.More() passes them.
func TestAttack3RTARequestNotJSONRefused(t *testing.T) {
	for _, s := range []string{`[2,1,1]]`, `[2,1,1]}`, `[1,1,"` + devicesURI(xuid1) + `"] ]]]`} {
		if r, err := parseRTARequest([]byte(s)); err == nil {
			t.Errorf("parseRTARequest(%q) took %+v, want it refused (not JSON)", s, r)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		write(t, ws, `[1,1,"`+devicesURI(xuid1)+`"]}`)
		_, b, err := ws.Read(t.Context())
		if got := websocket.CloseStatus(err); got != websocket.StatusInvalidFramePayloadData {
			t.Errorf("after a message that is not JSON: read %s, %v; want the websocket closed with 1007", b, err)
		}
	})
}

// TestAttack3RTAOtherSpellingsReachNoOneElse: spellings of a stranger's
// presence and of a friend's relationships that a looser reading could
// take (percent-encoding, a leading zero, double slashes, a trailing dot
// or a port on the host, userinfo, a query, a fragment, upper-case path,
// "me", the path of one service on the other's host) are each refused
// (UnknownResource 1, or NoResourceData 3), never served (0).
// held: RELIABILITY.md "Real-Time Activity" row "a user subscribes to a
// stranger's presence or another user's relationships ... refused with
// NoResourceData (3)"; rtawire.go parseRTAResource (the URIs XSAPI
// builds).
func TestAttack3RTAOtherSpellingsReachNoOneElse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		up, so := "https://userpresence.xboxlive.com", "http://social.xboxlive.com"
		for i, uri := range []string{
			up + "/users/xuid%28" + xuid3 + "%29/devices",
			up + "/users/xuid(0" + xuid3 + ")/devices",
			up + "//users/xuid(" + xuid3 + ")/devices",
			up + "/users//xuid(" + xuid3 + ")/devices",
			up + "/users/xuid(" + xuid3 + ")//devices",
			up + "/users/xuid(" + xuid3 + ")/devices/",
			up + "/users/xuid(" + xuid3 + ")/devices?x=1",
			up + "/users/xuid(" + xuid3 + ")/devices#x",
			up + "/USERS/xuid(" + xuid3 + ")/DEVICES",
			up + "/users/XUID(" + xuid3 + ")/devices",
			up + "/users/xuid(" + xuid3 + ")/titles/0" + title1,
			up + "/users/xuid(" + xuid3 + ")/titles/" + title1 + "/x",
			"https://userpresence.xboxlive.com./users/xuid(" + xuid3 + ")/devices",
			"https://userpresence.xboxlive.com:443/users/xuid(" + xuid3 + ")/devices",
			"https://a@userpresence.xboxlive.com/users/xuid(" + xuid3 + ")/devices",
			"https://userpresence.xboxlive.com/users/me/devices",
			so + "/users/xuid(" + xuid2 + ")/friends",
			so + "/users/xuid(" + xuid2 + ")/friends/",
			so + "/users/xuid(0" + xuid2 + ")/friends",
			so + "/users/xuid(" + xuid2 + ")/friends?xuid(" + xuid1 + ")",
			up + "/users/xuid(" + xuid2 + ")/friends",
			so + "/users/xuid(" + xuid3 + ")/devices",
			"https://sessiondirectory.xboxlive.com/connections/xuid(" + xuid2 + ")",
		} {
			if code, sub, _ := subscribe(t, ws, i+1, uri); code == 0 {
				t.Errorf("subscribe %s: served, id %d; want 1 or 3", uri, sub)
			}
		}
	})
}
