package transport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/transport"
)

// The published Store figures: ClientLimit {100, 100}, publisher 200.
const attack9eStore = `{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 100, "sustain": 100, "publisherSustain": 200, "store": true}]}`

const (
	attack9eURL   = "https://collections.mp.microsoft.com/v9.0/collections/query"
	attack9eTitle = "1234567890"
	attack9eXUID  = "2533274791200001"
)

// attack9eBase is a scripted service: every answer gets status, body and the
// headers hdr; hits counts what reached it.
type attack9eBase struct {
	status int
	body   string
	hdr    map[string]string
	hits   atomic.Int64
}

func (b *attack9eBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.hits.Add(1)
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	h := http.Header{}
	for k, v := range b.hdr {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: b.status, Header: h, Body: io.NopCloser(strings.NewReader(b.body)), Request: req}, nil
}

func attack9eLimits(t *testing.T) *limits.Limits {
	t.Helper()
	l, err := limits.Read(strings.NewReader(attack9eStore))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// attack9eSend sends one FailFast POST: the status (0: refused locally) and
// the response when one came back.
func attack9eSend(t *testing.T, rt http.RoundTripper) (int, *http.Response) {
	t.Helper()
	ctx := transport.WithPolicy(context.Background(), transport.Policy{FailFast: true})
	req, _ := http.NewRequestWithContext(ctx, "POST", attack9eURL, strings.NewReader("{}"))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("{}")), nil }
	req.Header.Set("Authorization", mock.Token(attack9eXUID, attack9eTitle))
	resp, err := rt.RoundTrip(req)
	var te *transport.ThrottleError
	switch {
	case err == nil:
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp
	case errors.As(err, &te) && te.Local:
		return 0, nil
	case errors.As(err, &te):
		return te.Status, nil
	}
	t.Fatal(err)
	return -1, nil
}

func attack9eHeaders(q, r, t int) map[string]string {
	pol := `"sustain";w=300`
	if q > 0 {
		pol = `"sustain";q=` + strconv.Itoa(q) + `;w=300`
	}
	return map[string]string{"RateLimit-Policy": pol, "RateLimit": `"sustain";r=` + strconv.Itoa(r) + `;t=` + strconv.Itoa(t)}
}

// sustainLeft sends one call answering 200 with hdr through a fresh
// transport of share and returns BudgetLeft's sustain left.
func attack9eSustainLeft(t *testing.T, share float64, hdr map[string]string) int {
	t.Helper()
	b := &attack9eBase{status: 200, body: "{}", hdr: hdr}
	tr := &transport.Transport{Base: b, Limits: attack9eLimits(t), TitleID: attack9eTitle, RetryWindow: -1, LimitShare: share}
	st, resp := attack9eSend(t, tr)
	if st != 200 {
		t.Fatalf("status %d", st)
	}
	snap, err := tr.BudgetLeft(resp)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Sustain.Limit - snap.Sustain.Count
}

// held: RELIABILITY.md (fourth wave): "a reported window of a higher limit
// than the key's syncs by what it leaves (100 − 49 = 51 used)";
// Transport.LimitShare: "the share of each limit ... the budget lets calls
// use". With LimitShare 0.5 (budget 50 of 100), a publisher's window
// q=200, r=80 leaves the budget 50 − (100 − 80) = 30: the same as the
// key's own window q=100, r=80 leaves it, and never more than the service's
// r. A window above the key's that leaves more than the key's limit (r=150),
// r above q, and t beyond a period sync nothing.
func TestAttack9eHigherLimitWithLimitShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct {
			name  string
			share float64
			hdr   map[string]string
			want  int
		}{
			{"publisher q=200 r=80, share 0.5", 0.5, attack9eHeaders(200, 80, 300), 30},
			{"own q=100 r=80, share 0.5", 0.5, attack9eHeaders(100, 80, 300), 30},
			{"publisher q=200 r=49, share 1", 0, attack9eHeaders(200, 49, 300), 49},
			{"publisher q=200 r=150 (leaves more than the key's 100)", 0, attack9eHeaders(200, 150, 300), 99},
			{"r above q", 0, attack9eHeaders(200, 300, 300), 99},
			{"t absurd", 0, attack9eHeaders(200, 0, 1<<29), 99},
		} {
			if got := attack9eSustainLeft(t, c.share, c.hdr); got != c.want {
				t.Errorf("%s: BudgetLeft sustain left %d, want %d", c.name, got, c.want)
			}
		}
	})
}

