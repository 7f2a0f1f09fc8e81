package mock

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"syscall"
	"time"
)

// RoundTrip serves req in the calling goroutine, with no socket, so a Handler
// can be the Base of a transport in tests, including inside a
// testing/synctest bubble. The request's URL host is the Host the mock sees,
// so production URLs (https://profile.xboxlive.com/...) work unchanged. The
// mock sees the request as a server would (its headers and body, a URL and
// form of its own: a Form the caller set is not read) and leaves req as it
// was; the answer is what a client of net/http's HTTP/1.1 server would
// receive: the headers as they stood when the status was written, and what
// the server adds to them (a Date; a Content-Type sniffed from the body
// when the handler names none; a Content-Length, and so resp.ContentLength,
// for a body of at most 2048 bytes the handler wrote without flushing, and
// otherwise a chunked body: resp.TransferEncoding), no body for a HEAD. An
// injected connection reset returns an error wrapping syscall.ECONNRESET, as
// a real reset would. When req's context ends while the mock reads its body,
// the body is closed, as net/http's transport closes it, and RoundTrip
// returns the context's error: a body that never comes holds no call, when
// its Read ends once it is closed (an io.Pipe's, a net/http server's
// request body); the mock reads on the calling goroutine, so a body whose
// Read ignores Close holds it.
func (h *Handler) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	if err := req.Context().Err(); err != nil {
		if req.Body != nil {
			req.Body.Close() // the RoundTripper contract: always close the request body, on errors too
		}
		return nil, err
	}
	// The server's request shares the caller's headers and body, which the
	// mock reads and never changes (TestRoundTripLeavesTheRequest), and
	// has a URL of its own: the pipeline cleans its path in place (serve).
	// A whole Clone copied every header for every call (BENCHMARKS.md §7b).
	sreq := new(http.Request)
	*sreq = *req
	u := *req.URL
	sreq.URL = &u
	// A server parses its own form from the request: a Form a client set
	// (which net/http's client never sends) would stand in for the body's.
	sreq.Form, sreq.PostForm, sreq.MultipartForm = nil, nil, nil
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.GetBody = nil // a server's request has none: what it reads is the body
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "127.0.0.1:1"
	rec := &answer{header: make(http.Header), head: req.Method == http.MethodHead}
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			resp, err = aborted(rec, req)
		}
	}()
	if req.Body != nil && req.Body != http.NoBody {
		// A body that stalls ends with the request's context, as over
		// net/http's transport, which closes it then: the handler's read
		// fails, and the call ends with the context's error below.
		stop := context.AfterFunc(req.Context(), func() { req.Body.Close() })
		defer stop()
	}
	h.ServeHTTP(rec, sreq)
	if req.Body != nil {
		req.Body.Close() // the RoundTripper contract: always close the request body
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	resp = rec.result()
	resp.Request = req
	return resp, nil
}

// aborted is what a client sees of an aborted handler: a reset when nothing
// was sent, or a response whose body ends early when the headers were.
func aborted(rec *answer, req *http.Request) (*http.Response, error) {
	if !rec.flushed {
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	}
	resp := rec.result()
	// The client reads an early end only where a body was promised: a
	// chunked one, or fewer bytes than its Content-Length (not a HEAD's,
	// nor a status's that has none, nor a whole short one).
	if resp.Body != http.NoBody && (resp.ContentLength < 0 || int64(rec.body.Len()) < resp.ContentLength) {
		resp.Body = io.NopCloser(io.MultiReader(resp.Body, errReader{io.ErrUnexpectedEOF}))
	}
	resp.Request = req
	return resp, nil
}

// answer is the ResponseWriter of RoundTrip: what net/http's HTTP/1.1
// server would send (a status of 200 when none is written, no body for a
// status that has none nor for a HEAD, and at the status or the first
// flush the headers it adds: see result). The answer's headers are the
// handler's header map as it stands when the status is written, and a
// handler that asks for its headers again after that gets a copy, made
// then, so that what it sets no longer reaches the answer (a server has
// sent them); the values are the answer's own from the status on. The mock
// keeps no header map across a WriteHeader, and sends no trailers.
// Informational statuses (1xx), which no handler of the mock writes (a
// script's status is 200 to 599), end the answer as any other status would
// (as httptest.ResponseRecorder does); a server sends them ahead of the
// final one. No handler of the mock sets a Transfer-Encoding either (a
// script cannot), so the answer frames no body by one.
type answer struct {
	header  http.Header // the handler's; nil from the status until it asks again
	sent    http.Header // the answer's, from the status on
	code    int
	body    bytes.Buffer
	head    bool // the request's method is HEAD: the body is not sent
	flushed bool
	atFlush int // the bytes written before the first flush
}

