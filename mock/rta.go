package mock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The Real-Time Activity service (rtawire.go has its wire): a hub of the
// websockets open at rta.xboxlive.com/connect, each one user's (the token
// it connected with), holding that connection's subscriptions. The world
// tells the hub what changed (rtaevents.go) and the hub pushes an event to
// every subscription of the resource.
//
// Bounds: a client message of at most maxRTAMessage bytes (a larger one
// closes the connection with 1009), maxRTASubs subscriptions a connection
// (the next is answered SubscriptionLimitReached, as is one past
// maxRTAAllSubs of all connections), maxRTAConns connections
// (the next upgrade is answered 503), rtaOutbox messages or rtaOutboxBytes
// waiting for a reader, held back by a latency fault or not (a reader that
// falls further behind is dropped), rtaWriteTimeout for one message to be
// written, rtaPing between pings of an idle peer, rtaLifetime for a
// connection.

// More bounds of a connection.
const (
	rtaOutbox       = 256
	rtaOutboxBytes  = 256 << 10
	rtaWriteTimeout = 10 * time.Second
	rtaPing         = time.Minute
	// rtaLifetime is how long the service keeps a connection: "RTA v2 has
	// a lifetime of 2 hours. After 2 hours RTA service will disconnect the
	// title" (XSAPI, Source/Services/RealTimeActivityManager/
	// real_time_activity_connection.cpp, which renews its connection
	// after 90 minutes for that reason).
	rtaLifetime = 2 * time.Hour
)

// rtaHub is the connections open, safe for concurrent use. A nil hub
// serves nothing and publishes nothing.
type rtaHub struct {
	w       *world
	faults  func() rtaFaults // the rta service faults in force
	dice    *dice
	nextSub atomic.Uint32

	maxSubs int // subscriptions of all connections: maxRTAAllSubs

	mu    sync.Mutex
	conns map[*rtaConn]struct{}
	nsubs int // subscriptions of all connections
	// follows indexes the subscriptions by resource (its key), so that a
	// change costs what its own subscribers cost, not every subscription
	// open.
	follows map[string]*rtaFollowers
}

func newRTAHub(w *world, d *dice, faults func() rtaFaults) *rtaHub {
	return &rtaHub{w: w, dice: d, faults: faults, maxSubs: maxRTAAllSubs,
		conns: map[*rtaConn]struct{}{}, follows: map[string]*rtaFollowers{}}
}

// rtaConn is one websocket. Its outbox is written by one goroutine
// (writeLoop); messages are put in it without waiting (send).
type rtaConn struct {
	hub    *rtaHub
	id     identity
	ws     *websocket.Conn
	connID string // its MPSD connection id
	out    chan []byte
	// waiting is the bytes of the messages in out and in delayed: at
	// most rtaOutboxBytes.
	waiting atomic.Int64
	done    chan struct{}
	cancel  context.CancelFunc // ends the loops' context
	once    sync.Once

	mu   sync.Mutex
	subs map[uint32]rtaResource
	// delayed are the events an rta latency fault holds back, in the order
	// they were published, each due no earlier than the one before it;
	// flush, on one timer, sends those due. Dropped when it closes.
	delayed []delayedEvent
	flushT  *timerOn[rtaConn] // the timer of the first delayed event, stopped when it closes
	rec     wsRecord
}

// delayedEvent is an event of subscription sub held back until due.
type delayedEvent struct {
	sub uint32
	b   []byte
	due time.Time
}

