package mock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/throttle"
)

// TestRTACloakedPresenceStaysHidden: a user who cloaked (PUT .../state
// "Cloaked") reads as Offline to their friends' subscriptions as to their
// reads: a title's write behind the cloak is no event; cloaking while
// online reads as signing out, and "Active" as signing in.
func TestRTACloakedPresenceStaysHidden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		if code, _, _ := subscribe(t, ws, 1, devicesURI(xuid2)); code != 0 {
			t.Fatalf("subscribe: code %d", code)
		}
		tok := Token(xuid2, title1)
		state := "https://userpresence.xboxlive.com/users/xuid(" + xuid2 + ")/state"
		set := "https://userpresence.xboxlive.com/users/me/devices/current/titles/current"
		var got []string
		for _, w := range []struct{ name, method, url, body string }{
			{"cloak", "PUT", state, `{"state":"Cloaked"}`},
			{"title write behind the cloak", "POST", set, `{"state":"active"}`},
			{"active", "PUT", state, `{"state":"Active"}`},
			{"cloak while online", "PUT", state, `{"state":"Cloaked"}`},
		} {
			time.Sleep(10 * time.Second) // the presence service's write limit
			if r := do(t, h, w.method, w.url, tok, w.body); r.status != http.StatusOK {
				t.Fatalf("%s %s: %d %s", w.method, w.body, r.status, r.body)
			}
			h.Resync() // a mark: what came before it is the write's
			for a := read(t, ws); string(a[0]) != "4"; a = read(t, ws) {
				got = append(got, w.name+": "+string(a[2]))
			}
		}
		want := []string{`active: "Scarlett:true"`, `cloak while online: "Scarlett:false"`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events of a cloaked user's presence (-want +got):\n%s", diff)
		}
	})
}

// TestRTAPublishNotHeldByAClosingPeer: a peer whose connection is closing
// (the mock's close frame unread: a bad message, then no reads) and whose
// outbox then fills holds up no one: the writes that publish to it return
// at once, rather than waiting, under the hub's lock, for its closing
// handshake's 5 s.
func TestRTAPublishNotHeldByAClosingPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		subscribe(t, ws, 1, devicesURI(xuid1))
		if err := ws.Write(t.Context(), websocket.MessageBinary, []byte("x")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the mock is writing its close frame, which no one reads
		start := time.Now()
		for i := range rtaOutbox + 2 {
			h.world.storePresence(presenceRecord{XUID: xuid1, State: []string{"Online", "Offline"}[i%2]})
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("the writes took %v, want 0", took)
		}
	})
}

// TestRTAPublishCostsItsSubscribers: a change of a resource costs what
// its own subscriptions cost, not every subscription open: a change no
// one follows, published while a connection holds 1,000 subscriptions to
// another resource, allocates nothing per subscription (it built every
// subscription's key: 1,000 allocations; 27 ms a change over 200,000
// subscriptions).
func TestRTAPublishCostsItsSubscribers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		uri := "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")/titles/" + title1
		for i := range maxRTASubs {
			if code, _, _ := subscribe(t, ws, i+1, uri); code != 0 {
				t.Fatalf("subscription %d: code %d", i+1, code)
			}
		}
		key := rtaResource{kind: rtaDevices, xuid: xuid2}.key()
		if n := testing.AllocsPerRun(10, func() { h.rta.publish(key, nil, "PC:true") }); n > 2 {
			t.Errorf("a change no one follows: %v allocations, want at most 2", n)
		}
	})
}

// BenchmarkRTAPublish is one change published to one subscription among
// 1,000 a connection holds (the event put in its outbox and recorded).
func BenchmarkRTAPublish(b *testing.B) {
	h := Must(New(Config{World: rtaWorld()}))
	c := &rtaConn{hub: h.rta, id: identity{xuid: xuid1}, out: make(chan []byte, rtaOutbox),
		done: make(chan struct{}), cancel: func() {}, subs: map[uint32]rtaResource{}}
	h.rta.add(c)
	for range maxRTASubs - 1 {
		h.rta.follow(c, rtaResource{kind: rtaTitle, xuid: xuid1, title: title1})
	}
	h.rta.follow(c, rtaResource{kind: rtaDevices, xuid: xuid1})
	key := rtaResource{kind: rtaDevices, xuid: xuid1}.key()
	b.ReportAllocs()
	for b.Loop() {
		h.rta.publish(key, nil, "Scarlett:true")
		<-c.out
	}
}

