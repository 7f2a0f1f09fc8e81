package mock

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
)

// RoundTrip serves req in the calling goroutine, with no socket, so a Handler
// can be the Base of a transport in tests, including inside a
// testing/synctest bubble. The request's URL host is the Host the mock sees,
// so production URLs (https://profile.xboxlive.com/...) work unchanged. An
// injected connection reset returns an error wrapping syscall.ECONNRESET, as
// a real reset would.
func (h *Handler) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	sreq := req.Clone(req.Context())
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.GetBody = nil // a server's request has none: what it reads is the body
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "127.0.0.1:1"
	rec := httptest.NewRecorder()
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
	resp = rec.Result()
	resp.Request = req
	return resp, nil
}

// aborted is what a client sees of an aborted handler: a reset when nothing
// was sent, or a response whose body ends early when the headers were.
func aborted(rec *httptest.ResponseRecorder, req *http.Request) (*http.Response, error) {
	if !rec.Flushed {
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	}
	resp := rec.Result()
	resp.Body = io.NopCloser(io.MultiReader(resp.Body, errReader{io.ErrUnexpectedEOF}))
	resp.Request = req
	return resp, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
