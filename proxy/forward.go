package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// answerGrace is how long past MaxCallTime the proxy may write a call's
// answer: the 504 of a call that passed it.
const answerGrace = time.Second

// drainGrace is how long what a call left of its streamed body has to
// come once the call has ended (net/http reads it before the answer's
// header): a body sent whole is read in well under it, and keeps its
// connection; one still coming closes it.
const drainGrace = 200 * time.Millisecond

// errCallTooLong ends a call that passed Config.MaxCallTime.
var errCallTooLong = errors.New("proxy: the call took longer than the proxy's MaxCallTime")

// call is what the proxy learns of one call on its way: its key, once the
// request is rewritten, and how it ended.
type call struct {
	host    string
	rc      *http.ResponseController // the answer's
	end     time.Time                // its arrival plus MaxCallTime
	body    *watchedBody             // the request's body, when it has one the transport reads
	trailer http.Header              // with body: the request's Trailer, which net/http fills at the body's end
	key     throttle.Key
	counted bool // the key is a rule's (transport.KeyOf)
	status  int
	outcome string // served, refused_locally, throttled, failed, cancelled, too_long
}

type callKey struct{}

// forward sends r through the transport to https://host, with the policy
// its headers ask for, within MaxCallTime, and writes the answer.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, host string) {
	start := time.Now()
	pol, err := ParsePolicy(r.Header, s.lim)
	if err != nil {
		plain(w, r, http.StatusBadRequest, safetext.Clip(err.Error(), 400))
		return
	}
	c := &call{host: host}
	ctx, cancel := context.WithTimeoutCause(r.Context(), s.cfg.MaxCallTime, errCallTooLong)
	defer cancel()
	// The call's end also ends its reads: a body that never comes, or
	// comes a byte at a time (within a server's own body timeout,
	// mock.ConnLimits), blocks a read the context cannot stop, so when the
	// call's context ends its connection's read deadline is set to now.
	// (A read deadline of the call's end, set at its start, would race the
	// call's timer: net/http's background read failing first cancels the
	// request as if the client had gone, and the 504 is never written.) A
	// call that ended in time leaves its connection alone (stop, before
	// cancel); one that did not has its cut made before the handler
	// returns, so that it never lands on the connection's next request.
	// Writes end answerGrace after the call, time to write its 504. An
	// error: a writer that cannot (a recorder); nothing to bound.
	rc := http.NewResponseController(w)
	c.rc, c.end = rc, start.Add(s.cfg.MaxCallTime)
	rc.SetWriteDeadline(c.end.Add(answerGrace))
	cut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(cut)
		rc.SetReadDeadline(time.Now())
	})
	defer func() {
		if !stop() {
			<-cut
		}
	}()
	out := r.WithContext(ctx)
	defer s.ended(r, c, start) // also when the answer's copy panics (http.ErrAbortHandler)
	release, err := s.held.hold(out)
	defer release()
	if err != nil {
		c.status, c.outcome = http.StatusBadRequest, "failed"
		plain(w, r, c.status, errBodyBroken.Error())
		return
	}
	after := s.streamed(c, r, out, &pol, ctx.Done())
	defer after()
	s.fwd.ServeHTTP(w, out.WithContext(context.WithValue(transport.WithPolicy(ctx, pol), callKey{}, c)))
}

// streamed wraps out's body, when it is streamed (without GetBody), in
// c.body, whose read errors are the application's, and keeps the call
// from waiting for its budget with that body unread over HTTP/1, where
// net/http notices that the application has closed its connection only
// once the request's body is read (the call would not end when the
// application gives up, and would be sent after it has gone): a body
// whose length is not given is read ahead (prefetch), and with any other
// (too long to hold, or past the reserve) the call fails fast. HTTP/2
// sees a stream's end whatever its body, and a call that fails fast never
// waits. It returns what to do once the call has ended; ended is the
// call's context's Done.
func (s *Server) streamed(c *call, r, out *http.Request, pol *transport.Policy, ended <-chan struct{}) (after func()) {
	if out.Body == nil || out.Body == http.NoBody || out.GetBody != nil {
		return func() {}
	}
	c.body = &watchedBody{ReadCloser: out.Body, length: out.ContentLength, ended: ended}
	c.trailer = r.Trailer
	out.Body = c.body
	switch {
	case r.ProtoMajor >= 2 || pol.FailFast || s.tr.Policy.FailFast:
	case out.ContentLength < 0:
		// The body's trailers land in r's Trailer, which out shares: out
		// gets its own, which the ReverseProxy copies meanwhile
		// (trailedBody passes the values on).
		out.Trailer = r.Trailer.Clone()
		p := s.held.prefetch(c.body)
		out.Body = p
		return p.end
	default:
		pol.FailFast = true
	}
	return func() {}
}

