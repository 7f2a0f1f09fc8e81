package mock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/xblgo/fgrl/throttle"
)

// TestWhichRequestsCount holds the package doc's counting rule: a request
// FGRL counts is one at a rule's host, with a token the mock minted, that
// the service's routes serve (any path, at a service the mock only
// counts; any host, with Config.Fallback), faults or not; a sign-in, an
// unknown host, a bad token, a sign-in's token past its NotAfter, a path
// or method the service does not serve and a scripted answer without
// count are not counted (a counting rule's answer with a bad or expired
// token neither: the service would refuse it uncounted); a legacy title
// is in its scope's requests but not counted against FGRL.
func TestWhichRequestsCount(t *testing.T) {
	tok := Token(xuid1, title1)
	expired := signInToken(xuid1, title1, 1, time.Now().Add(-time.Hour), "http://xboxlive.com")
	counting := Config{Script: Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "profile.xboxlive.com"},
		Count: true, Answers: []ScriptAnswer{{Status: 500}}}}}}
	tests := []struct {
		name              string
		cfg               Config
		method, url, auth string
		status            int
		scope             string // the key's scope FGRL counts it under, and the Call's
		fgrl, requests    int    // the key's count after it, and its scope's requests (Metrics)
	}{
		{name: "a served route", method: "GET", url: profileURL, auth: tok, status: 200, scope: "profile", fgrl: 1, requests: 1},
		{name: "a service the mock only counts", method: "GET", url: "https://clubhub.xboxlive.com/clubs/Ids(1)", auth: tok,
			status: 404, scope: "clubs", fgrl: 1, requests: 1},
		{name: "an unknown host with the fallback rule", cfg: Config{Fallback: true}, method: "GET", url: "https://unlisted.xboxlive.com/x",
			auth: tok, status: 404, scope: "unknown", fgrl: 1, requests: 1},
		{name: "a service fault, after counting", cfg: Config{Faults: Faults{Services: []ServiceFault{{Service: "profile", Status: 503}}}},
			method: "GET", url: profileURL, auth: tok, status: 503, scope: "profile", fgrl: 1, requests: 1},
		{name: "a legacy title", cfg: Config{LegacyTitles: []string{title1}}, method: "GET", url: profileURL, auth: tok,
			status: 200, scope: "profile", fgrl: 0, requests: 1},
		{name: "an unknown path at a served service", method: "GET", url: "https://profile.xboxlive.com/nope", auth: tok,
			status: 404, scope: "profile", fgrl: 0, requests: 0},
		{name: "a method the route does not serve", method: "DELETE", url: profileURL, auth: tok, status: 405, scope: "profile", fgrl: 0, requests: 0},
		{name: "a bad token", method: "GET", url: profileURL, auth: "XBL3.0 x=1;nonsense", status: 401, scope: "profile", fgrl: 0, requests: 0},
		{name: "an unknown host", method: "GET", url: "https://unlisted.xboxlive.com/x", auth: tok, status: 404, scope: "unknown", fgrl: 0, requests: 0},
		{name: "a sign-in", method: "POST", url: "https://login.live.com/oauth20_token.srf", status: 400, scope: "", fgrl: 0, requests: 0},
		{name: "a scripted answer", cfg: Config{Script: Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "profile.xboxlive.com"},
			Answers: []ScriptAnswer{{Status: 500}}}}}}, method: "GET", url: profileURL, auth: tok, status: 500, scope: "profile", fgrl: 0, requests: 0},
		{name: "a scripted answer that counts", cfg: counting, method: "GET", url: profileURL, auth: tok, status: 500, scope: "profile", fgrl: 1, requests: 1},
		{name: "an expired token", method: "GET", url: profileURL, auth: expired, status: 401, scope: "profile", fgrl: 0, requests: 0},
		{name: "a scripted answer that counts, with a bad token", cfg: counting, method: "GET", url: profileURL, auth: "XBL3.0 x=1;nonsense",
			status: 500, scope: "profile", fgrl: 0, requests: 0},
		{name: "a scripted answer that counts, with an expired token", cfg: counting, method: "GET", url: profileURL, auth: expired,
			status: 500, scope: "profile", fgrl: 0, requests: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Must(New(tt.cfg))
			if got := do(t, h, tt.method, tt.url, tt.auth, "").status; got != tt.status {
				t.Fatalf("status %d, want %d", got, tt.status)
			}
			var requests int64
			for _, sc := range h.Metrics().Scopes {
				requests += sc.Requests
			}
			if requests != int64(tt.requests) {
				t.Errorf("requests of every scope %d, want %d", requests, tt.requests)
			}
			if tt.scope == "" {
				return
			}
			d, err := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: tt.scope})
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Sustain.Count; got != tt.fgrl {
				t.Errorf("%s's count %d, want %d", tt.scope, got, tt.fgrl)
			}
		})
	}
}

