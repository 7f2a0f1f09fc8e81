package har

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// Writer writes a HAR 1.2 document one entry at a time, so a trace of any
// length takes constant memory. Close ends the document. Sensitive headers
// are written redacted whatever the entry holds. A Writer is safe for
// concurrent use.
type Writer struct {
	mu     sync.Mutex
	w      *bufio.Writer
	n      int
	err    error
	closed bool
}

// NewWriter starts a HAR document on w.
func NewWriter(w io.Writer) *Writer {
	hw := &Writer{w: bufio.NewWriter(w)}
	_, hw.err = hw.w.WriteString(`{"log":{"version":"1.2","creator":{"name":"fgrl","version":"0.1.0"},"entries":[`)
	return hw
}

// Write appends one entry.
func (hw *Writer) Write(e Entry) error {
	b, err := json.Marshal(e.raw())
	hw.mu.Lock()
	defer hw.mu.Unlock()
	switch {
	case hw.closed:
		return errors.New("har: write after Close")
	case hw.err != nil:
		return hw.err
	case err != nil:
		return err
	}
	if hw.n > 0 {
		hw.w.WriteByte(',')
	}
	hw.n++
	hw.w.WriteByte('\n')
	_, hw.err = hw.w.Write(b)
	return hw.err
}

// Close ends the document and flushes it; it does not close the underlying
// writer.
func (hw *Writer) Close() error {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	if hw.closed {
		return hw.err
	}
	hw.closed = true
	if hw.err == nil {
		_, hw.err = hw.w.WriteString("\n]}}\n")
	}
	if hw.err == nil {
		hw.err = hw.w.Flush()
	}
	return hw.err
}

func (e Entry) raw() rawEntry {
	r := rawEntry{StartedDateTime: e.Started.UTC().Format(time.RFC3339Nano)}
	r.Request = rawRequest{Method: e.Method, URL: e.URL, HTTPVersion: "HTTP/1.1", Headers: []header{},
		QueryString: []header{}, Cookies: []header{}, HeadersSize: -1, BodySize: -1}
	if u, err := url.Parse(e.URL); err == nil {
		r.Request.Headers = append(r.Request.Headers, header{"Host", u.Host})
	}
	if e.Authorization != "" {
		r.Request.Headers = append(r.Request.Headers, header{"Authorization", xblauth.Redact(e.Authorization)})
	}
	r.Response = rawResponse{Status: e.Status, HTTPVersion: "HTTP/1.1", Headers: []header{}, Cookies: []header{},
		Content: content{MimeType: "application/json"}, HeadersSize: -1, BodySize: -1}
	if e.RetryAfter != "" {
		r.Response.Headers = append(r.Response.Headers, header{"Retry-After", e.RetryAfter})
	}
	return r
}

// Recorder is an http.RoundTripper that writes every request it passes to
// Base, and its answer's status and Retry-After, to a Writer as it goes. It
// is safe for concurrent use.
type Recorder struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Now is the clock stamped on entries; nil means time.Now.
	Now func() time.Time
	// W receives the entries. Required.
	W *Writer
}

// RoundTrip records req and its response status.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	e := Entry{Started: now(), Method: req.Method, URL: req.URL.String(),
		Authorization: xblauth.Redact(req.Header.Get("Authorization"))}
	if req.Host != "" && req.Host != req.URL.Host {
		u := *req.URL
		u.Host = req.Host
		e.URL = u.String()
	}
	base := r.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err == nil {
		e.Status = resp.StatusCode
		e.RetryAfter = resp.Header.Get("Retry-After")
	}
	if werr := r.W.Write(e); werr != nil && err == nil {
		resp.Body.Close()
		return nil, werr
	}
	return resp, err
}
