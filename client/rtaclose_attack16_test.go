package client

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/mock"
)

// An outsider's attack on the RTA client's bounded websocket close
// (closeWithin, keepHost's capture of the 101 answer's connection).
//
// Promised:
//   - rtaCloseWait (client/rtaconn.go): "rtaCloseWait is how long a close
//     waits for the service's answer before it drops the connection".
//   - closeWithin's godoc: "closeWithin closes ws with code and reason,
//     waiting at most rtaCloseWait for the service's answer; then it closes
//     conn, the connection under ws, which ends the wait."
//   - RELIABILITY.md, "A close the service never answers": "When the
//     caller's context ends while the client reads, the library drops the
//     connection at once; the closes that wait are the client's own: after
//     a message that is not RTA's, and the 90-minute renewal. Each now
//     waits for the service's answer at most `rtaCloseWait` (1 s), then
//     closes the connection under the websocket".
//   - Subscribe's godoc: "The returned channel delivers the events of every
//     subscription, and the state of the connection, until ctx ends; then
//     it is closed, the connection closed and every goroutine of it gone."
//     "A lost connection is an *Error (ConnectionState.Err) that tells no
//     credential sent".
//   - RELIABILITY.md: "## Bad input never panics, hangs or grows memory";
//     its row "a base RoundTripper answering with a nil `Body` ... a panic
//     in the transport" counts a misbehaving RoundTripper as such input.

// attack16AcceptKey is the Sec-WebSocket-Accept of key (RFC 6455).
func attack16AcceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// attack16Frame is one unmasked server frame.
func attack16Frame(op byte, p []byte) []byte {
	b := []byte{0x80 | op}
	switch {
	case len(p) < 126:
		b = append(b, byte(len(p)))
	default:
		b = append(b, 126, 0, 0)
		binary.BigEndian.PutUint16(b[2:], uint16(len(p)))
	}
	return append(b, p...)
}

// attack16RawRTA is a service that takes the upgrade itself (on the hijacked
// connection) and then does as serve says, with no websocket library to
// answer a close for it.
func attack16RawRTA(t *testing.T, serve func(conn net.Conn, br *bufio.Reader)) *Client {
	t.Helper()
	return hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Sec-WebSocket-Key")
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Accept: "+attack16AcceptKey(key)+"\r\nSec-WebSocket-Protocol: "+rtaSubprotocol+"\r\n\r\n")
		serve(conn, brw.Reader)
	})
}

// attack16ReadFrame reads one masked client frame and returns its opcode.
func attack16ReadFrame(br *bufio.Reader) (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return 0, nil, err
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return 0, nil, err
		}
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		return 0, nil, errors.New("too long")
	}
	var mk [4]byte
	if _, err := io.ReadFull(br, mk[:]); err != nil {
		return 0, nil, err
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		return 0, nil, err
	}
	for i := range p {
		p[i] ^= mk[i%4]
	}
	return h[0] & 0x0f, p, nil
}

// held: a service that reads the client's close only after a while (it
// answers slowly) ends the connection when it answers, if within
// rtaCloseWait, and at rtaCloseWait if later; an answer at the very
// instant the timer drops the connection races nothing (-race).
func TestAttack16CloseAnsweredSlowly(t *testing.T) {
	for _, tc := range []struct{ delay, want time.Duration }{
		{rtaCloseWait / 2, rtaCloseWait / 2},
		{rtaCloseWait, rtaCloseWait}, // the answer and the timer's conn.Close at one instant (run with -race)
		{3 * time.Second, rtaCloseWait},
	} {
		synctest.Test(t, func(t *testing.T) {
			quit := make(chan struct{})
			defer close(quit)
			sent := make(chan time.Time, 1)
			c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
				ws := acceptRTA(w, r)
				if ws == nil {
					return
				}
				defer ws.CloseNow()
				if _, _, err := ws.Read(r.Context()); err != nil {
					return
				}
				sent <- time.Now()
				ws.Write(r.Context(), websocket.MessageText, []byte(`not an RTA message`))
				select {
				case <-time.After(tc.delay):
					ws.Read(r.Context()) // the close: the library answers it
					<-quit
				case <-quit:
				}
			})
			took, cs := lostAfter(t, c, sent)
			if cs.Connected || cs.Err == nil {
				t.Fatalf("after a malformed message: %+v, want the connection lost", cs)
			}
			if took != tc.want {
				t.Errorf("a service answering the close after %v: the connection ended %v after the message, want %v", tc.delay, took, tc.want)
			}
		})
	}
}

