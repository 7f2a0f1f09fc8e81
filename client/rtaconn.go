package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/transport"
)

// XSAPI's timing of the connection (real_time_activity_connection.cpp):
// a reconnect waits min(attempt², 60) s plus a jitter of up to 5 s (none
// before the first connection); a subscription refused with Throttled or
// ServiceUnavailable is sent again after min(attempt², 60) s; the
// connection is closed and made again every 90 minutes (the service ends
// one after 2 hours, not always noticeably); a resync within 5 minutes of
// connecting is ignored.
const (
	rtaMaxBackoff   = 60 * time.Second
	rtaMaxJitter    = 5 * time.Second
	rtaLifetime     = 90 * time.Minute
	rtaResyncQuiet  = 5 * time.Minute
	rtaDialTimeout  = 30 * time.Second
	rtaWriteTimeout = 10 * time.Second
	// rtaCloseWait is how long a close waits for the service's answer
	// before it drops the connection (github.com/coder/websocket's own
	// close handshake waits 5 s).
	rtaCloseWait    = time.Second
	maxRTAResources = 1100 // as many users as one presence batch reads again
)

// rtaBackoff is XSAPI's wait before attempt n (from 0) of a subscription
// or a connection: min(n², 60) s.
func rtaBackoff(n int) time.Duration {
	if n >= 8 { // 8² s is past the cap already; no overflow for any n
		return rtaMaxBackoff
	}
	return min(time.Duration(n*n)*time.Second, rtaMaxBackoff)
}

// reconnectDelay is the wait before connection attempt n: rtaBackoff(n),
// plus jitter (a share from 0 to 1 of 5 s) once the user was connected.
func reconnectDelay(n int, wasConnected bool, jitter float64) time.Duration {
	d := rtaBackoff(n)
	if wasConnected {
		d += time.Duration(jitter * float64(rtaMaxJitter))
	}
	return d
}

// Subscribe opens the acting user's Real-Time Activity connection and
// subscribes to rs (1 to 1100 resources; the same one twice counts once).
// The returned channel delivers the events of every subscription, and the
// state of the connection, until ctx ends; then it is closed, the
// connection closed and every goroutine of it gone. A caller that stops
// reading holds the connection up: the service then drops it, and it is
// made again.
//
// The connection and its subscriptions come back as XSAPI's do: a lost
// connection is made again after min(attempt², 60) s plus up to 5 s of
// jitter, a subscription refused with Throttled (1001) or
// ServiceUnavailable (1002) is sent again after min(attempt², 60) s, the
// connection is renewed every 90 minutes, and a resync from the service
// reads the followed users' presence again (Resynced). A subscription the
// service refuses for good is reported (SubscriptionError) and not sent
// again, on that connection or a later one. The subscribes go out between
// the service's answers, at most 32 awaiting theirs at once: a service
// drops a reader whose answers pile up. A lost connection is an *Error
// (ConnectionState.Err) that tells no credential sent and no close reason,
// the service's own text, only its close code. The websocket is sent
// through Config.RTATransport, the token in its Authorization.
func (u *User) Subscribe(ctx context.Context, rs ...Resource) (<-chan Event, error) {
	a := api{service: "rta", name: "Subscribe"}
	if len(rs) == 0 {
		return nil, invalid(a, "subscribe to 1 to 1100 resources")
	}
	var uniq []Resource
	for _, r := range rs {
		if r.uri == "" {
			return nil, invalid(a, "the zero Resource")
		}
		if r.xuid != "" {
			if err := checkXUID(a, "xuid", r.xuid); err != nil {
				return nil, err
			}
		}
		if r.title != "" {
			if err := checkTitle(a, r.title); err != nil {
				return nil, err
			}
		}
		if !slices.Contains(uniq, r) {
			if len(uniq) == maxRTAResources {
				return nil, invalid(a, "subscribe to 1 to 1100 resources")
			}
			uniq = append(uniq, r)
		}
	}
	ch := make(chan Event, 16)
	s := &rtaSession{u: u, rs: uniq, events: ch, refused: map[Resource]bool{}}
	go s.run(ctx)
	return ch, nil
}

// rtaSession is one Subscribe: its connection, made again as often as it
// is lost, until its context ends.
type rtaSession struct {
	u      *User
	rs     []Resource
	events chan<- Event
	ss     xblauth.Secrets // the credentials the last dial sent: no error of the connection tells them
	// refused are the resources the service refused for good, on any
	// connection of the session: they are not sent again.
	refused map[Resource]bool
	// awaiting counts the connection's first subscribes not answered yet
	// (rtaSub.awaiting), at most rtaUnanswered.
	awaiting int
}

