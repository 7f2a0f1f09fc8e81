package mock

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

const (
	xuid1  = "2533274791234567"
	xuid2  = "2533274799999999"
	title1 = "1234567890"
	title2 = "1111111111"
)

type result struct {
	status int
	header http.Header
	body   string
}

// do sends one request through h in-process.
func do(t *testing.T, h *Handler, method, url, auth, body string) result {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return send(t, h, req)
}

// send runs req through h and returns its answer.
func send(t *testing.T, h *Handler, req *http.Request) result {
	t.Helper()
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, resp.Header, string(b)}
}

const profileURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

func TestThrottle429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHandler()
		tok := Token(xuid1, title1)
		for i := 0; i < 10; i++ {
			if r := do(t, h, "GET", profileURL, tok, ""); r.status != 200 {
				t.Fatalf("call %d: status %d %s", i, r.status, r.body)
			}
			time.Sleep(100 * time.Millisecond)
		}
		r := do(t, h, "GET", profileURL, tok, "")
		if r.status != 429 {
			t.Fatalf("11th call: status %d, want 429", r.status)
		}
		// The burst window opened at 0 and it is now 1 s later: 14 s remain.
		if got := r.header.Get("Retry-After"); got != "14" {
			t.Errorf("Retry-After = %q, want 14", got)
		}
		var b ratelimit.Body
		if err := json.Unmarshal([]byte(r.body), &b); err != nil {
			t.Fatal(err)
		}
		want := ratelimit.Body{Version: 1, CurrentRequests: 11, MaxRequests: 10, PeriodInSeconds: 15, LimitType: "Rate"}
		if diff := cmp.Diff(want, b); diff != "" {
			t.Errorf("429 body mismatch (-want +got):\n%s", diff)
		}
		if got, want := r.header.Get("RateLimit"), `"burst";r=0;t=14, "sustain";r=19;t=299`; got != want {
			t.Errorf("RateLimit = %q, want %q", got, want)
		}
		if got, want := r.header.Get("RateLimit-Policy"), `"burst";q=10;w=15, "sustain";q=30;w=300`; got != want {
			t.Errorf("RateLimit-Policy = %q, want %q", got, want)
		}
	})
}