// TestRTASubscriptionsBoundedAcrossConnections: subscriptions past the
// bound of all connections (maxRTAAllSubs, 3 here) are answered
// SubscriptionLimitReached (2), however many connections share them out;
// an unsubscribe, or a connection closed, makes room again.
func TestRTASubscriptionsBoundedAcrossConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		h.rta.maxSubs = 3
		hc := pipeServer(t, h)
		a, b := dialRTA(t, hc, xuid1), dialRTA(t, hc, xuid2)
		var got []int
		for i, ws := range []*websocket.Conn{a, a, b, b} {
			code, _, _ := subscribe(t, ws, i+1, devicesURI(xuid1))
			got = append(got, code)
		}
		if want := []int{0, 0, 0, 2}; !slices.Equal(got, want) {
			t.Errorf("codes %v, want %v", got, want)
		}
		a.CloseNow()
		synctest.Wait()
		if code, _, _ := subscribe(t, b, 5, devicesURI(xuid1)); code != 0 {
			t.Errorf("after a connection closed: code %d, want 0", code)
		}
	})
}

// TestRTARecordHoldsNoTextOfTheClients: what a client sends is recorded as
// the mock read it: a subscribe to a resource it knows as sent, anything
// else by its shape and size only, so that a token a client writes into
// a message (a URI's query or scheme, a message of no RTA form, a binary
// one) reaches neither the journal nor its HAR export; a message read is
// written again as the mock read it, its spaces and escapes gone.
func TestRTARecordHoldsNoTextOfTheClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		token := Token(xuid1, title1)
		_, secret, _ := strings.Cut(token, ";")
		sent := func(msgs ...string) {
			t.Helper()
			ws := dialRTA(t, hc, xuid1)
			for _, m := range msgs {
				if err := ws.Write(t.Context(), websocket.MessageText, []byte(m)); err != nil {
					t.Fatal(err)
				}
				ws.Read(t.Context())
			}
			ws.CloseNow()
			synctest.Wait()
		}
		scheme := token + "://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")/devices"
		query := devicesURI(xuid1) + "?token=" + token
		uri, _ := json.Marshal(scheme)
		uri2, _ := json.Marshal(query)
		loose, _ := json.Marshal([]string{token})
		sent(`[1,1,`+string(uri)+`]`, `[1,2,`+string(uri2)+`]`, `[1,3,"`+devicesURI(xuid1)+`"]`, `[2,4,1]`,
			"[1,\t\n 5  ,\"\\u0068"+devicesURI(xuid1)[1:]+`"]`, string(loose))
		calls := h.Calls(CallFilter{})
		var got []string
		for _, c := range calls {
			for _, m := range c.Messages {
				if m.Type == "send" {
					got = append(got, m.Data)
				}
			}
		}
		want := []string{fmt.Sprintf(`[1,1,"(an unknown resource, %d bytes)"]`, len(scheme)),
			fmt.Sprintf(`[1,2,"(an unknown resource, %d bytes)"]`, len(query)),
			`[1,3,"` + devicesURI(xuid1) + `"]`, `[2,4,1]`, `[1,5,"` + devicesURI(xuid1) + `"]`, fmt.Sprintf(`(not an RTA message, %d bytes)`, len(loose))}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the client's messages as recorded (-want +got):\n%s", diff)
		}
		var har strings.Builder
		h.WriteHAR(&har, CallFilter{})
		b, _ := json.Marshal(calls)
		if strings.Contains(string(b)+har.String(), secret) {
			t.Error("the record holds the token")
		}
	})
}

// TestRTASessionTapCostsItsMembers: a session write costs what its
// members' subscriptions cost: 1,000 subscriptions to shoulder taps of a
// user not in the session add nothing to what the write allocates (each
// was read for every write: 2.3 ms a write over 100,000).
func TestRTASessionTapCostsItsMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		doc := []byte(`{"members":{"0":{"constants":{"system":{"xuid":"` + xuid1 + `"}}}},"changeNumber":1}`)
		write := func() uint64 {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for range 10 {
				h.rta.sessionChanged([]string{"scid", "lobby", "s1"}, nil, doc)
			}
			runtime.ReadMemStats(&m1)
			return (m1.TotalAlloc - m0.TotalAlloc) / 10
		}
		alone := write()
		ws := dialRTA(t, hc, xuid3)
		for i := range maxRTASubs {
			subscribe(t, ws, i+1, "https://sessiondirectory.xboxlive.com/connections/")
		}
		if crowded := write(); crowded > alone+1024 {
			t.Errorf("a session write allocates %d bytes with 1,000 subscriptions of a non-member, %d with none", crowded, alone)
		}
	})
}

