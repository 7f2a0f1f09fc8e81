package transport_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"
)

// attack88Pairs are two requests that the godoc says must not share an
// answer: they differ in a credential, the URL, the host or a header the
// key names.
func attack88Pairs() []struct {
	name string
	a, b func() *http.Request
} {
	bg := context.Background()
	plain := func(url, auth string) func() *http.Request {
		return func() *http.Request { return attack88Req(bg, url, auth) }
	}
	tokA, tokB := attack88Auth("1111", "token-a"), attack88Auth("1111", "token-b")
	with := func(url, auth string, set func(h http.Header)) func() *http.Request {
		return func() *http.Request {
			r := attack88Req(bg, url, auth)
			set(r.Header)
			return r
		}
	}
	return []struct {
		name string
		a, b func() *http.Request
	}{
		{"same userhash, another token", plain(attack88URL, tokA), plain(attack88URL, tokB)},
		{"another user", plain(attack88URL, tokA), plain(attack88URL, attack88Auth("2222", "token-a"))},
		{"token under a lower-case header name", plain(attack88URL, tokA), with(attack88URL, "", func(h http.Header) { h["authorization"] = []string{tokB} })},
		{"a second spelling of Authorization", plain(attack88URL, tokA), with(attack88URL, tokA, func(h http.Header) { h["authorization"] = []string{tokB} })},
		{"a second Authorization value", plain(attack88URL, tokA), with(attack88URL, tokA, func(h http.Header) { h.Add("Authorization", tokB) })},
		{"Signature differs", with(attack88URL, tokA, func(h http.Header) { h.Set("Signature", "sig-a") }), with(attack88URL, tokA, func(h http.Header) { h.Set("Signature", "sig-b") })},
		{"Signature only on one", plain(attack88URL, tokA), with(attack88URL, tokA, func(h http.Header) { h.Set("Signature", "sig-b") })},
		{"Cookie differs", with(attack88URL, tokA, func(h http.Header) { h.Set("Cookie", "s=a") }), with(attack88URL, tokA, func(h http.Header) { h["cookie"] = []string{"s=b"} })},
		{"query order", plain("https://profile.xboxlive.com/users/me/profile/settings?a=1&b=2", tokA), plain("https://profile.xboxlive.com/users/me/profile/settings?b=2&a=1", tokA)},
		{"query percent-encoding", plain("https://profile.xboxlive.com/users/me/profile/settings?q=a%20b", tokA), plain("https://profile.xboxlive.com/users/me/profile/settings?q=a+b", tokA)},
		{"path percent-encoding", plain("https://profile.xboxlive.com/users/me/profile/settings%2Fx", tokA), plain("https://profile.xboxlive.com/users/me/profile/settings/x", tokA)},
		{"host trailing dot", plain(attack88URL, tokA), plain("https://profile.xboxlive.com./users/me/profile/settings?settings=Gamertag", tokA)},
		{"explicit port", plain(attack88URL, tokA), plain("https://profile.xboxlive.com:443/users/me/profile/settings?settings=Gamertag", tokA)},
		{"Host header names another host", plain(attack88URL, tokA), func() *http.Request {
			r := attack88Req(bg, attack88URL, tokA)
			r.Host = "social.xboxlive.com"
			return r
		}},
		{"contract version", with(attack88URL, tokA, func(h http.Header) { h.Set("X-Xbl-Contract-Version", "2") }), with(attack88URL, tokA, func(h http.Header) { h.Set("X-Xbl-Contract-Version", "3") })},
		{"contract version under a lower-case name", with(attack88URL, tokA, func(h http.Header) { h.Set("X-Xbl-Contract-Version", "2") }), with(attack88URL, tokA, func(h http.Header) { h["x-xbl-contract-version"] = []string{"3"} })},
		{"contract version given twice", with(attack88URL, tokA, func(h http.Header) { h.Set("X-Xbl-Contract-Version", "2") }), with(attack88URL, tokA, func(h http.Header) {
			h.Set("X-Xbl-Contract-Version", "2")
			h["x-xbl-contract-version"] = []string{"3"}
		})},
		{"contract version sent empty", plain(attack88URL, tokA), with(attack88URL, tokA, func(h http.Header) { h["X-Xbl-Contract-Version"] = []string{""} })},
		{"Accept-Language", with(attack88URL, tokA, func(h http.Header) { h.Set("Accept-Language", "en-US") }), with(attack88URL, tokA, func(h http.Header) { h.Set("Accept-Language", "fr-FR") })},
		{"Accept-Language two values against one joined", with(attack88URL, tokA, func(h http.Header) { h.Set("Accept-Language", "en-US,fr-FR") }), with(attack88URL, tokA, func(h http.Header) {
			h.Add("Accept-Language", "en-US")
			h.Add("Accept-Language", "fr-FR")
		})},
		{"Accept-Language with a NUL", with(attack88URL, tokA, func(h http.Header) { h.Set("Accept-Language", "\x002:en") }), with(attack88URL, tokA, func(h http.Header) { h.Set("Accept-Language", "en") })},
		{"Accept", with(attack88URL, tokA, func(h http.Header) { h.Set("Accept", "application/json") }), with(attack88URL, tokA, func(h http.Header) { h.Set("Accept", "text/html") })},
		{"Accept-Encoding empty against none", plain(attack88URL, tokA), with(attack88URL, tokA, func(h http.Header) { h["Accept-Encoding"] = []string{""} })},
	}
}

