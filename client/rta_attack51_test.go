package client

// An outside attack on the client side of Real-Time Activity (helper
// attack51): hostile services of the test's own on in-memory connections
// (synctest), and two users on one mock.

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/mock"
)

// attack51Answer101 hijacks the request's connection and writes a 101 of
// the test's making (extra: header lines, each ending "\r\n"); it returns
// the connection and its reader, or nil.
func attack51Answer101(w http.ResponseWriter, r *http.Request, extra string) (net.Conn, *bufio.ReadWriter) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil
	}
	sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	rw.WriteString("HTTP/1.1 101 Switching Protocols\r\n" + extra +
		"Sec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
	rw.Flush()
	return conn, rw
}

// attack51RTAClient is a client whose RTA websocket goes to h on in-memory
// connections, with the token auth.
func attack51RTAClient(t *testing.T, h http.Handler, auth string) *Client {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	tr := &http.Transport{DialContext: l.dial}
	t.Cleanup(func() { srv.Close(); tr.CloseIdleConnections() })
	c, err := New(Config{TitleID: title, RTATransport: tr, Endpoints: map[string]string{"rta.xboxlive.com": "http://rta.xboxlive.com"},
		Tokens: TokenFunc(func(context.Context, string) (Token, error) { return Token{Authorization: auth}, nil })})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAttack51RTAUpgradeHeaderEchoesTokenInChunks: a hostile service answers
// each upgrade with a 101 whose Connection header echoes the next 100
// bytes of the caller's 1,200-byte token (no echo is the whole token, so
// the scrubber, which takes out whole credentials, lets each through).
// coder/websocket's dialer quotes the header ("Connection header %q does
// not contain Upgrade"); the client dials again (backoff 1, 4, 9 ... 60 s)
// and is sent the next chunk: the caller's ConnectionState errors spell
// the token out. The close reason was taken out of lost connections for
// exactly this (RELIABILITY.md row "a hostile service closing each
// connection with the next 100 bytes of the token as the reason"); the
// upgrade's refusal carries the same echo.
// Promise: RELIABILITY.md "client errors never repeat a token"; User.Subscribe
// godoc: "A lost connection is an *Error (ConnectionState.Err) that tells
// no credential sent"; ConnectionState godoc: "not with the error that
// ended or refused it".
func TestAttack51RTAUpgradeHeaderEchoesTokenInChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sb strings.Builder
		for i := 0; sb.Len() < 1200; i++ {
			fmt.Fprintf(&sb, "eyJ%xQ", i*2654435761%1000003)
		}
		secret := sb.String()[:1200]
		auth := "XBL3.0 x=1111;" + secret
		var n atomic.Int64
		c := attack51RTAClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k := int(n.Add(1)-1) % (len(secret) / 100)
			tok := strings.TrimPrefix(r.Header.Get("Authorization"), "XBL3.0 x=1111;")
			conn, rw := attack51Answer101(w, r, "Upgrade: websocket\r\nConnection: "+tok[k*100:(k+1)*100]+"\r\n")
			if conn == nil {
				return
			}
			defer conn.Close()
			rw.ReadByte() // until the client leaves
		}), auth)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(me))
		if err != nil {
			t.Fatal(err)
		}
		var told strings.Builder
		for refusals := 0; refusals < len(secret)/100; {
			cs, ok := (<-ch).(*ConnectionState)
			if !ok || cs.Err == nil {
				continue
			}
			refusals++
			told.WriteString(cs.Err.Error())
		}
		cancel()
		for range ch {
		}
		whole := 0
		for k := range len(secret) / 100 {
			if strings.Contains(told.String(), secret[k*100:(k+1)*100]) {
				whole++
			}
		}
		if whole > 0 {
			t.Errorf("the ConnectionState errors told %d of the token's %d 100-byte chunks (all of them: the whole token); first error: %.300s",
				whole, len(secret)/100, told.String())
		}
	})
}

