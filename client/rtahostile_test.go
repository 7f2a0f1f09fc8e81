package client

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
)

// hostileRTA returns a client whose RTA websocket goes to a server of
// serve's (an upgrade taken at /connect with the subprotocol), on
// in-memory connections, so that it runs in a synctest bubble. A server
// that answers with anything but 101 may write its own answer.
func hostileRTA(t *testing.T, serve func(w http.ResponseWriter, r *http.Request)) *Client {
	t.Helper()
	return rtaServedBy(t, http.HandlerFunc(serve), nil)
}

// acceptRTA takes the upgrade as the service does.
func acceptRTA(w http.ResponseWriter, r *http.Request) *websocket.Conn {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{rtaSubprotocol}})
	if err != nil {
		return nil
	}
	return ws
}

// TestSubscribeBoundsHostileAnswers: a service that answers one subscribe
// again and again, with a new subscription id each time or with Throttled,
// holds the client to one id and one pending retry for the subscription:
// an event on an id it replaced is not delivered, and once the caller
// leaves, no retry timer is left to block (synctest fails on a goroutine
// left durably blocked).
func TestSubscribeBoundsHostileAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const answers = 2000
		served := make(chan struct{})
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			ctx := r.Context()
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
			left := make(chan struct{})
			go func() { // read the client's messages (its resubscribes) until it leaves
				defer close(left)
				for {
					if _, _, err := ws.Read(ctx); err != nil {
						return
					}
				}
			}()
			for i := range answers {
				ws.Write(ctx, websocket.MessageText, []byte(`[1,1,1001]`))
				ws.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `[1,1,0,%d,null]`, 100+i))
			}
			ws.Write(ctx, websocket.MessageText, []byte(`[3,100,"Scarlett:true"]`))                // an id replaced
			ws.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `[3,%d,"PC:true"]`, 99+answers)) // the last
			close(served)
			<-left
		})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		go func() {
			<-served
			synctest.Wait()
			cancel()
		}()
		for ev := range ch {
			if d, ok := ev.(*DevicePresence); ok {
				got = append(got, d.Device)
			}
		}
		if want := []string{"PC"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("device events %v, want %v (only the last id the service gave)", got, want)
		}
		time.Sleep(2 * rtaMaxBackoff) // every retry the answers asked for is due
	})
}

// TestSubscribeFollowsNoRedirect: an upgrade answered with a redirect to
// another host is a refused connection; the token and its Signature go
// nowhere else (http.Client would forward Signature to any host, and
// Authorization to the same host name on another port or scheme).
func TestSubscribeFollowsNoRedirect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leaked := make(chan http.Header, 16)
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == rtaPath {
				http.Redirect(w, r, "http://elsewhere.example/steal", http.StatusFound)
				return
			}
			leaked <- r.Header.Clone()
			acceptRTA(w, r)
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		s := until[*ConnectionState](t, ch)
		if s.Connected || s.Err == nil {
			t.Errorf("after a redirect: %+v, want a refused connection", s)
		}
		select {
		case h := <-leaked:
			t.Errorf("the redirect was followed, with Authorization %t and Signature %t", h.Get("Authorization") != "", h.Get("Signature") != "")
		default:
		}
	})
}

// TestSubscribeEndsMidHandshake: a caller whose context ends while the
// service has not answered the upgrade (nor ever will) gets its channel
// closed at once, the connection closed and nothing left running.
func TestSubscribeEndsMidHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			conn.Read(make([]byte, 1)) // no answer; until the client leaves
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for ev := range ch {
			t.Errorf("event %#v from a service that never answered", ev)
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("the channel closed after %v, want 1s", took)
		}
	})
}