// held (DoS by header): transport docs: the budget is resynced from the
// service's RateLimit headers ("RateLimit headers resync the counts",
// assess.go feedback). One header with a huge q and r=0 empties the budget
// for one window at most (t ≤ 300 s), exactly as a header naming the
// key's own limit (or no q) with r=0 did before d338b32: the new path
// syncs n ≤ the old count, so it adds no refusal. After the window the key
// goes again.
func TestAttack9eHugeQHeaderEmptiesOneWindowOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, hdr := range []map[string]string{attack9eHeaders(1<<30, 0, 300), attack9eHeaders(0, 0, 300), attack9eHeaders(100, 0, 300)} {
			if got := attack9eSustainLeft(t, 0, hdr); got != 0 {
				t.Errorf("%v: left %d, want 0 (the service says none left)", hdr, got)
			}
		}
		b := &attack9eBase{status: 200, body: "{}", hdr: attack9eHeaders(1<<30, 0, 300)}
		tr := &transport.Transport{Base: b, Limits: attack9eLimits(t), TitleID: attack9eTitle, RetryWindow: -1}
		attack9eSend(t, tr)
		b.hdr = nil
		if st, _ := attack9eSend(t, tr); st != 0 {
			t.Errorf("right after r=0: %d, want a local refusal", st)
		}
		time.Sleep(302 * time.Second)
		if st, _ := attack9eSend(t, tr); st != 200 {
			t.Errorf("after the reported window: %d, want 200", st)
		}
	})
}

// held: RELIABILITY.md: "a Store body naming another counter than
// `{userId;titleId}` teaches nothing"; assess.go: "a 429's Retry-After
// blocks the key (the service is authoritative)". A publisher's 429
// (Retry-After 60, headers q=200 r=0) teaches nothing, is not retried into
// the same 429 within its Retry-After (one hit), the next call is refused
// locally for the 60 s, and goes after. Oddly spelled aspects teach
// nothing either.
func TestAttack9ePublisher429RetryAfterKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, aspect := range []string{ratelimit.AspectPublisher, "{userId;titleid}", " {userId;titleId}", "{userId; titleId}"} {
			b := &attack9eBase{status: 429, body: ratelimit.StoreText(50, 300, aspect), hdr: attack9eHeaders(200, 0, 300)}
			b.hdr["Retry-After"] = "60"
			tr := &transport.Transport{Base: b, Limits: attack9eLimits(t), TitleID: attack9eTitle}
			if st, _ := attack9eSend(t, tr); st != 429 {
				t.Fatalf("%q: %d, want 429", aspect, st)
			}
			if ll := tr.LearnedLimits(); len(ll) != 0 {
				t.Errorf("%q: learned %+v", aspect, ll)
			}
			if n := b.hits.Load(); n != 1 {
				t.Errorf("%q: %d attempts reached the service, want 1", aspect, n)
			}
			time.Sleep(30 * time.Second)
			if st, _ := attack9eSend(t, tr); st != 0 {
				t.Errorf("%q: 30 s into Retry-After 60: %d, want a local refusal", aspect, st)
			}
			b.status, b.body, b.hdr = 200, "{}", nil
			time.Sleep(31 * time.Second)
			// the q=200 r=0 header (t=300) still holds the budget empty: the
			// service said nothing is left in that window.
			time.Sleep(240 * time.Second)
			if st, _ := attack9eSend(t, tr); st != 200 {
				t.Errorf("%q: after Retry-After and the window: %d", aspect, st)
			}
		}
	})
}

// held: learned limits in force. A title 429 (JSON, no aspect: a service's
// own, which teaches) lowers the key's sustain to 50 (c.full 50); then the
// service's window of its table's 100 (q above the learned 50), r=40,
// syncs by what it leaves: the budget keeps at most 40, not 50 − 60 < 0
// refusing everything, and not 50 − 1.
func TestAttack9eLearnedLowerThenHigherWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &attack9eBase{status: 429, body: `{"version":1,"currentRequests":51,"maxRequests":50,"periodInSeconds":300,"limitType":"Rate"}`, hdr: map[string]string{"Retry-After": "1"}}
		tr := &transport.Transport{Base: b, Limits: attack9eLimits(t), TitleID: attack9eTitle, RetryWindow: -1}
		attack9eSend(t, tr)
		ll := tr.LearnedLimits()
		if len(ll) == 0 {
			t.Fatalf("learned nothing from a JSON 429 of 50/300")
		}
		time.Sleep(2 * time.Second)
		b.status, b.body, b.hdr = 200, "{}", attack9eHeaders(100, 40, 290)
		st, resp := attack9eSend(t, tr)
		if st != 200 {
			t.Fatalf("status %d", st)
		}
		snap, _ := tr.BudgetLeft(resp)
		if left := snap.Sustain.Limit - snap.Sustain.Count; snap.Sustain.Limit != 50 || left > 40 || left < 38 {
			t.Errorf("learned 50, service says 40 left of its 100: BudgetLeft %d of %d used (%d left), want 40 left (±2 for the calls sent)", snap.Sustain.Count, snap.Sustain.Limit, left)
		}
	})
}
