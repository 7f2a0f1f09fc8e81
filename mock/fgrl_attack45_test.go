package mock

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// attack45Clock is a hand-moved clock for Config.Now.
type attack45Clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *attack45Clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *attack45Clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func attack45Body(t *testing.T, s string) ratelimit.Body {
	t.Helper()
	var b ratelimit.Body
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		t.Fatalf("429 body %q: %v", s, err)
	}
	return b
}

// held: docs/MOCK.md "at a limit the answer is 429 with `Retry-After`
// (whole seconds, rounded up)"; SPEC.md "If either count is *at or above*
// its limit, the request is dropped", "Rejected requests still count",
// "At the end of a period, that period's count starts again from 0".
// Profile (10 / 30): the 10th call at one instant is served, the 11th is
// 429 with Retry-After 15; 14.5 s later still 429 with Retry-After 1
// (0.5 s rounded up); at exactly 15 s the burst window has ended.
func TestAttack45BurstWindowEdges(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := &attack45Clock{t: t0}
	h := Must(New(Config{Now: clk.now}))
	tok := Token(xuid1, title1)
	for i := 1; i <= 10; i++ {
		if r := do(t, h, "GET", profileURL, tok, ""); r.status != 200 {
			t.Fatalf("call %d: %d %s", i, r.status, r.body)
		}
	}
	r := do(t, h, "GET", profileURL, tok, "")
	if r.status != 429 || r.header.Get("Retry-After") != "15" {
		t.Fatalf("11th call: %d Retry-After %q, want 429 and 15", r.status, r.header.Get("Retry-After"))
	}
	if b := attack45Body(t, r.body); b.CurrentRequests != 11 || b.MaxRequests != 10 || b.PeriodInSeconds != 15 {
		t.Errorf("11th call's body %+v", b)
	}
	clk.set(t0.Add(14*time.Second + 500*time.Millisecond))
	r = do(t, h, "GET", profileURL, tok, "")
	if r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Errorf("at 14.5 s: %d Retry-After %q, want 429 and 1", r.status, r.header.Get("Retry-After"))
	}
	clk.set(t0.Add(15*time.Second - time.Nanosecond))
	if r = do(t, h, "GET", profileURL, tok, ""); r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Errorf("at 15 s - 1 ns: %d Retry-After %q, want 429 and 1", r.status, r.header.Get("Retry-After"))
	}
	clk.set(t0.Add(15 * time.Second))
	if r = do(t, h, "GET", profileURL, tok, ""); r.status != 200 {
		t.Errorf("at 15 s: %d, want 200 (a new burst window)", r.status)
	}
	d, _ := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "profile"})
	if d.Sustain.Count != 14 || d.Burst.Count != 1 {
		t.Errorf("counts burst %d sustain %d, want 1 and 14 (throttled calls count)", d.Burst.Count, d.Sustain.Count)
	}
}

// held: SPEC.md "If either count is *at or above* its limit, the request
// is dropped and answered with HTTP 429", "Rejected requests still
// count"; docs/MOCK.md "`Retry-After` (whole seconds, rounded up)". The
// sustain edge of profile (30 / 300): the throttled 11th call of the
// first burst counts, so the 30th count is reached at the 9th call of the
// third burst window; the next is refused for the sustain window (period
// 300, Retry-After 270), at 299.5 s still (Retry-After 1), at 300 s served.
func TestAttack45SustainWindowEdges(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := &attack45Clock{t: t0}
	h := Must(New(Config{Now: clk.now}))
	tok := Token(xuid1, title1)
	statuses := func(n int) (ok, refused int, last result) {
		for range n {
			last = do(t, h, "GET", profileURL, tok, "")
			if last.status == 200 {
				ok++
			} else if last.status == 429 {
				refused++
			}
		}
		return
	}
	if ok, ref, _ := statuses(11); ok != 10 || ref != 1 {
		t.Fatalf("first window: %d served %d refused", ok, ref)
	}
	clk.set(t0.Add(15 * time.Second))
	if ok, ref, _ := statuses(10); ok != 10 || ref != 0 {
		t.Fatalf("second window: %d served %d refused", ok, ref)
	}
	clk.set(t0.Add(30 * time.Second))
	if ok, ref, _ := statuses(9); ok != 9 || ref != 0 {
		t.Fatalf("third window: %d served %d refused", ok, ref)
	}
	r := do(t, h, "GET", profileURL, tok, "")
	if r.status != 429 || r.header.Get("Retry-After") != "270" {
		t.Fatalf("31st count: %d Retry-After %q, want 429 and 270", r.status, r.header.Get("Retry-After"))
	}
	if b := attack45Body(t, r.body); b.PeriodInSeconds != 300 || b.MaxRequests != 30 || b.CurrentRequests != 31 {
		t.Errorf("sustain refusal's body %+v", b)
	}
	clk.set(t0.Add(299*time.Second + 500*time.Millisecond))
	if r = do(t, h, "GET", profileURL, tok, ""); r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Errorf("at 299.5 s: %d Retry-After %q, want 429 and 1", r.status, r.header.Get("Retry-After"))
	}
	clk.set(t0.Add(300 * time.Second))
	if r = do(t, h, "GET", profileURL, tok, ""); r.status != 200 {
		t.Errorf("at 300 s: %d, want 200", r.status)
	}
}