// TestAttack88UsersNeverShareFromTheCache: CoalesceReads' godoc: identical
// GETs share "with the same credentials (the whole Authorization,
// Signature and Cookie values, compared as a SHA-256 digest: never across
// users, nor across two tokens of one user), title, contract version,
// Accept, Accept-Encoding and Accept-Language (every value, under every
// spelling of the name)", the same "scheme, host and URL"; "A call whose
// credentials the transport cannot read (no XBL3.0 Authorization, or one
// given twice) ... always sends its own."
//
// held: B, read after A's answer is cached, gets the answer to its own
// request in every pair.
func TestAttack88UsersNeverShareFromTheCache(t *testing.T) {
	for _, p := range attack88Pairs() {
		t.Run(p.name, func(t *testing.T) {
			base := &attack88Base{}
			tr := attack88Transport(base)
			a, b := p.a(), p.b()
			wantA, wantB := attack88Echo(a), attack88Echo(b)
			if wantA == wantB {
				t.Fatalf("the pair is not a pair: %s", wantA)
			}
			for i := range 2 { // the second time A's answer is cached
				gotA, err := attack88Do(t, tr, p.a())
				if err != nil || gotA != wantA {
					t.Fatalf("A (%d): %q, %v; want %q", i, gotA, err, wantA)
				}
				gotB, err := attack88Do(t, tr, p.b())
				if err != nil {
					t.Fatal(err)
				}
				if gotB != wantB {
					t.Fatalf("B got another request's answer:\n got  %q\n want %q", gotB, wantB)
				}
			}
		})
	}
}

// TestAttack88UsersNeverShareAFlight: the same promise, for two calls made
// together (one request under way that the other might join).
//
// held: each of A and B, sent 10 ms apart while A's request takes 100 ms,
// gets the answer to its own request.
func TestAttack88UsersNeverShareAFlight(t *testing.T) {
	for _, p := range attack88Pairs() {
		t.Run(p.name, func(t *testing.T) {
			base := &attack88Base{hold: func(*http.Request) { time.Sleep(100 * time.Millisecond) }}
			tr := attack88Transport(base)
			tr.ReadCacheTTL = 0
			a, b := p.a(), p.b()
			wantA, wantB := attack88Echo(a), attack88Echo(b)
			var gotA, gotB string
			var errA, errB error
			attack88Concurrently(
				func() { gotA, errA = attack88Do(t, tr, a) },
				func() { time.Sleep(10 * time.Millisecond); gotB, errB = attack88Do(t, tr, b) },
			)
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if gotA != wantA {
				t.Errorf("A got another request's answer:\n got  %q\n want %q", gotA, wantA)
			}
			if gotB != wantB {
				t.Errorf("B got another request's answer:\n got  %q\n want %q", gotB, wantB)
			}
		})
	}
}