// held: a service that, after its malformed message, reads everything
// (so the client's close frame is written) but never answers the close,
// flooding data messages instead, or pings (which the client must answer
// with pongs), is dropped at most rtaCloseWait after the message (pings:
// at once, a pong being refused after the close frame).
func TestAttack16CloseUnderFlood(t *testing.T) {
	for _, op := range []byte{0x1, 0x9} {
		synctest.Test(t, func(t *testing.T) {
			quit := make(chan struct{})
			defer close(quit)
			sent := make(chan time.Time, 1)
			c := attack16RawRTA(t, func(conn net.Conn, br *bufio.Reader) {
				if _, _, err := attack16ReadFrame(br); err != nil { // the subscribe
					return
				}
				go io.Copy(io.Discard, br) // reads on, answers nothing
				sent <- time.Now()
				conn.Write(attack16Frame(0x1, []byte(`not an RTA message`)))
				for { // a message a millisecond: synctest's clock moves only when all wait
					if _, err := conn.Write(attack16Frame(op, []byte(`[3,999,"x"]`))); err != nil {
						<-quit
						return
					}
					select {
					case <-time.After(time.Millisecond):
					case <-quit:
						return
					}
				}
			})
			took, cs := lostAfter(t, c, sent)
			if cs.Connected || cs.Err == nil {
				t.Fatalf("after a malformed message: %+v, want the connection lost", cs)
			}
			if took > rtaCloseWait { // a ping after the close frame ends the wait at once (no pong may follow it)
				t.Errorf("a flood (opcode %d) while the client closes: the connection ended %v after the message, want at most %v", op, took, rtaCloseWait)
			}
		})
	}
}

// held: a service that sends a malformed message and then its own close
// (whose reason echoes the token), and then stops reading, holds the
// client no longer than rtaCloseWait; the state reported tells no token.
func TestAttack16CloseCrossesServiceClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quit := make(chan struct{})
		defer close(quit)
		sent := make(chan time.Time, 1)
		tok := mock.Token(me, title)
		c := attack16RawRTA(t, func(conn net.Conn, br *bufio.Reader) {
			if _, _, err := attack16ReadFrame(br); err != nil {
				return
			}
			sent <- time.Now()
			conn.Write(attack16Frame(0x1, []byte(`not an RTA message`)))
			reason := []byte{0x0f, 0xa0} // 4000
			reason = append(reason, tok[:min(len(tok), 120)]...)
			conn.Write(attack16Frame(0x8, reason))
			<-quit // reads nothing more
		})
		took, cs := lostAfter(t, c, sent)
		if cs.Connected || cs.Err == nil {
			t.Fatalf("%+v, want the connection lost", cs)
		}
		if took > rtaCloseWait {
			t.Errorf("the connection ended %v after the message, want at most %v", took, rtaCloseWait)
		}
		if s := cs.Err.Error(); strings.Contains(s, tok[:min(len(tok), 120)]) || strings.Contains(s, tok[:20]) {
			t.Errorf("the state's error tells the token: %q", s)
		}
	})
}

// held: three connections in a row, each sent a malformed message: the
// first service answers the close (the timer is stopped, and must not
// later drop another connection), the next two never do; each of them is
// dropped exactly rtaCloseWait after its message, and its own connection
// (the service's end sees it closed), not another's.
func TestAttack16CloseDropsItsOwnConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quit := make(chan struct{})
		defer close(quit)
		type conn struct {
			sent time.Time
			ws   *websocket.Conn
		}
		conns := make(chan conn, 3)
		var n atomic.Int32
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			answers := n.Add(1) == 1
			if _, _, err := ws.Read(r.Context()); err != nil {
				return
			}
			conns <- conn{time.Now(), ws}
			ws.Write(r.Context(), websocket.MessageText, []byte(`not an RTA message`))
			if answers {
				ws.Read(r.Context())
			}
			<-quit
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if cs := until[*ConnectionState](t, ch); !cs.Connected {
				t.Fatalf("connection %d: not connected: %v", i+1, cs.Err)
			}
			cs := until[*ConnectionState](t, ch)
			cn := <-conns
			took := time.Since(cn.sent)
			if cs.Connected || cs.Err == nil {
				t.Fatalf("connection %d: %+v, want lost", i+1, cs)
			}
			want := rtaCloseWait
			if i == 0 {
				want = 0
			}
			if took != want {
				t.Errorf("connection %d: lost %v after its message, want %v", i+1, took, want)
			}
			if i > 0 { // the service's end of this connection is closed
				wctx, wcancel := context.WithTimeout(ctx, time.Second)
				err := cn.ws.Write(wctx, websocket.MessageText, []byte(`[4]`))
				wcancel()
				if err == nil || errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("connection %d: the service's end still takes writes (%v): its connection was not the one dropped", i+1, err)
				}
			}
		}
		cancel()
		for range ch {
		}
	})
}