// answered gives what the call left of its streamed body drainGrace to
// come, never past the call's end, once the call has its answer or its
// refusal and before the answer's header is written: net/http reads what
// is left of an unread body, when under 256 KiB, before the header
// (inside the ReverseProxy's copy, for an answer past its 2 KiB buffer),
// with no deadline of its own. A body sent whole is read in well under
// it, and the connection stays for the next request; a body still coming
// closes it after the answer. From then on a read of the body that fails
// (net/http read the rest and closed it, or the deadline passed) does not
// fail the transport's sending of it (watchedBody): an HTTP/1 transport
// closes its connection on a failed body read, cutting the answer it is
// reading.
func (c *call) answered(resp *http.Response) {
	if c.body == nil {
		return
	}
	after := afterEOF
	if resp != nil && resp.ProtoMajor == 1 && c.body.length > 0 {
		// HTTP/1 checks a declared length: a body that ends short fails
		// the request's write, which closes the connection too.
		after = afterWait
	}
	c.body.after.Store(after)
	if c.body.eof.Load() {
		return
	}
	until := time.Now().Add(drainGrace)
	if c.end.Before(until) {
		until = c.end
	}
	c.rc.SetReadDeadline(until)
}

// rewrite is the ReverseProxy's: the request goes to https://host with
// its path and query, the policy headers stripped (the hop-by-hop ones
// and Proxy-Authorization the ReverseProxy strips itself), and its
// trailer fields too (stripTrailer). A request with trailer fields left
// goes with its body chunked, its length not given, since net/http
// writes an HTTP/1 request's trailer only after a chunked body; a
// streamed body's trailers go on at its end (trailedBody), a held one's
// were read with it (heldBytes.hold).
func (s *Server) rewrite(pr *httputil.ProxyRequest) {
	c := pr.In.Context().Value(callKey{}).(*call)
	in := pr.In.URL
	pr.Out.URL = &url.URL{Scheme: "https", Host: c.host, Path: in.Path, RawPath: in.RawPath, RawQuery: pr.Out.URL.RawQuery}
	pr.Out.Host = ""
	stripPolicy(pr.Out.Header)
	stripTrailer(pr.Out.Trailer, pr.In.Header)
	if pr.Out.Body != nil && len(pr.Out.Trailer) > 0 {
		pr.Out.ContentLength = -1
		if c.body != nil {
			pr.Out.Body = &trailedBody{ReadCloser: pr.Out.Body, from: c.trailer, to: pr.Out.Trailer}
		}
	}
	c.key, c.counted = s.tr.KeyOf(pr.Out)
}

// trailedBody is a streamed request body whose trailer fields reach the
// service as sent. net/http fills the request's Trailer (from) as it
// reads the body's end, but the request sent has a copy of it made before
// (to: the fields announced, their values not yet come, the proxy's own
// stripped), which the transport writes after the body: at the body's end
// each of to's fields takes its value from from. A streamed body is sent
// once, in the request rewrite made, so to is the Trailer sent.
type trailedBody struct {
	io.ReadCloser
	from, to http.Header
}

func (b *trailedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		for name := range b.to {
			b.to[name] = b.from[name]
		}
	}
	return n, err
}

