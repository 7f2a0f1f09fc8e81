package mock

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// RoundTrip's server request shares the caller's headers and form: serving
// a request, whatever the mock does with it (a path it cleans, a sign-in
// form it reads, a 429, a script's answer), leaves the caller's request as
// it was, as a request sent over a socket is.
func TestRoundTripLeavesTheRequest(t *testing.T) {
	h := NewHandler()
	if err := h.SetScript(Script{Rules: []ScriptRule{{Match: ScriptMatch{Host: "presence.xboxlive.com"}, Answers: []ScriptAnswer{{Status: 503, Headers: map[string]string{"X-Scripted": "yes"}}}}}}); err != nil {
		t.Fatal(err)
	}
	auth := Token("2535405290689422", "1234567890")
	reqs := []struct{ method, url, body string }{
		{"GET", "https://profile.xboxlive.com//users//me/profile/settings?settings=Gamertag", ""},
		{"GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", ""},
		{"GET", "https://presence.xboxlive.com/users/me", ""},
		{"POST", "https://login.live.com/oauth20_token.srf", "grant_type=refresh_token&refresh_token=secret&client_id=x"},
		{"POST", "https://user.auth.xboxlive.com/user/authenticate", `{"Properties":{"RpsTicket":"d=x"}}`},
		{"GET", "https://social.xboxlive.com/nothing/here", ""},
	}
	for range 40 { // past the burst limit: 429s too
		reqs = append(reqs, reqs[1])
	}
	for _, r := range reqs {
		req, err := http.NewRequest(r.method, r.url, strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", auth)
		req.Header.Set("x-xbl-contract-version", "3")
		if r.method == "POST" && !strings.HasPrefix(r.body, "{") {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.Form = url.Values{"caller": {"own"}}
		header, u, host, form := req.Header.Clone(), *req.URL, req.Host, url.Values{"caller": {"own"}}
		resp, err := h.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, r.url, err)
		}
		resp.Body.Close()
		if d := cmp.Diff(header, req.Header); d != "" {
			t.Errorf("%s %s (%d): the caller's headers changed (-before +after):\n%s", r.method, r.url, resp.StatusCode, d)
		}
		if *req.URL != u {
			t.Errorf("%s %s (%d): the caller's URL changed to %s", r.method, r.url, resp.StatusCode, req.URL)
		}
		if d := cmp.Diff(form, req.Form); d != "" || req.PostForm != nil || req.Host != host {
			t.Errorf("%s %s (%d): the caller's form or host changed: %s, PostForm %#v, Host %q", r.method, r.url, resp.StatusCode, d, req.PostForm, req.Host)
		}
	}
}

// A client's request that carries a Form (net/http's client sends only the
// body) is answered by its body, as over a socket: the server's request
// parses its own form. The verification page reads its user code with
// ParseForm, which keeps a Form already there.
func TestRoundTripReadsTheBodyNotTheCallersForm(t *testing.T) {
	h := NewHandler()
	w := h.World()
	w.DeviceCodes = "page" // the code waits for the verification page
	if err := h.SetWorld(w); err != nil {
		t.Fatal(err)
	}
	post := func(url, body string, form url.Values) (int, string) {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Form = form
		resp, err := h.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post("https://login.live.com/oauth20_connect.srf", "client_id=0000000048093EE3&scope=service::user.auth.xboxlive.com::MBI_SSL&response_type=device_code", nil)
	var code struct {
		UserCode string `json:"user_code"`
	}
	if err := json.Unmarshal([]byte(body), &code); status != 200 || err != nil || code.UserCode == "" {
		t.Fatalf("device code: %d %s", status, body)
	}
	if status, body := post("https://login.live.com/oauth20_remoteconnect.srf", "otc="+code.UserCode, url.Values{"otc": {"WRONGCODE"}}); status != 200 {
		t.Errorf("the verification page answered %d to the body's code with the caller's Form beside it: %s", status, body)
	}
}

// FuzzAnswerAsServer: RoundTrip's ResponseWriter answers any sequence of
// a handler's header changes, status, writes and flushes as net/http's
// HTTP/1.1 server does, seen through net/http's client: the same status
// and status line, headers (a Date's presence and form, not its second),
// body, ContentLength and TransferEncoding, and the same result of each
// Write. The programs keep to what the mock's handlers do: final statuses,
// no Transfer-Encoding nor Content-Length of their own (the truncation
// fault sets one and aborts: TestAttack21RoundTripAsSocket), GET or HEAD.
func FuzzAnswerAsServer(f *testing.F) {
	f.Add(false, []byte{0, 1, 2, 3, 4})
	f.Add(false, []byte{3, 7, 0, 2, 9, 1, 4, 0, 5})
	f.Add(false, []byte{2, 2, 3, 1, 0, 3})
	f.Add(false, []byte{0, 0, 1, 6, 3, 3, 2, 100, 3})
	f.Add(false, []byte{3, 5})             // 1,500 bytes: a Content-Length
	f.Add(false, []byte{3, 5, 3, 7})       // 2,048 bytes: a Content-Length
	f.Add(false, []byte{3, 5, 3, 7, 3, 8}) // 2,049 bytes: chunked
	f.Add(false, []byte{3, 5, 3, 5})       // 1,500 then 1,500 bytes: chunked
	f.Add(false, []byte{3, 6})             // 3,000 bytes in one write
	f.Add(false, []byte{3, 1, 5, 0, 3, 0}) // a flush between writes
	f.Add(true, []byte{0, 0, 3, 0})
	f.Add(true, []byte{3, 6})
	f.Add(false, []byte{2, 9, 3, 0}) // a status with no reason phrase
	served := make(chan []string, 1) // the server's results of each Write, once its handler has returned
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ops, _ := hex.DecodeString(r.URL.Query().Get("ops"))
		served <- playAnswer(w, ops)
	}))
	defer srv.Close()
	client := &http.Transport{DisableCompression: true} // the answers' bodies as sent
	defer client.CloseIdleConnections()
	f.Fuzz(func(t *testing.T, head bool, ops []byte) {
		if len(ops) > 64 {
			return
		}
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		a := &answer{header: make(http.Header), head: head}
		wrote := playAnswer(a, ops)
		got := a.result()
		req, err := http.NewRequest(method, srv.URL+"/?ops="+hex.EncodeToString(ops), nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := client.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer want.Body.Close()
		gb, _ := io.ReadAll(got.Body)
		wb, err := io.ReadAll(want.Body)
		if err != nil {
			t.Fatal(err)
		}
		var sw []string
		select { // a flushed answer reaches the client before its handler returns
		case sw = <-served:
		case <-time.After(10 * time.Second):
			t.Fatal("the server's handler did not return")
		}
		if d := cmp.Diff(sw, wrote); d != "" {
			t.Fatalf("Write's results differ (-server +answer):\n%s", d)
		}
		if got.StatusCode != want.StatusCode || got.Status != want.Status || got.ContentLength != want.ContentLength || string(gb) != string(wb) ||
			!slices.Equal(got.TransferEncoding, want.TransferEncoding) {
			t.Fatalf("answer %d %q length %d %v body %q; server %d %q length %d %v body %q", got.StatusCode, got.Status, got.ContentLength, got.TransferEncoding, gb,
				want.StatusCode, want.Status, want.ContentLength, want.TransferEncoding, wb)
		}
		if gd, wd := got.Header["Date"], want.Header["Date"]; !slices.Equal(gd, wd) { // the server's own, of another second
			_, gerr := http.ParseTime(got.Header.Get("Date"))
			_, werr := http.ParseTime(want.Header.Get("Date"))
			if len(gd) != 1 || len(wd) != 1 || gerr != nil || werr != nil {
				t.Fatalf("Date %q, server %q", gd, wd)
			}
		}
		gh, wh := got.Header.Clone(), want.Header.Clone()
		delete(gh, "Date")
		delete(wh, "Date")
		if d := cmp.Diff(wh, gh); d != "" {
			t.Fatalf("headers differ (-server +answer):\n%s", d)
		}
	})
}

