package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// Bounds of the request bodies the proxy holds, so that a call can be
// retried (Request.GetBody) and so that it waits for its budget with its
// body read: one of up to maxRewindBody bytes whose length is known is
// read before the call, one whose length is not given is read ahead
// alongside an HTTP/1 call that may wait (prefetch, still sent once),
// while all held at once stay within maxHeldBodies; any other is streamed
// to the service and sent once, as the transport sends a body it cannot
// rewind.
const (
	maxRewindBody = 64 << 10
	maxHeldBodies = 64 << 20
)

// heldBytes counts the bytes of request bodies held at once.
type heldBytes struct{ n atomic.Int64 }

// holdStep is the first part of a body hold reads, and counts; each next
// part doubles what it holds.
const holdStep = 4 << 10

// hold reads r's body into memory when its length is known and it may
// be, so that the transport can rewind it (GetBody); release gives its
// bytes back, after the call.
func (h *heldBytes) hold(r *http.Request) (release func(), err error) {
	n := r.ContentLength
	if r.Body == nil || r.Body == http.NoBody || n <= 0 || n > maxRewindBody {
		return func() {}, nil
	}
	return h.read(r, n)
}

// read reads r's body into memory: its n bytes, or, with n < 0 (a length
// not given), up to its end; one that does not end within maxRewindBody
// is sent as what came, then the rest, streamed. A body of n bytes whose
// request announces a trailer is read on to its end, where the trailer
// comes. A body's bytes are counted as they arrive, not from its
// Content-Length, so a body announced and never sent holds a few KiB of
// the reserve, not all it announced; when the reserve runs out part way,
// what came is sent ahead of the rest, streamed, and stays counted until
// release, since the call holds it until it ends.
func (h *heldBytes) read(r *http.Request, n int64) (release func(), err error) {
	limit := n
	if n < 0 {
		limit = maxRewindBody + 1 // a byte past the bound tells a longer body
	}
	var counted int64 // cap(b): the bytes held
	release = func() { h.n.Add(-counted) }
	var b []byte
	end := false // a read reached io.EOF
	for int64(len(b)) < limit {
		grown := min(limit, max(2*counted, holdStep))
		if h.n.Add(grown-counted) > maxHeldBodies {
			h.n.Add(counted - grown)
			r.Body = &readAhead{Reader: io.MultiReader(bytes.NewReader(b), r.Body), body: r.Body}
			return release, nil
		}
		counted = grown
		b = append(make([]byte, 0, grown), b...)
		k, err := fill(r.Body, b[len(b):grown])
		b = b[:len(b)+k]
		switch {
		case err == io.EOF && (n < 0 || int64(len(b)) == n):
			limit, end = int64(len(b)), true // the body's end
		case err == io.EOF:
			return release, io.ErrUnexpectedEOF
		case err != nil:
			return release, err
		}
	}
	if n > 0 && !end && len(r.Trailer) > 0 {
		// net/http fills an HTTP/2 request's Trailer only as a read of its
		// body reaches io.EOF, past its last byte: one more read, so that
		// the values of the trailer it announces come with the body.
		switch k, err := fill(r.Body, make([]byte, 1)); {
		case k > 0: // net/http's HTTP/2 server refuses such a body itself
			return release, errors.New("proxy: the request's body is longer than its length")
		case err != io.EOF:
			return release, err
		}
	}
	if int64(len(b)) > maxRewindBody {
		r.Body = &readAhead{Reader: io.MultiReader(bytes.NewReader(b), r.Body), body: r.Body}
		return release, nil
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return release, nil
}

// fill reads from r into p until p is full or a read fails. Unlike
// io.ReadFull it returns io.EOF as it came: the end of a body whose
// length is not given (one cut off fails with io.ErrUnexpectedEOF).
func fill(r io.Reader, p []byte) (n int, err error) {
	for n < len(p) && err == nil {
		var k int
		k, err = r.Read(p[n:])
		n += k
	}
	return n, err
}

// readAhead is a body of which read took a part before it gave up
// holding it: that part, then the rest; closing closes the body.
type readAhead struct {
	io.Reader
	body io.Closer
}

func (r *readAhead) Close() error { return r.body.Close() }

// prefetched is a request body whose length is not given, read ahead
// (up to maxRewindBody, as read reads one) alongside the call: over
// HTTP/1, net/http notices that the application has closed its connection
// only once the request's body is read to its end, so a call that waits
// for its budget with its body unread would not end when the application
// gives up. It is read alongside the call, not before it, so that the
// service may have the call before the body has come, as with a body
// streamed. A read waits for the reading ahead to end, then reads what it
// made of the body: the body whole, or its first part and then the rest.
type prefetched struct {
	done    chan struct{}
	body    io.ReadCloser // once done: the body read made
	err     error         // once done: read's error
	release func()        // once done: read's
}

// prefetch starts reading body ahead.
func (h *heldBytes) prefetch(body io.ReadCloser) *prefetched {
	p := &prefetched{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		r := &http.Request{Body: body, ContentLength: -1}
		p.release, p.err = h.read(r, -1)
		p.body = r.Body
	}()
	return p
}

func (p *prefetched) Read(b []byte) (int, error) {
	<-p.done
	if p.err != nil {
		return 0, p.err
	}
	return p.body.Read(b)
}

func (p *prefetched) Close() error {
	<-p.done
	return p.body.Close()
}

// end waits for the reading ahead to end and gives its bytes back, after
// the call: its reads end by then (Server.forward, call.answered).
func (p *prefetched) end() {
	<-p.done
	p.release()
}
