package mock

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/throttle"
)

const xuid3 = "2533274790000003"

// rtaWorld: xuid1 and xuid2 are friends; xuid3 is a stranger to both.
func rtaWorld() World {
	return World{Accounts: []WorldAccount{
		{XUID: xuid1, Friends: []string{xuid2}},
		{XUID: xuid2, Friends: []string{xuid1}},
		{XUID: xuid3},
	}}
}

func rtaHandler(t *testing.T) *Handler {
	t.Helper()
	return Must(New(Config{World: rtaWorld()}))
}

// write sends one text message.
func write(t *testing.T, ws *websocket.Conn, msg string) {
	t.Helper()
	if err := ws.Write(t.Context(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("write %s: %v", msg, err)
	}
}

// read reads one message as a JSON array.
func read(t *testing.T, ws *websocket.Conn) []json.RawMessage {
	t.Helper()
	_, b, err := ws.Read(t.Context())
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var a []json.RawMessage
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("message %s: %v", b, err)
	}
	return a
}

// subscribe subscribes to uri and returns the answer's code and sub id.
func subscribe(t *testing.T, ws *websocket.Conn, seq int, uri string) (code, sub int, data json.RawMessage) {
	t.Helper()
	b, _ := json.Marshal([]any{1, seq, uri})
	write(t, ws, string(b))
	a := read(t, ws)
	if len(a) != 5 || string(a[0]) != "1" || string(a[1]) != jsonNum(seq) {
		t.Fatalf("answer to subscribe %d: %s, want [1,%d,code,sub,data]", seq, a, seq)
	}
	json.Unmarshal(a[2], &code)
	json.Unmarshal(a[3], &sub)
	return code, sub, a[4]
}

func jsonNum(n int) string { b, _ := json.Marshal(n); return string(b) }

func devicesURI(x string) string {
	return "https://userpresence.xboxlive.com/users/xuid(" + x + ")/devices"
}

// TestRTAFriendSeesPresenceWrite: a subscription to a friend's device and
// title presence (XSAPI device_presence_change_subscription.cpp,
// title_presence_change_subscription.cpp) answers the presence record,
// then gets "Scarlett:true" and "Started:TITLE" when the friend sets their
// presence and "Scarlett:false", "Ended:TITLE" when they clear it.
func TestRTAFriendSeesPresenceWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		code, dev, data := subscribe(t, ws, 1, devicesURI(xuid2))
		if code != 0 || !strings.Contains(string(data), `"state":"Offline"`) {
			t.Fatalf("subscribe devices: code %d, data %s; want 0 and the offline record", code, data)
		}
		code, ttl, _ := subscribe(t, ws, 2, "https://userpresence.xboxlive.com/users/xuid("+xuid2+")/titles/"+title1)
		if code != 0 {
			t.Fatalf("subscribe title: code %d", code)
		}
		do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid2, title1), `{"state":"active"}`)
		got := []string{string(read(t, ws)[2]), string(read(t, ws)[2])}
		want := []string{`"Scarlett:true"`, `"Started:` + title1 + `"`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events after a presence set (-want +got):\n%s", diff)
		}
		do(t, h, "DELETE", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid2, title1), "")
		a, b := read(t, ws), read(t, ws)
		if string(a[1]) != jsonNum(dev) || string(a[2]) != `"Scarlett:false"` || string(b[1]) != jsonNum(ttl) || string(b[2]) != `"Ended:`+title1+`"` {
			t.Errorf("events after a presence clear: %s %s", a, b)
		}
	})
}