// TestAttack88SlowUserDoesNotHoldAnother: "never across users": a user
// whose answer is slow holds no other user's identical read.
//
// held: user A's request is held until the test ends; user B's identical
// read (another token) is answered at once with its own answer.
func TestAttack88SlowUserDoesNotHoldAnother(t *testing.T) {
	release := make(chan struct{})
	tokA, tokB := attack88Auth("1111", "token-a"), attack88Auth("2222", "token-b")
	base := &attack88Base{hold: func(r *http.Request) {
		if r.Header.Get("Authorization") == tokA {
			<-release
		}
	}}
	tr := attack88Transport(base)
	var wg sync.WaitGroup
	wg.Add(1)
	var gotA string
	var errA error
	go func() {
		defer wg.Done()
		gotA, errA = attack88Do(t, tr, attack88Req(context.Background(), attack88URL, tokA))
	}()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	reqB := attack88Req(context.Background(), attack88URL, tokB)
	gotB, errB := attack88Do(t, tr, reqB)
	took := time.Since(start)
	close(release)
	wg.Wait()
	if errB != nil || gotB != attack88Echo(reqB) {
		t.Errorf("B: %q, %v; want its own answer", gotB, errB)
	}
	if took > time.Second {
		t.Errorf("B waited %v for A's slow read", took)
	}
	if errA != nil || gotA != attack88Echo(attack88Req(context.Background(), attack88URL, tokA)) {
		t.Errorf("A: %q, %v", gotA, errA)
	}
}

// TestAttack88CancelledLeaderLeavesItsFollowerAnswered: CoalesceReads'
// godoc: "One whose wait ended with the other call's caller giving up has a
// whole call's time of its own from then, in which it leads a new request".
// And a cancelled call of another user touches no one.
//
// held: the same user's second caller, waiting on the first's request when
// that caller gives up, gets its own 200; another user's call made at the
// same time is untouched.
func TestAttack88CancelledLeaderLeavesItsFollowerAnswered(t *testing.T) {
	tokA, tokB := attack88Auth("1111", "token-a"), attack88Auth("2222", "token-b")
	var first sync.Once
	base := &attack88Base{hold: func(r *http.Request) {
		leader := false
		first.Do(func() { leader = true })
		if leader {
			<-r.Context().Done()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}}
	tr := attack88Transport(base)
	tr.RetryWindow = -1
	ctx, cancel := context.WithCancel(context.Background())
	var errLead, errFollow, errOther error
	var gotFollow, gotOther string
	attack88Concurrently(
		func() { _, errLead = attack88Do(t, tr, attack88Req(ctx, attack88URL, tokA)) },
		func() {
			time.Sleep(20 * time.Millisecond)
			gotFollow, errFollow = attack88Do(t, tr, attack88Req(context.Background(), attack88URL, tokA))
		},
		func() {
			time.Sleep(20 * time.Millisecond)
			gotOther, errOther = attack88Do(t, tr, attack88Req(context.Background(), attack88URL, tokB))
		},
		func() { time.Sleep(100 * time.Millisecond); cancel() },
	)
	if !errors.Is(errLead, context.Canceled) {
		t.Errorf("the leader: %v, want its own cancellation", errLead)
	}
	if errFollow != nil || gotFollow != attack88Echo(attack88Req(context.Background(), attack88URL, tokA)) {
		t.Errorf("the follower: %q, %v; want its own 200", gotFollow, errFollow)
	}
	if errOther != nil || gotOther != attack88Echo(attack88Req(context.Background(), attack88URL, tokB)) {
		t.Errorf("the other user: %q, %v", gotOther, errOther)
	}
}
