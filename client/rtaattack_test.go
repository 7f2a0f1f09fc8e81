package client

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
)

// TestAttackSubscribeEndsWithContextOnSilentPeer: "The returned channel
// delivers the events ... until ctx ends; then it is closed, the
// connection closed and every goroutine of it gone." A service that took
// the connection and the subscribe, then never reads again (so it never
// answers the closing handshake the client starts), must not hold the
// channel open past the cancel (coder/websocket's Close waits 5 s for a
// close frame). Held if the channel closes within a second of the cancel.
func TestAttackSubscribeEndsWithContextOnSilentPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			ws.Read(r.Context()) // the subscribe
			<-stop               // then silent: no read, no close frame
		})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		if cs, ok := (<-ch).(*ConnectionState); !ok || !cs.Connected {
			t.Fatalf("first event %#v, want Connected", cs)
		}
		synctest.Wait()
		cancel()
		start := time.Now()
		for range ch {
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("channel closed %v after the cancel, want at once", d)
		}
		close(stop)
	})
}

// TestAttackRefusedSubscriptionStillDelivers: "A subscription the service
// refuses for good is reported (SubscriptionError) and not sent again";
// rtaSub "holds one service id at most (the last it was given ...)". A
// service that first accepts a subscribe (id 7), then answers the same
// sequence number with NoResourceData (3, E_XBL_RTA_ACCESS_DENIED), goes
// on delivering events on id 7 for the subscription the client just
// reported refused: the caller is told "access denied" and then sees the
// presence it was denied.
func TestAttackRefusedSubscriptionStillDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := scriptedRTA(t, `[1,1,0,7,null]`, `[1,1,3]`, `[3,7,"Scarlett:true"]`)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		until[*Subscribed](t, ch)
		until[*SubscriptionError](t, ch)
		synctest.Wait()
		select {
		case ev := <-ch:
			if dp, ok := ev.(*DevicePresence); ok {
				t.Errorf("after SubscriptionError (access denied) for %s, the client delivered %+v", other, dp)
			}
		default:
		}
		cancel()
		for range ch {
		}
	})
}

// TestAttackSubscribedPresenceOfAnotherUser: "Subscribed says a subscription
// is in force ..., with the state it starts from: the presence record for
// a presence resource". A service answering the subscribe to other's
// presence with a record of a third user (stranger) has the client hand
// the caller that stranger's record as other's state.
func TestAttackSubscribedPresenceOfAnotherUser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := scriptedRTA(t, `[1,1,0,7,{"xuid":"`+stranger+`","state":"Online"}]`)
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		s := until[*Subscribed](t, ch)
		if s.Presence != nil && s.Presence.XUID != other {
			t.Errorf("Subscribed to %s's presence delivered %s's record: %+v", other, s.Presence.XUID, s.Presence)
		}
		cancel()
		for range ch {
		}
	})
}

// scriptedRTA is a hostile RTA service that reads the first subscribe,
// sends msgs, then reads until the connection ends.
func scriptedRTA(t *testing.T, msgs ...string) *Client {
	return hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
		ws := acceptRTA(w, r)
		if ws == nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		if _, _, err := ws.Read(ctx); err != nil {
			return
		}
		for _, m := range msgs {
			ws.Write(ctx, websocket.MessageText, []byte(m))
		}
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	})
}