// TestRTAUserSeesOnlyWhatTheServiceShows: another user's relationships and
// a stranger's presence are answered NoResourceData (3, XSAPI's
// E_XBL_RTA_ACCESS_DENIED), a URI no subscription of XSAPI builds
// UnknownResource (1); one's own resources and a friend's presence are
// served.
func TestRTAUserSeesOnlyWhatTheServiceShows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		for i, tc := range []struct {
			uri  string
			want int
		}{
			{devicesURI(xuid1), 0},
			{devicesURI(xuid2), 0},
			{devicesURI(xuid3), 3},
			{"https://userpresence.xboxlive.com/users/xuid(" + xuid3 + ")/titles/" + title1, 3},
			{"http://social.xboxlive.com/users/xuid(" + xuid1 + ")/friends", 0},
			{"http://social.xboxlive.com/users/xuid(" + xuid2 + ")/friends", 3},
			{"https://sessiondirectory.xboxlive.com/connections/", 0},
			{"https://profile.xboxlive.com/users/xuid(" + xuid2 + ")/profile", 1},
			{"https://userpresence.xboxlive.com/users/xuid(12ab)/devices", 1},
			{"not a uri", 1},
		} {
			if code, _, _ := subscribe(t, ws, i+1, tc.uri); code != tc.want {
				t.Errorf("subscribe %s: code %d, want %d", tc.uri, code, tc.want)
			}
		}
		// A stranger's presence write reaches nobody who may not see it.
		do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid3, title1), `{"state":"active"}`)
		do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid1, title1), `{"state":"active"}`)
		if a := read(t, ws); string(a[2]) != `"Scarlett:true"` {
			t.Errorf("first event after a stranger's and one's own write: %s, want one's own", a)
		}
	})
}

// TestRTARefusesBadInput: bad upgrades are answered with an HTTP status,
// bad messages close the websocket with a status naming why.
func TestRTARefusesBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		for _, tc := range []struct {
			name   string
			auth   string
			proto  []string
			path   string
			status int
		}{
			{"no token", "", []string{RTASubprotocol}, RTAPath, 401},
			{"a token not minted", "XBL3.0 x=1;forged", []string{RTASubprotocol}, RTAPath, 401},
			{"no subprotocol", Token(xuid1, title1), nil, RTAPath, 400},
			{"another path", Token(xuid1, title1), []string{RTASubprotocol}, "/other", 404},
		} {
			_, resp, err := websocket.Dial(t.Context(), "ws://"+RTAHost+tc.path, &websocket.DialOptions{HTTPClient: hc,
				Subprotocols: tc.proto, HTTPHeader: http.Header{"Authorization": {tc.auth}}})
			if err == nil || resp == nil || resp.StatusCode != tc.status {
				t.Errorf("%s: err %v, resp %v; want status %d", tc.name, err, resp, tc.status)
			}
		}
		for _, tc := range []struct {
			name string
			typ  websocket.MessageType
			msg  string
			want websocket.StatusCode
		}{
			{"not JSON", websocket.MessageText, "[1,1,", websocket.StatusInvalidFramePayloadData},
			{"an event from the client", websocket.MessageText, `[3,1,"x"]`, websocket.StatusInvalidFramePayloadData},
			{"a negative sequence", websocket.MessageText, `[1,-1,"x"]`, websocket.StatusInvalidFramePayloadData},
			{"two values", websocket.MessageText, `[2,1,1][2,1,1]`, websocket.StatusInvalidFramePayloadData},
			{"binary", websocket.MessageBinary, `[2,1,1]`, websocket.StatusUnsupportedData},
			{"over the size bound", websocket.MessageText, `[1,1,"` + strings.Repeat("a", maxRTAMessage) + `"]`, websocket.StatusMessageTooBig},
		} {
			ws := dialRTA(t, hc, xuid1)
			ws.Write(t.Context(), tc.typ, []byte(tc.msg))
			_, _, err := ws.Read(t.Context())
			if got := websocket.CloseStatus(err); got != tc.want {
				t.Errorf("%s: closed with %v (%v), want %v", tc.name, got, err, tc.want)
			}
		}
	})
}