// roundTripper is the ReverseProxy's Transport: it sends a rewritten
// request through the transport, and notes the answer's status.
type roundTripper struct{ s *Server }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	// The ReverseProxy hands the service's 1xx answers (103 Early Hints)
	// to the application itself, from a trace of its own, before the
	// answer is back: this trace, called before it, strips them first.
	// (WithClientTrace changes the trace it is given: one a request.)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{Got1xxResponse: strip1xx}))
	resp, err := rt.s.tr.RoundTrip(req)
	if c, ok := req.Context().Value(callKey{}).(*call); ok {
		c.answered(resp)
		if resp != nil {
			c.status = resp.StatusCode
		}
	}
	if resp != nil {
		// A header of the proxy's own prefix on the service's answer is
		// not the proxy's: HeaderRefused there would tell the application
		// that an answer the service gave was never sent.
		stripPolicy(resp.Header)
		stripPolicy(resp.Trailer)
	}
	if resp != nil && resp.Body != nil && resp.StatusCode != http.StatusSwitchingProtocols { // an upgrade's body is the raw connection
		// The ReverseProxy logs an error reading the answer as it is: the
		// transport scrubbed its own errors, not a body's.
		resp.Body = &scrubbedBody{ReadCloser: resp.Body, req: req, resp: resp}
	}
	return resp, err
}

// strip1xx strips the proxy's own prefix from a 1xx answer of the
// service.
func strip1xx(_ int, h textproto.MIMEHeader) error {
	stripPolicy(http.Header(h))
	return nil
}

// scrubbedBody is an answer's body whose read errors hold none of the
// request's credentials (its Authorization, Signature and URL secrets),
// since the ReverseProxy writes them to the log. At its end it strips the
// proxy's own prefix from the trailers that came with it, which the
// ReverseProxy then copies.
type scrubbedBody struct {
	io.ReadCloser
	req  *http.Request
	resp *http.Response
}

func (b *scrubbedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		stripPolicy(b.resp.Trailer)
	} else if err != nil {
		err = xblauth.Secrets{}.HeaderSecrets(b.req.Header).URLSecrets(b.req.URL).ScrubError(err)
	}
	return n, err
}

// failed is the ReverseProxy's ErrorHandler: a refusal is answered as the
// service would (refuse), a body that did not arrive whole 400, a call
// the application gave up on otherwise nothing, and any other failure a
// 502 (504 past MaxCallTime) naming it.
func (s *Server) failed(w http.ResponseWriter, r *http.Request, err error) {
	c := r.Context().Value(callKey{}).(*call)
	var te *transport.ThrottleError
	switch {
	case errors.As(err, &te):
		c.status = s.refuse(w, c, te)
		c.outcome = "throttled"
		if te.Local {
			c.outcome = "refused_locally"
		}
	case context.Cause(r.Context()) == errCallTooLong:
		c.status, c.outcome = http.StatusGatewayTimeout, "too_long"
		plain(w, r, c.status, errCallTooLong.Error())
	case c.body != nil && c.body.failed():
		// The application's body broke off or is malformed: not the
		// service's fault. A body that ends where the application closed
		// its side ends the call too (net/http takes that for its leaving,
		// and so does the count), but an application that only half-closed
		// still reads its answer; to one gone the write fails harmlessly.
		c.status, c.outcome = http.StatusBadRequest, "failed"
		if r.Context().Err() != nil {
			c.outcome = "cancelled"
		}
		plain(w, r, c.status, errBodyBroken.Error())
	case r.Context().Err() != nil:
		c.outcome = "cancelled" // the application gave up: nobody reads an answer
	default:
		c.status, c.outcome = http.StatusBadGateway, "failed"
		plain(w, r, c.status, "proxy: the call failed: "+safetext.Clip(reason(err), 300))
	}
}

// reason is what a failed call says, without the URL a *url.Error repeats
// (its query may hold a credential).
func reason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// ended counts and logs a call, and notes its key for the status.
func (s *Server) ended(r *http.Request, c *call, start time.Time) {
	if c.outcome == "" {
		c.outcome = "served"
		if c.status == http.StatusTooManyRequests {
			c.outcome = "throttled"
		}
	}
	s.stats.ended(c.outcome)
	if c.counted {
		s.keys.seen(c.key, time.Now())
	}
	if s.cfg.Logger == nil {
		return
	}
	s.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "proxy: call",
		slog.String("method", safetext.Clip(r.Method, 16)), slog.String("host", c.host),
		slog.String("path", safetext.Clip(r.URL.Path, 200)), slog.Int("status", c.status),
		slog.String("outcome", c.outcome), slog.String("scope", c.key.Scope), slog.String("user", userOf(c.key.User)),
		slog.Duration("duration", time.Since(start)))
}

