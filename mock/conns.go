package mock

import (
	"io"
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
	// DefaultBodyTimeout is how long a request's body may send nothing
	// before its connection is closed.
	DefaultBodyTimeout = 10 * time.Second
	// MinBodyRate is the slowest a request's body may come, in bytes a
	// second, counted from the end of its first BodyTimeout: by
	// BodyTimeout + t after the request came, at least t × MinBodyRate of
	// its bytes must have arrived, or its connection is closed. So a body
	// of n bytes sent at this rate or faster is whole by BodyTimeout +
	// n/MinBodyRate (a 64 KiB sign-in body by 74 s at the default), and
	// one sent slower is cut as soon as it falls behind the rate, however
	// large its declared length.
	MinBodyRate = 1 << 10
)

// ConnLimits bounds the connections of a server of the mock (Server.Conns;
// xblcall mock's --idle-timeout, --header-timeout, --body-timeout and
// --max-conns): an idle one is closed, one whose request stalls is closed,
// and only so many are open at once, so that clients that leave
// connections open, stall them or open many cannot take a mock's
// descriptors and goroutines. A field that is not positive means its
// default.
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
	// BodyTimeout closes a connection whose request body sends nothing for
	// this long: a header that declares a body which never comes, or one
	// that stops half-way (each byte that arrives restarts the time). A
	// body must also come at MinBodyRate or faster after its first
	// BodyTimeout, so that one dripped a byte at a time cannot hold a
	// connection for days. Answers are never cut short, so a live page's
	// event stream stays open. DefaultBodyTimeout by default.
	BodyTimeout time.Duration
	// MaxConns bounds the connections open at once on each listener, a
	// CONNECT tunnel counting as the connection it came in on; past it the
	// next connection waits, unaccepted, until one closes. DefaultMaxConns
	// by default.
	MaxConns int
}

// Apply sets srv's idle and header timeouts to l's, and wraps its Handler
// so that a request's body is read within BodyTimeout. A server that serves
// CONNECT tunnels another took over (as xblcall mock's TLS server does)
// needs it too.
func (l ConnLimits) Apply(srv *http.Server) {
	srv.IdleTimeout, srv.ReadHeaderTimeout = positive(l.IdleTimeout, DefaultIdleTimeout), positive(l.HeaderTimeout, DefaultHeaderTimeout)
	srv.Handler = bodyDeadline{next: srv.Handler, d: positive(l.BodyTimeout, DefaultBodyTimeout)}
}

// bodyDeadline reads a request's body under a read deadline of d that each
// byte read pushes back, to no later than d plus a second for each
// MinBodyRate bytes read since the request came (MinBodyRate's rule), and
// hands the server its own body back when the
// handler returns: net/http then answers at once a request whose large
// body was left unread, or that awaited 100-continue, and what it drains
// of a small one is drained under the deadline too. A request without a
// body gets no deadline, so that answers streamed for long (a live page)
// are not cut.
type bodyDeadline struct {
	next http.Handler
	d    time.Duration
}

func (b bodyDeadline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.Method == http.MethodConnect {
		b.next.ServeHTTP(w, r)
		return
	}
	rc := http.NewResponseController(w)
	start := time.Now()
	rc.SetReadDeadline(start.Add(b.d)) // an error: a writer that cannot (a recorder), nothing to bound
	own := r.Body
	r.Body = &pushedBody{ReadCloser: own, push: func(read int64) {
		idle := time.Since(start) + b.d                             // nothing for d
		slow := b.d + time.Duration(read)*(time.Second/MinBodyRate) // MinBodyRate after the first d
		rc.SetReadDeadline(start.Add(min(idle, slow)))
	}}
	defer func() { r.Body = own }()
	b.next.ServeHTTP(w, r)
}

// pushedBody calls push with the bytes read so far after each read that
// brought bytes.
type pushedBody struct {
	io.ReadCloser
	read int64
	push func(read int64)
}

func (p *pushedBody) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	if n > 0 {
		p.read += int64(n)
		p.push(p.read)
	}
	return n, err
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