// run makes the connection and serves it, again and again, until ctx
// ends.
func (s *rtaSession) run(ctx context.Context) {
	defer close(s.events)
	attempt, connected := 0, false
	for {
		if !sleep(ctx, reconnectDelay(attempt, connected, rand.Float64())) {
			return
		}
		attempt++
		ws, conn, err := s.dial(ctx)
		if err != nil {
			if ctx.Err() != nil || !s.emit(ctx, &ConnectionState{Err: err, Attempt: attempt}) {
				return
			}
			continue
		}
		attempt, connected = 0, true
		if !s.emit(ctx, &ConnectionState{Connected: true}) {
			ws.CloseNow()
			return
		}
		err = s.serve(ctx, ws, conn)
		if ctx.Err() != nil || !s.emit(ctx, &ConnectionState{Err: err}) {
			return
		}
	}
}

// sleep waits d, and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// emit delivers ev, and reports false if ctx ended first.
func (s *rtaSession) emit(ctx context.Context, ev Event) bool {
	select {
	case s.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// dial opens the websocket with the user's token; conn closes the
// connection under it (the upgrade's body), to end a close that waits too
// long.
func (s *rtaSession) dial(ctx context.Context) (ws *websocket.Conn, conn io.Closer, err error) {
	c := s.u.c
	a := api{service: "rta", name: "Connect"}
	tok, err := c.cfg.Tokens.Token(ctx, s.u.xuid)
	if err == nil && tok.Authorization == "" {
		err = ErrNoToken
	}
	if err != nil {
		return nil, nil, &Error{code: hresult.E_XBL_AUTH_NO_TOKEN, Service: a.service, API: a.name, Message: "no token for user " + s.u.xuid, Err: err}
	}
	h := http.Header{"Authorization": {tok.Authorization}, "User-Agent": {c.userAgent}}
	var sign transport.Signer
	switch {
	case tok.Key != nil: // the upgrade is signed as every request is (XSAPI signs its GET: xbox_web_socket_client::connect)
		sign = c.signer(rtaHost, tok.Key)
	case tok.Signature != "":
		h.Set("Signature", tok.Signature)
	}
	dctx, cancel := context.WithTimeout(ctx, rtaDialTimeout)
	defer cancel()
	u := c.url(rtaHost, reqPath{Path: rtaPath}, nil)
	up := &upgrade{}
	ws, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: keepHost{base: c.rtaTransport(), host: rtaHost, sign: sign, up: up},
			// An upgrade answered with a redirect is refused: followed, it
			// would carry Signature to any host (and Authorization to
			// the same name on another port or scheme).
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		HTTPHeader:   h,
		Subprotocols: []string{rtaSubprotocol},
	})
	s.ss = xblauth.Secrets{}.HeaderSecrets(h)
	if resp != nil && resp.Request != nil { // as sent: with the signature the Signer made
		s.ss = s.ss.HeaderSecrets(resp.Request.Header)
	}
	if err != nil {
		e := &Error{code: hresult.E_XBL_RTA_GENERIC_ERROR, Service: a.service, API: a.name, Message: "websocket refused", Err: dialFailure(err, s.ss)}
		if resp != nil {
			// The dialer's errors about an answer quote the service's
			// header lines, which may echo the credentials sent; a
			// hostile service can echo a token a hundred bytes an upgrade,
			// which no scrubbing of whole credentials catches (as a close
			// frame's reason, lost): only the status is told.
			e.Err = fmt.Errorf("the service answered the upgrade with HTTP %d, not a websocket of %s", resp.StatusCode, rtaSubprotocol)
			e.StatusCode = resp.StatusCode
			if e.code = hresult.FromStatus(resp.StatusCode); e.code == 0 {
				e.code = hresult.E_XBL_RTA_GENERIC_ERROR
			}
		}
		return nil, nil, e
	}
	if ws.Subprotocol() != rtaSubprotocol {
		ws.CloseNow()
		return nil, nil, &Error{code: hresult.E_XBL_RTA_GENERIC_ERROR, Service: a.service, API: a.name, Message: "the service did not speak " + rtaSubprotocol}
	}
	ws.SetReadLimit(maxRTAMessage)
	return ws, up.conn, nil
}

