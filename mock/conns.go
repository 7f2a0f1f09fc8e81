package mock

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Bounds of the connections of a server of the mock (ConnLimits).
const (
	// DefaultIdleTimeout is how long a connection may wait for its next
	// request before it is closed: longer than the 90 s a Go client keeps
	// an idle connection, so that the client closes first.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxConns is how many connections a listener keeps open at
	// once.
	DefaultMaxConns = 1024
	// headerTimeout bounds the wait for a request's header (and a TLS
	// handshake) when IdleTimeout is longer.
	headerTimeout = 10 * time.Second
)

// ConnLimits bounds the connections of a server of the mock (Server.Conns,
// and xblcall mock's --idle-timeout and --max-conns): an idle one is closed and
// only so many are open at once, so that clients that leave connections
// open, or open many, cannot take a mock's descriptors and goroutines.
// The zero value is the defaults.
type ConnLimits struct {
	// IdleTimeout closes a connection that waits this long for a request:
	// a keep-alive connection between requests (an HTTP/2 one with no
	// stream), a CONNECT tunnel the same way, and a new connection, or a
	// tunnel, that has not sent its first request's header (or finished
	// its TLS handshake) within IdleTimeout or 10 s, whichever is
	// shorter. A request being served is never cut short. 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxConns bounds the connections open at once on each listener, a
	// CONNECT tunnel counting as the connection it came in on; past it the
	// next connection waits, unaccepted, until one closes. 0 means
	// DefaultMaxConns.
	MaxConns int
}

// SetTimeouts sets srv's idle and header timeouts to l's. A server that
// serves CONNECT tunnels another took over (as xblcall mock's TLS server
// does) needs them too.
func (l ConnLimits) SetTimeouts(srv *http.Server) {
	idle := l.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	srv.IdleTimeout, srv.ReadHeaderTimeout = idle, min(idle, headerTimeout)
}

// Listener returns ln accepting at most l.MaxConns connections open at
// once: Accept waits for one to close. Closing it ends that wait.
func (l ConnLimits) Listener(ln net.Listener) net.Listener {
	n := l.MaxConns
	if n <= 0 {
		n = DefaultMaxConns
	}
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// limitListener accepts at most cap(slots) connections open at once.
type limitListener struct {
	net.Listener
	slots chan struct{}
	once  sync.Once
	done  chan struct{} // closed by Close, so that a wait for a slot ends
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// slotConn gives its slot back when it is closed, once.
type slotConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}

// CloseWrite half-closes a TCP connection, as http.Server does before
// closing one whose request it did not read whole, so that the client
// reads the answer rather than a reset.
func (c *slotConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
