package transport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
	"github.com/xblgo/fgrl/transport"
)

// A Store rule whose sustain per user + publisher (20) is below its sustain
// per user + title (100): limits.Rule.ClientLimit is {50, 20}.
const attack9StoreLimits = `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 50, "sustain": 100, "publisherSustain": 20, "store": true}]}`

const (
	attack9Title = "1234567890"
	attack9XUID  = "2533274791234567"
	attack9URL   = "https://collections.mp.microsoft.com/v9.0/collections/query"
)

func attack9Limits(t *testing.T) *limits.Limits {
	t.Helper()
	l, err := limits.Read(strings.NewReader(attack9StoreLimits))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// attack9Call sends one POST through rt for xuid/title and reports the status
// (0: refused locally; 200 for any answer but a 429: the mock counts the
// call before it routes it, and has no route for this path, so it answers
// 404 after counting) and the response (closed).
func attack9Call(t *testing.T, rt http.RoundTripper, title string) (int, *http.Response) {
	t.Helper()
	ctx := transport.WithPolicy(context.Background(), transport.Policy{FailFast: true})
	req, _ := http.NewRequestWithContext(ctx, "POST", attack9URL, strings.NewReader("{}"))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("{}")), nil }
	req.Header.Set("Authorization", mock.Token(attack9XUID, title))
	resp, err := rt.RoundTrip(req)
	var te *transport.ThrottleError
	switch {
	case err == nil:
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 {
			return 200, resp
		}
		return resp.StatusCode, resp
	case errors.As(err, &te) && te.Local:
		return 0, nil
	case errors.As(err, &te):
		return te.Status, nil
	}
	t.Fatal(err)
	return -1, nil
}

func attack9Key() throttle.Key {
	return throttle.Key{User: mock.UserHash(attack9XUID), Title: attack9Title, Scope: "collections"}
}

// held: through the transport against the mock applying the same limits
// file, 25 calls: 20 sent and served, 5 refused locally, no 429 (the
// commit: "the transport's budget, its snapshots ... use it; the mock, as
// the service, still counts the two apart"); BudgetLeft's sustain is
// 20/20, the mock's count of the key 20; nothing learned.
func TestAttack9PublisherBudgetAgainstMock(t *testing.T) {
	l := attack9Limits(t)
	h := mock.Must(mock.New(mock.Config{Limits: l}))
	tr := &transport.Transport{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1}
	got := map[int]int{}
	var last *http.Response
	for range 25 {
		st, resp := attack9Call(t, tr, attack9Title)
		got[st]++
		if resp != nil {
			last = resp
		}
	}
	if got[200] != 20 || got[0] != 5 || got[429] != 0 {
		t.Errorf("25 calls: %v (status: count; 0 refused locally), want 20 served and 5 refused locally", got)
	}
	snap, err := tr.BudgetLeft(last)
	if err != nil {
		t.Fatal(err)
	}
	d, err := h.Counts(attack9Key())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Sustain.Count != d.Sustain.Count || snap.Sustain.Limit != 20 {
		t.Errorf("BudgetLeft sustain %+v, the mock's count %d", snap.Sustain, d.Sustain.Count)
	}
	if ll := tr.LearnedLimits(); len(ll) != 0 {
		t.Errorf("learned %+v", ll)
	}
}

// held: a 429 for the publisher aspect (another title of the publisher
// spent 15 of the 20: the calls a client of one title cannot see, as
// ClientLimit's doc says) teaches no limit above the publisher's, and the
// transport sends nothing more the mock refuses.
func TestAttack9Publisher429LearnsNoHigherLimit(t *testing.T) {
	l := attack9Limits(t)
	h := mock.Must(mock.New(mock.Config{Limits: l, Publishers: map[string]string{attack9Title: "p", "1111111111": "p"}}))
	for range 15 {
		attack9Call(t, h, "1111111111")
	}
	tr := &transport.Transport{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1}
	got := map[int]int{}
	for range 30 {
		st, _ := attack9Call(t, tr, attack9Title)
		got[st]++
	}
	// The mock's RateLimit headers carry the publisher's window when it
	// binds (the fix of the headers attack below): the budget syncs with
	// them and sends nothing the publisher's counter refuses.
	if got[200] != 5 || got[429] > 1 {
		t.Errorf("30 calls after the other title's 15: %v; want 5 served, at most one 429 (the publisher's), the rest refused locally", got)
	}
	for _, ll := range tr.LearnedLimits() {
		if ll.Period == throttle.Sustain && ll.Learned > 20 {
			t.Errorf("learned %+v, above the publisher's 20", ll)
		}
	}
}