// dialFailure is what an upgrade that got no answer tells of err: the
// context's end, or a connection the network refused or cut (net/http's
// own text, scrubbed of ss), as it is; otherwise (an answer net/http could
// not read, a certificate refused, a TLS handshake the service refused or
// never answered, a proxy's refusal) only what kind of failure it was,
// and never the service's bytes: net/http's and crypto/x509's errors quote
// them (a malformed status or header line, a certificate's names, a
// proxy's reason phrase), in which a hostile service can echo a token a
// hundred bytes a connection, which no scrubbing of whole credentials
// catches.
func dialFailure(err error, ss xblauth.Secrets) error {
	var op *net.OpError
	var ne net.Error
	var alert tls.AlertError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var cert *tls.CertificateVerificationError
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return ss.ScrubError(err)
	case errors.As(err, &unknown):
		return errors.New("the service's certificate was refused: signed by an authority the client does not know")
	case errors.As(err, &host):
		return errors.New("the service's certificate was refused: it is not for the endpoint's host")
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return errors.New("the service's certificate was refused: expired or not yet valid")
	case errors.As(err, &cert) || errors.As(err, &invalid):
		return errors.New("the service's certificate was refused")
	case errors.As(err, &alert):
		return fmt.Errorf("the service refused the TLS handshake (%s)", alert.Error()) // crypto/tls's own names of alerts
	case errors.As(err, &op) && op.Op == "remote error":
		// crypto/tls's alert received, named from its own table.
		return fmt.Errorf("the service refused the TLS handshake (%s)", safetext.Clip(op.Err.Error(), 80))
	case errors.As(err, &op) && op.Op == "proxyconnect":
		return errors.New("the proxy refused the connection to the service")
	case errors.As(err, &op) && (op.Op == "dial" || op.Op == "read" || op.Op == "write"):
		return ss.ScrubError(err)
	case errors.As(err, &ne) && ne.Timeout():
		return errors.New("a timeout before the service answered the upgrade (its TLS handshake or the answer's header)")
	case strings.HasSuffix(err.Error(), "http: server gave HTTP response to HTTPS client"):
		return errors.New("the service answered in plain HTTP at an https endpoint")
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the service closed the connection before it answered the upgrade")
	}
	return errors.New("the service's answer to the upgrade is not HTTP that net/http reads")
}

// upgrade keeps the connection a websocket's upgrade answer carries.
type upgrade struct{ conn io.Closer }

// closeWithin closes ws with code and reason, waiting for the service's
// answer at most rtaCloseWait, and no longer than ctx, the caller's: then
// it closes conn, the connection under ws, which ends the wait.
// (github.com/coder/websocket takes only a 101 answer whose body is an
// io.ReadWriteCloser, so a websocket always has its conn.)
func closeWithin(ctx context.Context, ws *websocket.Conn, conn io.Closer, code websocket.StatusCode, reason string) {
	if conn != nil {
		drop := func() { conn.Close() }
		t := time.AfterFunc(rtaCloseWait, drop)
		defer t.Stop()
		defer context.AfterFunc(ctx, drop)()
	}
	ws.Close(code, reason)
}

// rtaTransport is Config.RTATransport, or http.DefaultTransport.
func (c *Client) rtaTransport() http.RoundTripper {
	if c.cfg.RTATransport != nil {
		return c.cfg.RTATransport
	}
	return http.DefaultTransport
}

// keepHost sends a request with host in its Host header, wherever its URL
// points (Config.Endpoints), signed by sign when it is set.
type keepHost struct {
	base http.RoundTripper
	host string
	sign transport.Signer
	up   *upgrade // the connection of a 101 answer, when there is one
}

func (k keepHost) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Host = k.host
	if k.sign != nil {
		if err := k.sign(out); err != nil {
			return nil, err
		}
	}
	resp, err := k.base.RoundTrip(out)
	if err == nil && resp != nil && resp.StatusCode == http.StatusSwitchingProtocols && k.up != nil {
		if rwc, ok := resp.Body.(io.ReadWriteCloser); ok {
			k.up.conn = rwc
		}
	}
	return resp, err
}

// rtaSub is one subscription on one connection. Whatever the service
// answers, and however often, it holds one service id at most (the last
// it was given, until a refusal: bySvc maps no other to it) and one retry
// pending at most
// (the only one in due, so that the timer's send never waits).
type rtaSub struct {
	res      Resource
	seq      uint32 // its SEQUENCE_N, fixed for the session (XSAPI's client id)
	attempt  int    // refusals with 1001 or 1002 so far on this connection
	svc      uint32 // the service's id for it, while bySvc maps it to it
	pending  bool   // a retry is timed or in due
	awaiting bool   // its first subscribe on this connection is not answered yet
	timer    *time.Timer
}

