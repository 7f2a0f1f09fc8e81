package transport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// attack9bSend sends one POST for xuid through rt (FailFast) and returns 200
// for any answer but a 429, 429, or 0 when the transport refused it
// locally.
func attack9bSend(t *testing.T, rt http.RoundTripper, xuid string) int {
	t.Helper()
	ctx := transport.WithPolicy(context.Background(), transport.Policy{FailFast: true})
	req, _ := http.NewRequestWithContext(ctx, "POST", attack9URL, strings.NewReader("{}"))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("{}")), nil }
	req.Header.Set("Authorization", mock.Token(xuid, attack9Title))
	resp, err := rt.RoundTrip(req)
	var te *transport.ThrottleError
	switch {
	case err == nil:
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 429 {
			return 429
		}
		return 200
	case errors.As(err, &te) && te.Local:
		return 0
	case errors.As(err, &te):
		return te.Status
	}
	t.Fatal(err)
	return -1
}

// transport (go doc): "A 429's body teaches the transport the service's
// limit"; LearnedLimit: "where the limits data had none or another: drift
// from the published table"; limits.Rule.ClientLimit: "what one user of
// one title may send ... The transport's budget and the planner use it";
// RELIABILITY.md (the second publisher attack, held): "a 429 for the
// publisher's aspect ... teaches no limit above 20 (and, with the headers'
// fix, the budget stops before it: at most one 429)", and through the
// transport "20 served and 5 refused locally, no 429".
//
// When the key's title counter and its publisher's both refuse a call and
// their windows end together (one title: both started at its first call),
// the mock answers with the title's decision: a 429 naming maxRequests 100
// in 300 s (the title's sustain, which the limits data has) though the
// publisher's 20 binds. The transport takes it for drift: two users'
// reports confirm "sustain 100" for the scope, and a third user, who never
// saw a 429, is sent past the publisher's 20 by its budget in the next
// window and answered 429.
func TestAttack9bTitleAspect429TeachesTitleSustain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := attack9Limits(t)
		h := mock.Must(mock.New(mock.Config{Limits: l}))
		tr := &transport.Transport{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1}
		users := []string{"2533274791234567", "2533274791234568"}
		for _, x := range users {
			for range 100 { // another client of the title, without the budget
				attack9bSend(t, h, x)
			}
		}
		time.Sleep(time.Second)
		for _, x := range users {
			if st := attack9bSend(t, tr, x); st != 429 {
				t.Fatalf("the transport's first call for a user whose title counted 100: %d, want 429", st)
			}
		}
		for _, ll := range tr.LearnedLimits() {
			if ll.Period == throttle.Sustain && ll.Learned > 20 {
				t.Errorf("learned %+v: above the publisher's 20, which binds", ll)
			}
		}
		time.Sleep(301 * time.Second)
		got := map[int]int{}
		for range 25 {
			got[attack9bSend(t, tr, "2533274791234569")]++
		}
		if got[429] != 0 || got[200] != 20 {
			t.Errorf("a third user's 25 calls in the next window: %v (status: count; 0 refused locally), want 20 served, 5 refused locally, no 429", got)
		}
	})
}

// held: a 429 of the title's burst (the key's other client spent the
// burst of 5, not the sustain) teaches nothing above the data's limits
// (ClientLimit {5, 20}), and the transport's budget then keeps within the
// publisher's 20 in the next window: no 429.
func TestAttack9bTitleBurst429TeachesNothingHigher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := limits.Read(strings.NewReader(`{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 5, "sustain": 100, "publisherSustain": 20, "store": true}]}`))
		if err != nil {
			t.Fatal(err)
		}
		h := mock.Must(mock.New(mock.Config{Limits: l}))
		tr := &transport.Transport{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1}
		for range 5 {
			attack9bSend(t, h, "2533274791234567")
		}
		if st := attack9bSend(t, tr, "2533274791234567"); st != 429 {
			t.Fatalf("first call through the transport: %d, want the title's burst 429", st)
		}
		for _, ll := range tr.LearnedLimits() {
			if ll.Period == throttle.Burst && ll.Learned > 5 || ll.Period == throttle.Sustain && ll.Learned > 20 {
				t.Errorf("learned %+v", ll)
			}
		}
		time.Sleep(301 * time.Second)
		got := map[int]int{}
		for range 40 {
			got[attack9bSend(t, tr, "2533274791234567")]++
			time.Sleep(3 * time.Second)
		}
		if got[429] != 0 || got[200] != 20 {
			t.Errorf("40 calls 3 s apart in the next window: %v, want 20 served, none 429", got)
		}
	})
}
