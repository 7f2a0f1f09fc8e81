package mock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/throttle"
)

const attack22XUID, attack22Title = "2535405290689422", "1234567890"

type attack22Req struct {
	method, url, body string
	header            map[string]string
}

// attack22Seen is what a client sees of one answer.
type attack22Seen struct {
	Err          string
	Status       string
	Code         int
	Header       http.Header
	Length       int64
	TE           []string
	Uncompressed bool
	Body         string
	ReadErr      string
	Journal      string
}

func attack22Do(t *testing.T, h *Handler, rt http.RoundTripper, r attack22Req) attack22Seen {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, r.url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", Token(attack22XUID, attack22Title))
	req.Header.Set("x-xbl-contract-version", "3")
	req.Header.Set("Accept-Encoding", "identity") // no transparent gzip on the socket side
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		s := attack22Seen{Err: "error"}
		if errors.Is(err, syscall.ECONNRESET) {
			s.Err = "reset"
		} else if errors.Is(err, context.DeadlineExceeded) {
			s.Err = "deadline"
		} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "EOF") {
			s.Err = "reset" // a closed connection without an answer: a reset in process (RoundTrip's godoc)
		}
		return s
	}
	b, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := attack22Seen{Status: resp.Status, Code: resp.StatusCode, Header: resp.Header.Clone(), Length: resp.ContentLength, TE: resp.TransferEncoding, Uncompressed: resp.Uncompressed, Body: string(b)}
	if rerr != nil {
		s.ReadErr = "read error"
	}
	return s
}

func attack22Journal(h *Handler) string {
	var parts []string
	for _, c := range h.Calls(CallFilter{}) {
		parts = append(parts, fmt.Sprintf("%s %s %d aborted=%v RA=%q script=%q scope=%q xuid=%q", c.Method, c.URL, c.Status, c.Aborted, c.RetryAfter, c.Script, c.Scope, c.XUID))
	}
	return strings.Join(parts, "\n")
}

// attack22Compare serves reqs in process and over a loopback socket, each side
// with a fresh Handler set up by prep, and returns the differences of the
// last answer of each.
func attack22Compare(t *testing.T, prep func(h *Handler), reqs ...attack22Req) (in, so attack22Seen, diff string) {
	t.Helper()
	var seen [2]attack22Seen
	for i := range 2 {
		h := NewHandler()
		if prep != nil {
			prep(h)
		}
		var rt http.RoundTripper = h
		var s *Server
		if i == 1 {
			s = NewServer(h)
			defer s.Close()
			rt = s.Transport()
		}
		for _, r := range reqs {
			seen[i] = attack22Do(t, h, rt, r)
		}
		if s != nil {
			// The server's handler may still be writing its journal entry
			// when the client has read a whole answer (a 204's): Close
			// waits for every request to finish.
			s.Close()
		}
		seen[i].Journal = attack22Journal(h)
	}
	in, so = seen[0], seen[1]
	for _, s := range []*attack22Seen{&in, &so} {
		if s.Header != nil {
			if d := s.Header.Get("Date"); d != "" {
				if _, err := http.ParseTime(d); err != nil || len(s.Header["Date"]) != 1 {
					s.Header.Set("Date", "MALFORMED "+d)
				} else {
					s.Header.Set("Date", "ok")
				}
			}
			for _, k := range []string{"X-Xbl-Correlation-Id", "Ms-Cv", "X-Correlation-Id", "Etag"} {
				s.Header.Del(k) // per-answer ids
			}
			if v := s.Header.Get("Retry-After"); strings.HasSuffix(v, "GMT") {
				s.Header.Set("Retry-After", "date")
			}
		}
		s.Journal = attack22MaskJournal(s.Journal)
	}
	return in, so, cmp.Diff(so, in)
}