// held: two transports sharing a Redis budget (throttle/redisstore) for
// one title send 20 of 40 calls between them and get no 429.
func TestAttack9PublisherSharedRedisBudget(t *testing.T) {
	srv := redistest.Start(t)
	l := attack9Limits(t)
	h := mock.Must(mock.New(mock.Config{Limits: l}))
	fleet := []*transport.Transport{
		{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1, Budget: &redisstore.Store{Client: srv.Client(), Timeout: time.Second}},
		{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1, Budget: &redisstore.Store{Client: srv.Client(), Timeout: time.Second}},
	}
	got := map[int]int{}
	for i := range 40 {
		st, _ := attack9Call(t, fleet[i%2], attack9Title)
		got[st]++
	}
	if got[200] != 20 || got[429] != 0 {
		t.Errorf("40 calls over a shared budget: %v; want 20 served, none 429", got)
	}
}

// Transport.BudgetLeft: "An app reads it after a call to pace the next
// ones; the mock's RateLimit headers say the same from the service's
// side." And package ratelimit: "the RateLimit / RateLimit-Policy headers
// the mock adds so a client can keep its budget in sync". With a
// publisher sustain of 20 below the title's 100, after 5 calls BudgetLeft
// says 15 of 20 are left; the mock's headers say 95 of 100 (the title's
// counter), of which the service serves 15: a client pacing by them is
// answered 429 at its 21st call.
func TestAttack9PublisherRateLimitHeadersAgreeWithBudgetLeft(t *testing.T) {
	l := attack9Limits(t)
	h := mock.Must(mock.New(mock.Config{Limits: l}))
	tr := &transport.Transport{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1}
	var last *http.Response
	for range 5 {
		if st, resp := attack9Call(t, tr, attack9Title); st != 200 {
			t.Fatalf("status %d", st)
		} else {
			last = resp
		}
	}
	snap, err := tr.BudgetLeft(last)
	if err != nil {
		t.Fatal(err)
	}
	hdr, ok := ratelimit.ParseHeaders(last.Header, throttle.Limit{})
	if !ok {
		t.Fatal("no RateLimit headers")
	}
	left := func(w throttle.WindowState) int { return w.Limit - w.Count }
	if left(hdr.Sustain) != left(snap.Sustain) {
		t.Errorf("after 5 calls: BudgetLeft's sustain leaves %d (%d/%d); the mock's RateLimit headers leave %d (%d/%d)",
			left(snap.Sustain), snap.Sustain.Count, snap.Sustain.Limit, left(hdr.Sustain), hdr.Sustain.Count, hdr.Sustain.Limit)
	}
	// A client pacing by the headers: it calls while they say one is left.
	var n, first429 int
	for n = 5; n < 100; n++ {
		st, resp := attack9Call(t, h, attack9Title)
		if st == 429 {
			first429 = n + 1
			break
		}
		if c, ok := ratelimit.ParseHeaders(resp.Header, throttle.Limit{}); ok && left(c.Sustain) <= 0 {
			break
		}
	}
	if first429 != 0 {
		t.Errorf("a client calling while the mock's RateLimit headers said sustain was left got a 429 at call %d", first429)
	}
}

// mock.Handler.ResetCounts: "forgets the FGRL counts of key k"; the admin
// API: "DELETE /_fgrl/api/keys?user=U&title=T&scope=S  forget one key's
// counts"; throttle.Resetter: "Reset forgets k's counts: its next request
// starts new windows". For a Store rule with a publisher sustain the
// publisher's counter is kept: after the key is forgotten, its counts read
// 0 (Counts, GET /_fgrl/api/keys), a fresh transport believes its budget
// whole and sends, and the mock answers 429 for the key it said it forgot.
func TestAttack9PublisherResetKeyStillThrottled(t *testing.T) {
	l := attack9Limits(t)
	h := mock.Must(mock.New(mock.Config{Limits: l}))
	tr := &transport.Transport{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1}
	for range 20 {
		if st, _ := attack9Call(t, tr, attack9Title); st != 200 {
			t.Fatalf("status %d", st)
		}
	}
	k := attack9Key()
	if err := h.ResetCounts(context.Background(), &k); err != nil {
		t.Fatal(err)
	}
	d, err := h.Counts(k)
	if err != nil {
		t.Fatal(err)
	}
	if d.Sustain.Count != 0 {
		t.Fatalf("after ResetCounts the key's sustain count is %d", d.Sustain.Count)
	}
	fresh := &transport.Transport{Base: h, Limits: l, TitleID: attack9Title, RetryWindow: -1}
	st, _ := attack9Call(t, fresh, attack9Title)
	if st != 200 {
		t.Errorf("after ResetCounts of the key (its counts read %d/%d), a fresh transport's first call: status %d (0: refused locally), want 200",
			d.Sustain.Count, d.Sustain.Limit, st)
	}
}