// TestWorkedExample replays the worked example of the Xbox services "Fine-Grained Rate Limiting" page with burst 30 / sustain 100.
func TestWorkedExample(t *testing.T) {
	limits, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 30, "sustain": 100}]}`))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{Limits: limits}))
		tok := Token(xuid1, title1)
		start := time.Now()
		for _, iv := range []struct{ at, requests, throttled int }{
			{0, 35, 5}, {15, 28, 0}, {30, 21, 0}, {45, 36, 20}, {60, 24, 24}, {285, 4, 4},
		} {
			time.Sleep(time.Until(start.Add(time.Duration(iv.at) * time.Second)))
			throttled := 0
			for i := 0; i < iv.requests; i++ {
				if do(t, h, "GET", profileURL, tok, "").status == 429 {
					throttled++
				}
				time.Sleep(10 * time.Second / time.Duration(iv.requests))
			}
			if throttled != iv.throttled {
				t.Errorf("interval at %d s: %d throttled, want %d", iv.at, throttled, iv.throttled)
			}
		}
		d, _ := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "profile"})
		if d.Sustain.Count != 148 {
			t.Errorf("sustain count %d, want 148", d.Sustain.Count)
		}
	})
}

func TestIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHandler()
		for i := 0; i < 15; i++ {
			do(t, h, "GET", profileURL, Token(xuid1, title1), "")
		}
		if r := do(t, h, "GET", profileURL, Token(xuid1, title1), ""); r.status != 429 {
			t.Fatalf("throttled pair: status %d", r.status)
		}
		for name, c := range map[string]struct{ url, tok string }{
			"other user":    {profileURL, Token(xuid2, title1)},
			"other title":   {profileURL, Token(xuid1, title2)},
			"other service": {"https://social.xboxlive.com/users/me/people", Token(xuid1, title1)},
		} {
			if r := do(t, h, "GET", c.url, c.tok, ""); r.status != 200 {
				t.Errorf("%s: status %d, want 200", name, r.status)
			}
		}
	})
}

func TestSeparateCounters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHandler()
		tok := Token(xuid1, title1)
		write := "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")/devices/current/titles/current"
		for i := 0; i < 3; i++ {
			do(t, h, "POST", write, tok, `{"state":"active"}`)
		}
		if r := do(t, h, "POST", write, tok, `{}`); r.status != 429 {
			t.Errorf("4th presence write: %d, want 429 (write burst 3)", r.status)
		}
		if r := do(t, h, "GET", "https://userpresence.xboxlive.com/users/me", tok, ""); r.status != 200 {
			t.Errorf("presence read after writes: %d, want 200", r.status)
		}
		q := "https://sessiondirectory.xboxlive.com/handles/query?include=relatedInfo"
		do(t, h, "POST", q, tok, `{}`)
		if r := do(t, h, "POST", q, tok, `{}`); r.status != 429 {
			t.Errorf("2nd search-handle query: %d, want 429 (burst 1)", r.status)
		}
		if r := do(t, h, "GET", "https://sessiondirectory.xboxlive.com/serviceconfigs/s/sessiontemplates/t/sessions/n", tok, ""); r.status != 404 {
			t.Errorf("MPSD get after search-handle throttle: %d, want 404 (served)", r.status)
		}
	})
}

func TestStoreService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{Publishers: map[string]string{title1: "pub", title2: "pub"}}))
		url := "https://collections.mp.microsoft.com/v7.0/collections/query"
		var r result
		for i := 0; i < 101; i++ {
			r = do(t, h, "POST", url, Token(xuid1, title1), `{}`)
		}
		if r.status != 429 || !strings.HasPrefix(r.body, "The rate limit of 100 operations in ") {
			t.Errorf("101st collections call: %d %q", r.status, r.body)
		}
		if b, err := ratelimit.ParseBody([]byte(r.body)); err != nil || b.Aspect == "" {
			t.Errorf("Store body does not parse: %+v, %v", b, err)
		}
		// The publisher counter already holds 101; title2 of the same
		// publisher gets 99 more before the per-publisher 200 trips.
		for i := 0; i < 99; i++ {
			if r := do(t, h, "POST", url, Token(xuid1, title2), `{}`); r.status != 404 {
				t.Fatalf("title2 call %d: %d", i, r.status)
			}
		}
		r = do(t, h, "POST", url, Token(xuid1, title2), `{}`)
		if r.status != 429 || !strings.Contains(r.body, "{userId;publisherId}") {
			t.Errorf("publisher limit: %d %q", r.status, r.body)
		}
	})
}

func TestLegacyTitle(t *testing.T) {
	h := Must(New(Config{LegacyTitles: []string{title1}}))
	for i := 0; i < 50; i++ {
		if r := do(t, h, "GET", profileURL, Token(xuid1, title1), ""); r.status != 200 {
			t.Fatalf("legacy call %d: %d", i, r.status)
		}
	}
}

func TestBadRequests(t *testing.T) {
	h := Must(New(Config{MaxBody: 64}))
	tok := Token(xuid1, title1)
	forged := strings.Replace(tok, "mock1.", "mock1.x", 1)
	tests := []struct {
		name, method, url, auth, body string
		status                        int
		code                          string
	}{
		{"no token", "GET", profileURL, "", "", 401, "Unauthorized"},
		{"bad scheme", "GET", profileURL, "Bearer abc", "", 401, "Unauthorized"},
		{"forged token", "GET", profileURL, forged, "", 401, "Unauthorized"},
		{"other user's hash", "GET", profileURL, "XBL3.0 x=1;" + strings.SplitN(tok, ";", 2)[1], "", 401, "Unauthorized"},
		{"unknown host", "GET", "https://example.com/", tok, "", 404, "NoSuchHost"},
		{"unknown path", "GET", "https://profile.xboxlive.com/nope", tok, "", 404, "NotFound"},
		{"wrong method", "DELETE", profileURL, tok, "", 405, "MethodNotAllowed"},
		{"malformed json", "POST", "https://profile.xboxlive.com/users/batch/profile/settings", tok, `{"userIds":`, 400, "BadRequest"},
		{"too large", "POST", "https://profile.xboxlive.com/users/batch/profile/settings", tok, `{"userIds":["` + strings.Repeat("1", 100) + `"]}`, 413, "RequestTooLarge"},
		{"empty batch", "POST", "https://profile.xboxlive.com/users/batch/profile/settings", tok, `{"userIds":[]}`, 400, "BadRequest"},
	}
	for _, tt := range tests {
		r := do(t, h, tt.method, tt.url, tt.auth, tt.body)
		var e errorBody
		json.Unmarshal([]byte(r.body), &e)
		if r.status != tt.status || e.Code != tt.code {
			t.Errorf("%s: %d %q, want %d %q", tt.name, r.status, r.body, tt.status, tt.code)
		}
	}
	// Unknown paths and methods at a service the mock answers are not
	// counted: the 3 served requests are.
	d, _ := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "profile"})
	if d.Sustain.Count != 3 {
		t.Errorf("profile count after 3 served and 2 unserved requests: %d, want 3", d.Sustain.Count)
	}
	if _, err := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "nope"}); err == nil {
		t.Error("Counts(unknown scope) succeeded")
	}
}

func TestFallback(t *testing.T) {
	h := Must(New(Config{Fallback: true}))
	var r result
	for i := 0; i < 11; i++ {
		r = do(t, h, "GET", "https://unlisted.xboxlive.com/x", Token(xuid1, title1), "")
	}
	if r.status != 429 {
		t.Errorf("11th call to an unlisted host with the fallback rule: %d, want 429", r.status)
	}
}

func TestFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{Faults: Faults{ErrorRate: 1, Latency: throttle.Duration(2 * time.Second)}}))
		start := time.Now()
		a := do(t, h, "GET", profileURL, Token(xuid1, title1), "")
		b := do(t, h, "GET", profileURL, Token(xuid1, title1), "")
		if a.status == b.status || a.status+b.status != 500+503 {
			t.Errorf("statuses %d, %d; want one 500 and one 503", a.status, b.status)
		}
		if got := time.Since(start); got != 4*time.Second {
			t.Errorf("two calls took %v, want 4s of injected latency", got)
		}
	})
	h := Must(New(Config{Faults: Faults{ResetRate: 1}}))
	req, _ := http.NewRequest("GET", profileURL, nil)
	req.Header.Set("Authorization", Token(xuid1, title1))
	if _, err := h.RoundTrip(req); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("reset fault: err %v, want ECONNRESET", err)
	}
}

func TestRetryAfterModes(t *testing.T) {
	tests := []struct {
		mode  RetryAfterMode
		check func(string) bool
	}{
		{RetryAfterMissing, func(s string) bool { return s == "" }},
		{RetryAfterHTTPDate, func(s string) bool { _, err := http.ParseTime(s); return err == nil }},
		{RetryAfterHuge, func(s string) bool { return s == "2147483647" }},
		{RetryAfterNegative, func(s string) bool { return strings.HasPrefix(s, "-") }},
		{RetryAfterGarbage, func(s string) bool { return s == "soon" }},
	}
	for _, tt := range tests {
		h := Must(New(Config{Faults: Faults{RetryAfter: tt.mode}}))
		var r result
		for i := 0; i < 11; i++ {
			r = do(t, h, "GET", profileURL, Token(xuid1, title1), "")
		}
		if got := r.header.Get("Retry-After"); r.status != 429 || !tt.check(got) {
			t.Errorf("mode %d: %d Retry-After %q", tt.mode, r.status, got)
		}
	}
}

// TestFloodBounded: a flood of forged-but-valid distinct users keeps the key
// table and the service state bounded.
func TestFloodBounded(t *testing.T) {
	racebuild.Skip(t, "a volume test: 20,000 calls on one goroutine")
	h := Must(New(Config{MaxKeys: 1024}))
	for i := 0; i < 20000; i++ {
		x := strconv.Itoa(9000000 + i)
		do(t, h, "POST", "https://userpresence.xboxlive.com/users/xuid("+x+")/devices/current/titles/current", Token(x, title1), `{"state":"active"}`)
	}
	if n := h.cfg.store.(*throttle.MemoryServerStore).Len(); n > 1024 {
		t.Errorf("store holds %d keys, cap 1024", n)
	}
	if n := len(h.world.state.presence.m); n != 1024 {
		t.Errorf("presence holds %d users, want the cap 1024", n)
	}
}

// TestStateBoundedInBytes: documents near the size limit fill the state
// only up to its byte cap, and one request cannot make the mock build an
// answer of unbounded size.
func TestStateBoundedInBytes(t *testing.T) {
	racebuild.Skip(t, "a volume test: 500 documents of 60 KiB on one goroutine")
	const capBytes = 3 << 20
	h := Must(New(Config{MaxStateBytes: capBytes, LegacyTitles: []string{title1}}))
	tok := Token(xuid1, title1)
	big := strings.Repeat("x", 60<<10)
	for i := range 500 {
		url := "https://sessiondirectory.xboxlive.com/serviceconfigs/abc/sessiontemplates/t/sessions/s" + strconv.Itoa(i)
		if r := do(t, h, "PUT", url, tok, `{"properties":{"custom":{"blob":"`+big+`"}}}`); r.status != 201 {
			t.Fatalf("session %d: %d %s", i, r.status, r.body)
		}
	}
	if b := h.world.state.sessions.bytes; b > capBytes/3 {
		t.Errorf("sessions hold %d bytes, over their share %d of the cap", b, capBytes/3)
	}
	for _, tt := range []struct{ name, method, url, body string }{
		{"session over 64 KiB", "PUT", "https://sessiondirectory.xboxlive.com/serviceconfigs/abc/sessiontemplates/t/sessions/big",
			`{"properties":{"custom":{"blob":"` + strings.Repeat("x", 70<<10) + `"}}}`},
		{"stat names too long", "GET", "https://userstats.xboxlive.com/users/xuid(1)/scids/abc/stats/" + strings.Repeat("n", 300), ""},
		{"too many stat names", "POST", "https://userstats.xboxlive.com/batch?operation=read",
			`{"requestedusers":["1"],"requestedscids":[{"scid":"abc","requestedstats":[` + strings.Repeat(`"n",`, 100) + `"n"]}]}`},
		{"rich presence token too long", "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current",
			`{"state":"active","activity":{"richPresence":{"id":"p","scid":"` + SCID(title1) + `","params":["` + strings.Repeat("p", 1000) + `"]}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := do(t, h, tt.method, tt.url, tok, tt.body); r.status != 400 {
				t.Errorf("%d, want 400", r.status)
			}
		})
	}
}

