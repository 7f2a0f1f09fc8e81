package mock_test

import (
	"fmt"
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

// The published Store figures (limits/data/2020.json, SPEC.md §2-3:
// "{userId;titleId} 100 / 300 s and {userId;publisherId} 200 / 300 s"):
// the publisher's sustain is the higher of the two.
const attack9dPublishedStore = `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 100, "sustain": 100, "publisherSustain": 200, "store": true}]}`

// The rule of the earlier attacks: the publisher's sustain (20) below the
// title's (100).
const attack9dLowPublisherStore = `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 50, "sustain": 100, "publisherSustain": 20, "store": true}]}`

const (
	attack9dTitleA = "1234567890"
	attack9dTitleB = "1111111111"
)

func attack9dLimits(t *testing.T, js string) *limits.Limits {
	t.Helper()
	l, err := limits.Read(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func attack9dStore(h http.Handler, xuid, title string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/v9.0/collections/query", strings.NewReader("{}"))
	r.Host = "collections.mp.microsoft.com"
	r.Header.Set("Authorization", mock.Token(xuid, title))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func attack9dXUID(i int) string { return fmt.Sprintf("25332747912%05d", i) }

// RELIABILITY.md ("A third attack on a publisher's sustain and the call
// filter"): "both counters refusing with windows ending together (one
// title starts both) ... on a tie the refusal is the publisher's (the
// lower limit, the one to learn)"; mock/pipeline.go count(): "on a tie its
// limit, the lower, is the one to learn". With the published figures
// (SPEC.md §2: the Store's "{userId;titleId} 100 / 300 s and
// {userId;publisherId} 200 / 300 s") the publisher's limit is the higher:
// on a tie the mock names 200, a limit above what one title may send.
//
// Title A's first call starts both windows; title B of the same publisher
// spends 100, title A 99 more: A's next call is over both (101 of 100 and
// 201 of 200), both windows ending together.
func TestAttack9dTieNamesTheHigherPublisherLimit(t *testing.T) {
	l := attack9dLimits(t, attack9dPublishedStore)
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	h := mock.Must(mock.New(mock.Config{Limits: l, Now: func() time.Time { return now },
		Publishers: map[string]string{attack9dTitleA: "p", attack9dTitleB: "p"}}))
	x := attack9dXUID(1)
	attack9dStore(h, x, attack9dTitleA)
	for range 100 {
		attack9dStore(h, x, attack9dTitleB)
	}
	for range 99 {
		if w := attack9dStore(h, x, attack9dTitleA); w.Code == http.StatusTooManyRequests {
			t.Fatalf("title A refused before its 100: %s", w.Body)
		}
	}
	now = now.Add(16 * time.Second) // past the burst window: only the sustains refuse
	w := attack9dStore(h, x, attack9dTitleA)
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("title A's 101st call: %d, want 429", w.Code)
	}
	b, err := ratelimit.ParseBody(w.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if b.MaxRequests != 100 {
		t.Errorf("a tie of title (100) and publisher (200) refusals: the 429 names %d operations in %d s for %s (Retry-After %s): not the lower limit, the one to learn",
			b.MaxRequests, b.PeriodInSeconds, b.Aspect, w.Header().Get("Retry-After"))
	}
}

// The same promise ("on a tie the refusal is the publisher's"), and
// redisstore's: "Decisions use the Redis server's clock (TIME), so
// replicas with skewed clocks agree" (the default, CallerTime unset). A
// mock on Redis takes each of a call's two counts at its own Redis instant,
// so windows one title starts together end microseconds apart, and which
// refusal answers is left to how long each round trip took: the title's
// aspect (maxRequests 100, the limit the transport must not learn: the
// second attack's test) for some users, the publisher's for others, where
// the built-in store answers the publisher's every time.
func TestAttack9dRedisServerTimeTieIsNotThePublishers(t *testing.T) {
	srv := redistest.Start(t)
	l := attack9dLimits(t, attack9dLowPublisherStore)
	mem := mock.Must(mock.New(mock.Config{Limits: l}))
	red := mock.Must(mock.New(mock.Config{Limits: l, Store: &redisstore.Store{Client: srv.Client(), Timeout: 2 * time.Second}}))
	const users = 40
	titleAspect := map[string]int{}
	for name, h := range map[string]*mock.Handler{"memory": mem, "redis": red} {
		for u := range users {
			x := attack9dXUID(100 + u)
			for range 100 {
				attack9dStore(h, x, attack9dTitleA)
			}
			w := attack9dStore(h, x, attack9dTitleA)
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("%s: call 101: %d", name, w.Code)
			}
			if b, err := ratelimit.ParseBody(w.Body.Bytes()); err != nil || b.Aspect != "{userId;publisherId}" {
				titleAspect[name]++
				if titleAspect[name] == 1 {
					t.Logf("%s: user %d's 101st call: %q (Retry-After %s)", name, u, w.Body.String(), w.Header().Get("Retry-After"))
				}
			}
		}
	}
	if titleAspect["memory"] != 0 || titleAspect["redis"] != 0 {
		t.Errorf("windows one title started together, both refusing: the title's 429 (maxRequests 100) for %d of %d users on Redis (server time), %d in memory; want the publisher's for all",
			titleAspect["redis"], users, titleAspect["memory"])
	}
}

// held: a refusal of the title's own sustain alone (the publisher's
// counter allows) says that window in its headers, its body and its
// Retry-After, all three agreeing (pipeline.go: "a refusal says the window
// that refused"), here with the published figures and the publisher's
// window started earlier by another title.
func TestAttack9dTitleSustainRefusalAgreesWithItsHeaders(t *testing.T) {
	l := attack9dLimits(t, attack9dPublishedStore)
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	h := mock.Must(mock.New(mock.Config{Limits: l, Now: func() time.Time { return now },
		Publishers: map[string]string{attack9dTitleA: "p", attack9dTitleB: "p"}}))
	x := attack9dXUID(2)
	attack9dStore(h, x, attack9dTitleB) // the publisher's window starts at 0
	now = now.Add(100 * time.Second)
	for range 100 {
		attack9dStore(h, x, attack9dTitleA) // title A's at 100 s
	}
	now = now.Add(20 * time.Second)
	w := attack9dStore(h, x, attack9dTitleA)
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("101st: %d", w.Code)
	}
	b, _ := ratelimit.ParseBody(w.Body.Bytes())
	c, _ := ratelimit.ParseHeaders(w.Header(), throttle.Limit{})
	ra, _ := ratelimit.ParseRetryAfter(w.Header().Get("Retry-After"), now, time.Hour)
	if b.MaxRequests != 100 || b.PeriodInSeconds != 300 || b.Aspect != "{userId;titleId}" || c.Sustain.Limit != 100 || c.Sustain.Count < 100 ||
		ra != 280*time.Second || ratelimit.CeilSeconds(c.Sustain.Reset) != 280 {
		t.Errorf("body %+v, RateLimit-Policy %q, RateLimit %q, Retry-After %q", b, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
	}
}

// held: a legacy title (Config.LegacyTitles: "exempt from FGRL") spends
// nothing of its publisher's count: another title of the publisher still
// has its 20.
func TestAttack9dLegacyTitleSpendsNoPublisherCount(t *testing.T) {
	l := attack9dLimits(t, attack9dLowPublisherStore)
	h := mock.Must(mock.New(mock.Config{Limits: l, LegacyTitles: []string{attack9dTitleA},
		Publishers: map[string]string{attack9dTitleA: "p", attack9dTitleB: "p"}}))
	x := attack9dXUID(3)
	for range 40 {
		if w := attack9dStore(h, x, attack9dTitleA); w.Code == http.StatusTooManyRequests || w.Header().Get("RateLimit") != "" {
			t.Fatalf("legacy title: %d, RateLimit %q", w.Code, w.Header().Get("RateLimit"))
		}
	}
	for i := range 20 {
		if w := attack9dStore(h, x, attack9dTitleB); w.Code == http.StatusTooManyRequests {
			t.Fatalf("the publisher's other title: call %d refused after the legacy title's 40", i+1)
		}
	}
}

// held: a fault-injected 429 (ServiceFault, "429 with the documented
// body") at a Store rule answers the Store's text, naming the title's
// aspect and a limit the data has, and the Retry-After the fault asks for.
func TestAttack9dFault429StoreText(t *testing.T) {
	l := attack9dLimits(t, attack9dPublishedStore)
	h := mock.Must(mock.New(mock.Config{Limits: l, Faults: mock.Faults{Services: []mock.ServiceFault{{Service: "collections", Status: 429, RetryAfter: throttle.Duration(40 * time.Second)}}}}))
	w := attack9dStore(h, attack9dXUID(4), attack9dTitleA)
	b, err := ratelimit.ParseBody(w.Body.Bytes())
	if w.Code != 429 || err != nil || b.Aspect != "{userId;titleId}" || b.MaxRequests != 100 || w.Header().Get("Retry-After") != "40" {
		t.Errorf("fault 429: %d %q Retry-After %q (%v)", w.Code, w.Body.String(), w.Header().Get("Retry-After"), err)
	}
}