// TestAttack51RTAThrottledThenRefusedNotSentAgain: a service answers a
// subscribe Throttled (1001), the client's retry Throttled again (a retry
// timed for 1 s), then refuses it for good (3, NoResourceData). The
// refusal is reported; then the retry timed before it goes out anyway.
// Promise: User.Subscribe godoc: "A subscription the service refuses for
// good is reported (SubscriptionError) and not sent again, on that
// connection or a later one."
func TestAttack51RTAThrottledThenRefusedNotSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var afterRefusal atomic.Int64
		stop := make(chan struct{})
		defer close(stop)
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			ctx := r.Context()
			refused := false
			go func() { <-stop; ws.CloseNow() }()
			for i := 0; ; i++ {
				_, b, err := ws.Read(ctx)
				if err != nil {
					return
				}
				if !strings.HasPrefix(string(b), "[1,1,") {
					continue
				}
				switch {
				case refused:
					afterRefusal.Add(1)
				case i == 0:
					ws.Write(ctx, websocket.MessageText, []byte(`[1,1,1001]`))
				default:
					ws.Write(ctx, websocket.MessageText, []byte(`[1,1,1001]`))
					ws.Write(ctx, websocket.MessageText, []byte(`[1,1,3]`))
					refused = true
				}
			}
		})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		until[*SubscriptionError](t, ch)
		go func() {
			for range ch {
			}
		}()
		time.Sleep(10 * time.Second) // past any retry timed before the refusal
		synctest.Wait()
		cancel()
		synctest.Wait()
		if n := afterRefusal.Load(); n > 0 {
			t.Errorf("the subscription refused for good was sent %d more times on the same connection", n)
		}
	})
}

// attack51TypedEvents subscribes me to rs on a service that answers each
// subscribe in order with ids 10, 11, ..., then sends msgs, and returns
// the events delivered, ConnectionState and Subscribed left out.
func attack51TypedEvents(t *testing.T, msgs []string, rs ...Resource) []Event {
	t.Helper()
	var got []Event
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		defer close(stop)
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			ctx := r.Context()
			for i := range rs {
				if _, _, err := ws.Read(ctx); err != nil {
					return
				}
				ws.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `[1,%d,0,%d,null]`, i+1, 10+i))
			}
			for _, m := range msgs {
				ws.Write(ctx, websocket.MessageText, []byte(m))
			}
			<-stop
		})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, rs...)
		if err != nil {
			t.Fatal(err)
		}
		go func() { synctest.Wait(); cancel() }()
		for ev := range ch {
			switch ev.(type) {
			case *ConnectionState, *Subscribed:
			default:
				got = append(got, ev)
			}
		}
	})
	return got
}

// TestAttack51RTATitlePresenceStateOnlyStartedOrEnded: a service sends a title
// presence subscription the event "Paused:TITLE", a state XSAPI's title
// presence knows nothing of. The client delivers a TitlePresence whose
// State is "Paused".
// Promise: TitlePresence godoc: "TitlePresence is a user starting or
// ending a title (State "Started" or "Ended")"; Resource.event ("nil for
// data of another shape (XSAPI ignores those too)").
func TestAttack51RTATitlePresenceStateOnlyStartedOrEnded(t *testing.T) {
	for _, ev := range attack51TypedEvents(t, []string{`[3,10,"Paused:` + title + `"]`, `[3,10,"Whatever"]`}, TitlePresenceOf(other, title)) {
		if tp, ok := ev.(*TitlePresence); ok && tp.State != "Started" && tp.State != "Ended" {
			t.Errorf("delivered a TitlePresence with State %q", tp.State)
		}
	}
}

// TestAttack51RTATitlePresenceOfAnotherTitle: a service sends a subscription
// to other's presence in title 1234567890 the event "Started:99999" (the
// mock's events name their title: "Started:TITLE"). The client delivers
// TitlePresence{TitleID: 1234567890, State: "Started"}: other is reported
// starting a title the event did not name.
// Promise: TitlePresenceOf godoc: "a user's presence in one title: whether
// they started or ended it"; TitlePresence godoc: "a user starting or
// ending a title".
func TestAttack51RTATitlePresenceOfAnotherTitle(t *testing.T) {
	for _, ev := range attack51TypedEvents(t, []string{`[3,10,"Started:99999"]`}, TitlePresenceOf(other, title)) {
		if tp, ok := ev.(*TitlePresence); ok {
			t.Errorf("delivered %+v from the event \"Started:99999\"", *tp)
		}
	}
}

// TestAttack51RTARelationshipTypeOnlyDocumented: a service sends a
// relationships subscription {"NotificationType":"Blocked",...}. The client
// delivers a RelationshipChange whose Type is "Blocked".
// Promise: RelationshipChange godoc: "a change of a user's relationships:
// Type "Added", "Removed" or "Changed" with the XUIDs concerned".
func TestAttack51RTARelationshipTypeOnlyDocumented(t *testing.T) {
	msgs := []string{`[3,10,{"NotificationType":"Blocked","Xuids":["` + other + `"]}]`}
	for _, ev := range attack51TypedEvents(t, msgs, RelationshipsOf(me)) {
		if rc, ok := ev.(*RelationshipChange); ok && rc.Type != "Added" && rc.Type != "Removed" && rc.Type != "Changed" {
			t.Errorf("delivered a RelationshipChange with Type %q", rc.Type)
		}
	}
}