func TestServerRealHostnames(t *testing.T) {
	s := NewServer(nil)
	defer s.Close()
	req, _ := http.NewRequest("GET", profileURL, nil)
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("RateLimit") == "" {
		t.Errorf("status %d, RateLimit %q", resp.StatusCode, resp.Header.Get("RateLimit"))
	}
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want loopback", s.URL)
	}
}

func TestTruncateFault(t *testing.T) {
	h := Must(New(Config{Faults: Faults{TruncateRate: 1}}))
	req, _ := http.NewRequest("GET", profileURL, nil)
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(b) == 0 || resp.ContentLength <= int64(len(b)) {
		t.Errorf("in-process: read %d of %d bytes, err %v; want a cut body", len(b), resp.ContentLength, err)
	}
	s := NewServer(Must(New(Config{Faults: Faults{TruncateRate: 1}})))
	defer s.Close()
	resp, err = s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("over loopback: %v, want unexpected EOF", err)
	}
}

// TestConfigErrors: New refuses a Config it could not honour, saying what
// is wrong, instead of ignoring part of it or panicking.
func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"Align with a Store", Config{Store: &throttle.MemoryServerStore{}, Align: throttle.ClockAligned}, "Align configures the built-in store"},
		{"negative MaxKeys", Config{MaxKeys: -1}, "must not be negative"},
		{"negative MaxBody", Config{MaxBody: -1}, "must not be negative"},
		{"fault rates past 1", Config{Faults: Faults{ErrorRate: 0.6, ResetRate: 0.6}}, "fault rates"},
		{"an error rate of NaN", Config{Faults: Faults{ErrorRate: math.NaN()}}, "fault rates must be fractions from 0 to 1 adding up to at most 1 (error NaN, reset 0, truncate 0)"},
		{"a reset rate of +Inf", Config{Faults: Faults{ResetRate: math.Inf(1)}}, "(error 0, reset +Inf, truncate 0)"},
		{"a truncate rate of NaN beside an error rate", Config{Faults: Faults{ErrorRate: 0.5, TruncateRate: math.NaN()}}, "(error 0.5, reset 0, truncate NaN)"},
		{"a service fault's rate of NaN", Config{Faults: Faults{Services: []ServiceFault{{Service: "social", Status: 500, Rate: math.NaN()}}}}, "services[0]: rate is a share, 0 to 1"},
		{"negative latency", Config{Faults: Faults{Latency: throttle.Duration(-time.Second)}}, "latency"},
		{"a legacy title that is not a title ID", Config{LegacyTitles: []string{"1234567890", " 12"}},
			`mock: LegacyTitles[1]: " 12" is not a title ID (a decimal number that fits in 32 bits, with no leading zero)`},
		{"a legacy title past 32 bits", Config{LegacyTitles: []string{"4294967296"}}, `mock: LegacyTitles[0]: "4294967296" is not a title ID`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.c)
			if h != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, %v; want an error saying %q", h, err, tt.want)
			}
		})
	}
	if _, err := New(Config{Store: &throttle.MemoryServerStore{Align: throttle.ClockAligned}}); err != nil {
		t.Errorf("a Store with its own alignment: %v", err)
	}
}
