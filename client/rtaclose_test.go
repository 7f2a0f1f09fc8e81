package client

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
)

// A service that sends a message that is not RTA's and then stops reading
// (it never answers the client's close) holds the client no longer than
// rtaCloseWait before the connection is given up: the close then drops
// it. github.com/coder/websocket's own handshake waits 5 s for the close
// frame to be written and 5 s more for the answer. A service that answers
// the close ends the connection at once. (When the caller's context ends,
// the library drops a connection it is reading at once.)
func TestCloseWaitsBoundedForAServiceThatStopsReading(t *testing.T) {
	for _, answers := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			sent := make(chan time.Time, 1)
			quit := make(chan struct{}) // ends the service's handler with the test
			defer close(quit)
			c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
				ws := acceptRTA(w, r)
				if ws == nil {
					return
				}
				defer ws.CloseNow()
				if _, _, err := ws.Read(r.Context()); err != nil { // the subscribe
					return
				}
				sent <- time.Now()
				ws.Write(r.Context(), websocket.MessageText, []byte(`not an RTA message`))
				if answers {
					for { // reads on, and so answers the close
						if _, _, err := ws.Read(r.Context()); err != nil {
							<-quit
							return
						}
					}
				}
				<-quit // reads nothing more
			})
			took, cs := lostAfter(t, c, sent)
			if cs.Connected || cs.Err == nil {
				t.Fatalf("after a malformed message: %+v, want the connection lost", cs)
			}
			if answers && took != 0 {
				t.Errorf("a service that answers the close: the connection ended %v after the message, want at once", took)
			}
			if !answers && took != rtaCloseWait {
				t.Errorf("a service that never answers the close: the connection ended %v after the message, want %v", took, rtaCloseWait)
			}
		})
	}
}

// lostAfter subscribes, waits for the connection, and returns how long
// after the service signals on sent the connection was reported lost, and
// the state reported.
func lostAfter(t *testing.T, c *Client, sent <-chan time.Time) (time.Duration, *ConnectionState) {
	t.Helper()
	ch, err := c.As(me).Subscribe(t.Context(), PresenceOf(other))
	if err != nil {
		t.Fatal(err)
	}
	if cs := until[*ConnectionState](t, ch); !cs.Connected {
		t.Fatalf("not connected: %v", cs.Err)
	}
	cs := until[*ConnectionState](t, ch)
	return time.Since(<-sent), cs
}
