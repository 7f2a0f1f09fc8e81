package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCheckVerdictHoldsNoAdminToken: a server at --mock that echoes
// the request's Authorization inside a well-formed verdict (200 or 422)
// gets no admin token printed, with or without --json, raw or as JSON
// escapes it. Before: the error path redacted it, but a verdict's
// failures and --json's raw answer were printed as they came.
func TestCheckVerdictHoldsNoAdminToken(t *testing.T) {
	t.Parallel()
	const secret = "s3cret<&>TOKEN"
	for _, status := range []int{200, 422} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			auth := r.Header.Get("Authorization")
			v := map[string]any{"ok": status == 200, "failures": []string{}, "echo": auth}
			if status != 200 {
				v["failures"] = []string{"seen " + auth}
			}
			b, _ := json.Marshal(v)
			w.WriteHeader(status)
			w.Write(b)
		}))
		for _, asJSON := range [][]string{nil, {"--json"}} {
			code, out, errs := xblcall(t, append([]string{"check", "--mock", srv.URL, "--admin-token", secret, "--no-429"}, asJSON...)...)
			if strings.Contains(out+errs, "s3cret") || strings.Contains(out+errs, "TOKEN") {
				t.Errorf("%d %v: exit %d, stdout %q, stderr %q: the admin token printed", status, asJSON, code, out, errs)
			}
		}
		srv.Close()
	}
}

// TestCheckCaseFoldedVerdictNoPass: an answer whose "ok" is false
// beside an "OK" (or "oK") that is true is no pass: Go's decoder matches
// keys without case and takes the last, jq and others read "ok" itself.
// Before: exit 0, printing ok, for {"ok":false,"failures":["a 429"],"OK":true,"Failures":[]}.
func TestCheckCaseFoldedVerdictNoPass(t *testing.T) {
	t.Parallel()
	body := `{"ok":false,"failures":["a 429"],"OK":true,"Failures":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	for _, asJSON := range [][]string{nil, {"--json"}} {
		if code, out, errs := xblcall(t, append([]string{"check", "--mock", srv.URL, "--no-429"}, asJSON...)...); code != 1 {
			t.Errorf("200 %s %v: exit %d, stdout %q, stderr %q; want exit 1", body, asJSON, code, out, clip(errs))
		}
	}
}

// TestCheckJSONSaysNoPassOnDoubt: check --json never prints an
// "ok": true that check itself does not take as a pass (a script reads the
// JSON's ok, not only the exit code). Before: a 200 {"ok":true} with no
// failures list, or with failures, or "ok":true beside "OK":false (Go reads
// the last, jq the first) was printed as it came, reading as a pass.
func TestCheckJSONSaysNoPassOnDoubt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int
		body   string
	}{
		{200, `{"ok":true}`},
		{200, `{"ok":true,"failures":["a 429"]}`},
		{422, `{"ok":true,"failures":[]}`},
		{200, `{"ok":true,"failures":[],"OK":false}`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		code, out, errs := xblcall(t, "check", "--mock", srv.URL, "--no-429", "--json")
		var first struct {
			OK *bool `json:"ok"`
		}
		// the first "ok" key, as jq and most readers other than Go take it
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(out), &m)
		if raw, ok := m["ok"]; ok {
			_ = json.Unmarshal(raw, &first.OK)
		}
		if code != 1 || first.OK != nil && *first.OK || strings.Contains(strings.ReplaceAll(out, " ", ""), `"ok":true`) {
			t.Errorf("%d %s: exit %d, stdout %q, stderr %q; want exit 1 and no JSON whose ok is true", c.status, c.body, code, out, clip(errs))
		}
		srv.Close()
	}
}

// TestCheckHoldsNoQueryToken: the admin token given in --mock's query
// (?token=, which the admin endpoints take as they take a Bearer token) is
// never printed, though a server at --mock echoes the request's URL in an
// error or a verdict.
func TestCheckHoldsNoQueryToken(t *testing.T) {
	t.Parallel()
	for _, status := range []int{401, 200, 422} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			v := map[string]any{"ok": status == 200, "failures": []string{"at " + r.URL.String()}, "error": r.URL.String()}
			if status == 200 {
				v["failures"] = []string{}
			}
			b, _ := json.Marshal(v)
			w.WriteHeader(status)
			w.Write(b)
		}))
		for _, asJSON := range [][]string{nil, {"--json"}} {
			code, out, errs := xblcall(t, append([]string{"check", "--mock", srv.URL + "/?token=qs3cretTOKEN", "--no-429"}, asJSON...)...)
			if strings.Contains(out+errs, "qs3cret") {
				t.Errorf("%d %v: exit %d, stdout %q, stderr %q: the query's admin token printed", status, asJSON, code, out, errs)
			}
		}
		srv.Close()
	}
}

// TestProxyStatusHoldsNoAccessToken: proxy --status never prints the
// access token, though a server at --addr echoes the request's
// Authorization in its refusal, raw or JSON-escaped (as check's error does
// not, TestCheckErrorHoldsNoAdminToken). Before: "the proxy at ... answered
// 401: {"auth":"Bearer ps3cret..."}".
func TestProxyStatusHoldsNoAccessToken(t *testing.T) {
	t.Parallel()
	const secret = "ps3cret<&>TOKEN"
	for _, escaped := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			if escaped {
				b, _ := json.Marshal(map[string]string{"auth": r.Header.Get("Authorization")})
				w.Write(b)
			} else {
				io.WriteString(w, "auth: "+r.Header.Get("Authorization"))
			}
		}))
		addr := strings.TrimPrefix(srv.URL, "http://")
		code, out, errs := xblcall(t, "proxy", "--status", "--addr", addr, "--access-token", secret)
		if code == 0 || strings.Contains(out+errs, "ps3cret") || strings.Contains(out+errs, "TOKEN") {
			t.Errorf("escaped %v: exit %d, stdout %q, stderr %q: want a failure and no access token", escaped, code, out, errs)
		}
		srv.Close()
	}
}
