package mock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

const (
	attack9bXUID   = "2533274791234567"
	attack9bXUID2  = "2533274791234568"
	attack9bTitle  = "1234567890"
	attack9bTitle2 = "1111111111"
)

func attack9bLimits(t *testing.T, js string) *limits.Limits {
	t.Helper()
	l, err := limits.Read(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// attack9bClock is a settable clock for Config.Now.
type attack9bClock struct{ now time.Time }

func (c *attack9bClock) Now() time.Time          { return c.now }
func (c *attack9bClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

// attack9bStore sends one POST to the Store's collections host for xuid/title
// and returns the answer (the mock counts it, then answers 404: it has no
// route there, as the attack9 tests say).
func attack9bStore(h *mock.Handler, xuid, title string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/v9.0/collections/query", strings.NewReader("{}"))
	r.Host = "collections.mp.microsoft.com"
	r.Header.Set("Authorization", mock.Token(xuid, title))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// attack9bLeft is what a RateLimit header's window leaves (ok false when the
// window is not reported).
func attack9bLeft(w throttle.WindowState) (int, bool) { return w.Limit - w.Count, w.Limit > 0 }

// attack9bPacer is a client that keeps in sync with the mock's RateLimit
// headers (package ratelimit: "the RateLimit / RateLimit-Policy headers
// the mock adds so a client can keep its budget in sync"): before each
// call, for every window the last answer reported as spent, it waits until
// that window's reset; after a 429 it waits its Retry-After. It returns the
// number of 429s among n calls.
func attack9bPacer(h *mock.Handler, clk *attack9bClock, last http.Header, n int, xuid, title string) (throttled int, firstAt int) {
	for i := range n {
		if last != nil {
			var wait time.Duration
			if ra, ok := ratelimit.ParseRetryAfter(last.Get("Retry-After"), clk.Now(), time.Hour); ok {
				wait = ra
			}
			if c, ok := ratelimit.ParseHeaders(last, throttle.Limit{}); ok {
				for _, w := range []throttle.WindowState{c.Burst, c.Sustain} {
					if left, ok := attack9bLeft(w); ok && left <= 0 {
						wait = max(wait, w.Reset)
					}
				}
			}
			clk.Advance(wait)
		}
		resp := attack9bStore(h, xuid, title)
		if resp.Code == http.StatusTooManyRequests {
			throttled++
			if firstAt == 0 {
				firstAt = i + 1
			}
		}
		last = resp.Header()
	}
	return throttled, firstAt
}

// mock/pipeline.go, commit 48e1870: "The RateLimit headers say the sustain
// window that binds, so that a client keeping in sync with them keeps
// within both"; RELIABILITY.md ("A second attack: a publisher's sustain"):
// "the headers carry the sustain window that binds (the publisher's when
// it leaves less), so a client in sync with them keeps within both".
//
// The swap is made only when the title's counter allowed the call. A call
// the title's burst refuses still counts at the publisher (package
// throttle: "every request, refused or not, increments"), and its 429
// carries the title's sustain window: here the 20th call of the key, a
// burst 429, leaves the publisher's counter at 20 of 20 while its RateLimit
// header says sustain 80 of 100 is left. A client in sync with the headers
// waits the 429's Retry-After (the burst window) and calls again: 429, for
// a whole sustain window.
func TestAttack9bPublisherBurst429HidesPublisherSustain(t *testing.T) {
	l := attack9bLimits(t, `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 5, "sustain": 100, "publisherSustain": 20, "store": true}]}`)
	clk := &attack9bClock{now: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	h := mock.Must(mock.New(mock.Config{Limits: l, Now: clk.Now}))
	// A careless start: two bursts of 10 calls, 16 s apart (5 served and 5
	// refused by the burst limit each time).
	var last *httptest.ResponseRecorder
	for round := range 2 {
		if round > 0 {
			clk.Advance(16 * time.Second)
		}
		for range 10 {
			last = attack9bStore(h, attack9bXUID, attack9bTitle)
		}
	}
	if last.Code != http.StatusTooManyRequests {
		t.Fatalf("the 20th call: %d, want the burst's 429", last.Code)
	}
	c, ok := ratelimit.ParseHeaders(last.Header(), throttle.Limit{})
	if !ok {
		t.Fatal("no RateLimit headers on the 429")
	}
	if left, _ := attack9bLeft(c.Sustain); left > 0 {
		t.Errorf("the 429 of the key's 20th call (publisher sustain 20 spent) says RateLimit %q, RateLimit-Policy %q: sustain %d of %d left",
			last.Header().Get("RateLimit"), last.Header().Get("RateLimit-Policy"), left, c.Sustain.Limit)
	}
	if n, first := attack9bPacer(h, clk, last.Header(), 1, attack9bXUID, attack9bTitle); n > 0 {
		t.Errorf("a client in sync with that 429's headers (waiting its Retry-After and every window they report spent) got a 429 at its call %d after it", first)
	}
}

// The same promise with a Store rule whose title has no sustain of its own
// (limits.Rule: "Burst and Sustain are the requests allowed ..."; a sustain
// of 0 is none, as ClientLimit reads it: "a sustain of 0 is none"; the
// limits file loads). The publisher's sustain of 20 binds, yet the swap
// compares it with the title's window "0 of 0" (left: minus the count) and
// never takes it: the headers report the burst alone, and a client in sync
// with them is answered 429 at its 21st call.
func TestAttack9bPublisherSustainNoTitleSustainNotInHeaders(t *testing.T) {
	l := attack9bLimits(t, `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 10, "sustain": 0, "publisherSustain": 20, "store": true}]}`)
	clk := &attack9bClock{now: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	h := mock.Must(mock.New(mock.Config{Limits: l, Now: clk.Now}))
	first := attack9bStore(h, attack9bXUID, attack9bTitle)
	if first.Code == http.StatusTooManyRequests {
		t.Fatal("first call refused")
	}
	if c, _ := ratelimit.ParseHeaders(first.Header(), throttle.Limit{}); c.Sustain.Limit != 20 {
		t.Errorf("after 1 call, RateLimit-Policy %q, RateLimit %q: no sustain window of 20 (the publisher's, which binds)",
			first.Header().Get("RateLimit-Policy"), first.Header().Get("RateLimit"))
	}
	if n, at := attack9bPacer(h, clk, first.Header(), 29, attack9bXUID, attack9bTitle); n > 0 {
		t.Errorf("a client in sync with the mock's RateLimit headers got %d 429s in 30 calls, the first at call %d", n, at+1)
	}
}

// mock/mock.go: "every counted response carries RateLimit-Policy and
// RateLimit headers describing both windows". When the publisher's counter
// refuses a call the title's allowed (and counted), the publisher's
// decision replaces the title's whole: the 429 carries the publisher's
// sustain and no burst window, though the title's burst counted the call.
func TestAttack9bPublisher429DropsBurstWindow(t *testing.T) {
	l := attack9bLimits(t, `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 50, "sustain": 100, "publisherSustain": 20, "store": true}]}`)
	clk := &attack9bClock{now: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	h := mock.Must(mock.New(mock.Config{Limits: l, Now: clk.Now}))
	var last *httptest.ResponseRecorder
	for range 21 {
		last = attack9bStore(h, attack9bXUID, attack9bTitle)
	}
	if last.Code != http.StatusTooManyRequests {
		t.Fatalf("21st call: %d, want the publisher's 429", last.Code)
	}
	d, err := h.Counts(throttle.Key{User: mock.UserHash(attack9bXUID), Title: attack9bTitle, Scope: "collections"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := ratelimit.ParseHeaders(last.Header(), throttle.Limit{})
	if c.Burst.Limit != 50 {
		t.Errorf("the publisher's 429: RateLimit-Policy %q, RateLimit %q: no burst window (the key's burst window counts %d of 50)",
			last.Header().Get("RateLimit-Policy"), last.Header().Get("RateLimit"), d.Burst.Count)
	}
}

// held: an allowed call's headers agree with the binding window at every
// call for one title (sustain 100, publisher 20): each answer's sustain
// "left" equals min(title, publisher) left, and its reset is the
// publisher's window's.
func TestAttack9bPublisherAllowedHeadersTrackBinding(t *testing.T) {
	l := attack9bLimits(t, `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 50, "sustain": 100, "publisherSustain": 20, "store": true}]}`)
	clk := &attack9bClock{now: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	h := mock.Must(mock.New(mock.Config{Limits: l, Now: clk.Now, Publishers: map[string]string{attack9bTitle: "p", attack9bTitle2: "p"}}))
	for range 7 {
		attack9bStore(h, attack9bXUID, attack9bTitle2) // another title of the publisher spends 7
	}
	for i := range 13 {
		clk.Advance(time.Second)
		w := attack9bStore(h, attack9bXUID, attack9bTitle)
		if w.Code == http.StatusTooManyRequests {
			t.Fatalf("call %d refused", i+1)
		}
		c, _ := ratelimit.ParseHeaders(w.Header(), throttle.Limit{})
		if left, _ := attack9bLeft(c.Sustain); left != 20-7-(i+1) || c.Sustain.Limit != 20 {
			t.Errorf("call %d: sustain %d/%d, want %d of 20 left", i+1, c.Sustain.Count, c.Sustain.Limit, 20-7-(i+1))
		}
	}
	if n, _ := attack9bPacer(h, clk, nil, 1, attack9bXUID, attack9bTitle); n != 1 {
		t.Errorf("the 14th call after 7 of the other title's: %d 429s, want 1", n)
	}
}

// held: ResetCounts(k) (mock/overview.go: "it forgets k's user's count at
// k's title's publisher too, which counted k's calls (those of the
// publisher's other titles with them)") does not reach another user's
// counts at the same publisher; that user's own (title) counts are kept.
func TestAttack9bResetCountsStaysWithTheUser(t *testing.T) {
	l := attack9bLimits(t, `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 50, "sustain": 100, "publisherSustain": 20, "store": true}]}`)
	clk := &attack9bClock{now: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	h := mock.Must(mock.New(mock.Config{Limits: l, Now: clk.Now, Publishers: map[string]string{attack9bTitle: "p", attack9bTitle2: "p"}}))
	for range 20 {
		attack9bStore(h, attack9bXUID, attack9bTitle)
		attack9bStore(h, attack9bXUID2, attack9bTitle2)
	}
	k := throttle.Key{User: mock.UserHash(attack9bXUID), Title: attack9bTitle, Scope: "collections"}
	if err := h.ResetCounts(context.Background(), &k); err != nil {
		t.Fatal(err)
	}
	if w := attack9bStore(h, attack9bXUID2, attack9bTitle2); w.Code != http.StatusTooManyRequests {
		t.Errorf("another user's 21st call at the publisher after ResetCounts of the first user's key: %d, want 429", w.Code)
	}
	if w := attack9bStore(h, attack9bXUID, attack9bTitle); w.Code == http.StatusTooManyRequests {
		t.Errorf("the reset key's next call: 429")
	}
	d, err := h.Counts(throttle.Key{User: mock.UserHash(attack9bXUID2), Title: attack9bTitle2, Scope: "collections"})
	if err != nil || d.Sustain.Count != 21 {
		t.Errorf("the other user's counts: %+v, %v; want sustain 21", d.Counts, err)
	}
}

// held: the same exchanges answered by a mock on a Redis store
// (redisstore.Store, caller's time) and by one on the built-in store give
// the same statuses and RateLimit headers, before and after ResetCounts of
// the key (which forgets the publisher's count in both).
func TestAttack9bPublisherRedisAgreesWithMemory(t *testing.T) {
	srv := redistest.Start(t)
	l := attack9bLimits(t, `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 5, "sustain": 100, "publisherSustain": 20, "store": true}]}`)
	clk := &attack9bClock{now: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	mem := mock.Must(mock.New(mock.Config{Limits: l, Now: clk.Now, Publishers: map[string]string{attack9bTitle: "p", attack9bTitle2: "p"}}))
	red := mock.Must(mock.New(mock.Config{Limits: l, Now: clk.Now, Publishers: map[string]string{attack9bTitle: "p", attack9bTitle2: "p"},
		Store: &redisstore.Store{Client: srv.Client(), CallerTime: true, Timeout: 2 * time.Second}}))
	step := func(what string, title string) {
		a, b := attack9bStore(mem, attack9bXUID, title), attack9bStore(red, attack9bXUID, title)
		if a.Code != b.Code || a.Header().Get("RateLimit") != b.Header().Get("RateLimit") ||
			a.Header().Get("RateLimit-Policy") != b.Header().Get("RateLimit-Policy") || a.Header().Get("Retry-After") != b.Header().Get("Retry-After") {
			t.Errorf("%s: memory %d %q %q %q; redis %d %q %q %q", what,
				a.Code, a.Header().Get("RateLimit"), a.Header().Get("RateLimit-Policy"), a.Header().Get("Retry-After"),
				b.Code, b.Header().Get("RateLimit"), b.Header().Get("RateLimit-Policy"), b.Header().Get("Retry-After"))
		}
	}
	for i := range 40 {
		if i%8 == 0 {
			clk.Advance(16 * time.Second)
		}
		title := attack9bTitle
		if i%3 == 0 {
			title = attack9bTitle2
		}
		step("call", title)
	}
	k := throttle.Key{User: mock.UserHash(attack9bXUID), Title: attack9bTitle, Scope: "collections"}
	for _, h := range []*mock.Handler{mem, red} {
		if err := h.ResetCounts(context.Background(), &k); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	step("after ResetCounts", attack9bTitle)
	step("after ResetCounts, the other title", attack9bTitle2)
}