// TestRTASubscriptionLimit: past maxRTASubs subscriptions a connection's
// next is answered SubscriptionLimitReached (2, XSAPI's
// E_XBL_RTA_SUBSCRIPTION_LIMIT_REACHED); an unsubscribe makes room.
func TestRTASubscriptionLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ws := dialRTA(t, pipeServer(t, rtaHandler(t)), xuid1)
		var first int
		for i := range maxRTASubs {
			code, sub, _ := subscribe(t, ws, i+1, devicesURI(xuid1))
			if code != 0 {
				t.Fatalf("subscription %d: code %d", i+1, code)
			}
			if i == 0 {
				first = sub
			}
		}
		if code, _, _ := subscribe(t, ws, maxRTASubs+1, devicesURI(xuid1)); code != 2 {
			t.Fatalf("subscription past the limit: code %d, want 2", code)
		}
		write(t, ws, `[2,7,`+jsonNum(first)+`]`)
		if a := read(t, ws); len(a) != 3 || string(a[1]) != "7" || string(a[2]) != "0" {
			t.Fatalf("answer to unsubscribe: %s, want [2,7,0]", a)
		}
		if code, _, _ := subscribe(t, ws, maxRTASubs+2, devicesURI(xuid1)); code != 0 {
			t.Errorf("subscription after an unsubscribe: code %d, want 0", code)
		}
		write(t, ws, `[2,8,`+jsonNum(first)+`]`)
		if a := read(t, ws); string(a[2]) != "1" {
			t.Errorf("unsubscribe of a subscription not held: %s, want code 1", a)
		}
	})
}

// TestRTAFaults: an rta service fault refuses subscriptions with 1001 or
// 1002 (XSAPI resubscribes), a Reset drops the connections open, a 503
// refuses the upgrade, a Latency delays events by that much.
func TestRTAFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		ws := dialRTA(t, hc, xuid1)
		for _, code := range []int{rtaThrottled, rtaServiceUnavailable} {
			if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Status: code}}}); err != nil {
				t.Fatal(err)
			}
			if got, _, _ := subscribe(t, ws, code, devicesURI(xuid1)); got != code {
				t.Errorf("subscribe under a %d fault: code %d", code, got)
			}
		}
		h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(30 * time.Second)}}})
		subscribe(t, ws, 1, devicesURI(xuid1))
		start := time.Now()
		do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid1, title1), `{"state":"active"}`)
		read(t, ws)
		if took := time.Since(start); took != 30*time.Second {
			t.Errorf("event delayed %v, want 30s", took)
		}
		h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Reset: true}}})
		if _, _, err := ws.Read(t.Context()); err == nil {
			t.Error("a connection outlived a reset fault")
		}
		h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Status: 503}}})
		_, resp, err := websocket.Dial(t.Context(), "ws://"+RTAHost+RTAPath, &websocket.DialOptions{HTTPClient: hc,
			Subprotocols: []string{RTASubprotocol}, HTTPHeader: http.Header{"Authorization": {Token(xuid1, title1)}}})
		if err == nil || resp.StatusCode != 503 {
			t.Errorf("upgrade under a 503 fault: %v %v", err, resp)
		}
		if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: "presence", Status: 1001}}}); err == nil {
			t.Error("a 1001 fault of a service other than rta was taken")
		}
		synctest.Wait()
		if n := h.RTAConns(); n != 0 {
			t.Errorf("%d connections open after the reset", n)
		}
	})
}

// TestRTASlowReaderDropped: a client that reads nothing while events pile
// up past the outbox is dropped, its memory bounded.
func TestRTASlowReaderDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		subscribe(t, ws, 1, devicesURI(xuid1))
		for i := range rtaOutbox + 2 {
			// Written to the world directly: FGRL would refuse this many
			// writes through the presence service.
			h.world.storePresence(presenceRecord{XUID: xuid1, State: []string{"Online", "Offline"}[i%2]})
		}
		synctest.Wait()
		if n := h.RTAConns(); n != 0 {
			t.Errorf("a slow reader's connection is still open (%d)", n)
		}
	})
}