func (a *answer) Header() http.Header {
	if a.header == nil { // asked for after the status: a copy
		a.header = a.sent.Clone()
	}
	return a.header
}

func (a *answer) WriteHeader(code int) {
	if a.sent != nil {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	a.code, a.sent, a.header = code, owned(a.header), nil
}

// owned gives each of h's keys a value slice of its own, all in one array:
// a handler may set a slice it shares (route.go's jsonType, in every JSON
// answer), and the answer's headers are the caller's to change.
func owned(h http.Header) http.Header {
	n := 0
	for _, v := range h {
		n += len(v)
	}
	all := make([]string, n)
	for k, v := range h {
		m := copy(all, v)
		h[k], all = all[:m:m], all[m:]
	}
	return h
}

func (a *answer) Write(b []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	if len(b) == 0 { // as net/http's server: an empty write is no write
		return 0, nil
	}
	if !bodyAllowed(a.code) {
		return 0, http.ErrBodyNotAllowed
	}
	a.body.Write(b)
	return len(b), nil
}

// Flush sends the status line if it is not sent yet: the headers go with
// the bytes written so far (net/http sniffs a Content-Type from them, and
// sends no Content-Length it has not been given).
func (a *answer) Flush() {
	a.WriteHeader(http.StatusOK)
	if !a.flushed {
		a.flushed, a.atFlush = true, a.body.Len()
	}
}

// bodyAllowed reports whether a status may have a body (RFC 9110 6.4.1).
func bodyAllowed(code int) bool {
	return !(code >= 100 && code <= 199 || code == http.StatusNoContent || code == http.StatusNotModified)
}

// chunkingAfter is the most a handler may write, without flushing, for
// net/http's HTTP/1.1 server to send its answer with a Content-Length
// (bufferBeforeChunkingSize): a longer one is sent chunked.
const chunkingAfter = 2048

// result is the client's view of the answer. To the headers as they stood
// at the status it adds what net/http's server adds as it sends them
// (chunkWriter.writeHeader): a Content-Type sniffed from the first bytes
// it sends (those written before the first flush, or all) when the answer
// names none, nor a Content-Encoding; a Date; and a Content-Length when
// the handler ended without flushing, having written at most
// chunkingAfter bytes (one or more for a HEAD), and set none; a longer
// body is chunked. A status without a body loses its Content-Length (a
// 304 its Content-Type too), as there. Its ContentLength, TransferEncoding and Body are as
// net/http's client reads them: a HEAD's and a bodiless status's body is
// empty.
func (a *answer) result() *http.Response {
	a.WriteHeader(http.StatusOK) // nothing written: an empty 200
	h, allowed := a.sent, bodyAllowed(a.code)
	p := a.body.Bytes()
	if a.flushed {
		p = p[:a.atFlush]
	}
	var added []string // the values added, in one array, each slice capped to its own
	add := func(k, v string) {
		if added == nil {
			added = make([]string, 0, 3)
		}
		added = append(added, v)
		h[k] = added[len(added)-1 : len(added) : len(added)]
	}
	if !allowed {
		delete(h, "Content-Length")
		if a.code == http.StatusNotModified {
			delete(h, "Content-Type")
		}
	} else if _, has := h["Content-Type"]; !has && h.Get("Content-Encoding") == "" && len(p) > 0 {
		add("Content-Type", http.DetectContentType(p))
	}
	if _, has := h["Date"]; !has {
		add("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	if _, has := h["Content-Length"]; !has && allowed && !a.flushed && a.body.Len() <= chunkingAfter && (!a.head || a.body.Len() > 0) {
		add("Content-Length", strconv.Itoa(a.body.Len()))
	}
	resp := &http.Response{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, StatusCode: a.code, Header: h, ContentLength: -1, Body: http.NoBody}
	if text := http.StatusText(a.code); text != "" {
		resp.Status = strconv.Itoa(a.code) + " " + text
	} else { // as the server's status line reads
		resp.Status = fmt.Sprintf("%03d status code %d", a.code, a.code)
	}
	n, clErr := strconv.ParseUint(textproto.TrimString(h.Get("Content-Length")), 10, 63)
	switch {
	case a.head: // the client reads a HEAD's length from its header, whatever its status
		if clErr == nil {
			resp.ContentLength = int64(n)
		}
	case !allowed:
		resp.ContentLength = 0
	default:
		if clErr == nil {
			resp.ContentLength = int64(n)
		} else {
			resp.TransferEncoding = []string{"chunked"}
		}
		resp.Body = io.NopCloser(bytes.NewReader(a.body.Bytes()))
	}
	return resp
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