// held: docs/MOCK.md "Every call the mock serves is counted before it is
// answered", SPEC.md "Requests are counted per *user + title* pair, and
// separately per *service*". One user's profile reads under every
// spelling of the host a client can send (case, a trailing dot, the
// default port, another port, a trailing dot and a port): served or not,
// at one instant no more than the burst (10) are served in all.
func TestAttack45HostSpellingsShareOneBudget(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := &attack45Clock{t: t0}
	h := Must(New(Config{Now: clk.now}))
	tok := Token(xuid1, title1)
	hosts := []string{
		"profile.xboxlive.com", "PROFILE.XBOXLIVE.COM", "Profile.XboxLive.Com",
		"profile.xboxlive.com.", "profile.xboxlive.com:443", "profile.xboxlive.com:8443",
		"PROFILE.xboxlive.com.:443", "profile.xboxlive.com:80",
	}
	served := 0
	for round := 0; round < 3; round++ {
		for _, host := range hosts {
			r := do(t, h, "GET", "https://"+host+"/users/me/profile/settings?settings=Gamertag", tok, "")
			if r.status == 200 {
				served++
			}
		}
	}
	if served > 10 {
		t.Errorf("%d profile reads served at one instant under %d spellings of the host, want at most 10", served, len(hosts))
	}
}

// held: SPEC.md "calls to one service never count against another" and
// docs/MOCK.md, path matching: presence writes under every path spelling
// a route takes are counted under presence/write (burst 3), never
// presence/read: the write route and the write rule must agree on every
// spelling, else writes are split off into the read budget (30).
func TestAttack45PresenceWriteSpellingsNeverReadBudget(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := &attack45Clock{t: t0}
	h := Must(New(Config{Now: clk.now}))
	tok := Token(xuid1, title1)
	type wr struct{ method, path, body string }
	var writes []wr
	for _, u := range []string{"me", "ME", "xuid(" + xuid1 + ")", "XUID(" + xuid1 + ")", "Xuid(" + xuid1 + ")"} {
		writes = append(writes,
			wr{"POST", "/users/" + u + "/devices/current/titles/current", `{"state":"active"}`},
			wr{"PUT", "/users/" + u + "/state", `{"state":"Active"}`},
			wr{"DELETE", "/users/" + u + "/devices/current/titles/current", ""},
			wr{"POST", "/Users/" + u + "/Devices/Current/Titles/Current", `{"state":"active"}`},
			wr{"POST", "/users/" + u + "%2Fdevices/current/titles/current", `{"state":"active"}`},
			wr{"PUT", "/users/" + u + "/st%61te", `{"state":"Active"}`},
		)
	}
	for _, host := range []string{"userpresence.xboxlive.com", "presence.xboxlive.com"} {
		for _, w := range writes {
			do(t, h, w.method, "https://"+host+w.path, tok, w.body)
		}
	}
	for _, c := range h.Calls(CallFilter{}) {
		if c.Method != "GET" && c.Scope != "" && c.Scope != "presence/write" {
			t.Errorf("%s %s (%d) counted under %q, want presence/write", c.Method, c.URL, c.Status, c.Scope)
		}
	}
	served := len(h.Calls(CallFilter{Status: 200})) + len(h.Calls(CallFilter{Status: 204})) + len(h.Calls(CallFilter{Status: 201}))
	if served > 3 {
		t.Errorf("%d presence writes served at one instant, want at most 3", served)
	}
}
