package tunnel

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/xblgo/fgrl/internal/leakcheck"
)

// held: Push never hands a conn over once Close has returned, even with
// an Accept parked at that moment (the race a CONNECT handler and the
// server's accept loop run at shutdown), 2,000 times. Promised (Push):
// "it reports false once the listener is closed (c is then the caller's
// to close)"; (Accept): "or net.ErrClosed once closed".
func TestAttackPushAfterCloseNeverTaken(t *testing.T) {
	for range 2000 {
		l := NewListener(&net.TCPAddr{})
		got := make(chan error, 1)
		go func() {
			c, err := l.Accept()
			if c != nil {
				err = errors.New("Accept returned a conn pushed after Close")
			}
			got <- err
		}()
		l.Close()
		a, b := net.Pipe()
		if l.Push(a) {
			t.Fatal("Push after Close took the conn")
		}
		if err := <-got; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept: %v", err)
		}
		a.Close()
		b.Close()
	}
}

// attackTunnels is a CONNECT handler in front of an http.Server serving TLS
// on a Listener, as xblcall mock and the proxy use the package.
type attackTunnels struct {
	outer    *httptest.Server
	l        *Listener
	innerSrv *http.Server
	client   *tls.Config
	done     chan error
}

func attackServe(t *testing.T) *attackTunnels {
	t.Helper()
	certSrv := httptest.NewTLSServer(http.NotFoundHandler())
	cert := certSrv.TLS.Certificates[0]
	pool := certSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	certSrv.Close()
	a := &attackTunnels{l: NewListener(&net.TCPAddr{}), done: make(chan error, 1),
		client: &tls.Config{RootCAs: pool, ServerName: "example.com", NextProtos: []string{"http/1.1"}}}
	a.innerSrv = &http.Server{ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "inner") })}
	go func() {
		a.done <- a.innerSrv.Serve(tls.NewListener(a.l, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}))
	}()
	a.outer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		if c := Buffered(conn, rw.Reader); !a.l.Push(c) {
			c.Close()
		}
	}))
	return a
}

func (a *attackTunnels) close() {
	a.outer.Close()
	a.l.Close()
	a.innerSrv.Close()
	<-a.done
}

// connect opens a tunnel; first is written right behind the CONNECT, in
// the same write (a client that speaks before the 200).
func (a *attackTunnels) connect(t *testing.T, first []byte) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", a.outer.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write(append([]byte("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), first...))
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	return c, r
}

// closedWithin reports whether the peer closes c within d.
func closedWithin(c net.Conn, r io.Reader, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	return err == nil || !(errors.As(err, &ne) && ne.Timeout())
}

// held: a tunnel's connection ends, with the server's own timeouts, for a
// client that never sends its TLS hello, one that sends half a hello, one
// that drips a request header a byte at a time (slowloris inside
// CONNECT), and is served for one that half-closes after its request; a
// ClientHello sent in the same write as the CONNECT (what the handler's
// reader read ahead) is read first. Once the servers close, every
// tunnel's connection ends and no goroutine is left. Promised (package
// doc): "serves connections a CONNECT handler took over ... with an
// ordinary http.Server: a Listener they are pushed to, and a Conn that
// first gives back what the handler's reader had buffered".
func TestAttackTunnelsEndLikeConnections(t *testing.T) {
	defer goleak.VerifyNone(t, append(leakcheck.Options(), goleak.IgnoreCurrent())...)
	a := attackServe(t)
	closedAll := false
	defer func() {
		if !closedAll {
			a.close()
		}
	}()

	c, r := a.connect(t, nil) // no hello
	if !closedWithin(c, r, 5*time.Second) {
		t.Error("a tunnel with no TLS hello is still open after 5 s (ReadHeaderTimeout 300 ms)")
	}
	c.Close()

	c, r = a.connect(t, []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}) // half a hello, in the CONNECT's write
	if !closedWithin(c, r, 5*time.Second) {
		t.Error("a tunnel with half a TLS hello is still open after 5 s")
	}
	c.Close()

	c, _ = a.connect(t, nil)
	tc := tls.Client(c, a.client)
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for _, b := range []byte("GET / HTTP/1.1\r\nHost: example.com\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa") {
			tc.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := tc.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Error("a header dripped a byte every 50 ms inside a tunnel still open after 5 s")
	}
	c.Close()
	<-closed

	// A hello in the CONNECT's own write, then a request and a half-close:
	// served.
	raw, err := net.Dial("tcp", a.outer.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	pc := &attackPrefixConn{Conn: raw, pre: []byte("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), br: bufio.NewReader(raw)}
	tlsc := tls.Client(pc, a.client)
	if err := tlsc.Handshake(); err != nil {
		t.Fatalf("handshake behind the CONNECT: %v", err)
	}
	io.WriteString(tlsc, "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
	raw.(*net.TCPConn).CloseWrite()
	if resp, err := http.ReadResponse(bufio.NewReader(tlsc), nil); err != nil {
		t.Errorf("half-closed after its request: %v", err)
	} else if b, _ := io.ReadAll(resp.Body); string(b) != "inner" {
		t.Errorf("half-closed after its request: %q", b)
	}

	// Tunnels still in their handshake when the servers close end too.
	var open []net.Conn
	for range 5 {
		c, _ := a.connect(t, nil)
		open = append(open, c)
	}
	a.close()
	closedAll = true
	for _, c := range open {
		if !closedWithin(c, c, 2*time.Second) {
			t.Error("a tunnel outlived its server's Close")
		}
		c.Close()
	}
}

// attackPrefixConn writes pre before its first write (a CONNECT) and reads
// the CONNECT's answer before its first read.
type attackPrefixConn struct {
	net.Conn
	pre  []byte
	br   *bufio.Reader
	read bool
}

func (c *attackPrefixConn) Write(p []byte) (int, error) {
	if c.pre != nil {
		b := append(c.pre, p...)
		c.pre = nil
		if _, err := c.Conn.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *attackPrefixConn) Read(p []byte) (int, error) {
	if !c.read {
		c.read = true
		resp, err := http.ReadResponse(c.br, &http.Request{Method: "CONNECT"})
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != 200 {
			return 0, errors.New(resp.Status)
		}
	}
	return c.br.Read(p)
}