func attack22MaskJournal(j string) string {
	var out []string
	for _, l := range strings.Split(j, "\n") {
		if i := strings.Index(l, "RA=\""); i >= 0 && strings.Contains(l[i:], "GMT") {
			l = l[:i] + "RA=date" + l[strings.Index(l[i+4:], "\"")+i+5:]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func attack22Script(t *testing.T, answers ...ScriptAnswer) func(h *Handler) {
	return func(h *Handler) {
		if err := h.SetScript(Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "presence.xboxlive.com"}, Answers: answers}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// attack22Faults sets f on a Handler, for attack22Compare's prep.
func attack22Faults(t *testing.T, f Faults) func(h *Handler) {
	return func(h *Handler) {
		if err := h.SetFaults(f); err != nil {
			t.Fatal(err)
		}
	}
}

const attack22Presence = "https://presence.xboxlive.com/users/me"

const attack22Promise = "RoundTrip's godoc: \"the answer is what a client of net/http's HTTP/1.1 server would receive\"; " +
	"README.md: \"In process, the answer is what a client reads from the mock over a socket\""

// A sweep over every endpoint the mock lists (Handler.Endpoints), with its
// own method and with HEAD, plus unknown hosts and paths and the admin
// prefix: in process and over the socket.
func TestAttack22SweepEndpoints(t *testing.T) {
	// held: every endpoint of Handler.Endpoints (with {user}=me, {}=x, xuid({n})), by its method and by HEAD, unknown host/path, /_fgrl/: same status, headers, length, TE, body, journal
	var reqs []attack22Req
	for _, e := range NewHandler().Endpoints() {
		path := strings.NewReplacer("{user}", "me", "xuid({n})", "xuid("+attack22XUID+")", "{}", "x").Replace(e.Path)
		for _, host := range e.Hosts {
			u := "https://" + host + path
			body := ""
			if e.Method == "POST" || e.Method == "PUT" {
				body = `{}`
			}
			reqs = append(reqs, attack22Req{method: e.Method, url: u, body: body})
			if e.Method != "HEAD" {
				reqs = append(reqs, attack22Req{method: "HEAD", url: u})
			}
		}
	}
	reqs = append(reqs,
		attack22Req{method: "GET", url: "https://nohost.example.com/x"},
		attack22Req{method: "HEAD", url: "https://nohost.example.com/x"},
		attack22Req{method: "GET", url: "https://profile.xboxlive.com/nothing/here"},
		attack22Req{method: "GET", url: "https://profile.xboxlive.com/_fgrl/api/ready"},
		attack22Req{method: "DELETE", url: "https://profile.xboxlive.com/users/me/profile/settings"},
	)
	for _, r := range reqs {
		t.Run(r.method+" "+r.url, func(t *testing.T) {
			if _, _, d := attack22Compare(t, nil, r); d != "" {
				t.Errorf("%s %s differs in process from the socket (-socket +in-process):\n%s\n%s", r.method, r.url, d, attack22Promise)
			}
		})
	}
}

type attack22Case struct {
	name string
	prep func(h *Handler)
	reqs []attack22Req
}

func attack22Run(t *testing.T, cases []attack22Case, also ...string) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, d := attack22Compare(t, c.prep, c.reqs...); d != "" {
				t.Errorf("%s: the in-process answer differs from the socket's (-socket +in-process):\n%s\n%s%s", c.name, d, attack22Promise, strings.Join(also, ""))
			}
		})
	}
}