// serveRTA answers the websocket upgrade at rta.xboxlive.com and serves the
// connection until it closes; x is recorded as one call with its messages.
func (h *Handler) serveRTA(x *exchange) {
	r := x.r
	if r.URL.Path != RTAPath {
		writeError(x.w, http.StatusNotFound, "NotFound", "the RTA service answers at "+RTAPath)
		return
	}
	id, err := h.tokens.caller(r.Header.Get("Authorization"), r.Host, h.cfg.now)
	if err != nil {
		refuseCaller(x.w, err)
		return
	}
	x.id, x.scope = id, "rta"
	if !slices.Contains(subprotocols(r), RTASubprotocol) {
		writeError(x.w, http.StatusBadRequest, "BadRequest", "ask for the subprotocol "+RTASubprotocol)
		return
	}
	if h.rta.faults().upgrade {
		x.fault = kindOf(&ServiceFault{Status: http.StatusServiceUnavailable})
		writeError(x.w, http.StatusServiceUnavailable, "ServiceUnavailable", "the RTA service is unavailable (a fault)")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := &rtaConn{hub: h.rta, id: id, connID: newConnID(), out: make(chan []byte, rtaOutbox),
		done: make(chan struct{}), cancel: cancel, subs: map[uint32]rtaResource{}}
	if !h.rta.add(c) {
		writeError(x.w, http.StatusServiceUnavailable, "ServiceUnavailable", "the mock holds as many RTA connections as it serves")
		return
	}
	defer h.rta.remove(c)
	ws, err := websocket.Accept(x.w, r, &websocket.AcceptOptions{Subprotocols: []string{RTASubprotocol}, InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered
	}
	x.sw.status = http.StatusSwitchingProtocols
	ws.SetReadLimit(maxRTAMessage)
	c.ws = ws
	// The service ends a connection after its lifetime (rtaLifetime), or
	// sooner when its token expires: "When the authentication token for a
	// user expires, the session is terminated by the service" (Microsoft's
	// RTA best practices): the second after its NotAfter on the mock's
	// clock. Both are timed from now (a clock that Config.Now moves by
	// hand does not fire them).
	life := rtaLifetime
	if id.expires != neverExpires {
		life = min(life, time.Unix(id.expires, 0).Add(time.Second).Sub(h.cfg.now()))
	}
	end := time.AfterFunc(life, c.close)
	defer end.Stop()
	var wg sync.WaitGroup
	wg.Go(func() { c.writeLoop(ctx) })
	c.readLoop(ctx)
	c.close()
	wg.Wait()
	c.mu.Lock()
	x.ws = c.rec
	c.mu.Unlock()
}

// subprotocols lists the subprotocols a request asks for.
func subprotocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

func newConnID() string {
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (hub *rtaHub) add(c *rtaConn) bool {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if len(hub.conns) >= maxRTAConns {
		return false
	}
	hub.conns[c] = struct{}{}
	return true
}

// remove forgets c and its subscriptions.
func (hub *rtaHub) remove(c *rtaConn) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	delete(hub.conns, c)
	c.mu.Lock()
	defer c.mu.Unlock()
	for sub := range c.subs {
		hub.unfollowLocked(c, sub)
	}
}

// each calls f with every connection open; f must not block.
func (hub *rtaHub) each(f func(c *rtaConn)) {
	if hub == nil {
		return
	}
	hub.mu.Lock()
	defer hub.mu.Unlock()
	for c := range hub.conns {
		f(c)
	}
}

// dropAll closes every connection at once, as a dropped network does.
func (hub *rtaHub) dropAll() { hub.each(func(c *rtaConn) { c.close() }) }

// DropRTA closes every RTA websocket open, at once, as a dropped network
// does. A server of h calls it when it closes: net/http no longer tracks a
// connection taken over for a websocket (Server.Close does).
func (h *Handler) DropRTA() { h.rta.dropAll() }

// close ends the connection without a closing handshake: its loops'
// context ends, so their reads and writes return, and the writer closes
// the websocket. It never waits (a publish calls it under the hub's lock),
// where closing the websocket may wait for a closing handshake under way.
func (c *rtaConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.cancel()
		c.mu.Lock()
		if c.flushT != nil {
			c.flushT.stop()
		}
		c.delayed = nil
		c.mu.Unlock()
	})
}

