package mock

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const attack21ProfileURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

func attack21Get(t *testing.T, h *Handler, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", Token("2535405290689422", "1234567890"))
	req.Header.Set("x-xbl-contract-version", "3")
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A response RoundTrip returns is the caller's: editing the value slices of
// its Header in place (as a caller normalising a header does) must not
// change any other answer, of this Handler or of another. The mock hands
// the handler's header map to the response (answer.result) and writeRaw
// puts the package-level jsonType slice into every JSON answer, so one
// caller's edit of resp.Header["Content-Type"][0] rewrites the
// Content-Type of every later JSON answer of every Handler in the process.
func TestAttack21RoundTripResponseHeaderSliceShared(t *testing.T) {
	h1, h2 := NewHandler(), NewHandler()
	first := attack21Get(t, h1, attack21ProfileURL)
	first.Body.Close()
	ct := first.Header["Content-Type"]
	if len(ct) != 1 || !strings.HasPrefix(ct[0], "application/json") {
		t.Fatalf("first answer's Content-Type %q, want JSON", ct)
	}
	orig := ct[0]
	ct[0] = "text/x-edited-by-another-caller"
	defer func() { jsonType[0] = orig }() // repair the package state for other tests

	for name, h := range map[string]*Handler{"same handler": h1, "another handler": h2} {
		resp := attack21Get(t, h, attack21ProfileURL)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); got != orig {
			t.Errorf("%s: a later answer's Content-Type is %q, want %q: one caller's edit of its own response header reached another answer "+
				"(RoundTrip: \"a Handler can be the Base of a transport\"; http.RoundTripper: the Response is the caller's; before 8e26747 httptest.ResponseRecorder cloned the headers)", name, got, orig)
		}
	}
}

