package transport

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// TestRe401WithRateLimitHeadersKeepsTheirCount: a 401 whose RateLimit
// headers report the user's burst spent (the service, or a gateway in
// between, did count it) is synced into the budget; the slot given back
// for the 401 must not then be taken off the count the service reported,
// which left the budget one call short of it: the next FailFast call is
// refused locally, not sent into a 429 (a second outside attack).
func TestRe401WithRateLimitHeadersKeepsTheirCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) {
			w.Header().Set("RateLimit-Policy", `"burst";q=10;w=15, "sustain";q=30;w=300`)
			w.Header().Set("RateLimit", `"burst";r=0;t=15, "sustain";r=20;t=300`)
			w.WriteHeader(http.StatusUnauthorized)
		}}}
		tr := &Transport{Base: s, TitleID: title}
		ctx := WithPolicy(context.Background(), Policy{FailFast: true})
		resp, err := get(t, tr, ctx, profileURL, xuid1)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("first call: %v %v", resp, err)
		}
		snap, _ := tr.Snapshot(throttle.Key{User: mock.UserHash(xuid1), Scope: "profile"})
		_, err = get(t, tr, ctx, profileURL, xuid1)
		var te *ThrottleError
		if !errors.As(err, &te) || !te.Local || s.calls() != 1 {
			t.Errorf("after a 401 whose RateLimit said the burst is spent (budget then %+v), the next call got %v (%d sent), want a local refusal",
				snap.Counts, err, s.calls())
		}
	})
}
