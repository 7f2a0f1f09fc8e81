package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// TestForgedTokensSpendNoBudget: calls that carry another user's userhash
// with a made-up token are refused 401 by the service, which counts a call
// against the user its token names and so counts none of these (the mock,
// as the services, authenticates before it counts). They must not spend
// that user's local budget: before, twelve of them made the user's first
// real call a local 429 (found by an outside attack on the proxy, where
// any local program may send any userhash, and the status page lists
// them).
func TestForgedTokensSpendNoBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := &statusCounter{base: mock.NewHandler()}
		tr := &Transport{Base: server, TitleID: title}
		ctx := WithPolicy(context.Background(), Policy{FailFast: true})
		forged := "XBL3.0 x=" + mock.UserHash(xuid2) + ";forged-token"
		for range 12 {
			req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
			req.Header.Set("Authorization", forged)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("a forged call: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a forged call got %d, want the service's 401", resp.StatusCode)
			}
		}
		snap, err := tr.Snapshot(throttle.Key{User: mock.UserHash(xuid2), Scope: "profile"})
		if err != nil || snap.Burst.Count != 0 || snap.Sustain.Count != 0 {
			t.Errorf("after 12 calls answered 401, the user's budget holds %+v (%v), want nothing counted", snap.Counts, err)
		}
		for i := range 10 {
			if _, err := get(t, tr, ctx, profileURL, xuid2); err != nil {
				t.Fatalf("the user's own call %d: %v, want it sent (their budget is whole)", i+1, err)
			}
		}
		if n := server.count(http.StatusOK); n != 10 {
			t.Errorf("the service served %d of the user's 10 calls", n)
		}
	})
}

// TestUnsentAttemptGivesItsSlotBack: an attempt booked in the budget that
// then fails before it is sent (the Signer fails) was never counted by the
// service, so its slot goes back: ten such calls leave the budget whole.
func TestUnsentAttemptGivesItsSlotBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := &statusCounter{base: mock.NewHandler()}
		tr := &Transport{Base: server, TitleID: title}
		broken := errors.New("no key to sign with")
		ctx := WithSigner(context.Background(), func(*http.Request) error { return broken })
		for range 10 {
			if _, err := get(t, tr, ctx, profileURL, xuid1); !errors.Is(err, broken) {
				t.Fatalf("a call whose signing fails: %v, want the Signer's error", err)
			}
		}
		snap, err := tr.Snapshot(throttle.Key{User: mock.UserHash(xuid1), Scope: "profile"})
		if err != nil || snap.Burst.Count != 0 {
			t.Errorf("after 10 calls never sent, the budget holds %+v (%v), want nothing counted", snap.Counts, err)
		}
		if n := server.count(http.StatusOK); n != 0 {
			t.Errorf("the service got %d calls, want none", n)
		}
	})
}