// readLoop reads the client's messages until the connection ends: a
// message that is not text, or not a subscribe or an unsubscribe, closes
// it with a status naming why.
func (c *rtaConn) readLoop(ctx context.Context) {
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		req, err := parseRTARequest(b)
		c.note("send", sentRecord(b, req, typ == websocket.MessageText && err == nil))
		if typ != websocket.MessageText {
			c.ws.Close(websocket.StatusUnsupportedData, "RTA messages are JSON text")
			return
		}
		if err != nil {
			c.ws.Close(websocket.StatusInvalidFramePayloadData, "not an RTA subscribe or unsubscribe message")
			return
		}
		if req.kind == rtaSubscribe {
			c.subscribe(req)
		} else {
			c.unsubscribe(req)
		}
	}
}

// writeLoop writes the outbox, and pings an idle peer, until the
// connection ends, then closes the websocket; a message not written
// within rtaWriteTimeout, or a ping not answered, ends it.
func (c *rtaConn) writeLoop(ctx context.Context) {
	defer c.ws.CloseNow()
	ping := time.NewTicker(rtaPing)
	defer ping.Stop()
	for {
		var err error
		select {
		case <-c.done:
			return
		case <-ctx.Done():
			return
		case b := <-c.out:
			c.release(len(b))
			wctx, cancel := context.WithTimeout(ctx, rtaWriteTimeout)
			err = c.ws.Write(wctx, websocket.MessageText, b)
			cancel()
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, rtaWriteTimeout)
			err = c.ws.Ping(pctx)
			cancel()
		}
		if err != nil {
			c.close()
			return
		}
	}
}

// send puts b in the outbox; a reader so slow that the outbox is full is
// dropped.
func (c *rtaConn) send(b []byte) {
	c.mu.Lock()
	full := c.sendLocked(b)
	c.mu.Unlock()
	if full {
		c.close()
	}
}

// subscribe answers a subscribe: the resource's state, or why not.
func (c *rtaConn) subscribe(req rtaRequest) {
	res, ok := parseRTAResource(req.uri)
	if !ok {
		c.send(rtaAnswer(rtaSubscribe, req.seq, rtaUnknownResource, 0, nil))
		return
	}
	if res.kind == rtaSessions {
		res.xuid = c.id.xuid
	}
	// Deciding, following, reading the state that answers and sending the
	// answer take the lock every presence, world and MPSD session change
	// takes with its events: a change comes wholly before (in the answer) or wholly after
	// (an event after it). Between the two, its event reached the
	// connection ahead of the answer, whose id the client had yet to learn,
	// and the answer then told the state before it.
	c.hub.w.lapses.mu.Lock()
	defer c.hub.w.lapses.mu.Unlock()
	if !c.hub.w.rtaVisible(c.id.xuid, res) {
		c.send(rtaAnswer(rtaSubscribe, req.seq, rtaNoResourceData, 0, nil))
		return
	}
	if f := c.hub.faults(); f.subscribe != 0 && (f.rate == 0 || c.hub.dice.roll(f.rate)) {
		c.send(rtaAnswer(rtaSubscribe, req.seq, f.subscribe, 0, nil))
		return
	}
	sub, ok := c.hub.follow(c, res)
	if !ok {
		c.send(rtaAnswer(rtaSubscribe, req.seq, rtaSubscriptionLimit, 0, nil))
		return
	}
	c.send(rtaAnswer(rtaSubscribe, req.seq, rtaSuccess, sub, c.hub.w.rtaState(res, c.connID)))
}

// unsubscribe answers an unsubscribe; one of a subscription the
// connection does not hold is answered UnknownResource (what the service
// answers then is not published).
func (c *rtaConn) unsubscribe(req rtaRequest) {
	code := rtaSuccess
	if !c.hub.unfollow(c, req.sub) {
		code = rtaUnknownResource
	}
	c.send(rtaAnswer(rtaUnsubscribe, req.seq, code, 0, nil))
}

