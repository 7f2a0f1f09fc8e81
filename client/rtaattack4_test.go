package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/mock"
)

// attack3ServeThenStall takes the upgrade, answers the first subscribe with
// id 5, then neither reads nor writes until the client leaves.
func attack3ServeThenStall(answered, stop chan struct{}) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		ws := acceptRTA(w, r)
		if ws == nil {
			return
		}
		defer ws.CloseNow()
		if _, _, err := ws.Read(r.Context()); err != nil {
			return
		}
		ws.Write(r.Context(), websocket.MessageText, []byte(`[1,1,0,5,null]`))
		close(answered)
		<-stop
	}
}

// TestAttack3RTACancelWithStalledServiceClosesAtOnce: a caller whose context
// ends while the service neither reads nor answers the closing handshake
// gets its channel closed at once.
// Promise: client/rtaconn.go, User.Subscribe godoc: "The returned channel
// delivers ... until ctx ends; then it is closed, the connection closed and
// every goroutine of it gone"; TestSubscribeEndsMidHandshake holds the same
// "at once" for a stalled upgrade. Public fact: github.com/coder/websocket
// Conn.Close writes the close frame and waits for the peer's with 5 s
// timeouts each (close.go writeClose, waitCloseHandshake).
// held: the channel closes at once (the reader's context ends the read).
func TestAttack3RTACancelWithStalledServiceClosesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answered, stop := make(chan struct{}), make(chan struct{})
		defer close(stop)
		c := hostileRTA(t, attack3ServeThenStall(answered, stop))
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		until[*Subscribed](t, ch)
		<-answered
		synctest.Wait()
		cancel()
		start := time.Now()
		for ev := range ch {
			t.Logf("event after cancel: %#v", ev)
		}
		if took := time.Since(start); took > 100*time.Millisecond {
			t.Errorf("the channel closed %v after the context ended, want at once", took)
		}
	})
}

// TestAttack3RTAEventsAfterCancelNotDelivered: a service pushing 200 events
// to a caller who reads none, then cancels: the channel holds the 16 it
// had buffered before the context ended, nothing delivered after.
// held: User.Subscribe godoc "delivers ... until ctx ends; then it is
// closed".
func TestAttack3RTAEventsAfterCancelNotDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		served, stop := make(chan struct{}), make(chan struct{})
		defer close(stop)
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			if _, _, err := ws.Read(r.Context()); err != nil {
				return
			}
			ws.Write(r.Context(), websocket.MessageText, []byte(`[1,1,0,5,null]`))
			go func() {
				for {
					if _, _, err := ws.Read(r.Context()); err != nil {
						return
					}
				}
			}()
			for i := range 200 {
				if ws.Write(r.Context(), websocket.MessageText, fmt.Appendf(nil, `[3,5,"D%d:true"]`, i)) != nil {
					return
				}
			}
			close(served)
			<-stop
		})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		until[*Subscribed](t, ch)
		synctest.Wait() // the client's buffer (16) is full, its goroutine waits to deliver
		cancel()
		synctest.Wait()
		n := 0
		for range ch {
			n++
		}
		if n > 16 {
			t.Errorf("%d events delivered, more than the 16 buffered before the context ended", n)
		}
	})
}

// TestAttack3RTAMessageNotJSONRefused: a service message that is an RTA form
// followed by a stray closing bracket or brace ("[4]]", "[3,7,\"x\"]}") is
// not JSON and no XSAPI form: it must be refused (the connection then
// closed and made again, as for any malformed message).
// Promise: client/rta.go parseRTAMessage "Anything else is refused";
// RELIABILITY.md fuzz table "client.FuzzParseRTAMessage ... only XSAPI's
// four forms are taken" and "Real-Time Activity" row "a malformed message
// from the service: the connection is closed and made again". Public
// fact: RFC 8259 §2, a JSON text is one value; encoding/json's
// Decoder.More reports false before ']' or '}'.
func TestAttack3RTAMessageNotJSONRefused(t *testing.T) {
	for _, s := range []string{`[4]]`, `[4]}`, `[3,7,"Scarlett:true"]]]`, `[2,1,0] }`} {
		if m, err := parseRTAMessage([]byte(s)); err == nil {
			t.Errorf("parseRTAMessage(%q) took %+v, want it refused (not JSON)", s, m)
		}
	}
}

