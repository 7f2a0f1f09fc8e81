package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/mock"
)

// pipeListener is a listener of in-memory connections (net.Pipe), so that
// the mock's server and the client's websocket run in a synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	s, c := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

const stranger = "2533274790000003"

// rtaClient returns a mock in which me and other are friends, served on
// in-memory connections, and a client of it whose calls go to it in
// process and whose websocket goes to its server.
func rtaClient(t *testing.T) (*mock.Handler, *Client) {
	t.Helper()
	h := mock.Must(mock.New(mock.Config{World: mock.World{Accounts: []mock.WorldAccount{
		{XUID: me, Friends: []string{other}}, {XUID: other, Friends: []string{me}}, {XUID: stranger}}}}))
	c := rtaServedBy(t, h, h)
	t.Cleanup(h.DropRTA) // first: cleanups run last in, first out
	return h, c
}

// rtaServedBy returns a client whose RTA websocket goes to rta, served on
// in-memory connections so that it runs in a synctest bubble, and whose
// calls go to calls (nil: the client's default).
func rtaServedBy(t *testing.T, rta http.Handler, calls http.RoundTripper) *Client {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: rta}
	go srv.Serve(l)
	tr := &http.Transport{DialContext: l.dial}
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: calls, RTATransport: tr,
		Endpoints: map[string]string{"rta.xboxlive.com": "http://rta.xboxlive.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// next returns the next event that is not a ConnectionState, failing the
// test if the channel closes first.
func next(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	for ev := range ch {
		if _, ok := ev.(*ConnectionState); !ok {
			return ev
		}
	}
	t.Fatal("the events ended")
	return nil
}

// until returns the next event of type E, skipping others.
func until[E Event](t *testing.T, ch <-chan Event) E {
	t.Helper()
	for ev := range ch {
		if e, ok := ev.(E); ok {
			return e
		}
	}
	t.Fatal("the events ended")
	var zero E
	return zero
}

// TestSubscribeSeesFriendPresence: a user subscribed to a friend's
// presence gets the record it starts from, then the friend signing in
// and starting the title when the friend sets their presence through the
// mock; the channel closes when the context ends.
func TestSubscribeSeesFriendPresence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c := rtaClient(t)
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, PresenceOf(other), TitlePresenceOf(other, title))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if s, ok := next(t, ch).(*Subscribed); !ok || s.Presence == nil || s.Presence.State != "Offline" {
				t.Fatalf("first events: %#v, want Subscribed with the offline record", s)
			}
		}
		if err := c.As(other).SetPresence(t.Context(), true, nil); err != nil {
			t.Fatal(err)
		}
		got := []Event{next(t, ch), next(t, ch)}
		want := []Event{&DevicePresence{XUID: other, Device: "Scarlett", LoggedOn: true}, &TitlePresence{XUID: other, TitleID: title, State: "Started"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events after the friend's SetPresence (-want +got):\n%s", diff)
		}
		cancel()
		for range ch {
		}
	})
}

// TestSubscribeRefusedForStranger: a stranger's presence is refused for
// good, with XSAPI's E_XBL_RTA_ACCESS_DENIED, and not asked again.
func TestSubscribeRefusedForStranger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c := rtaClient(t)
		ch, err := c.As(me).Subscribe(t.Context(), PresenceOf(stranger))
		if err != nil {
			t.Fatal(err)
		}
		e, ok := next(t, ch).(*SubscriptionError)
		if !ok || !errors.Is(e.Err, hresult.E_XBL_RTA_ACCESS_DENIED) {
			t.Errorf("got %#v, want a SubscriptionError with E_XBL_RTA_ACCESS_DENIED", e)
		}
	})
}

// TestSubscribeResubscribesAfterThrottled: refused with 1001, a
// subscription is sent again after min(attempt², 60) s (XSAPI
// SubscribeResponseHandler): 0 s, 1 s, 4 s; the fault ends at 3 s, so it
// is in force from 5 s.
func TestSubscribeResubscribesAfterThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c := rtaClient(t)
		h.SetFaults(mock.Faults{Services: []mock.ServiceFault{{Service: mock.RTAService, Status: 1001, For: 3_000_000_000 /* 3 s */}}})
		start := time.Now()
		ch, _ := c.As(me).Subscribe(t.Context(), PresenceOf(other))
		until[*Subscribed](t, ch)
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("subscribed after %v, want 5s", took)
		}
	})
}