// TestRTASlowReaderDroppedByBytes: a client that sends subscribes and
// reads nothing, each answered with the largest presence record (about
// 5.4 KB), is dropped once the answers waiting pass rtaOutboxBytes, long
// before rtaOutbox messages. Before, only the count bounded the outbox:
// 1.4 MB a connection, 1.4 GB over the 1,000 connections the mock takes.
func TestRTASlowReaderDroppedByBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		big := strings.Repeat("r", maxPresenceID*(maxPresenceParams+1))
		h.world.storePresence(presenceRecord{XUID: xuid1, State: "Online", Devices: []presenceDevice{{Type: deviceType,
			Titles: []presenceTitle{{ID: title1, Name: "t", Placement: "Full", State: "Active", Activity: &presenceActivity{RichPresence: big}}}}}})
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		n := 0
		for ; n < rtaOutbox && h.RTAConns() > 0; n++ {
			b, _ := json.Marshal([]any{1, n + 1, devicesURI(xuid1)})
			if ws.Write(t.Context(), websocket.MessageText, b) != nil {
				break // closed
			}
			synctest.Wait()
		}
		if n*len(big) > 2*rtaOutboxBytes || h.RTAConns() != 0 {
			t.Errorf("a slow reader still open (%d) after %d answers of %d bytes; want it dropped past %d bytes", h.RTAConns(), n, len(big), rtaOutboxBytes)
		}
	})
}

// TestRTASessionAndWorldEvents: an MPSD write taps its members'
// subscriptions (XSAPI multiplayer_subscription.cpp: shoulderTaps,
// resource SCID~TEMPLATE~NAME) and no one else's; SetWorld tells a user's
// friends subscription whom they added ({"NotificationType":"Added",
// "Xuids":[...]}, social_relationship_change_subscription.cpp).
func TestRTASessionAndWorldEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		member, other := dialRTA(t, hc, xuid1), dialRTA(t, hc, xuid3)
		code, _, data := subscribe(t, member, 1, "https://sessiondirectory.xboxlive.com/connections/")
		if code != 0 || !strings.Contains(string(data), `"ConnectionId":"`) {
			t.Fatalf("subscribe sessions: %d %s", code, data)
		}
		subscribe(t, other, 1, "https://sessiondirectory.xboxlive.com/connections/")
		_, friends, _ := subscribe(t, member, 2, "http://social.xboxlive.com/users/xuid("+xuid1+")/friends")
		scid := SCID(title1) // the writer's title's
		do(t, h, "PUT", "https://sessiondirectory.xboxlive.com/serviceconfigs/"+scid+"/sessiontemplates/lobby/sessions/s1",
			Token(xuid1, title1), `{"members":{"me":{"constants":{"system":{"initialize":true}}}}}`)
		a := read(t, member)
		if !strings.Contains(string(a[2]), `"resource":"`+scid+`~lobby~s1"`) || !strings.Contains(string(a[2]), `"changeNumber":`) {
			t.Errorf("tap: %s", a)
		}
		w := rtaWorld()
		w.Accounts[0].Friends = append(w.Accounts[0].Friends, xuid3)
		w.Accounts[2].Friends = []string{xuid1}
		if err := h.SetWorld(w); err != nil {
			t.Fatal(err)
		}
		a = read(t, member)
		if string(a[1]) != jsonNum(friends) || string(a[2]) != `{"NotificationType":"Added","Xuids":["`+xuid3+`"]}` {
			t.Errorf("after a friend added: %s", a)
		}
		other.Write(t.Context(), websocket.MessageText, []byte(`[2,9,999999]`))
		if a := read(t, other); string(a[0]) != "2" {
			t.Errorf("a non-member got %s before its own answer", a)
		}
	})
}

