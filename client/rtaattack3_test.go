package client

// A third outside attack on package client (2026-12-05): the Real-Time
// Activity upgrade answered by a hostile service that echoes the caller's
// token in the header lines it gets wrong.

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestAttack3RTAUpgradeErrorEchoesToken: the websocket upgrade answered with a
// 101 whose Connection header (or a malformed header line) echoes the
// request's Authorization and Signature: the dialer's error quotes it, and
// it reaches the caller's ConnectionState.Err unscrubbed.
// Promise: RELIABILITY.md "Secrets": "client errors never repeat a token";
// RELIABILITY.md "A hostile service: package client", rows "net/http's
// errors quoting a service's header lines ...: the request's own token and
// signature taken out of the service's text" and "a malformed RTA upgrade
// answer with a 1 MB header: clipped and escaped". Public fact:
// github.com/coder/websocket's dial.go verifies the 101's headers and
// quotes a wrong Connection or Upgrade value with %q; net/textproto quotes a
// malformed header line ("malformed MIME header: missing colon: %q").
func TestAttack3RTAUpgradeErrorEchoesToken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(echo string) string
	}{
		{"Connection header", func(echo string) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: " + echo + "\r\n\r\n"
		}},
		{"malformed header line", func(echo string) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" + strings.ReplaceAll(echo, ":", " ") + "\r\n\r\n"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				conn, rw, err := http.NewResponseController(w).Hijack()
				if err != nil {
					return
				}
				defer conn.Close()
				rw.WriteString(tc.answer(r.Header.Get("Authorization") + " " + r.Header.Get("Signature")))
				rw.Flush()
				bufio.NewReader(conn).ReadByte()
			}))
			defer srv.Close()
			c, err := New(Config{TitleID: title, RTATransport: plainTransport(t), Endpoints: map[string]string{"rta.xboxlive.com": srv.URL},
				Tokens: TokenFunc(func(context.Context, string) (Token, error) {
					return Token{Authorization: hostileToken, Signature: hostileSig}, nil
				})})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			ch, err := c.As(me).Subscribe(ctx, PresenceOf(me))
			if err != nil {
				t.Fatal(err)
			}
			ev := <-ch
			cancel()
			for range ch {
			}
			cs, ok := ev.(*ConnectionState)
			if !ok || cs.Err == nil {
				t.Fatalf("first event %#v, want a ConnectionState with the refusal", ev)
			}
			for _, s := range []string{"SECRET-HOSTILE-TOKEN", hostileSig} {
				if strings.Contains(cs.Err.Error(), s) {
					t.Errorf("ConnectionState.Err tells %q: %v", s, cs.Err)
				}
			}
		})
	}
}

// TestAttack3RTACloseReasonEchoesToken: the service takes the upgrade, then
// closes the websocket with a reason echoing the request's Authorization
// and an escape code: the close error reaches ConnectionState.Err as
// coder/websocket made it (a *fmt.wrapError around its CloseError, no
// *Error), the service's reason whole and unscrubbed.
// Promise: RELIABILITY.md "Secrets": "client errors never repeat a token";
// "A hostile service: package client": a service's text in an error is
// "clipped and escaped" with "the request's own token and signature taken
// out"; client.go: "Every failure of a call is an *Error". Public fact: RFC
// 6455 §5.5.1, a Close frame's body may hold a UTF-8 reason (up to 123
// bytes), which coder/websocket's CloseError.Error quotes.
func TestAttack3RTACloseReasonEchoesToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws := acceptRTA(w, r)
		if ws == nil {
			return
		}
		defer ws.CloseNow()
		ws.Close(websocket.StatusPolicyViolation, r.Header.Get("Authorization")+"\x1b[31m")
	}))
	defer srv.Close()
	c, err := New(Config{TitleID: title, RTATransport: plainTransport(t), Endpoints: map[string]string{"rta.xboxlive.com": srv.URL},
		Tokens: TokenFunc(func(context.Context, string) (Token, error) {
			return Token{Authorization: hostileToken, Signature: hostileSig}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ch, err := c.As(me).Subscribe(ctx, PresenceOf(me))
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for ev := range ch {
		if cs, ok := ev.(*ConnectionState); ok && cs.Err != nil {
			got = cs.Err
			break
		}
	}
	cancel()
	for range ch {
	}
	if got == nil {
		t.Fatal("no ConnectionState with an error")
	}
	if msg := got.Error(); strings.Contains(msg, "SECRET-HOSTILE-TOKEN") || strings.Contains(msg, "\x1b") {
		t.Errorf("ConnectionState.Err (%T) tells the token or an escape code: %q", got, msg)
	}
}