// TestSubscribeReconnectsAfterDrop: a dropped connection is made again
// within 0 to 5 s (the first reconnect waits only XSAPI's jitter) and
// its subscriptions are in force again; the next event arrives.
func TestSubscribeReconnectsAfterDrop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c := rtaClient(t)
		ch, _ := c.As(me).Subscribe(t.Context(), PresenceOf(other))
		until[*Subscribed](t, ch)
		h.DropRTA()
		lost := time.Now()
		if s := until[*ConnectionState](t, ch); s.Connected || s.Err == nil {
			t.Fatalf("after the drop: %+v, want a lost connection", s)
		}
		until[*Subscribed](t, ch)
		if took := time.Since(lost); took > rtaMaxJitter {
			t.Errorf("reconnected after %v, want at most %v", took, rtaMaxJitter)
		}
		c.As(other).SetPresence(t.Context(), true, nil)
		if ev, ok := next(t, ch).(*DevicePresence); !ok || !ev.LoggedOn {
			t.Errorf("after the reconnect: %#v", ev)
		}
	})
}

// TestSubscribeRenewsAfter90Minutes: XSAPI closes and makes its connection
// again every 90 minutes, before the service's 2 hours.
func TestSubscribeRenewsAfter90Minutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c := rtaClient(t)
		start := time.Now()
		ch, _ := c.As(me).Subscribe(t.Context(), PresenceOf(other))
		until[*Subscribed](t, ch)
		s := until[*ConnectionState](t, ch)
		for s.Connected {
			s = until[*ConnectionState](t, ch)
		}
		if took := time.Since(start); !errors.Is(s.Err, errRTALifetime) || took != rtaLifetime {
			t.Errorf("renewed after %v with %v, want %v with errRTALifetime", took, s.Err, rtaLifetime)
		}
	})
}

// TestSubscribeResync: a resync within 5 minutes of connecting is ignored
// (XSAPI's m_ignoreResyncTimer); one later reads the presence again.
func TestSubscribeResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c := rtaClient(t)
		ch, _ := c.As(me).Subscribe(t.Context(), PresenceOf(other))
		until[*Subscribed](t, ch)
		h.Resync()
		time.Sleep(rtaResyncQuiet)
		h.Resync()
		r := until[*Resynced](t, ch)
		if r.Err != nil || len(r.Presence) != 1 || r.Presence[0].XUID != other {
			t.Errorf("resync: %+v", r)
		}
		select {
		case ev := <-ch:
			t.Errorf("a second event: %#v (the early resync was not ignored)", ev)
		default:
		}
	})
}

// TestSubscribeEndsWithContext: a caller that stops reading and cancels
// leaves nothing running (goleak in TestMain checks the rest of the
// binary), whatever the connection was doing.
func TestSubscribeEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, c := rtaClient(t)
		ctx, cancel := context.WithCancel(t.Context())
		ch, _ := c.As(me).Subscribe(ctx, PresenceOf(other), RelationshipsOf(me), Sessions())
		h.SetFaults(mock.Faults{Services: []mock.ServiceFault{{Service: mock.RTAService, Status: 503}}})
		time.Sleep(time.Minute)
		cancel()
		synctest.Wait()
		for range ch {
		}
		if n := h.RTAConns(); n != 0 {
			t.Errorf("%d RTA connections open after cancel", n)
		}
	})
}

// TestReconnectDelay is XSAPI's ScheduleConnect: min(attempt², 60) s, plus
// up to 5 s of jitter once connected before.
func TestReconnectDelay(t *testing.T) {
	for _, tc := range []struct {
		name      string
		attempt   int
		connected bool
		jitter    float64
		want      time.Duration
	}{
		{"first connect", 0, false, 0.9, 0},
		{"second try, never connected", 1, false, 0.9, time.Second},
		{"first reconnect", 0, true, 0.5, 2500 * time.Millisecond},
		{"third reconnect try", 3, true, 0, 9 * time.Second},
		{"capped", 8, true, 1, 65 * time.Second},
		{"far past the cap", 1 << 40, false, 0, 60 * time.Second},
	} {
		if got := reconnectDelay(tc.attempt, tc.connected, tc.jitter); got != tc.want {
			t.Errorf("%s: reconnectDelay(%d, %v, %v) = %v, want %v", tc.name, tc.attempt, tc.connected, tc.jitter, got, tc.want)
		}
	}
}

// TestSubscribeArguments: bad resources are refused before anything is
// sent.
func TestSubscribeArguments(t *testing.T) {
	c, _ := New(Config{TitleID: title, Tokens: mockTokens()})
	for _, tc := range []struct {
		name string
		rs   []Resource
	}{
		{"none", nil},
		{"zero", []Resource{{}}},
		{"bad xuid", []Resource{PresenceOf("12ab")}},
		{"bad title", []Resource{TitlePresenceOf(me, "x")}},
		{"too many", make([]Resource, maxRTAResources+1)},
	} {
		if _, err := c.As(me).Subscribe(t.Context(), tc.rs...); !errors.Is(err, hresult.E_INVALIDARG) {
			t.Errorf("%s: %v, want E_INVALIDARG", tc.name, err)
		}
	}
}
