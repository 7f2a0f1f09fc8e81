package client

// atk (helper 174): an outside attack on "a resync reads only the users of
// the subscriptions not refused" (RELIABILITY.md, 2026-12-07 03:30;
// rtaSession.resync): a user followed by two presence subscriptions, one
// refused; a resource refused in one Subscribe call and subscribed again
// by a later one; a refusal on one connection and the resync on the next.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
)

// attack60RTAService is a scripted RTA service: answer gives the answer to
// subscribe seq (uri) on connection conn (from 1), "" for none; after
// resyncAfter on a connection whose index is in resyncOn it asks for a
// resync (nil: on every connection); a connection whose index is in
// dropAfter is closed that long after it is made. It records every subscribe as "conn:uri".
type attack60RTAService struct {
	answer      func(conn, seq int, uri string) string
	resyncOn    []int
	resyncAfter time.Duration
	dropAfter   map[int]time.Duration

	conns atomic.Int64
	mu    sync.Mutex
	sent  []string
}

func (s *attack60RTAService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws := acceptRTA(w, r)
	if ws == nil {
		return
	}
	defer ws.CloseNow()
	conn := int(s.conns.Add(1))
	ctx := r.Context()
	if s.resyncOn == nil || slices.Contains(s.resyncOn, conn) {
		t := time.AfterFunc(s.resyncAfter, func() { ws.Write(ctx, websocket.MessageText, []byte(`[4]`)) })
		defer t.Stop()
	}
	if d, ok := s.dropAfter[conn]; ok {
		t := time.AfterFunc(d, func() { ws.Close(websocket.StatusGoingAway, "") })
		defer t.Stop()
	}
	// The answers go out from a goroutine of their own, so that reading
	// never waits on a write (net.Pipe has no buffer).
	out := make(chan string, 256)
	defer close(out)
	go func() {
		for a := range out {
			ws.Write(ctx, websocket.MessageText, []byte(a))
		}
	}()
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var m []any
		if json.Unmarshal(b, &m) != nil || len(m) != 3 || m[0] != float64(rtaSubscribe) {
			continue
		}
		seq, _ := m[1].(float64)
		uri, _ := m[2].(string)
		s.mu.Lock()
		s.sent = append(s.sent, fmt.Sprintf("%d:%s", conn, uri))
		s.mu.Unlock()
		if a := s.answer(conn, int(seq), uri); a != "" {
			out <- a
		}
	}
}

// attack60OK and attack60Refused answer subscribe seq: in force (its service id
// seq+100), or refused for good (2: subscription limit).
func attack60OK(seq int) string      { return fmt.Sprintf(`[1,%d,0,%d,null]`, seq, seq+100) }
func attack60Refused(seq int) string { return fmt.Sprintf(`[1,%d,2]`, seq) }

// attack60Resyncs subscribes me to rs against svc, reads events until n
// Resynced have come, and returns the users each presence read asked for,
// in order.
func attack60Resyncs(t *testing.T, svc *attack60RTAService, n int, rs ...Resource) (reads []string, refused []Resource) {
	t.Helper()
	calls := &attack54RecordCalls{}
	c := rtaServedBy(t, svc, calls)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch, err := c.As(me).Subscribe(ctx, rs...)
	if err != nil {
		t.Fatal(err)
	}
	giveUp := time.After(5 * time.Hour) // fake time
	for got := 0; got < n; {
		var ev Event
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatal("the events ended")
			}
			ev = e
		case <-giveUp:
			t.Fatalf("%d of %d Resynced in 5 hours", got, n)
		}
		switch e := ev.(type) {
		case *Resynced:
			got++
		case *SubscriptionError:
			refused = append(refused, e.Resource)
		}
	}
	cancel()
	for range ch {
	}
	calls.mu.Lock()
	defer calls.mu.Unlock()
	for _, b := range calls.bodies {
		if strings.Contains(b, "/users/batch") {
			reads = append(reads, b)
		}
	}
	return reads, refused
}

