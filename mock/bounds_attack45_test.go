package mock

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// held: the Call doc "URL is https://host/path?query as received (clipped
// to 1 KiB)", and Config.Logger's record of "its method, host and path":
// a 200 KB path and query and a 64 KB header value leave a record, a HAR
// entry and a log line of bounded size.
func TestAttack45LongTargetsBounded(t *testing.T) {
	var log bytes.Buffer
	h := Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&log, nil))}))
	tok := Token(xuid1, title1)
	long := strings.Repeat("p", 100_000)
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings/people/"+long+"?settings=Gamertag&x="+long, nil)
	req.Header.Set("Authorization", tok)
	req.Header.Set("X-Long", strings.Repeat("h", 64_000))
	send(t, h, req)
	calls := h.Calls(CallFilter{})
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	if n := len(calls[0].URL); n > 1200 {
		t.Errorf("Call.URL %d bytes, want about 1 KiB at most", n)
	}
	var har bytes.Buffer
	if err := h.WriteHAR(&har, CallFilter{}); err != nil {
		t.Fatal(err)
	}
	if har.Len() > 16_000 {
		t.Errorf("HAR of one call %d bytes", har.Len())
	}
	if log.Len() > 4_000 {
		t.Errorf("log line of one call %d bytes: %.300s", log.Len(), log.String())
	}
}

// attack45Server starts a mock server with short connection bounds.
func attack45Server(t *testing.T, c ConnLimits) *Server {
	t.Helper()
	s := NewUnstartedServer(nil)
	s.Conns = c
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// attack45Ends reports whether conn is closed by the server (a read ends in
// EOF or an error, not a timeout) within d, and what it read.
func attack45Ends(conn net.Conn, d time.Duration) (string, bool) {
	conn.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return string(b), false
	}
	return string(b), true
}

// held: ConnLimits.BodyTimeout "closes a connection whose request body
// sends nothing for this long: a header that declares a body which never
// comes, or one that stops half-way", "A body must also come at
// MinBodyRate or faster after its first BodyTimeout"; HeaderTimeout
// "closes a connection ... whose ... header of a request, takes longer";
// docs/MOCK.md "closes ... one that sends no request header ... within 10
// s". Each of these connections ends: a body stopped half-way (to a
// counted service and to a sign-in host, whose body is read), a body
// dripped a byte at a time in chunks, a body declared and half-closed, a
// header never finished, a header of 2 MB.
func TestAttack45EveryRequestEnds(t *testing.T) {
	s := attack45Server(t, ConnLimits{BodyTimeout: 300 * time.Millisecond, HeaderTimeout: 500 * time.Millisecond})
	addr := strings.TrimPrefix(s.URL, "http://")
	tok := Token(xuid1, title1)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	cases := []struct {
		name string
		run  func(c net.Conn)
	}{
		{"body stops half-way at presence", func(c net.Conn) {
			fmt.Fprintf(c, "POST /users/me/devices/current/titles/current HTTP/1.1\r\nHost: userpresence.xboxlive.com\r\nAuthorization: %s\r\nContent-Length: 1000\r\n\r\n{\"state\":", tok)
		}},
		{"body stops half-way at login.live.com", func(c net.Conn) {
			fmt.Fprintf(c, "POST /oauth20_token.srf HTTP/1.1\r\nHost: login.live.com\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=")
		}},
		{"body at a host the mock does not serve", func(c net.Conn) {
			fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: nowhere.example\r\nContent-Length: 100000\r\n\r\nabc")
		}},
		{"chunked body dripped", func(c net.Conn) {
			fmt.Fprintf(c, "POST /users/batch HTTP/1.1\r\nHost: userpresence.xboxlive.com\r\nAuthorization: %s\r\nTransfer-Encoding: chunked\r\n\r\n", tok)
			for i := 0; i < 100; i++ {
				if _, err := c.Write([]byte("1\r\n \r\n")); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}},
		{"body declared, then half-closed", func(c net.Conn) {
			fmt.Fprintf(c, "POST /users/batch HTTP/1.1\r\nHost: userpresence.xboxlive.com\r\nAuthorization: %s\r\nContent-Length: 50\r\n\r\n{\"us", tok)
			c.(*net.TCPConn).CloseWrite()
		}},
		{"Expect 100-continue, body never sent", func(c net.Conn) {
			fmt.Fprintf(c, "POST /users/batch HTTP/1.1\r\nHost: userpresence.xboxlive.com\r\nAuthorization: %s\r\nExpect: 100-continue\r\nContent-Length: 50\r\n\r\n", tok)
		}},
		{"header never finished", func(c net.Conn) {
			fmt.Fprintf(c, "GET /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n")
		}},
		{"2 MB header", func(c net.Conn) {
			w := bufio.NewWriter(c)
			fmt.Fprintf(w, "GET /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nX-Big: ")
			w.WriteString(strings.Repeat("b", 2<<20))
			w.WriteString("\r\n\r\n")
			w.Flush()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var writers sync.WaitGroup
			t.Cleanup(writers.Wait) // after the connection's Close (cleanups run last first): a case's writer holds megabytes, which a later test measuring the heap must not see freed
			c := dial()
			writers.Go(func() { tc.run(c) })
			if got, ended := attack45Ends(c, 5*time.Second); !ended {
				t.Errorf("connection still open 5 s later (read %.120q)", got)
			}
		})
	}
}

// RoundTrip's doc: "RoundTrip serves req in the calling goroutine ... The
// mock sees the request as a server would (its headers and body ...)",
// and a server of the mock ends a request whose body "sends nothing"
// (ConnLimits.BodyTimeout); net/http's own RoundTrippers return when the
// request's context ends. A request whose body never comes, given a
// context of 300 ms, holds the mock's RoundTrip (and the calling
// goroutine) for as long as the body does: here past 3 s.
func TestAttack45RoundTripEndsWithItsContext(t *testing.T) {
	h := NewHandler()
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", "https://userpresence.xboxlive.com/users/batch", pr)
	req.Header.Set("Authorization", Token(xuid1, title1))
	done := make(chan error, 1)
	go func() {
		resp, err := h.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Errorf("RoundTrip still running 3 s after its request's context (300 ms) ended, its body never sent")
		pw.CloseWithError(io.ErrUnexpectedEOF)
		<-done
	}
}