// TestRTAClosedConnectionDropsDelayedEvents: events an rta latency fault
// holds back are dropped when their connection closes, not kept (the
// connection with them) until the latency has passed: a client that
// closes and opens connections under a 10-minute latency kept every
// delayedConn is an RTA connection of xuid1's, with no websocket, in h
// under a 10-minute rta latency fault, following the devices of xuid.
func delayedConn(t *testing.T, h *Handler, xuid string) *rtaConn {
	t.Helper()
	if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(10 * time.Minute)}}}); err != nil {
		t.Fatal(err)
	}
	c := &rtaConn{hub: h.rta, id: identity{xuid: xuid1}, out: make(chan []byte, rtaOutbox),
		done: make(chan struct{}), cancel: func() {}, subs: map[uint32]rtaResource{}}
	h.rta.add(c)
	h.rta.follow(c, rtaResource{kind: rtaDevices, xuid: xuid})
	return c
}

// closed one's 256 events and buffers for 10 minutes.
func TestRTAClosedConnectionDropsDelayedEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		c := delayedConn(t, h, xuid1)
		for range rtaOutbox {
			h.rta.publish(rtaResource{kind: rtaDevices, xuid: xuid1}.key(), nil, "Scarlett:true")
		}
		c.mu.Lock()
		held, timer := len(c.delayed), c.flushT
		c.mu.Unlock()
		if held != rtaOutbox || timer == nil {
			t.Fatalf("%d events delayed (timer %v), want %d", held, timer != nil, rtaOutbox)
		}
		c.close()
		h.rta.remove(c)
		c.mu.Lock()
		pending := len(c.delayed)
		c.mu.Unlock()
		if pending != 0 {
			t.Errorf("%d delayed events kept after the connection closed, want 0", pending)
		}
		// A timer that close did not stop would still hold the connection
		// for 10 minutes: Stop reports true only for a timer that was
		// still running.
		running := 0
		if timer.t.Stop() {
			running++
		}
		if running != 0 {
			t.Errorf("%d delayed events' timers still running after the connection closed, want 0", running)
		}
	})
}

// TestRTASubscriptionBytes: what a subscription costs the mock's heap,
// the figure behind maxRTAAllSubs' bytes (rtawire.go) and RELIABILITY.md:
// its place in its connection's and the hub's indexes, its resource
// shared. 100 connections of 1,000 subscriptions each.
func TestRTASubscriptionBytes(t *testing.T) {
	h := rtaHandler(t)
	const conns, each = 100, 1000
	res := make([]rtaResource, each)
	for i := range res {
		res[i] = rtaResource{kind: rtaDevices, xuid: strconv.Itoa(2533274790000000 + i)}
	}
	cs := make([]*rtaConn, conns)
	for i := range cs {
		cs[i] = &rtaConn{hub: h.rta, id: identity{xuid: xuid1}, out: make(chan []byte, rtaOutbox),
			done: make(chan struct{}), cancel: func() {}, subs: map[uint32]rtaResource{}}
		h.rta.add(cs[i])
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	h0 := heap()
	for _, c := range cs {
		for j, r := range res {
			if _, ok := h.rta.follow(c, r); !ok {
				t.Fatalf("subscription %d refused", j+1)
			}
		}
	}
	per := float64(heap()-h0) / (conns * each)
	runtime.KeepAlive(cs)
	t.Logf("%.0f bytes a subscription", per)
	if per > 200 {
		t.Errorf("%.0f bytes a subscription, want at most 200", per)
	}
}

// TestRTAClosedConnectionFlushTimerHoldsNothing: a connection's flush
// timer, stopped by its close, can stay in the runtime's timer heap with
// its callback (c.flush) until its time would have come: under a 10-minute
// latency fault (the most a fault takes), a closed connection, and through
// its hub's fault callback the whole Handler, stay reachable for ten minutes. One
// processor, so that every timer is in one heap, sixteen timers of an
// hour pending (as TestRTAStoppedLapseHoldsNothing). The lapse timers
// were fixed for this (timerOn, which lets go on stop); the flush timer
// was not.
func TestRTAClosedConnectionFlushTimerHoldsNothing(t *testing.T) {
	timersAhead(t)
	wh, wc := func() (weak.Pointer[Handler], weak.Pointer[rtaConn]) {
		h := Must(New(Config{World: rtaWorld()}))
		c := delayedConn(t, h, xuid2)
		h.rta.publish(rtaResource{kind: rtaDevices, xuid: xuid2}.key(), nil, "Scarlett:true")
		c.mu.Lock()
		armed := c.flushT != nil
		c.mu.Unlock()
		if !armed {
			t.Fatal("no flush timer")
		}
		c.close()
		h.rta.remove(c)
		return weak.Make(h), weak.Make(c)
	}()
	for range 5 {
		runtime.GC()
	}
	if wc.Value() != nil {
		t.Error("a closed connection whose delayed event was dropped is still reachable (its stopped flush timer)")
	}
	if wh.Value() != nil {
		t.Error("the Handler of a closed connection is still reachable (its stopped flush timer)")
	}
}
