package proxy

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/mocktest"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// TestBurstServedAtTheAllowance: 30 profile reads at once through the
// proxy, failing fast, get the allowance (10 a burst) served and 20 local
// 429s written as the service writes its own (Retry-After, the RateLimit
// headers, FGRL's JSON body) and marked local; the service sees no 429.
func TestBurstServedAtTheAllowance(t *testing.T) {
	f := serve(t, nil)
	rs := burst(t, f.client, 30, profileURL, xuid1, HeaderFailFast, "true")
	got, local := statuses(rs)
	if diff := cmp.Diff(map[int]int{200: 10, 429: 20}, got); diff != "" || local != 20 {
		t.Errorf("statuses mismatch (-want +got):\n%s\nlocal 429s %d, want 20", diff, local)
	}
	mocktest.NoThrottled(t, f.up.Handler)
	for _, r := range rs {
		if r == nil || r.StatusCode != 429 {
			continue
		}
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 16 {
			t.Errorf("Retry-After %q, want 1 to 16 s (the burst window and its margin)", r.Header.Get("Retry-After"))
		}
		c, ok := ratelimit.ParseHeaders(r.Header, throttle.Limit{})
		if !ok || c.Burst.Limit != 10 || c.Sustain.Limit != 30 || c.Burst.Count != 10 {
			t.Errorf("RateLimit headers read %+v (%v), want burst 10 of 10, sustain limit 30", c, ok)
		}
		break
	}
}

// TestLocalRefusalBody: a local 429's body is ratelimit's, of the window
// that is full.
func TestLocalRefusalBody(t *testing.T) {
	f := serve(t, nil)
	burst(t, f.client, 10, profileURL, xuid1)
	resp, body, err := get(t, f.client, t.Context(), profileURL, xuid1, HeaderFailFast, "true")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("%d %q, want a JSON 429", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	b, err := ratelimit.ParseBody([]byte(body))
	want := ratelimit.Body{Version: 1, CurrentRequests: 10, MaxRequests: 10, PeriodInSeconds: 15, LimitType: "Rate"}
	if diff := cmp.Diff(want, b); diff != "" || err != nil {
		t.Errorf("body %s (%v) mismatch (-want +got):\n%s", body, err, diff)
	}
}

// TestUsersApart: one user's spent budget refuses none of another's calls,
// and each call reaches the service with its own caller's token.
func TestUsersApart(t *testing.T) {
	f := serve(t, nil)
	burst(t, f.client, 12, profileURL, xuid1, HeaderFailFast, "true")
	got, _ := statuses(burst(t, f.client, 10, profileURL, xuid2, HeaderFailFast, "true"))
	if got[200] != 10 {
		t.Errorf("the second user got %v, want 10 served", got)
	}
	for _, x := range []string{xuid1, xuid2} {
		d, err := f.up.Handler.Counts(throttle.Key{User: mock.UserHash(x), Title: title, Scope: "profile"})
		if err != nil || d.Burst.Count != 10 {
			t.Errorf("the service counted %d calls of %s (%v), want 10: each call under its own token", d.Burst.Count, x, err)
		}
	}
}