func attack22N(r attack22Req, n int) []attack22Req {
	out := make([]attack22Req, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// held: scripted answers with and without bodies, JSON and text, over and at
// the 2048-byte bound, 204/304/205/302 with and without a body, a scripted
// Date, Content-Type, Content-Encoding, Retry-After, each by GET and HEAD.
func TestAttack22ScriptedOrdinary(t *testing.T) {
	get, head := attack22Req{method: "GET", url: attack22Presence}, attack22Req{method: "HEAD", url: attack22Presence}
	big := `"` + strings.Repeat("a", 3000) + `"`
	at := `"` + strings.Repeat("<", 2048) + `"`
	answers := map[string]ScriptAnswer{
		"no body":          {},
		"json":             {Body: []byte(`{"a":1}`)},
		"text":             {Body: []byte(`"<html>hi"`)},
		"big text":         {Body: []byte(big)},
		"2048 text":        {Body: []byte(at)},
		"2049 text":        {Body: []byte(at[:1] + "x" + at[1:])},
		"big json":         {Body: []byte(`[` + strings.Repeat(`1,`, 2000) + `1]`)},
		"204 body":         {Status: 204, Body: []byte(`{"a":1}`)},
		"204":              {Status: 204},
		"304 typed":        {Status: 304, Headers: map[string]string{"Content-Type": "text/plain", "Etag": `"x"`}},
		"205 body":         {Status: 205, Body: []byte(`"x"`)},
		"302":              {Status: 302, Headers: map[string]string{"Location": "/elsewhere"}},
		"599":              {Status: 599, Body: []byte(`"x"`)},
		"scripted date":    {Headers: map[string]string{"Date": "yesterday"}, Body: []byte(`"x"`)},
		"empty date":       {Headers: map[string]string{"Date": ""}, Body: []byte(`"x"`)},
		"empty type":       {Headers: map[string]string{"Content-Type": ""}, Body: []byte(`"<html>"`)},
		"content-encoding": {Headers: map[string]string{"Content-Encoding": "br"}, Body: []byte(`"<html>"`)},
		"empty encoding":   {Headers: map[string]string{"Content-Encoding": ""}, Body: []byte(`"<html>"`)},
		"503 retry":        {Status: 503, Headers: map[string]string{"Retry-After": "5"}},
	}
	var cases []attack22Case
	for name, a := range answers {
		cases = append(cases, attack22Case{name + " GET", attack22Script(t, a), []attack22Req{get}}, attack22Case{name + " HEAD", attack22Script(t, a), []attack22Req{head}})
	}
	attack22Run(t, cases)
}

// A script could answer with any status from 100 to 599. net/http's
// server sends a 1xx ahead of the final answer, which its client skips: a
// client over the socket read the 200 (and the body) that followed, and
// in process the 1xx was the answer. Break, fixed: a script's status is
// 200 to 599 (SetScript, LoadScript and xblcall mock --script refuse a
// 1xx, saying why).
func TestAttack22Scripted1xx(t *testing.T) {
	for _, code := range []int{100, 101, 102, 103, 199} {
		for name, a := range map[string]ScriptAnswer{
			"with body": {Status: code, Body: []byte(`{"a":1}`)},
			"no body":   {Status: code},
		} {
			err := NewHandler().SetScript(Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "presence.xboxlive.com"}, Answers: []ScriptAnswer{a}}}})
			if err == nil || !strings.Contains(err.Error(), "200 to 599") {
				t.Errorf("a scripted %d %s: SetScript returned %v; want it refused (a 1xx is never a client's answer)", code, name, err)
			}
		}
	}
	for _, code := range []int{200, 599} { // the bounds still taken
		if err := NewHandler().SetScript(Script{Rules: []ScriptRule{{Answers: []ScriptAnswer{{Status: code}}}}}); err != nil {
			t.Errorf("a scripted %d: %v", code, err)
		}
	}
}

// A script could set any header, Content-Length and Transfer-Encoding
// among them. net/http's server sends no more body than a Content-Length
// it was given, drops an invalid one (and computes its own), closes a
// connection whose body fell short, and a client never sees a
// Transfer-Encoding header: in process the answer trusted the script's.
// Break, fixed: the headers that frame the body or keep the connection
// are the server's, and a script that sets one is refused (a body cut
// short is the fault "truncate").
func TestAttack22ScriptedFramingHeaders(t *testing.T) {
	for name, h := range map[string]map[string]string{
		"Content-Length shorter than body": {"Content-Length": "4"},
		"Content-Length longer than body":  {"Content-Length": "100"},
		"Content-Length invalid":           {"Content-Length": "abc"},
		"Content-Length negative":          {"Content-Length": "-1"},
		"Transfer-Encoding chunked":        {"Transfer-Encoding": "chunked"},
		"Transfer-Encoding identity":       {"Transfer-Encoding": "identity"},
		"Transfer-Encoding empty":          {"Transfer-Encoding": ""},
		"transfer-encoding lower case":     {"transfer-encoding": "chunked"},
		"Connection close":                 {"Connection": "close"},
		"Trailer":                          {"Trailer": "X-T"},
		"Upgrade":                          {"Upgrade": "websocket"},
	} {
		a := ScriptAnswer{Headers: h, Body: []byte(`"0123456789"`)}
		err := NewHandler().SetScript(Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "presence.xboxlive.com"}, Answers: []ScriptAnswer{a}}}})
		if err == nil || !strings.Contains(err.Error(), "server frames the body") {
			t.Errorf("%s: SetScript returned %v; want it refused (the server frames the body)", name, err)
		}
	}
}