// TestAttack3RTACloseReasonEchoesTokenInChunks: a hostile service closes each
// RTA connection with a reason that echoes the next 100 bytes of the
// caller's token (a close frame's reason holds at most 123 bytes, RFC
// 6455 §5.5, and an XSTS token, a JWE, is well over a thousand: no echo of
// a real token in a close reason is ever whole). The scrubber takes out
// whole credentials only: every chunk reaches ConnectionState.Err, and the
// client reconnects (within 5 s) to be sent the next one, so the caller's
// log of connection errors spells the whole token out.
// Promise: RELIABILITY.md "Secrets": client errors never repeat a token;
// RELIABILITY.md row "the RTA connection closed with a reason echoing the
// token and an escape code ... an *Error ..., its cause scrubbed, clipped
// and escaped" (TestAttack3RTACloseReasonEchoesToken, whose token is 42
// bytes). Public fact: RFC 6455 §5.5 (control frame payload ≤ 125 bytes,
// 2 of them the status code).
func TestAttack3RTACloseReasonEchoesTokenInChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sb strings.Builder
		for i := 0; sb.Len() < 1200; i++ { // a JWE-like token of 1,200 bytes, no run of it repeated
			fmt.Fprintf(&sb, "eyJ%xQ", i*2654435761%1000003)
		}
		secret := sb.String()[:1200]
		auth := "XBL3.0 x=1111;" + secret
		var conn atomic.Int64
		l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			k := int(conn.Add(1)-1) % (len(secret) / 100)
			tok := strings.TrimPrefix(r.Header.Get("Authorization"), "XBL3.0 x=1111;")
			ws.Close(websocket.StatusPolicyViolation, tok[k*100:(k+1)*100])
		})}
		go srv.Serve(l)
		tr := &http.Transport{DialContext: l.dial}
		defer func() { srv.Close(); tr.CloseIdleConnections() }()
		c, err := New(Config{TitleID: title, RTATransport: tr, Endpoints: map[string]string{"rta.xboxlive.com": "http://rta.xboxlive.com"},
			Tokens: TokenFunc(func(context.Context, string) (Token, error) { return Token{Authorization: auth}, nil })})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(me))
		if err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		for errs := 0; errs < 3; {
			ev, ok := <-ch
			if !ok {
				t.Fatal("the events ended")
			}
			if cs, ok := ev.(*ConnectionState); ok && cs.Err != nil {
				errs++
				fmt.Fprintln(&log, cs.Err)
			}
		}
		cancel()
		for range ch {
		}
		for k := range 3 {
			if chunk := secret[k*100 : (k+1)*100]; strings.Contains(log.String(), chunk) {
				t.Errorf("ConnectionState.Err of connection %d tells bytes %d-%d of the token: %q", k+1, k*100, (k+1)*100, chunk)
			}
		}
	})
}

// TestAttack3RTAManySubscriptionsOnTheMock: a caller subscribing to 300 of a
// friend's title presences (within Subscribe's 1 to 1100, and the mock's
// 1,000 a connection) and reading every event gets all 300 Subscribed on
// one connection, not a connection lost and made again: the client reads
// the service's answers while it sends its subscribes.
// Promise: User.Subscribe godoc "subscribes to rs (1 to 1100 resources)";
// "A caller that stops reading holds the connection up: the service then
// drops it" (this caller reads); RELIABILITY.md "Real-Time Activity": the
// mock drops a reader once 256 messages wait for it.
func TestAttack3RTAManySubscriptionsOnTheMock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c := rtaClient(t)
		const n = 300
		var rs []Resource
		for i := range n {
			rs = append(rs, TitlePresenceOf(other, fmt.Sprint(1000+i)))
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, rs...)
		if err != nil {
			t.Fatal(err)
		}
		subscribed, lost := 0, 0
		for subscribed < n && lost == 0 {
			switch ev := (<-ch).(type) {
			case *Subscribed:
				subscribed++
			case *ConnectionState:
				if ev.Err != nil {
					lost++
					t.Errorf("after %d Subscribed, the connection was lost: %v", subscribed, ev.Err)
				}
			case *SubscriptionError:
				t.Fatalf("refused: %v", ev.Err)
			}
		}
		cancel()
		for range ch {
		}
	})
}

// TestAttack3RTAManySubscriptionsOverLoopback is
// TestAttack3RTAManySubscriptionsOnTheMock over a real loopback TCP
// connection to a mock.Server: the friend's presence carries the largest
// rich presence the mock takes (an id and 20 params of 256 bytes), so
// that 1,000 subscribe answers (5.6 MB) outrun the sockets' buffers while
// the client, sending its subscribes, reads none of them.
// Same promise as TestAttack3RTAManySubscriptionsOnTheMock.
func TestAttack3RTAManySubscriptionsOverLoopback(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{World: mock.World{Accounts: []mock.WorldAccount{
		{XUID: me, Friends: []string{other}}, {XUID: other, Friends: []string{me}}}}}))
	s := mock.NewServer(h)
	defer s.Close()
	c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: h, RTATransport: plainTransport(t),
		Endpoints: map[string]string{"rta.xboxlive.com": s.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	params := make([]string, 20)
	for i := range params {
		params[i] = strings.Repeat(string(rune('a'+i)), 256)
	}
	if err := c.As(other).SetPresence(ctx, true, &RichPresence{SCID: mock.SCID(title), ID: strings.Repeat("p", 256), Params: params}); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	var rs []Resource
	for i := range n {
		rs = append(rs, TitlePresenceOf(other, fmt.Sprint(1000+i)))
	}
	ch, err := c.As(me).Subscribe(ctx, rs...)
	if err != nil {
		t.Fatal(err)
	}
	subscribed := 0
loop:
	for subscribed < n {
		switch ev := (<-ch).(type) {
		case nil:
			break loop
		case *Subscribed:
			subscribed++
		case *ConnectionState:
			if ev.Err != nil {
				t.Errorf("after %d Subscribed, the connection was lost: %v", subscribed, ev.Err)
				break loop
			}
		case *SubscriptionError:
			t.Fatalf("refused: %v", ev.Err)
		}
	}
	if subscribed < n && ctx.Err() != nil {
		t.Errorf("%d of %d Subscribed within 4 s", subscribed, n)
	}
	cancel()
	for range ch {
	}
}

