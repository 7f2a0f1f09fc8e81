package mock

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener is a net.Listener of in-memory connections, for synctest.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn, 16), done: make(chan struct{})}
}

// dial returns the client's end of a new connection.
func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.conns <- s
	return c
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{} }

// TestConnsWait: with MaxConns open, Accept waits until one closes (a
// second Close of it frees nothing more), and closing the listener ends
// the wait.
func TestConnsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newPipeListener()
		ln := ConnLimits{MaxConns: 2}.Listener(inner)
		accepted := make(chan net.Conn, 4)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					close(accepted)
					return
				}
				accepted <- c
			}
		}()
		defer func() {
			ln.Close()
			for c := range accepted {
				c.Close()
			}
		}()
		for range 4 {
			defer inner.dial().Close()
		}
		synctest.Wait()
		if got := len(accepted); got != 2 {
			t.Fatalf("%d connections accepted of 4 dialled, want 2 (MaxConns)", got)
		}
		first := <-accepted
		first.Close()
		first.Close()
		synctest.Wait()
		if got := len(accepted); got != 2 {
			t.Fatalf("after one closed (twice): %d more accepted, want 1", got-1)
		}
	})
}

// TestIdleConnectionsClosed: a client's keep-alive connection left idle
// after a request is closed by the server after Conns.IdleTimeout, over
// HTTP/1.1, HTTPS and HTTP/2; a connection that never sends a request, or
// never starts its TLS handshake, after Conns.HeaderTimeout. The test waits
// for the close at most 5 s.
func TestIdleConnectionsClosed(t *testing.T) {
	for _, tc := range []struct {
		name         string
		tls, h2, req bool
	}{
		{"http/1.1", false, false, true},
		{"https http/1.1", true, false, true},
		{"https h2", true, true, true},
		{"no request", false, false, false},
		{"no TLS handshake", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewUnstartedServer(nil)
			if tc.req {
				s.Conns.IdleTimeout = 100 * time.Millisecond
			} else {
				s.Conns.HeaderTimeout = 100 * time.Millisecond
			}
			if tc.tls {
				s.StartTLS()
			} else {
				s.Start()
			}
			defer s.Close()
			closed := make(chan error, 1)
			dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, s.srv.Listener.Addr().String())
				return &watchedConn{Conn: c, closed: closed}, err
			}
			if !tc.req {
				c, err := dial(context.Background(), "tcp", "")
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				go io.Copy(io.Discard, c) // reads until the server closes it
			} else {
				tr := &http.Transport{DialContext: dial, ForceAttemptHTTP2: tc.h2}
				if tc.tls {
					tr.TLSClientConfig = &tls.Config{RootCAs: s.CA.Pool(), ServerName: "profile.xboxlive.com"}
				}
				defer tr.CloseIdleConnections()
				req, _ := http.NewRequest("GET", s.URL+"/users/me/profile/settings?settings=Gamertag", nil)
				req.Host = "profile.xboxlive.com"
				req.Header.Set("Authorization", Token(xuid1, title1))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if got, want := resp.ProtoMajor, map[bool]int{false: 1, true: 2}[tc.h2]; got != want {
					t.Fatalf("answered over %s, want HTTP/%d", resp.Proto, want)
				}
			}
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("the server kept an idle connection open 5 s")
			}
		})
	}
}

// watchedConn tells when the server closed it: a read from it finds it
// closed, or the client closes it on reading TLS's close_notify (or
// HTTP/2's GOAWAY) from the server.
type watchedConn struct {
	net.Conn
	closed chan error
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err == io.EOF {
		c.tell(err)
	}
	return n, err
}

func (c *watchedConn) Close() error {
	c.tell(net.ErrClosed)
	return c.Conn.Close()
}

func (c *watchedConn) tell(err error) {
	select {
	case c.closed <- err:
	default:
	}
}

// TestConnsBounded: with Conns.MaxConns (2) connections open, a third
// client's request is not answered until one of them closes.
func TestConnsBounded(t *testing.T) {
	s := NewUnstartedServer(nil)
	s.Conns.MaxConns = 2
	s.Start()
	defer s.Close()
	addr := s.srv.Listener.Addr().String()
	open := func() (net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "GET /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	answer := func(c net.Conn, r *bufio.Reader, within time.Duration) error {
		c.SetReadDeadline(time.Now().Add(within))
		resp, err := http.ReadResponse(r, nil)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	first, r1 := open()
	second, r2 := open()
	for _, c := range []struct {
		c net.Conn
		r *bufio.Reader
	}{{first, r1}, {second, r2}} {
		if err := answer(c.c, c.r, 5*time.Second); err != nil {
			t.Fatalf("one of the first two: %v", err)
		}
	}
	third, r3 := open()
	// No answer can come while the two are open: the wait is only how
	// long the test looks.
	if err := answer(third, r3, 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the third, with two open: %v, want no answer", err)
	}
	first.Close()
	if err := answer(third, r3, 5*time.Second); err != nil {
		t.Fatalf("the third, once the first closed: %v", err)
	}
}
