package mock

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"syscall"
)

// RoundTrip serves req in the calling goroutine, with no socket, so a Handler
// can be the Base of a transport in tests, including inside a
// testing/synctest bubble. The request's URL host is the Host the mock sees,
// so production URLs (https://profile.xboxlive.com/...) work unchanged. The
// mock sees the request as a server would (its headers and body, a URL and
// form of its own: a Form the caller set is not read) and leaves req as it
// was; the answer is what a server would send (its headers as they stood
// when its status was written, a Content-Type sniffed from its first bytes
// when it names none and writes them before its status, as
// httptest.ResponseRecorder does). An
// injected connection reset returns an error wrapping syscall.ECONNRESET, as
// a real reset would.
func (h *Handler) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	if err := req.Context().Err(); err != nil {
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
	rec := &answer{header: make(http.Header)}
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			resp, err = aborted(rec, req)
		}
	}()
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
	resp.Body = io.NopCloser(io.MultiReader(resp.Body, errReader{io.ErrUnexpectedEOF}))
	resp.Request = req
	return resp, nil
}

// answer is the ResponseWriter of RoundTrip: what a server would send, as
// httptest.ResponseRecorder keeps it (a status of 200 when none is written,
// a Content-Type sniffed from the first bytes written when none is set, no
// body for a status that has none) without its copies: the answer's
// headers are the handler's header map as it stands when the status is
// written, and a handler that asks for its headers again after that gets a
// copy, made then, so that what it sets no longer reaches the answer (a
// server has sent them); the values are the answer's own from the status
// on. The mock keeps no header map across a WriteHeader, and sends no
// trailers.
type answer struct {
	header  http.Header // the handler's; nil from the status until it asks again
	sent    http.Header // the answer's, from the status on
	code    int
	body    bytes.Buffer
	flushed bool
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

// sniff writes the status line of a Write before any: 200, with the
// Content-Type of b when the handler set none (nor a Transfer-Encoding).
func (a *answer) sniff(b []byte) {
	if a.sent != nil {
		return
	}
	if _, has := a.header["Content-Type"]; !has && a.header.Get("Transfer-Encoding") == "" {
		a.header.Set("Content-Type", http.DetectContentType(b))
	}
	a.WriteHeader(http.StatusOK)
}

func (a *answer) Write(b []byte) (int, error) {
	a.sniff(b)
	a.body.Write(b)
	if !bodyAllowed(a.code) {
		return 0, http.ErrBodyNotAllowed
	}
	return len(b), nil
}

// Flush sends the status line if it is not sent yet.
func (a *answer) Flush() {
	a.WriteHeader(http.StatusOK)
	a.flushed = true
}

// bodyAllowed reports whether a status may have a body (RFC 9110 6.4.1).
func bodyAllowed(code int) bool {
	return !(code >= 100 && code <= 199 || code == http.StatusNoContent || code == http.StatusNotModified)
}

// result is the client's view of the answer.
func (a *answer) result() *http.Response {
	if a.sent == nil { // nothing written: an empty 200
		a.WriteHeader(http.StatusOK)
	}
	resp := &http.Response{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, StatusCode: a.code, Header: a.sent, ContentLength: -1}
	resp.Status = strconv.Itoa(a.code) + " " + http.StatusText(a.code)
	if n, err := strconv.ParseUint(textproto.TrimString(a.sent.Get("Content-Length")), 10, 63); err == nil {
		resp.ContentLength = int64(n)
	}
	resp.Body = io.NopCloser(bytes.NewReader(a.body.Bytes()))
	return resp
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