// TestRTARecord: a connection is one call in the journal, its messages
// with it, no token among them; its HAR entry holds them as
// _webSocketMessages.
func TestRTARecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		ws := dialRTA(t, hc, xuid1)
		subscribe(t, ws, 1, devicesURI(xuid1))
		ws.Close(websocket.StatusNormalClosure, "")
		synctest.Wait()
		calls := h.Calls(CallFilter{})
		if len(calls) != 1 {
			t.Fatalf("%d calls, want 1", len(calls))
		}
		c := calls[0]
		if c.Status != http.StatusSwitchingProtocols || c.URL != "https://"+RTAHost+RTAPath || len(c.Messages) != 2 ||
			c.Messages[0].Type != "send" || c.Messages[1].Type != "receive" {
			t.Errorf("call %+v", c)
		}
		var har strings.Builder
		if err := h.WriteHAR(&har, CallFilter{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"_webSocketMessages":[{"type":"send"`, `"opcode":1`} {
			if !strings.Contains(har.String(), want) {
				t.Errorf("HAR lacks %s:\n%s", want, har.String())
			}
		}
		token := Token(xuid1, title1)
		_, secret, _ := strings.Cut(token, ";")
		b, _ := json.Marshal(calls)
		if strings.Contains(string(b)+har.String(), secret) {
			t.Error("the record holds the token")
		}
	})
}

// TestRTAConnectionEndsWhenItsTokenExpires: a websocket opened with a
// sign-in's token is ended by the mock the second after its NotAfter, as
// the service's is ("When the authentication token for a user expires,
// the session is terminated by the service": Microsoft's RTA best
// practices); until then it serves, and one opened with a token
// mock.Token minted stays open. Before, it served on past the NotAfter.
func TestRTAConnectionEndsWhenItsTokenExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		notAfter := time.Now().Add(rtaPing / 2) // before a ping, which an idle test reader would not answer
		ws, resp, err := websocket.Dial(t.Context(), "ws://"+RTAHost+RTAPath, &websocket.DialOptions{HTTPClient: hc,
			Subprotocols: []string{RTASubprotocol}, HTTPHeader: http.Header{"Authorization": {signInToken(xuid1, title1, 1, notAfter, "http://xboxlive.com")}}})
		if err != nil {
			t.Fatalf("dial RTA with a sign-in's token: %v (%v)", err, resp)
		}
		defer ws.CloseNow()
		forever := dialRTA(t, hc, xuid2)
		time.Sleep(time.Until(notAfter))
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid2)); code != 0 {
			t.Fatalf("subscribe at the NotAfter: code %d, want 0", code)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), rtaWriteTimeout)
		defer cancel()
		if _, _, err := ws.Read(ctx); err == nil || ctx.Err() != nil {
			t.Errorf("read a second after the NotAfter: %v (context %v), want the connection ended", err, ctx.Err())
		}
		if code, _, _ := subscribe(t, forever, 1, devicesURI(xuid1)); code != 0 {
			t.Errorf("subscribe with a mock.Token's connection then: code %d, want 0", code)
		}
	})
}

// TestRTAConnectionEndsAfterItsLifetime: the mock ends an RTA connection
// two hours after it opened, as the service does ("RTA v2 has a lifetime
// of 2 hours", XSAPI real_time_activity_connection.cpp, which renews its
// connection after 90 minutes for that reason), even with a token that
// never expires and a peer that answers every ping; a minute before, it
// still serves. Before, it served for ever.
func TestRTAConnectionEndsAfterItsLifetime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		ws := dialRTA(t, hc, xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid2)); code != 0 {
			t.Fatalf("subscribe: code %d, want 0", code)
		}
		opened := time.Now()
		ended := make(chan time.Time, 1)
		go func() { // reads all the while, so the mock's pings are answered
			for {
				if _, _, err := ws.Read(context.Background()); err != nil {
					ended <- time.Now()
					return
				}
			}
		}()
		time.Sleep(rtaLifetime - time.Minute)
		synctest.Wait()
		select {
		case at := <-ended:
			t.Fatalf("the connection ended after %v, want it open until %v", at.Sub(opened), rtaLifetime)
		default:
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		select {
		case at := <-ended:
			if d := at.Sub(opened); d != rtaLifetime {
				t.Errorf("the connection ended after %v, want %v", d, rtaLifetime)
			}
		default:
			t.Fatalf("the connection is open after %v, want it ended at %v", time.Since(opened), rtaLifetime)
		}
	})
}

// TestRTAPresenceLapsePushed: a title that stops writing its presence
// lapses heartbeatExpiry after its last write (presenceOf reads it
// Offline), and the friend subscribed to its devices and title hears it
// then, "Scarlett:false" and "Ended:TITLE", as when it clears its presence;
// a title that writes again within X-Heartbeat-After does not lapse; one
// that comes back after a lapse is heard coming online again. Before, the
// lapse was read by a get but pushed to no subscriber.
func TestRTAPresenceLapsePushed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		subscribe(t, ws, 1, devicesURI(xuid2))
		subscribe(t, ws, 2, "https://userpresence.xboxlive.com/users/xuid("+xuid2+")/titles/"+title1)
		events := lapseEvents(ws)
		heard := func() []string {
			synctest.Wait()
			return lapseDrain(events)
		}
		set := func() {
			do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid2, title1), `{"state":"active"}`)
		}
		online := []string{`"Scarlett:true"`, `"Started:` + title1 + `"`}
		offline := []string{`"Scarlett:false"`, `"Ended:` + title1 + `"`}
		set()
		if diff := cmp.Diff(online, heard()); diff != "" {
			t.Fatalf("events after a presence set (-want +got):\n%s", diff)
		}
		for range 3 { // heartbeats, as XSAPI writes them: no lapse
			time.Sleep(heartbeatAfter * time.Second)
			set()
		}
		if got := heard(); len(got) != 0 {
			t.Fatalf("events while the title writes every X-Heartbeat-After: %q, want none", got)
		}
		time.Sleep(heartbeatExpiry - time.Minute)
		if got := heard(); len(got) != 0 {
			t.Fatalf("events a minute before the lapse: %q, want none", got)
		}
		if s := h.world.presenceOf(xuid2).State; s != "Online" {
			t.Fatalf("presence a minute before the lapse: %s", s)
		}
		time.Sleep(2 * time.Minute)
		if diff := cmp.Diff(offline, heard()); diff != "" {
			t.Errorf("events after the lapse (-want +got):\n%s", diff)
		}
		if s := h.world.presenceOf(xuid2).State; s != "Offline" {
			t.Errorf("presence after the lapse: %s, want Offline", s)
		}
		set()
		if diff := cmp.Diff(online, heard()); diff != "" {
			t.Errorf("events when the title writes again (-want +got):\n%s", diff)
		}
	})
}

// TestRTAPresenceLapsesBounded: the lapse timers are bounded by the
// presence records the state holds (1,024 with a small MaxKeys), however
// many users write their presence; a user cleared or written again
// replaces their own timer instead of adding one.
func TestRTAPresenceLapsesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{World: rtaWorld(), MaxKeys: 8}))
		limit := h.world.state.presence.maxEntries
		setOnline(t, h, limit+500)
		setOnline(t, h, limit+500) // each again: a write replaces its user's timer
		if n := lapseTimers(h); n > limit {
			t.Errorf("%d lapse timers, want at most %d", n, limit)
		}
		do(t, h, "DELETE", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token("2533274790100000", title1), "")
		if lapseTimed(h, "2533274790100000") {
			t.Error("a cleared user's lapse is still timed")
		}
		time.Sleep(heartbeatExpiry + 2*time.Second)
		synctest.Wait()
		if n := lapseTimers(h); n != 0 {
			t.Errorf("%d lapse timers after every record lapsed, want 0", n)
		}
	})
}