// held: the 90-minute renewal, on a service that answered the subscribe
// and then reads nothing more, ends the connection rtaCloseWait after the
// renewal is due; the events channel still closes when ctx ends.
func TestAttack16RenewalCloseBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quit := make(chan struct{})
		defer close(quit)
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			if _, _, err := ws.Read(r.Context()); err != nil {
				return
			}
			ws.Write(r.Context(), websocket.MessageText, []byte(`[1,1,0,100,null]`))
			<-quit // reads nothing more
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		if cs := until[*ConnectionState](t, ch); !cs.Connected {
			t.Fatalf("not connected: %v", cs.Err)
		}
		start := time.Now()
		cs := until[*ConnectionState](t, ch)
		if took := time.Since(start); took != rtaLifetime+rtaCloseWait {
			t.Errorf("the renewal's close ended %v after connecting, want %v", took, rtaLifetime+rtaCloseWait)
		}
		if !errors.Is(cs.Err, errRTALifetime) {
			t.Errorf("state %+v, want the renewal", cs)
		}
		cancel()
		for range ch {
		}
	})
}

// BREAK: the caller's context ends while the client's own close waits
// for a service that never answers it. Subscribe's godoc: the channel
// delivers "until ctx ends; then it is closed, the connection closed and
// every goroutine of it gone"; RELIABILITY.md: "When the caller's context
// ends ... the library drops the connection at once; the closes that wait
// are the client's own". closeWithin takes no context: the close goes on
// waiting its rtaCloseWait after the caller has left. The attack: the
// service sends a malformed message and then one event more (the client's
// reader, holding it, is no longer in a Read that would drop the
// connection when ctx ends), and never answers the close; the caller
// cancels ctx a tenth of rtaCloseWait into the close's wait. (With no
// message after the malformed one the channel closes at once.)
func TestAttack16CloseEndsWhenContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quit := make(chan struct{})
		defer close(quit)
		sent := make(chan struct{}, 1)
		c := hostileRTA(t, func(w http.ResponseWriter, r *http.Request) {
			ws := acceptRTA(w, r)
			if ws == nil {
				return
			}
			defer ws.CloseNow()
			if _, _, err := ws.Read(r.Context()); err != nil { // the subscribe
				return
			}
			ws.Write(r.Context(), websocket.MessageText, []byte(`not an RTA message`))
			ws.Write(r.Context(), websocket.MessageText, []byte(`[3,999,"x"]`)) // one more: the client's reader holds it
			sent <- struct{}{}
			<-quit // reads nothing more: the close is never answered
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		if cs := until[*ConnectionState](t, ch); !cs.Connected {
			t.Fatalf("not connected: %v", cs.Err)
		}
		<-sent
		time.Sleep(rtaCloseWait / 10) // the client is in its close, waiting
		cancel()
		left := time.Now()
		for range ch {
		}
		if took := time.Since(left); took != 0 {
			t.Errorf("the events channel closed %v after ctx ended, want at once", took)
		}
	})
}