// held: two RoundTrips at once sharing one request (and so one Header map),
// as a caller reusing a request does: no race under -race, and neither
// request's headers changed.
func TestAttack21RoundTripSharedRequestConcurrent(t *testing.T) {
	h := NewHandler()
	req, err := http.NewRequest("GET", attack21ProfileURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", Token("2535405290689422", "1234567890"))
	req.Header.Set("x-xbl-contract-version", "3")
	req.Header["lower-case-key"] = []string{"v"} // non-canonical, read with Get
	before := req.Header.Clone()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				resp, err := h.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if len(req.Header) != len(before) || req.Header.Get("Authorization") != before.Get("Authorization") {
		t.Errorf("request headers changed: %v", req.Header)
	}
}

type attack21Seen struct {
	status     int
	header     http.Header
	body       string
	retryAfter string // the journal's
	length     int64  // ContentLength
	te         []string
}

func attack21Do(t *testing.T, h *Handler, srvURL string, method, url string) attack21Seen {
	t.Helper()
	target := url
	var host string
	if srvURL != "" {
		i := strings.Index(url[len("https://"):], "/") + len("https://")
		host = url[len("https://"):i]
		target = srvURL + url[i:]
	}
	req, err := http.NewRequest(method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Authorization", Token("2535405290689422", "1234567890"))
	req.Header.Set("x-xbl-contract-version", "3")
	var resp *http.Response
	if srvURL == "" {
		resp, err = h.RoundTrip(req)
	} else {
		resp, err = http.DefaultTransport.RoundTrip(req)
	}
	if err != nil {
		return attack21Seen{body: "error: " + err.Error()}
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := attack21Seen{status: resp.StatusCode, header: resp.Header.Clone(), body: string(b), length: resp.ContentLength, te: resp.TransferEncoding}
	if err != nil {
		s.body += " (read error)"
	}
	calls := h.Calls(CallFilter{})
	if len(calls) > 0 {
		s.retryAfter = calls[len(calls)-1].RetryAfter
	}
	return s
}

// held: the same calls in process and over a loopback socket give the same
// status, Retry-After, RateLimit headers, Content-Type, body and journal
// Retry-After: admitted, 429 past the burst, scripted 503 with a
// Retry-After header, a scripted text answer, each Faults.RetryAfter mode on a 429
// and an injected 503, a scripted truncated 429 and the truncation fault.
// (Not compared: the Content-Type of a scripted text answer, which a
// socket sniffs and the mock leaves out, as it did before 8e26747.)
func TestAttack21RoundTripAsSocket(t *testing.T) {
	type setup struct {
		name   string
		prep   func(h *Handler)
		method string
		url    string
		n      int // calls; the last compared
	}
	script := func(a ScriptAnswer) func(h *Handler) {
		return func(h *Handler) {
			if err := h.SetScript(Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "presence.xboxlive.com"}, Answers: []ScriptAnswer{a}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	faults := func(f Faults) func(h *Handler) {
		return func(h *Handler) {
			if err := h.SetFaults(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	none := func(*Handler) {}
	cases := []setup{
		{"admitted", none, "GET", attack21ProfileURL, 1},
		{"429", none, "GET", attack21ProfileURL, 40},
		{"scripted 503 with Retry-After", script(ScriptAnswer{Status: 503, Headers: map[string]string{"Retry-After": "7", "X-A": "b"}, Body: []byte(`{"x":1}`)}), "GET", "https://presence.xboxlive.com/users/me", 1},
		{"scripted 200 text", script(ScriptAnswer{Headers: map[string]string{"Retry-After": "3"}, Body: []byte(`"<html>hi"`)}), "GET", "https://presence.xboxlive.com/users/me", 1},
		{"unknown host", none, "GET", "https://nohost.example.com/x", 1},
		{"scripted truncate with Retry-After", script(ScriptAnswer{Status: 429, Headers: map[string]string{"Retry-After": "9"}, Body: []byte(`{"a":"0123456789"}`), Fault: "truncate"}), "GET", "https://presence.xboxlive.com/users/me", 1},
		{"truncate fault", faults(Faults{TruncateRate: 1, Seed: 1}), "GET", attack21ProfileURL, 1},
		{"injected 503", faults(Faults{ErrorRate: 1, Seed: 1, RetryAfter: RetryAfterHTTPDate}), "GET", attack21ProfileURL, 2},
	}
	for _, mode := range []RetryAfterMode{RetryAfterMissing, RetryAfterHuge, RetryAfterNegative, RetryAfterGarbage} {
		cases = append(cases, setup{"429 mode " + string(mode), faults(Faults{RetryAfter: mode}), "GET", attack21ProfileURL, 40})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen [2]attack21Seen
			for i := range 2 {
				h := NewHandler()
				c.prep(h)
				srv := ""
				if i == 1 {
					s := NewServer(h)
					defer s.Close()
					srv = s.URL
				}
				for range c.n {
					seen[i] = attack21Do(t, h, srv, c.method, c.url)
				}
			}
			in, so := seen[0], seen[1]
			if in.status != so.status || in.body != so.body || !attack21SameRetryAfter(in.retryAfter, so.retryAfter) {
				t.Errorf("in-process %d %q journal RA %q; socket %d %q journal RA %q", in.status, in.body, in.retryAfter, so.status, so.body, so.retryAfter)
			}
			// Since the in-process answer adds what a server adds: a
			// Content-Type sniffed after the status, a Content-Length, a Date.
			if in.length != so.length || !slices.Equal(in.te, so.te) || (in.header.Get("Date") == "") != (so.header.Get("Date") == "") {
				t.Errorf("in-process length %d %v Date %q; socket %d %v Date %q", in.length, in.te, in.header.Get("Date"), so.length, so.te, so.header.Get("Date"))
			}
			for _, k := range []string{"Retry-After", "Content-Type", "Content-Length", "Ratelimit", "Ratelimit-Policy", "X-A", "Www-Authenticate"} {
				if k == "Retry-After" && attack21SameRetryAfter(in.header.Get(k), so.header.Get(k)) {
					continue
				}
				if in.header.Get(k) != so.header.Get(k) {
					t.Errorf("%s: in-process %q, socket %q", k, in.header.Get(k), so.header.Get(k))
				}
			}
		})
	}
}

// attack21SameRetryAfter reports whether two Retry-After values are the
// same: equal, or HTTP dates a second apart at most (the two answers are
// made one after the other, and the second may turn between them).
func attack21SameRetryAfter(a, b string) bool {
	if a == b {
		return true
	}
	ta, errA := http.ParseTime(a)
	tb, errB := http.ParseTime(b)
	return errA == nil && errB == nil && ta.Sub(tb).Abs() <= time.Second
}