// copyBuffers are the buffers the ReverseProxy copies answers through,
// reused across calls (each one a 32 KiB allocation otherwise).
type copyBuffers struct{ p sync.Pool }

// copyBufferSize is a copy buffer's size, the ReverseProxy's own.
const copyBufferSize = 32 << 10

func (c *copyBuffers) Get() []byte {
	if b, ok := c.p.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, copyBufferSize)
}

func (c *copyBuffers) Put(b []byte) {
	if cap(b) == copyBufferSize {
		b = b[:copyBufferSize]
		c.p.Put(&b)
	}
}

// watchedBody is a streamed request body that remembers whether reading
// it failed (a chunked body malformed or cut off), so that the call's
// failure is answered as the application's, not the service's. A read
// that fails gives the transport bodyError's error, not its own.
//
// Once the call has its answer, the transport goes on reading the body
// (so that its end starts net/http's watch for the application's
// leaving), but a read that fails then ends the body instead: at io.EOF
// (the service has answered: what it has of the body is enough), or, where
// an HTTP/1 request declared its length (a short body would fail the
// write), by waiting for the call's end (its context's, when the handler
// returns or MaxCallTime passes) and then failing with errAnswered. Either way the transport's connection
// stays whole while it delivers the answer.
type watchedBody struct {
	io.ReadCloser
	length           int64      // the request's declared length, or -1
	mu               sync.Mutex // held by a read
	bad, closed, eof atomic.Bool
	after            atomic.Int32    // what a failed read gives once the call has its answer
	ended            <-chan struct{} // the call's context's Done
}

// What a failed read of a body gives the transport once the call has its
// answer.
const (
	reading   int32 = iota // no answer yet: the failure, as bodyError gives it
	afterEOF               // io.EOF
	afterWait              // errAnswered, at the call's end
)

// errAnswered is the failed read of a body the call's answer has come
// before.
var errAnswered = errors.New("proxy: the call has its answer; the rest of its body is not sent")

// errBodyBroken is the failed read of a request body that did not arrive
// whole: malformed, cut off, or not come by the call's end.
var errBodyBroken = errors.New("proxy: the request's body did not arrive whole")

// bodyError is what a failed read of the application's body gives the
// transport, which logs it: errBodyBroken, never the read's own error,
// which may quote what the application sent (net/http's "malformed MIME
// header line" quotes a trailer line whole, a token in it). A read that
// timed out or whose context ended stays one for errors.Is.
func bodyError(err error) error {
	for _, kind := range [...]error{os.ErrDeadlineExceeded, context.DeadlineExceeded, context.Canceled} {
		if errors.Is(err, kind) {
			return fmt.Errorf("%w: %w", errBodyBroken, kind)
		}
	}
	return errBodyBroken
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.ReadCloser.Read(p)
	after := b.after.Load()
	switch {
	case err == io.EOF:
		b.eof.Store(true)
	case err != nil && after == reading && !b.closed.Load(): // a read after Close fails by the transport's doing
		b.bad.Store(true)
	}
	b.mu.Unlock()
	if err == nil || err == io.EOF {
		return n, err
	}
	if after == reading {
		return n, bodyError(err)
	}
	if n > 0 {
		return n, nil
	}
	if after == afterEOF {
		return 0, io.EOF
	}
	<-b.ended
	return 0, errAnswered
}

func (b *watchedBody) Close() error {
	b.closed.Store(true)
	return b.ReadCloser.Close()
}

// failed reports whether a read of the body failed. Once the call has
// ended it first waits for a read in progress to end, as the call's end
// makes it (Server.forward: the read deadline): an application that closes
// its side ends the call from inside the read that fails, before that read
// returns. It waits a second at most (maxReadEnd), so that a body whose
// reads no deadline ends cannot hold the call's answer.
func (b *watchedBody) failed() bool {
	select {
	case <-b.ended:
		for waited := time.Duration(0); !b.mu.TryLock(); waited += time.Millisecond {
			if waited >= maxReadEnd {
				return b.bad.Load()
			}
			time.Sleep(time.Millisecond)
		}
		defer b.mu.Unlock()
	default:
	}
	return b.bad.Load()
}

// maxReadEnd bounds how long watchedBody.failed waits for a read in
// progress once the call has ended.
const maxReadEnd = time.Second