// TestFaultsMeetCountedRequestsOnly: a fault answers only requests FGRL
// counted and admitted, as Faults' doc says; the others are answered as
// without it.
func TestFaultsMeetCountedRequestsOnly(t *testing.T) {
	h := Must(New(Config{
		Faults: Faults{Services: []ServiceFault{{Service: "profile", Status: 503}}},
		Script: Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "profile.xboxlive.com", Path: "/scripted"},
			Answers: []ScriptAnswer{{Status: 418}}}}},
	}))
	tok := Token(xuid1, title1)
	tests := []struct {
		name, method, url, auth string
		status                  int
	}{
		{"a served route", "GET", profileURL, tok, 503},
		{"an unknown path", "GET", "https://profile.xboxlive.com/nope", tok, 404},
		{"a method not served", "DELETE", profileURL, tok, 405},
		{"a bad token", "GET", profileURL, "XBL3.0 x=1;nonsense", 401},
		{"a scripted answer", "GET", "https://profile.xboxlive.com/scripted", tok, 418},
	}
	for _, tt := range tests {
		if got := do(t, h, tt.method, tt.url, tt.auth, "").status; got != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.status)
		}
	}
	// Past the burst limit (10 for profile), FGRL's own 429 answers first.
	for range 9 {
		do(t, h, "GET", profileURL, tok, "")
	}
	if r := do(t, h, "GET", profileURL, tok, ""); r.status != 429 || r.header.Get("RateLimit") == "" {
		t.Errorf("past the limit: %d with RateLimit %q, want FGRL's 429", r.status, r.header.Get("RateLimit"))
	}
}

// TestRecordHoldsNothingOfTheRequestBefore: ServeHTTP reuses its
// exchanges, and a request's record holds nothing of the one served
// before it: after a user's read is refused (429: its user, scope,
// counts and Retry-After), a read without a token is recorded with none
// of them.
func TestRecordHoldsNothingOfTheRequestBefore(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	for i := 0; i < 100 && do(t, h, "GET", profileURL, tok, "").status != http.StatusTooManyRequests; i++ {
	}
	h.ForgetCalls()
	do(t, h, "GET", profileURL, tok, "")
	do(t, h, "GET", profileURL, "", "")
	calls := h.Calls(CallFilter{})
	if len(calls) != 2 || calls[0].Status != http.StatusTooManyRequests || calls[0].RetryAfter == "" {
		t.Fatalf("calls = %+v, want a 429 then another", calls)
	}
	got := calls[1]
	want := Call{Time: got.Time, Method: "GET", URL: profileURL, Status: http.StatusUnauthorized, Duration: got.Duration}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Call{})); diff != "" {
		t.Errorf("record of a request without a token (-want +got):\n%s", diff)
	}
	if got.userhash != "" || got.flags != 0 || got.counts != (throttle.Counts{}) || got.wait != 0 {
		t.Errorf("record of a request without a token holds userhash %q, flags %b, counts %+v, wait %v", got.userhash, got.flags, got.counts, got.wait)
	}
}

// markerKey carries TestServedRequestNotKeptAlive's marker in a request's
// context.
type markerKey struct{}

// TestServedRequestNotKeptAlive: once ServeHTTP has returned, nothing of
// the mock keeps the request alive (its context, and so whatever the
// caller's context holds): the first collection frees it. The reused
// per-request state went back to its pool still holding the request, and
// a pool keeps what it holds through a collection (a what-if's replay
// part, reachable from its requests' contexts, outlived the replay:
// TestReplayerHeapPerCall in package whatif saw the heap shrink by
// megabytes under it).
func TestServedRequestNotKeptAlive(t *testing.T) {
	h := NewHandler()
	freed := make(chan struct{})
	func() {
		m := new([1 << 10]byte)
		runtime.AddCleanup(m, func(ch chan struct{}) { close(ch) }, freed)
		req := httptest.NewRequestWithContext(context.WithValue(context.Background(), markerKey{}, m), "GET", profileURL, nil)
		req.Header.Set("Authorization", Token(xuid1, title1))
		h.ServeHTTP(httptest.NewRecorder(), req)
	}()
	freedByOneCollection(t, freed, "a request served")
	runtime.KeepAlive(h)
}

// TestHandlerFreedAfterServing: a Handler that served a request is freed
// by the first collection after its last use. Its pool of exchanges was a
// field of it, and the runtime keeps a pool in use alive through a
// collection, so the whole Handler (its journal, its world, its token
// cache: megabytes) outlived its use by a collection.
func TestHandlerFreedAfterServing(t *testing.T) {
	freed := make(chan struct{})
	func() {
		h := NewHandler()
		runtime.AddCleanup(h, func(ch chan struct{}) { close(ch) }, freed)
		req := httptest.NewRequest("GET", profileURL, nil)
		req.Header.Set("Authorization", Token(xuid1, title1))
		h.ServeHTTP(httptest.NewRecorder(), req)
	}()
	freedByOneCollection(t, freed, "a Handler")
}

// freedByOneCollection runs one collection and fails the test unless
// freed, closed by a cleanup of what is named, closes after it.
func freedByOneCollection(t *testing.T, freed <-chan struct{}, what string) {
	t.Helper()
	runtime.GC()
	select {
	case <-freed:
	case <-time.After(10 * time.Second): // a bound, not a pause: the cleanup runs soon after the collection
		t.Fatalf("%s is still alive after a collection", what)
	}
}
