// Package tunnel serves connections a CONNECT handler took over (the mock's
// and the proxy's TLS inside a tunnel) with an ordinary http.Server: a
// Listener they are pushed to, and a Conn that first gives back what the
// handler's reader had buffered.
package tunnel

import (
	"bufio"
	"net"
	"sync"
)

// Listener is a net.Listener of the connections pushed to it.
type Listener struct {
	addr  net.Addr
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

// NewListener returns a Listener whose Addr is addr.
func NewListener(addr net.Addr) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// Push hands c to Accept; it reports false once the listener is closed (c
// is then the caller's to close).
func (l *Listener) Push(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

// Accept returns the next connection pushed, or net.ErrClosed once closed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close ends Accept and Push; it is safe to call more than once.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the address NewListener was given.
func (l *Listener) Addr() net.Addr { return l.addr }

// Buffered returns conn, reading first what r (the reader conn was read
// through before the takeover) holds, when it holds anything.
func Buffered(conn net.Conn, r *bufio.Reader) net.Conn {
	if r == nil || r.Buffered() == 0 {
		return conn
	}
	return &bufferedConn{Conn: conn, r: r}
}

// bufferedConn reads what the reader had buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes the connection when it can.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