// playAnswer runs a handler's program of header changes, statuses, writes
// and flushes on w, and returns what each Write returned.
func playAnswer(w http.ResponseWriter, ops []byte) []string {
	names := []string{"Content-Type", "Retry-After", "X-Xbl-Correlation-Id", "Ratelimit", "Content-Encoding", "Date"}
	values := []string{"application/json", "5", "", "text/html; charset=utf-8", "br", "Sun, 06 Dec 2026 10:00:00 GMT"}
	statuses := []int{200, 201, 204, 304, 302, 400, 401, 403, 404, 429, 599, 500, 503}
	bodies := [][]byte{[]byte(`{"a":1}`), []byte("<html>"), {0, 1, 2}, nil, []byte("plain text"), bytes.Repeat([]byte("x"), 1500), bytes.Repeat([]byte("<y>"), 1000), bytes.Repeat([]byte("z"), 548), []byte("!")}
	var wrote []string
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%6, int(ops[i+1])
		switch op {
		case 0:
			w.Header().Set(names[arg%len(names)], values[arg/len(names)%len(values)])
		case 1:
			w.Header().Del(names[arg%len(names)])
		case 2:
			w.WriteHeader(statuses[arg%len(statuses)])
		case 3, 4:
			n, err := w.Write(bodies[arg%len(bodies)])
			wrote = append(wrote, fmt.Sprint(n, err))
		case 5:
			w.(http.Flusher).Flush()
		}
	}
	return wrote
}

// The values the in-process answer adds as a server would (Date,
// Content-Length, a sniffed Content-Type) are each answer's own: a caller
// that edits them in place changes no other answer.
func TestRoundTripAddedValuesAreTheAnswers(t *testing.T) {
	h := NewHandler()
	get := func() *http.Response {
		resp := attack21Get(t, h, attack21ProfileURL)
		resp.Body.Close()
		return resp
	}
	first := get()
	date, length := first.Header.Get("Date"), first.Header.Get("Content-Length")
	if _, err := http.ParseTime(date); err != nil || length == "" || first.ContentLength <= 0 || strconv.FormatInt(first.ContentLength, 10) != length {
		t.Fatalf("Date %q (%v), Content-Length %q, ContentLength %d: want a server's", date, err, length, first.ContentLength)
	}
	first.Header["Date"][0], first.Header["Content-Length"][0] = "edited", "edited"
	first.Header["Date"] = append(first.Header["Date"], "appended")
	second := get()
	if d, l := second.Header["Date"], second.Header["Content-Length"]; len(d) != 1 || d[0] == "edited" || len(l) != 1 || l[0] != length {
		t.Errorf("after the first caller's edits, the second answer's Date %q, Content-Length %q", d, l)
	}
	if d, l := first.Header["Date"], first.Header["Content-Length"]; d[0] != "edited" || l[0] != "edited" {
		t.Errorf("the second answer changed the first's values: Date %q, Content-Length %q", d, l)
	}
}