// TestAttack3RTARefusedSubscriptionNotSentAgainAfterReconnect: a subscription
// the service refuses for good (a stranger's presence: NoResourceData) is
// reported once and not sent again, also when the connection is lost and
// made again.
// Promise: User.Subscribe godoc (client/rtaconn.go): "A subscription the
// service refuses for good is reported (SubscriptionError) and not sent
// again."
func TestAttack3RTARefusedSubscriptionNotSentAgainAfterReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c := rtaClient(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other), PresenceOf(stranger))
		if err != nil {
			t.Fatal(err)
		}
		refusals, connected := 0, 0
		for connected < 2 {
			switch ev := (<-ch).(type) {
			case *SubscriptionError:
				refusals++
			case *Subscribed:
				if connected == 1 {
					synctest.Wait()
					h.DropRTA()
				}
			case *ConnectionState:
				if ev.Connected {
					connected++
				}
			}
		}
		until[*Subscribed](t, ch)
		synctest.Wait()
		cancel()
		for ev := range ch {
			if _, ok := ev.(*SubscriptionError); ok {
				refusals++
			}
		}
		if refusals != 1 {
			t.Errorf("the refused subscription was reported %d times (sent again on the new connection), want once", refusals)
		}
	})
}

// TestAttack3RTAHostileIDsDeliverNothingElse: a hostile service answers the
// one subscribe with id 5, then sends an event on an id it never gave, an
// unsubscribe answer for an id never asked, a subscribe answer for a
// sequence number never sent, an event whose data is of another
// resource's shape, and then one good event: only the good event is
// delivered, as the subscription's.
// held: client/rtaconn.go rtaSub ("it holds one service id at most"),
// handle ("not ours: XSAPI ignores it too"), rta.go Resource.event ("nil
// for data of another shape").
func TestAttack3RTAHostileIDsDeliverNothingElse(t *testing.T) {
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
			go func() {
				for {
					if _, _, err := ws.Read(ctx); err != nil {
						return
					}
				}
			}()
			for _, m := range []string{`[1,1,0,5,null]`, `[3,6,"Scarlett:true"]`, `[2,99,0]`, `[1,77,0,6,null]`,
				`[3,6,"Xbox:true"]`, `[3,5,{"NotificationType":"Added","Xuids":["1"]}]`, `[3,5,"PC:true"]`} {
				ws.Write(ctx, websocket.MessageText, []byte(m))
			}
			<-stop
		})
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		go func() { synctest.Wait(); cancel() }()
		var got []string
		for ev := range ch {
			switch ev := ev.(type) {
			case *ConnectionState, *Subscribed:
			default:
				got = append(got, fmt.Sprintf("%#v", ev))
			}
		}
		want := fmt.Sprintf("%#v", &DevicePresence{XUID: other, Device: "PC", LoggedOn: true})
		if len(got) != 1 || got[0] != want {
			t.Errorf("delivered %v, want only %s", got, want)
		}
	})
}

// TestAttack3RTALostWhileSubscribingIsAnError: a service that takes the
// upgrade and closes the connection at once, before the client has sent
// its subscribes: the connection lost is reported as every other loss, an
// *Error carrying E_XBL_RTA_GENERIC_ERROR, not coder/websocket's raw
// write error.
// Promise: client/client.go package doc "Every failure of a call is an
// *Error ... carrying the HRESULT XSAPI would report"; RELIABILITY.md row
// "the RTA connection closed with a reason ...: an *Error ("connection
// lost", E_XBL_RTA_GENERIC_ERROR)".
func TestAttack3RTALostWhileSubscribingIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			if ws := acceptRTA(w, r); ws != nil {
				ws.CloseNow()
			}
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other), RelationshipsOf(me))
		if err != nil {
			t.Fatal(err)
		}
		var lost error
		for lost == nil {
			if cs, ok := (<-ch).(*ConnectionState); ok && !cs.Connected && cs.Err != nil {
				lost = cs.Err
			}
		}
		cancel()
		for range ch {
		}
		var e *Error
		if !errors.As(lost, &e) || !errors.Is(lost, hresult.E_XBL_RTA_GENERIC_ERROR) {
			t.Errorf("ConnectionState.Err is a %T (%v), want an *Error with E_XBL_RTA_GENERIC_ERROR", lost, lost)
		}
	})
}