var errRTALifetime = errors.New("client: RTA connection renewed after 90 minutes")

// serve subscribes on ws and delivers its events until the connection is
// lost (the error), renewed, or ctx ends.
func (s *rtaSession) serve(ctx context.Context, ws *websocket.Conn, conn io.Closer) error {
	rctx, cancel := context.WithCancel(ctx)
	msgs := make(chan []byte)
	readErr := make(chan error, 1)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		ws.CloseNow()
		wg.Wait()
	}()
	wg.Go(func() { readErr <- readLoop(rctx, ws, msgs) })

	subs := make([]*rtaSub, len(s.rs))
	bySvc := map[uint32]*rtaSub{}
	due := make(chan *rtaSub, len(s.rs)) // one pending retry a subscription at most
	for i, r := range s.rs {
		subs[i] = &rtaSub{res: r, seq: uint32(i + 1)}
		defer func() {
			if t := subs[i].timer; t != nil {
				t.Stop()
			}
		}()
	}
	start := time.Now()
	// The subscribes go out one a turn of the loop below, between the
	// service's answers, at most rtaUnanswered awaiting theirs: a service
	// queues only so many answers for a reader that does not read (the
	// mock drops it at 256), and a thousand subscribes sent before any
	// answer is read outrun the sockets' buffers.
	next := 0 // the next subscription to send
	s.awaiting = 0
	sending := make(chan struct{})
	close(sending)
	life := time.NewTimer(rtaLifetime)
	defer life.Stop()
	for {
		for next < len(subs) && s.refused[subs[next].res] {
			next++ // refused for good on an earlier connection: not sent again
		}
		var send1 <-chan struct{} // ready while subscribes remain, and few await their answers
		if next < len(subs) && s.awaiting < rtaUnanswered {
			send1 = sending
			select { // an answer waiting goes first
			case b := <-msgs:
				if err := s.message(ctx, ws, conn, b, subs, bySvc, due, start); err != nil {
					return err
				}
				continue
			default:
			}
		}
		select {
		case <-ctx.Done():
			closeWithin(ctx, ws, conn, websocket.StatusNormalClosure, "")
			return ctx.Err()
		case <-send1:
			if err := send(ctx, ws, rtaSubscribe, subs[next].seq, subs[next].res.uri); err != nil {
				return s.lost(ctx, err)
			}
			subs[next].awaiting = true
			s.awaiting++
			next++
		case <-life.C:
			closeWithin(ctx, ws, conn, websocket.StatusNormalClosure, "renewed")
			return errRTALifetime
		case err := <-readErr:
			return s.lost(ctx, err)
		case sub := <-due:
			sub.pending = false
			if s.refused[sub.res] {
				continue // refused for good after its retry was timed: not sent again
			}
			if err := send(ctx, ws, rtaSubscribe, sub.seq, sub.res.uri); err != nil {
				return s.lost(ctx, err)
			}
		case b := <-msgs:
			if err := s.message(ctx, ws, conn, b, subs, bySvc, due, start); err != nil {
				return err
			}
		}
	}
}

// rtaUnanswered is how many first subscribes of a connection may await
// their answers at once.
const rtaUnanswered = 32

// message acts on one message the service sent; the error ends the
// connection: a malformed message, or ctx ended while delivering.
func (s *rtaSession) message(ctx context.Context, ws *websocket.Conn, conn io.Closer, b []byte, subs []*rtaSub, bySvc map[uint32]*rtaSub, due chan *rtaSub, start time.Time) error {
	m, err := parseRTAMessage(b)
	if err != nil {
		closeWithin(ctx, ws, conn, websocket.StatusInvalidFramePayloadData, "not an RTA message")
		return &Error{code: hresult.E_XBL_RTA_GENERIC_ERROR, Service: "rta", API: "Subscribe", Message: "the service sent a malformed message", Err: err}
	}
	if !s.handle(ctx, m, subs, bySvc, due, start) {
		return ctx.Err()
	}
	return nil
}