// held: User.Subscribe godoc: "until ctx ends; then it is closed, the
// connection closed and every goroutine of it gone".
// TestAttack51RTAFrameThatNeverEnds: a service takes the upgrade, announces a
// text frame of 1,000 bytes, sends 10 and stalls. The caller's cancel
// ends the channel at once and leaves no goroutine (synctest fails on one
// left durably blocked).
func TestAttack51RTAFrameThatNeverEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		defer close(stop)
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			conn, rw := attack51Answer101(w, r, "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: "+rtaSubprotocol+"\r\n")
			if conn == nil {
				return
			}
			defer conn.Close()
			rw.Write([]byte{0x81, 126, 0x03, 0xe8})
			rw.WriteString(`[1,1,0,5,"`)
			rw.Flush()
			go func() { // read the client's frames, never answer
				buf := make([]byte, 4096)
				for {
					if _, err := rw.Read(buf); err != nil {
						return
					}
				}
			}()
			<-stop
		})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		if cs, ok := (<-ch).(*ConnectionState); !ok || !cs.Connected {
			t.Fatalf("first event %#v, want Connected", cs)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		start := time.Now()
		cancel()
		var after []Event
		for ev := range ch {
			after = append(after, ev)
		}
		if d := time.Since(start); d > rtaCloseWait {
			t.Errorf("the channel closed %v after the cancel", d)
		}
		if len(after) != 0 {
			t.Errorf("events after the cancel: %#v", after)
		}
	})
}

// held: rta.go maxRTAMessage ("bounds a message the client reads from the
// service"); User.Subscribe godoc "a lost connection is made again".
// TestAttack51RTAHugeFrameDropsTheConnection: a service announces a frame of
// 2^40 bytes and sends 128 KiB of it. The client reads none of it past
// its bound: the connection is lost (an *Error) and made again. (A frame
// announced and never sent holds the connection until its 90-minute
// renewal: the client has no read deadline; no promise says otherwise.)
func TestAttack51RTAHugeFrameDropsTheConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var conns atomic.Int64
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			conns.Add(1) // before the 101: the client's Connected follows it (counted after, CI once read 1 here)
			conn, rw := attack51Answer101(w, r, "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: "+rtaSubprotocol+"\r\n")
			if conn == nil {
				return
			}
			defer conn.Close()
			hdr := []byte{0x81, 127, 0, 0, 0, 0, 0, 0, 0, 0}
			binary.BigEndian.PutUint64(hdr[2:], 1<<40)
			rw.Write(hdr)
			rw.Write([]byte("[3,5,\"" + strings.Repeat("x", 128<<10)))
			rw.Flush()
			buf := make([]byte, 4096)
			for {
				if _, err := rw.Read(buf); err != nil {
					return
				}
			}
		})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		var lost error
		connected := 0
		for connected < 2 {
			cs, ok := (<-ch).(*ConnectionState)
			if !ok {
				continue
			}
			if cs.Connected {
				connected++
			} else if lost == nil {
				lost = cs.Err
			}
		}
		cancel()
		for range ch {
		}
		var e *Error
		if lost == nil || !asError(lost, &e) {
			t.Errorf("the connection lost to a 2^40-byte frame: %v, want an *Error", lost)
		}
		if conns.Load() < 2 {
			t.Errorf("%d connections, want it made again", conns.Load())
		}
	})
}

func asError(err error, e **Error) bool {
	for err != nil {
		if x, ok := err.(*Error); ok {
			*e = x
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// held: docs/MOCK.md "A user sees their own resources and the presence
// of the users they follow"; RELIABILITY.md "their writes reach no one who
// may not see them".
// TestAttack51RTAUnfollowedUserReachesNoOne: me follows other and subscribes
// to other's presence; the world changes so that me no longer follows
// other; other then signs in. me, whose subscription the mock
// still holds, hears none of it: the next event is me's own.
func TestAttack51RTAUnfollowedUserReachesNoOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c := rtaClient(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other), PresenceOf(me))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			until[*Subscribed](t, ch)
		}
		if err := h.SetWorld(mock.World{Accounts: []mock.WorldAccount{{XUID: me}, {XUID: other, Follows: []string{me}}, {XUID: stranger}}}); err != nil {
			t.Fatal(err)
		}
		if err := c.As(other).SetPresence(t.Context(), true, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.As(me).SetPresence(t.Context(), true, nil); err != nil {
			t.Fatal(err)
		}
		ev := next(t, ch) // the next event must be me's own
		dp, ok := ev.(*DevicePresence)
		if !ok {
			t.Fatalf("event %#v before me's own", ev)
		}
		if dp.XUID == other {
			t.Fatalf("me, no longer following other, heard %#v", dp)
		}
	})
}