// event sends an event of subscription sub, after delay. The events of a
// connection reach it in the order they were published, whatever delay
// each was given: an event never overtakes one held back before it (a
// latency fault that ended, or two of one instant, once timers of their
// own, which fire in any order). A held-back event of a subscription
// unsubscribed meanwhile is dropped: it never follows the unsubscribe's
// answer. At most rtaOutbox (or rtaOutboxBytes, with the outbox) wait,
// past which the reader is dropped as slow; a connection closed drops
// them and stops their timer, so that it holds neither its events nor the
// connection. Every send of an event is made under mu, which an
// unsubscribe takes to unfollow.
func (c *rtaConn) event(sub uint32, b []byte, delay time.Duration) {
	c.mu.Lock()
	select {
	case <-c.done: // closed: its close stopped the timer, or will once it holds mu
		c.mu.Unlock()
		return
	default:
	}
	var full bool
	switch {
	case delay <= 0 && len(c.delayed) == 0:
		full = c.sendLocked(b)
	case len(c.delayed) >= rtaOutbox || !c.hold(len(b)):
		full = true
	default:
		now := time.Now()
		due := now.Add(delay)
		if n := len(c.delayed); n > 0 && due.Before(c.delayed[n-1].due) {
			due = c.delayed[n-1].due
		}
		c.delayed = append(c.delayed, delayedEvent{sub, b, due})
		if len(c.delayed) == 1 {
			c.armFlush(due.Sub(now))
		}
	}
	c.mu.Unlock()
	if full {
		c.close()
	}
}

// armFlush sets the timer of the first delayed event. The caller holds mu.
func (c *rtaConn) armFlush(d time.Duration) {
	if c.flushT == nil {
		c.flushT = newTimerOn(c, (*rtaConn).flush)
	}
	c.flushT.arm(d)
}

// flush sends the delayed events that are due, in order, those of
// subscriptions still held, and sets the timer for the next.
func (c *rtaConn) flush() {
	c.mu.Lock()
	now := time.Now()
	full := false
	for len(c.delayed) > 0 && !c.delayed[0].due.After(now) && !full {
		e := c.delayed[0]
		c.delayed[0] = delayedEvent{} // hold no event sent
		c.delayed = c.delayed[1:]
		c.release(len(e.b)) // held again if sent
		if _, held := c.subs[e.sub]; held {
			full = c.sendLocked(e.b)
		}
	}
	if !full && len(c.delayed) > 0 {
		c.armFlush(time.Until(c.delayed[0].due))
	}
	c.mu.Unlock()
	if full {
		c.close()
	}
}

// sendLocked is send for a caller holding mu: it puts b in the outbox,
// unless the connection is closed, and reports whether the outbox was
// full (the caller then closes it, without mu).
func (c *rtaConn) sendLocked(b []byte) (full bool) {
	select {
	case <-c.done:
		return false
	default:
	}
	if !c.hold(len(b)) { // counted before the writer can take it
		return true
	}
	select {
	case c.out <- b:
		c.rec.add("receive", c.hub.w.now(), b)
		return false
	default:
		c.release(len(b))
		return true
	}
}

// hold counts n more bytes waiting for the reader and reports whether they
// fit in rtaOutboxBytes; bytes that do not are not counted.
func (c *rtaConn) hold(n int) bool {
	if c.waiting.Add(int64(n)) > rtaOutboxBytes {
		c.release(n)
		return false
	}
	return true
}

// release counts n bytes no longer waiting for the reader: written, sent
// from the delayed events to the outbox, or dropped with their
// subscription.
func (c *rtaConn) release(n int) { c.waiting.Add(-int64(n)) }

// Resync sends every RTA connection the resync message ([4]): XSAPI then
// re-reads the state its subscriptions follow (after the first 5 minutes of
// a connection; it ignores one sooner).
func (h *Handler) Resync() {
	h.rta.each(func(c *rtaConn) { c.send([]byte("[4]")) })
}

// RTAConns returns how many RTA websockets are open.
func (h *Handler) RTAConns() int {
	h.rta.mu.Lock()
	defer h.rta.mu.Unlock()
	return len(h.rta.conns)
}
