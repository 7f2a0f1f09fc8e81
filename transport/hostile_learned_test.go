package transport_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// TestLearnedEndReported: each change of a learned limit is an
// EventLimitLearned, its end included. A confirmed limit's end is reported
// only when the transport reads its store within learnedRefresh (10 s) of
// that end: a title that makes no call of any kind in those 10 s (an idle
// server, a game between matches) never hears that the limit ended, though
// a key's own limit's end is always reported.
func TestLearnedEndReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reasons []string
		tr := &transport.Transport{Base: servedProfile(t, 6), TitleID: "1234567890", RetryWindow: -1,
			Observe: func(_ context.Context, e transport.Event) {
				if e.Kind == transport.EventLimitLearned {
					mu.Lock()
					reasons = append(reasons, e.Reason)
					mu.Unlock()
				}
			}}
		c := &http.Client{Transport: tr}
		for _, xuid := range []string{"2533274790000001", "2533274790000002"} { // a learns 6, b confirms it
			for range 8 {
				profileAs(context.Background(), c, xuid)
			}
		}
		time.Sleep(throttle.LearnedFor + 20*time.Second) // no call for 20 s after the limit's end
		profileAs(context.Background(), c, "2533274790000003")
		if !strings.Contains(strings.Join(reasons, "\n"), "expired for the scope") {
			t.Errorf("limit events %q: the confirmed limit's end is not among them", reasons)
		}
	})
}

// TestLearnedFromTheStoreKeepsTheFloor: a learned limit is never below a tenth
// of the table's. The floor is applied only where a transport reports a
// 429 body; a limit read from the shared store (Learned, every 10 s) is
// capped at the ceiling but not held to the floor: whatever else writes
// the store (a transport with another limits table, or its own floor; any
// code with the store's LimitStore) puts profile's sustain at 1 in 300 s,
// a tenth of a tenth of the table's 30, on every transport of the fleet.
func TestLearnedFromTheStoreKeepsTheFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &throttle.MemoryBudgetStore{}
		for _, u := range []string{"a", "b"} {
			store.Learn(context.Background(), throttle.LimitReport{Scope: "profile", Period: throttle.Sustain, Limit: 1, User: u, At: time.Now()})
		}
		tr := &transport.Transport{Base: servedProfile(t, 10), TitleID: "1234567890", Budget: store}
		profileAs(context.Background(), &http.Client{Transport: tr}, "2533274790000001")
		for _, l := range tr.LearnedLimits() {
			if floor := (l.Table + 9) / 10; l.Learned < floor {
				t.Errorf("the transport counts %s %s against %d, below a tenth of the table's %d", l.Scope, l.Period, l.Learned, l.Table)
			}
		}
	})
}

// TestLearnedCeilingOnlyAboveTheTable: MaxLearnedLimit "caps the limits
// learned": what a 429 body reports is believed up to it, and a body that
// agrees with the table changes nothing. With a ceiling below a table's
// limit (MaxLearnedLimit 5; or 100 beside stats-read's sustain of 300), a
// 429 whose body reports exactly the table's limit (10 in 15 s: the user's
// other device spent the window) is taken as drift and cut to the
// ceiling: the key's burst halves, and a second user's 429 halves it for
// the scope.
func TestLearnedCeilingOnlyAboveTheTable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"15"}}, Request: r,
				Body: io.NopCloser(strings.NewReader(`{"version":1,"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate"}`))}, nil
		})
		tr := &transport.Transport{Base: base, TitleID: "1234567890", MaxLearnedLimit: 5, RetryWindow: -1}
		profileAs(context.Background(), &http.Client{Transport: tr}, "2533274790000001")
		if got := tr.LearnedLimits(); len(got) != 0 {
			t.Errorf("a 429 reporting the table's own limit (10 in 15 s) left LearnedLimits %+v; want none: the service agrees with the table", got)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