// attack60ReadsUser reports whether every read in reads asks for xuid.
func attack60ReadsUser(reads []string, xuid string) bool {
	for _, r := range reads {
		if !strings.Contains(r, `"`+xuid+`"`) {
			return false
		}
	}
	return len(reads) > 0
}

// attack60ReadsNone reports whether no read in reads asks for xuid.
func attack60ReadsNone(reads []string, xuid string) bool {
	for _, r := range reads {
		if strings.Contains(r, `"`+xuid+`"`) {
			return false
		}
	}
	return true
}

// held: RELIABILITY.md (2026-12-07 03:30) "a resync reads only the users
// of the subscriptions not refused"; Resynced godoc "Presence holds the
// presence records of the users the presence subscriptions follow". The
// same user followed by a title presence and a device presence
// subscription: the title one refused, the device one in force (and the
// other way round), the resync reads the user (a subscription not
// refused follows them); both refused, it does not; the acting user's own
// device presence, in force, is read each time.
func TestAttack60RTAResyncTitleRefusedDeviceNot(t *testing.T) {
	cases := []struct {
		name     string
		refuse   []int // seqs refused: 1 title presence of other, 2 device presence of other
		readsOth bool
	}{
		{"title refused, device in force", []int{1}, true},
		{"device refused, title in force", []int{2}, true},
		{"both refused", []int{1, 2}, false},
		{"neither refused", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc := &attack60RTAService{resyncOn: []int{1}, resyncAfter: 10 * time.Minute,
					answer: func(_, seq int, _ string) string {
						if slices.Contains(tc.refuse, seq) {
							return attack60Refused(seq)
						}
						return attack60OK(seq)
					}}
				reads, refused := attack60Resyncs(t, svc, 1, TitlePresenceOf(other, title), PresenceOf(other), PresenceOf(me))
				if len(refused) != len(tc.refuse) {
					t.Fatalf("%d SubscriptionErrors, want %d", len(refused), len(tc.refuse))
				}
				if len(reads) != 1 {
					t.Fatalf("%d presence reads, want 1: %q", len(reads), reads)
				}
				if !attack60ReadsUser(reads, me) {
					t.Errorf("the resync did not read the acting user's own presence (in force): %.300s", reads[0])
				}
				if tc.readsOth && !attack60ReadsUser(reads, other) {
					t.Errorf("the resync did not read %s, followed by a subscription not refused: %.300s", other, reads[0])
				}
				if !tc.readsOth && !attack60ReadsNone(reads, other) {
					t.Errorf("the resync read %s, both of whose subscriptions were refused: %.300s", other, reads[0])
				}
			})
		})
	}
}

// held: User.Subscribe godoc "A subscription the service refuses for good
// is reported (SubscriptionError) and not sent again, on that connection
// or a later one"; RELIABILITY.md "a resync reads only the users of the
// subscriptions not refused". The refusal is a Subscribe call's own: a
// later Subscribe call of the same User subscribing to the same resource
// sends it, and, the service taking it this time, its resync reads the
// user, while the first call's resync, on its own connection at the same
// time, still does not.
func TestAttack60RTAResyncRefusedThenSubscribedAgainLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := &attack60RTAService{resyncOn: []int{1, 2}, resyncAfter: 10 * time.Minute,
			answer: func(conn, seq int, uri string) string {
				if conn == 1 && strings.Contains(uri, other) {
					return attack60Refused(seq)
				}
				return attack60OK(seq)
			}}
		calls := &attack54RecordCalls{}
		c := rtaServedBy(t, svc, calls)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ch1, err := c.As(me).Subscribe(ctx, PresenceOf(other), PresenceOf(me))
		if err != nil {
			t.Fatal(err)
		}
		until[*SubscriptionError](t, ch1)
		synctest.Wait()
		ch2, err := c.As(me).Subscribe(ctx, PresenceOf(other), PresenceOf(me))
		if err != nil {
			t.Fatal(err)
		}
		rs1 := until[*Resynced](t, ch1)
		rs2 := until[*Resynced](t, ch2)
		cancel()
		for range ch1 {
		}
		for range ch2 {
		}
		svc.mu.Lock()
		sent := slices.Clone(svc.sent)
		svc.mu.Unlock()
		otherURI := PresenceOf(other).URI()
		if !slices.Contains(sent, "2:"+otherURI) {
			t.Errorf("the later Subscribe call did not send %s's presence: sent %q", other, sent)
		}
		calls.mu.Lock()
		defer calls.mu.Unlock()
		var withOther, withoutOther int
		for _, b := range calls.bodies {
			if !strings.Contains(b, "/users/batch") {
				continue
			}
			if strings.Contains(b, `"`+other+`"`) {
				withOther++
			} else {
				withoutOther++
			}
		}
		if withOther != 1 || withoutOther != 1 {
			t.Errorf("presence reads: %d with %s, %d without; want one of each (the first call's without, the later's with): %q (errs %v, %v)",
				withOther, other, withoutOther, calls.bodies, rs1.Err, rs2.Err)
		}
	})
}

