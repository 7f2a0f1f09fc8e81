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
	// DefaultHeaderTimeout is how long a TLS handshake, and the reading of
	// a request's header, may take.
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultMaxConns is how many connections a listener keeps open at
	// once.
	DefaultMaxConns = 1024
)

// ConnLimits bounds the connections of a server of the mock (Server.Conns;
// xblcall mock's --idle-timeout, --header-timeout and --max-conns): an idle
// one is closed and only so many are open at once, so that clients that
// leave connections open, or open many, cannot take a mock's descriptors
// and goroutines. A field that is not positive means its default.
type ConnLimits struct {
	// IdleTimeout closes a connection that waits this long for its next
	// request: a keep-alive connection between requests (an HTTP/2 one
	// with no stream), a CONNECT tunnel the same way. A request being
	// served is never cut short. DefaultIdleTimeout by default.
	IdleTimeout time.Duration
	// HeaderTimeout closes a connection (or a tunnel) whose TLS handshake,
	// or the header of a request, takes longer: from when it opened for
	// the first request, from its first byte for the next. So a
	// connection that never sends a request is closed after it.
	// DefaultHeaderTimeout by default.
	HeaderTimeout time.Duration
	// MaxConns bounds the connections open at once on each listener, a
	// CONNECT tunnel counting as the connection it came in on; past it the
	// next connection waits, unaccepted, until one closes. DefaultMaxConns
	// by default.
	MaxConns int
}

// SetTimeouts sets srv's idle and header timeouts to l's. A server that
// serves CONNECT tunnels another took over (as xblcall mock's TLS server
// does) needs them too.
func (l ConnLimits) SetTimeouts(srv *http.Server) {
	srv.IdleTimeout, srv.ReadHeaderTimeout = positive(l.IdleTimeout, DefaultIdleTimeout), positive(l.HeaderTimeout, DefaultHeaderTimeout)
}

// Listener returns ln accepting at most l.MaxConns connections open at
// once: Accept waits for one to close. Closing it ends that wait.
func (l ConnLimits) Listener(ln net.Listener) net.Listener {
	n := positive(l.MaxConns, DefaultMaxConns)
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// positive returns v, or def when v is not positive.
func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
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