// lost describes the connection's loss by err (a read's or a write's): an
// *Error whose cause is scrubbed of the credentials sent, and clipped and
// escaped when printed. A close frame's reason, the service's own text,
// is left out: a hostile service can echo a token a hundred bytes a
// connection, which no scrubbing of whole credentials catches; its status
// code stays.
func (s *rtaSession) lost(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if code := websocket.CloseStatus(err); code != -1 {
		err = websocket.CloseError{Code: code}
	}
	return &Error{code: hresult.E_XBL_RTA_GENERIC_ERROR, Service: "rta", API: "Subscribe", Message: "connection lost", Err: s.ss.ScrubError(err)}
}

// readLoop hands every message read to msgs, until the connection ends.
func readLoop(ctx context.Context, ws *websocket.Conn, msgs chan<- []byte) error {
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return err
		}
		select {
		case msgs <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// send writes one client message: [kind, seq, arg].
func send(ctx context.Context, ws *websocket.Conn, kind int, seq uint32, arg any) error {
	b, _ := json.Marshal([]any{kind, seq, arg})
	wctx, cancel := context.WithTimeout(ctx, rtaWriteTimeout)
	defer cancel()
	return ws.Write(wctx, websocket.MessageText, b)
}

// handle acts on one message; it reports false if ctx ended while
// delivering.
func (s *rtaSession) handle(ctx context.Context, m rtaMessage, subs []*rtaSub, bySvc map[uint32]*rtaSub, due chan *rtaSub, start time.Time) bool {
	switch m.kind {
	case rtaSubscribe:
		if m.seq == 0 || int(m.seq) > len(subs) {
			return true // not ours: XSAPI ignores it too
		}
		sub := subs[m.seq-1]
		if s.refused[sub.res] {
			return true // refused for good: an answer to what was not sent again is not ours
		}
		if sub.awaiting {
			sub.awaiting = false
			s.awaiting--
		}
		// Whatever the answer, the id the service gave it before, if any,
		// is no longer its: a refused subscription hears no event.
		if bySvc[sub.svc] == sub {
			delete(bySvc, sub.svc)
		}
		switch m.code {
		case 0:
			bySvc[m.sub], sub.svc = sub, m.sub
			return s.emit(ctx, subscribed(sub.res, m.data))
		case rtaThrottled, rtaServiceUnavailable:
			if sub.pending {
				return true // the retry already timed answers this refusal too
			}
			d := rtaBackoff(sub.attempt)
			sub.attempt++
			sub.pending = true
			sub.timer = time.AfterFunc(d, func() { due <- sub })
			return true
		}
		s.refused[sub.res] = true // for good: not sent again, on this connection or the next
		if sub.timer != nil {
			sub.timer.Stop() // a retry timed by an earlier Throttled (serve skips one already due)
		}
		return s.emit(ctx, &SubscriptionError{Resource: sub.res, Err: rtaRefusal(sub.res, m.code)})
	case rtaEvent:
		sub := bySvc[m.sub]
		if sub == nil {
			return true
		}
		if sub.res == Sessions() {
			for _, ev := range sessionTaps(m.data) {
				if !s.emit(ctx, ev) {
					return false
				}
			}
			return true
		}
		if ev := sub.res.event(m.data); ev != nil {
			return s.emit(ctx, ev)
		}
	case rtaResync:
		if time.Since(start) < rtaResyncQuiet {
			return true
		}
		return s.emit(ctx, s.resync(ctx))
	}
	return true
}

// subscribed is the Subscribed event of r, with its starting state.
func subscribed(r Resource, data json.RawMessage) *Subscribed {
	ev := &Subscribed{Resource: r}
	switch {
	case r.presence():
		var p Presence
		if json.Unmarshal(data, &p) == nil && p.XUID == r.xuid { // another user's record is no start of this one's
			ev.Presence = &p
		}
	case r == Sessions():
		var v struct{ ConnectionId string }
		if json.Unmarshal(data, &v) == nil {
			ev.ConnectionID = v.ConnectionId
		}
	}
	return ev
}

// resync reads again the presence of the users the presence
// subscriptions follow.
func (s *rtaSession) resync(ctx context.Context) *Resynced {
	var xuids []string
	for _, r := range s.rs {
		if r.presence() && !s.refused[r] && !slices.Contains(xuids, r.xuid) { // one refused for good follows no one
			xuids = append(xuids, r.xuid)
		}
	}
	if len(xuids) == 0 {
		return &Resynced{}
	}
	ps, err := s.u.GetPresenceBatch(ctx, xuids)
	return &Resynced{Presence: ps, Err: err}
}