// A truncation (Faults.TruncateRate, or a scripted Fault "truncate") cuts
// the body short and closes the connection. When there is no body to cut
// (a HEAD, a 204 or 304, an empty body), the client over the socket has
// read a whole answer before the close: no read error. In process the
// body's read ends in io.ErrUnexpectedEOF.
func TestAttack22TruncateWithoutBody(t *testing.T) {
	get, head := attack22Req{method: "GET", url: attack22Presence}, attack22Req{method: "HEAD", url: attack22Presence}
	trunc := func(a ScriptAnswer) func(*Handler) { a.Fault = "truncate"; return attack22Script(t, a) }
	faults := attack22Faults(t, Faults{TruncateRate: 1, Seed: 1})
	attack22Run(t, []attack22Case{
		{"scripted truncate, HEAD", trunc(ScriptAnswer{Body: []byte(`{"a":"0123456789"}`)}), []attack22Req{head}},
		{"scripted truncate 204", trunc(ScriptAnswer{Status: 204, Body: []byte(`{"a":"0123456789"}`)}), []attack22Req{get}},
		{"scripted truncate 304", trunc(ScriptAnswer{Status: 304}), []attack22Req{get}},
		{"scripted truncate, no body", trunc(ScriptAnswer{Status: 503}), []attack22Req{get}},
		{"truncation fault, HEAD", faults, []attack22Req{{method: "HEAD", url: "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}}},
	}, "; RoundTrip's godoc: \"no body for a HEAD\"; aborted's doc: \"a response whose body ends early when the headers were [sent]\" — there is no body to end early")
}

// held: truncation of a body (scripted, with a body over 2048 bytes, and the
// fault on a profile answer): the same headers, the same half body, a read error on both sides.
func TestAttack22TruncateWithBody(t *testing.T) {
	get := attack22Req{method: "GET", url: attack22Presence}
	trunc := func(a ScriptAnswer) func(*Handler) { a.Fault = "truncate"; return attack22Script(t, a) }
	faults := attack22Faults(t, Faults{TruncateRate: 1, Seed: 1})
	attack22Run(t, []attack22Case{
		{"scripted truncate", trunc(ScriptAnswer{Body: []byte(`{"a":"0123456789"}`)}), []attack22Req{get}},
		{"scripted truncate big", trunc(ScriptAnswer{Body: []byte(`"` + strings.Repeat("b", 5000) + `"`)}), []attack22Req{get}},
		{"truncation fault", faults, []attack22Req{{method: "GET", url: "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}}},
		{"truncation fault, friends", faults, []attack22Req{{method: "GET", url: "https://social.xboxlive.com/users/me/people"}}},
	})
}

// held: 429 past the burst and past the sustain window, with each Retry-After
// mode; injected 500/503 with each mode; service faults (429, 500, 503,
// reset); resets; a big profile batch and people hub batch (chunked);
// sign-in form and JSON posts: the same answer in process and over a socket.
func TestAttack22FaultsAndServices(t *testing.T) {
	profile := attack22Req{method: "GET", url: "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}
	faults := func(f Faults) func(*Handler) { return attack22Faults(t, f) }
	var cases []attack22Case
	for mode := RetryAfterSeconds; mode <= RetryAfterGarbage; mode++ {
		cases = append(cases,
			attack22Case{"burst 429 " + mode.String(), faults(Faults{RetryAfter: mode}), attack22N(profile, 40)},
			attack22Case{"injected 500 " + mode.String(), faults(Faults{ErrorRate: 1, Seed: 1, RetryAfter: mode}), attack22N(profile, 1)},
			attack22Case{"injected 503 " + mode.String(), faults(Faults{ErrorRate: 1, Seed: 1, RetryAfter: mode}), attack22N(profile, 2)},
			attack22Case{"service 503 " + mode.String(), faults(Faults{RetryAfter: mode, Services: []ServiceFault{{Service: "profile", Status: 503, RetryAfter: throttle.Duration(3 * time.Second)}}}), attack22N(profile, 1)},
		)
	}
	var ids []string
	for i := range 300 {
		ids = append(ids, fmt.Sprintf(`"%d"`, 2535405290689422+i))
	}
	cases = append(cases,
		attack22Case{"sustain 429", nil, attack22N(attack22Req{method: "GET", url: "https://presence.xboxlive.com/users/me"}, 120)},
		attack22Case{"service 429", faults(Faults{Services: []ServiceFault{{Service: "profile", Status: 429}}}), attack22N(profile, 1)},
		attack22Case{"service 500", faults(Faults{Services: []ServiceFault{{Service: "profile", Status: 500}}}), attack22N(profile, 1)},
		attack22Case{"service reset", faults(Faults{Services: []ServiceFault{{Service: "profile", Reset: true}}}), attack22N(profile, 1)},
		attack22Case{"reset", faults(Faults{ResetRate: 1, Seed: 1}), attack22N(profile, 1)},
		attack22Case{"scripted reset", attack22Script(t, ScriptAnswer{Fault: "reset"}), []attack22Req{{method: "GET", url: attack22Presence}}},
		attack22Case{"profile batch of 300", nil, []attack22Req{{method: "POST", url: "https://profile.xboxlive.com/users/batch/profile/settings",
			body: `{"userIds":[` + strings.Join(ids, ",") + `],"settings":["Gamertag","Gamerscore","GameDisplayPicRaw"]}`, header: map[string]string{"x-xbl-contract-version": "2"}}}},
		attack22Case{"people hub batch of 100", nil, []attack22Req{{method: "POST", url: "https://peoplehub.xboxlive.com/users/me/people/batch/decoration/detail",
			body: `{"xuids":[` + strings.Join(ids[:100], ",") + `]}`, header: map[string]string{"x-xbl-contract-version": "5"}}}},
		attack22Case{"friends", nil, []attack22Req{{method: "GET", url: "https://social.xboxlive.com/users/me/people"}}},
		attack22Case{"people hub social", nil, []attack22Req{{method: "GET", url: "https://peoplehub.xboxlive.com/users/me/people/social/decoration/preferredcolor,detail,multiplayersummary,presencedetail", header: map[string]string{"x-xbl-contract-version": "5"}}}},
		attack22Case{"titlehub", nil, []attack22Req{{method: "GET", url: "https://titlehub.xboxlive.com/users/me/titles/titlehistory/decoration/achievement", header: map[string]string{"x-xbl-contract-version": "2"}}}},
		attack22Case{"achievements", nil, []attack22Req{{method: "GET", url: "https://achievements.xboxlive.com/users/xuid(" + attack22XUID + ")/achievements", header: map[string]string{"x-xbl-contract-version": "2"}}}},
		attack22Case{"login.live.com refresh form", nil, []attack22Req{{method: "POST", url: "https://login.live.com/oauth20_token.srf", body: "grant_type=refresh_token&refresh_token=secret&client_id=0000000048093EE3&scope=service::user.auth.xboxlive.com::MBI_SSL",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}}},
		attack22Case{"login.live.com device code", nil, []attack22Req{{method: "POST", url: "https://login.live.com/oauth20_connect.srf", body: "client_id=0000000048093EE3&scope=service::user.auth.xboxlive.com::MBI_SSL&response_type=device_code",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}}},
		attack22Case{"login.live.com GET", nil, []attack22Req{{method: "GET", url: "https://login.live.com/oauth20_authorize.srf?client_id=0000000048093EE3&response_type=code&redirect_uri=https://login.live.com/oauth20_desktop.srf&scope=service::user.auth.xboxlive.com::MBI_SSL"}}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, so, d := attack22Compare(t, c.prep, c.reqs...)
			if strings.Contains(c.name, "login") && in.Header != nil && so.Header != nil {
				in.Header.Del("Location") // a code of its own
				so.Header.Del("Location")
				d = cmp.Diff(so, in)
			}
			if d != "" && in.Body != so.Body && len(in.Body) == len(so.Body) && strings.Contains(c.name, "login") {
				in.Body, so.Body = "", "" // tokens and times of their own
				d = cmp.Diff(so, in)
			}
			if d != "" {
				t.Errorf("%s: the in-process answer differs from the socket's (-socket +in-process):\n%s\n%s", c.name, d, attack22Promise)
			}
		})
	}
}

// A script's Headers are sent as a server sends a handler's: net/http's
// server drops a header whose name is not a token and turns a value's CR
// and LF into spaces, and its client trims a value's surrounding blanks.
func TestAttack22ScriptedHeaderText(t *testing.T) {
	get := attack22Req{method: "GET", url: attack22Presence}
	var cases []attack22Case
	for name, h := range map[string]map[string]string{
		"name with a space": {"Bad Name": "v"},
		"name with a colon": {"X-A:b": "v"},
		"value with CRLF":   {"X-A": "a\r\nX-Injected: 1"},
		"value with blanks": {"X-A": "  padded\t"},
		"value with NUL":    {"X-A": "a\x00b"},
		"lower-case name":   {"x-lower": "v"},
		"Connection close":  {"Connection": "close"},
		"Trailer":           {"Trailer": "X-T"},
	} {
		a := ScriptAnswer{Headers: h, Body: []byte(`{"a":1}`)}
		if err := NewHandler().SetScript(Script{Rules: []ScriptRule{{Answers: []ScriptAnswer{a}}}}); err != nil {
			t.Logf("%s: refused by SetScript: %v", name, err)
			continue
		}
		cases = append(cases, attack22Case{name, attack22Script(t, a), []attack22Req{get}})
	}
	attack22Run(t, cases)
}

// held: a scripted hang, and a Latency longer than the caller's deadline,
// end with the caller's context in process (context.DeadlineExceeded) as
// over the socket, within the deadline's order, and the journal agrees.
func TestAttack22HangEndsWithContext(t *testing.T) {
	for _, a := range []ScriptAnswer{{Fault: "hang"}, {Latency: throttle.Duration(time.Minute), Body: []byte(`{}`)}} {
		for i := range 2 {
			h := NewHandler()
			attack22Script(t, a)(h)
			var rt http.RoundTripper = h
			if i == 1 {
				s := NewServer(h)
				defer s.Close()
				rt = s.Transport()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			req, _ := http.NewRequestWithContext(ctx, "GET", attack22Presence, nil)
			start := time.Now()
			resp, err := rt.RoundTrip(req)
			cancel()
			if resp != nil {
				resp.Body.Close()
			}
			if el := time.Since(start); err == nil || !errors.Is(err, context.DeadlineExceeded) || el > 5*time.Second {
				t.Errorf("%+v (socket %v): err %v after %v, want context.DeadlineExceeded soon after 200ms", a, i == 1, err, el)
			}
		}
	}
}

// held: concurrent RoundTrips of JSON, scripted, 429 and sniffed answers,
// each caller editing its response's headers in place and appending to
// them: no race under -race, no answer sees another's edits, the journal
// is untouched, and every Date parses.
func TestAttack22ConcurrentEditsStayOwn(t *testing.T) {
	h := NewHandler()
	if err := h.SetScript(Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "presence.xboxlive.com"},
		Answers: []ScriptAnswer{{Headers: map[string]string{"X-S": "s", "Retry-After": "4"}, Body: []byte(`"<html>"`)}, {Status: 503, Headers: map[string]string{"Retry-After": "4"}}}}}}); err != nil {
		t.Fatal(err)
	}
	urls := []string{attack22Presence, "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", "https://social.xboxlive.com/users/me/people", "https://nohost.example.com/"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				method := "GET"
				if i%5 == 4 {
					method = "HEAD"
				}
				req, _ := http.NewRequest(method, urls[(g+i)%len(urls)], nil)
				req.Header.Set("Authorization", Token(attack22XUID, attack22Title))
				req.Header.Set("x-xbl-contract-version", "3")
				resp, err := h.RoundTrip(req)
				if err != nil {
					mu.Lock()
					bad = append(bad, err.Error())
					mu.Unlock()
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				for k, v := range resp.Header {
					if k == "Date" {
						if _, err := http.ParseTime(v[0]); err != nil || len(v) != 1 || strings.Contains(v[0], "edited") {
							mu.Lock()
							bad = append(bad, fmt.Sprintf("Date %q", v))
							mu.Unlock()
						}
					}
					if len(v) > 1 || strings.Contains(strings.Join(v, ","), "edited") {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("%s: %q", k, v))
						mu.Unlock()
					}
					for j := range v {
						v[j] = "edited"
					}
					resp.Header[k] = append(v, "appended")
				}
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("answers saw other answers' edits, or errors: %q", bad[:min(len(bad), 10)])
	}
	for _, c := range h.Calls(CallFilter{}) {
		if strings.Contains(c.RetryAfter, "edited") || strings.Contains(c.RetryAfter, "appended") {
			t.Errorf("the journal's Retry-After %q took a caller's edit", c.RetryAfter)
		}
	}
}

// held: RoundTrip inside a testing/synctest bubble: a JSON answer, a 429
// and a scripted latency (which the bubble's clock runs through) answer,
// with a Date that parses.
func TestAttack22SynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHandler()
		attack22Script(t, ScriptAnswer{Latency: throttle.Duration(2 * time.Second), Body: []byte(`{"a":1}`)})(h)
		for _, u := range []string{attack22Presence, "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"} {
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("Authorization", Token(attack22XUID, attack22Title))
			req.Header.Set("x-xbl-contract-version", "3")
			resp, err := h.RoundTrip(req)
			if err != nil {
				t.Fatalf("%s in a bubble: %v", u, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if _, derr := http.ParseTime(resp.Header.Get("Date")); err != nil || derr != nil || resp.StatusCode != 200 || !bytes.HasPrefix(b, []byte("{")) {
				t.Errorf("%s in a bubble: %d %q Date %q (%v)", u, resp.StatusCode, b, resp.Header.Get("Date"), derr)
			}
		}
	})
}

// held: result() of hand-made answers that no handler of the mock writes
// but a Handler-wrapping user could: no panic for a Content-Length of
// junk, huge, "+1", a 1xx then a write, a flush then a status, a write
// after a HEAD, a status of 999.
func TestAttack22ResultNoPanic(t *testing.T) {
	for _, head := range []bool{false, true} {
		for _, f := range []func(a *answer){
			func(a *answer) { a.Header().Set("Content-Length", "zz"); a.Write([]byte("x")) },
			func(a *answer) { a.Header().Set("Content-Length", "99999999999999999999999"); a.Write([]byte("x")) },
			func(a *answer) { a.Header().Set("Content-Length", "+1"); a.Write([]byte("x")) },
			func(a *answer) { a.Header()["Content-Length"] = nil; a.Write([]byte("x")) },
			func(a *answer) { a.Header()["Content-Type"] = []string{}; a.Write([]byte("<html>")) },
			func(a *answer) { a.WriteHeader(103); a.Write([]byte("x")) },
			func(a *answer) { a.Flush(); a.WriteHeader(500); a.Write(bytes.Repeat([]byte("y"), 5000)) },
			func(a *answer) { a.WriteHeader(999) },
			func(a *answer) { a.Header()["Date"] = nil },
		} {
			a := &answer{header: make(http.Header), head: head}
			f(a)
			resp := a.result()
			io.ReadAll(resp.Body)
		}
	}
}