// held: the same promise across a reconnection. Connection 1: other's
// presence is refused for good, the acting user's taken; the service
// drops the connection. Connection 2 (made again after 1 s): other's is
// not sent; the service asks for a resync 10 minutes in: other is not
// read. A variant: other's subscribe is Throttled on connection 1 (a
// retry timed), the connection is lost before the retry, and connection
// 2 sends it again and gets it refused: the resync on connection 2 does
// not read other either. And a third: connection 2's resync comes while
// other's subscribe, sent again on it, still awaits its answer (the
// service never answers it): other is read (a subscription not refused).
func TestAttack60RTAResyncAfterReconnection(t *testing.T) {
	otherURI := PresenceOf(other).URI()
	cases := []struct {
		name     string
		answer   func(conn, seq int, uri string) string
		readsOth bool
		sentOn2  bool
	}{
		{"refused on 1", func(conn, seq int, uri string) string {
			if uri == otherURI {
				return attack60Refused(seq)
			}
			return attack60OK(seq)
		}, false, false},
		{"throttled on 1, refused on 2", func(conn, seq int, uri string) string {
			switch {
			case uri == otherURI && conn == 1:
				return fmt.Sprintf(`[1,%d,1001]`, seq)
			case uri == otherURI:
				return attack60Refused(seq)
			}
			return attack60OK(seq)
		}, false, true},
		{"throttled on 1, unanswered on 2", func(conn, seq int, uri string) string {
			switch {
			case uri == otherURI && conn == 1:
				return fmt.Sprintf(`[1,%d,1001]`, seq)
			case uri == otherURI:
				return ""
			}
			return attack60OK(seq)
		}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc := &attack60RTAService{resyncOn: []int{1, 2}, resyncAfter: 10 * time.Minute,
					dropAfter: map[int]time.Duration{1: 500 * time.Millisecond}, answer: tc.answer}
				reads, _ := attack60Resyncs(t, svc, 1, PresenceOf(other), PresenceOf(me))
				if n := svc.conns.Load(); n != 2 {
					t.Fatalf("%d connections, want 2", n)
				}
				svc.mu.Lock()
				sent := slices.Clone(svc.sent)
				svc.mu.Unlock()
				if got := slices.Contains(sent, "2:"+otherURI); got != tc.sentOn2 {
					t.Errorf("other's subscribe sent on connection 2: %v, want %v (sent %q)", got, tc.sentOn2, sent)
				}
				if len(reads) != 1 || !attack60ReadsUser(reads, me) {
					t.Fatalf("presence reads %q, want one of the acting user's", reads)
				}
				if tc.readsOth && !attack60ReadsUser(reads, other) {
					t.Errorf("the resync did not read %s, not refused: %.300s", other, reads[0])
				}
				if !tc.readsOth && !attack60ReadsNone(reads, other) {
					t.Errorf("the resync read %s, refused for good: %.300s", other, reads[0])
				}
			})
		})
	}
}
