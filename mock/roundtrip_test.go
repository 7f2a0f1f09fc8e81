package mock

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

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

// FuzzAnswerAsRecorder: RoundTrip's ResponseWriter answers any sequence of
// a handler's header changes, status, writes and flushes as
// httptest.ResponseRecorder, which it replaces, did: the same status,
// headers, body and length (the mock sends no trailers, so no Trailer
// header is set here).
func FuzzAnswerAsRecorder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4})
	f.Add([]byte{3, 7, 0, 2, 9, 1, 4, 0, 5})
	f.Add([]byte{2, 204, 3, 1, 0, 3})
	f.Add([]byte{0, 0, 1, 6, 3, 3, 2, 100, 3})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			return
		}
		names := []string{"Content-Type", "Retry-After", "Content-Length", "X-Xbl-Correlation-Id", "Transfer-Encoding", "Ratelimit"}
		values := []string{"application/json", "5", "3", "", "chunked", "text/html; charset=utf-8", "-1", "12", "+3", " 4 ", "99999999999999999999"}
		bodies := [][]byte{[]byte(`{"a":1}`), []byte("<html>"), {0, 1, 2}, nil, []byte("plain text")}
		a, rec := &answer{header: make(http.Header)}, httptest.NewRecorder()
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%6, int(ops[i+1])
			var wrote [2]string
			for k, w := range []http.ResponseWriter{a, rec} {
				switch op {
				case 0:
					w.Header().Set(names[arg%len(names)], values[arg/len(names)%len(values)])
				case 1:
					w.Header().Del(names[arg%len(names)])
				case 2:
					w.WriteHeader(100 + arg*4%900)
				case 3, 4:
					n, err := w.Write(bodies[arg%len(bodies)])
					wrote[k] = fmt.Sprint(n, err)
				case 5:
					w.(http.Flusher).Flush()
				}
			}
			if wrote[0] != wrote[1] {
				t.Fatalf("op %d: Write returned %s, the recorder %s", i/2, wrote[0], wrote[1])
			}
		}
		got, want := a.result(), rec.Result()
		gb, _ := io.ReadAll(got.Body)
		wb, _ := io.ReadAll(want.Body)
		if got.StatusCode != want.StatusCode || got.Status != want.Status || got.ContentLength != want.ContentLength || string(gb) != string(wb) {
			t.Fatalf("answer %d %q len %d body %q; recorder %d %q len %d body %q", got.StatusCode, got.Status, got.ContentLength, gb, want.StatusCode, want.Status, want.ContentLength, wb)
		}
		if d := cmp.Diff(want.Header, got.Header); d != "" {
			t.Fatalf("headers differ (-recorder +answer):\n%s", d)
		}
		if a.flushed != rec.Flushed {
			t.Fatalf("flushed %v, recorder %v", a.flushed, rec.Flushed)
		}
	})
}