// BREAK: Config.RTATransport is any http.RoundTripper; one that answers
// (nil, nil) is a misbehaving base, which net/http turns into an error
// ("RoundTripper implementation ... returned a nil *Response with a nil
// error"). keepHost (1513c03) reads resp.StatusCode before http.Client's
// check: a nil-pointer panic in Subscribe's goroutine, which no caller can
// recover, kills the process. Promised: RELIABILITY.md "Bad input never
// panics, hangs or grows memory" (and its row on "a base RoundTripper
// answering with a nil `Body`": "a panic in the transport" fixed); the
// connection's failure is a ConnectionState, as for any refused upgrade.
// The Subscribe runs in a child process, so that the panic fails this
// test rather than the whole package.
func TestAttack16NilRTAResponseNoPanic(t *testing.T) {
	if os.Getenv("ATTACK16_NIL_RTA_CHILD") == "1" {
		c, err := New(Config{TitleID: title, Tokens: mockTokens(),
			RTATransport: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
		if err != nil {
			t.Fatal(err)
		}
		cs := until[*ConnectionState](t, ch)
		if cs.Connected || cs.Err == nil {
			t.Errorf("%+v, want a refused connection", cs)
		}
		cancel()
		for range ch {
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAttack16NilRTAResponseNoPanic$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ATTACK16_NIL_RTA_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(string(out), "\n")
		t.Errorf("Subscribe with an RTATransport answering (nil, nil): the process died (%v):\n%s", err, strings.Join(lines[:min(len(lines), 12)], "\n"))
	}
}

// held: on real loopback (where synctest's clock cannot follow a flood
// that never pauses), a service that reads everything, never answers the
// close and sends data messages as fast as it can holds the client's close
// about rtaCloseWait, well short of github.com/coder/websocket's 5 s.
func TestAttack16CloseUnderRealFlood(t *testing.T) {
	quit := make(chan struct{})
	sent := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Sec-WebSocket-Key")
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Accept: "+attack16AcceptKey(key)+"\r\nSec-WebSocket-Protocol: "+rtaSubprotocol+"\r\n\r\n")
		if _, _, err := attack16ReadFrame(brw.Reader); err != nil {
			return
		}
		go io.Copy(io.Discard, brw.Reader)
		sent <- time.Now()
		conn.Write(attack16Frame(0x1, []byte(`not an RTA message`)))
		msg := attack16Frame(0x1, []byte(`[3,999,"x"]`))
		for {
			if _, err := conn.Write(msg); err != nil {
				return
			}
			select {
			case <-quit:
				return
			default:
			}
		}
	}))
	defer srv.Close()
	defer close(quit)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c, err := New(Config{TitleID: title, Tokens: mockTokens(), RTATransport: tr,
		Endpoints: map[string]string{"rta.xboxlive.com": srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
	if err != nil {
		t.Fatal(err)
	}
	if cs := until[*ConnectionState](t, ch); !cs.Connected {
		t.Fatalf("not connected: %v", cs.Err)
	}
	cs := until[*ConnectionState](t, ch)
	took := time.Since(<-sent)
	if cs.Connected || cs.Err == nil {
		t.Fatalf("%+v, want the connection lost", cs)
	}
	if took > rtaCloseWait+time.Second {
		t.Errorf("an unpaced flood while the client closes: the connection ended %v after the message, want about %v", took, rtaCloseWait)
	}
	t.Logf("lost %v after the message", took)
	cancel()
	for range ch {
	}
}

// held: an RTATransport whose 101 answer carries a body that is not a
// connection (none, or a read-only one) is a refused connection: a
// ConnectionState with an error that tells no token, no panic, and the
// channel closed when ctx ends. (github.com/coder/websocket refuses such
// an answer itself, so a connected websocket always has its conn.)
func TestAttack16OddUpgradeBody(t *testing.T) {
	tok := mock.Token(me, title)
	for _, body := range []io.ReadCloser{nil, io.NopCloser(strings.NewReader("x"))} {
		synctest.Test(t, func(t *testing.T) {
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				h := http.Header{}
				h.Set("Upgrade", "websocket")
				h.Set("Connection", "Upgrade")
				h.Set("Sec-WebSocket-Accept", attack16AcceptKey(r.Header.Get("Sec-WebSocket-Key")))
				h.Set("Sec-WebSocket-Protocol", rtaSubprotocol)
				return &http.Response{StatusCode: http.StatusSwitchingProtocols, Header: h, Body: body, Request: r}, nil
			})
			c, err := New(Config{TitleID: title, Tokens: mockTokens(), RTATransport: rt})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			ch, err := c.As(me).Subscribe(ctx, PresenceOf(other))
			if err != nil {
				t.Fatal(err)
			}
			cs := until[*ConnectionState](t, ch)
			if cs.Connected || cs.Err == nil {
				t.Errorf("body %T: %+v, want a refused connection", body, cs)
			} else if strings.Contains(cs.Err.Error(), tok) {
				t.Errorf("body %T: the error tells the token", body)
			}
			cancel()
			for range ch {
			}
		})
	}
}
