package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The record of calls keeps no credential a request carries outside the
// places TestCallsHoldNoSecret covers: named in a query, after a '#', or
// in a service's body.

// exportsOf returns every export of h's record of calls: Calls as JSON,
// WriteHAR, and the admin API's calls and calls.har.
func exportsOf(t *testing.T, h *Handler) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	out["Calls"], _ = json.Marshal(h.Calls(CallFilter{}))
	var har bytes.Buffer
	if err := h.WriteHAR(&har, CallFilter{}); err != nil {
		t.Fatal(err)
	}
	out["WriteHAR"] = har.Bytes()
	srv := serveAll(t, h)
	for _, path := range []string{"/_fgrl/api/calls", "/_fgrl/api/calls.har"} {
		r, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		r.Body.Close()
		out[path] = b.Bytes()
	}
	return out
}

// noSecretIn fails t for each secret an export holds, as sent or
// percent-encoded.
func noSecretIn(t *testing.T, exports map[string][]byte, secrets ...string) {
	t.Helper()
	for name, b := range exports {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte(url.QueryEscape(s))) {
				t.Errorf("%s holds the secret %q", name, s)
			}
		}
	}
}

// serveRaw serves a request as net/http's server reads it from the wire,
// with a token the mock minted.
func serveRaw(t *testing.T, h *Handler, host, target string) {
	t.Helper()
	raw := "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: " + Token(xuid1, title1) + "\r\n\r\n"
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	h.ServeHTTP(httptest.NewRecorder(), req)
}

// TestRecordRedactsNamedCredentialsInQuery: at a service host the
// credentials the promise names (an Authorization, a Signature, an
// RpsTicket, a user token), sent as query parameters, are recorded and
// exported redacted, as every parameter xblauth names a credential is.
func TestRecordRedactsNamedCredentialsInQuery(t *testing.T) {
	h := NewHandler()
	serveRaw(t, h, "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag&Authorization=XBL3.0%20x%3D1%3Bauth-SECRET-1"+
		"&Signature=sig-SECRET-2&RpsTicket=t%3Drps-SECRET-3&UserToken=usertoken-SECRET-4")
	noSecretIn(t, exportsOf(t, h), "auth-SECRET-1", "sig-SECRET-2", "rps-SECRET-3", "usertoken-SECRET-4")
}

// TestRecordRedactsQueryAfterHash: net/http reads a request-target
// "/p#?access_token=X" as path "/p#" and query "access_token=X" (its
// ParseRequestURI assumes no fragment), so the service sees the token;
// the record reads the target as net/http does (and as a URL with a
// fragment), and keeps the token under neither reading.
func TestRecordRedactsQueryAfterHash(t *testing.T) {
	h := NewHandler()
	target := "/users/me/profile/settings#?access_token=frag-SECRET-1&settings=Gamertag"
	req, _ := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: profile.xboxlive.com\r\n\r\n")))
	if got := req.URL.Query().Get("access_token"); got != "frag-SECRET-1" {
		t.Fatalf("net/http reads access_token %q from %s", got, target)
	}
	serveRaw(t, h, "profile.xboxlive.com", target)
	noSecretIn(t, exportsOf(t, h), "frag-SECRET-1")
}

// TestRecordRedactsServiceBodies: a request body at an xboxlive.com host
// that is not a sign-in host (*.auth.xboxlive.com, sisu.xboxlive.com) is
// recorded with its credentials redacted and its data kept: the XSTS
// token an xCloud client posts to
// {offering}.gssv-play-prod.xboxlive.com/v2/login/user ({"token": ...,
// "offeringId": "xhome"}, as the public xCloud clients send it), or an
// access_token beside a profile batch's users, never reach Calls or
// calls.har, as the same names in a query do not. A test that scripts the
// login answer (bodyContains) makes the mock read, and so record, every
// body.
func TestRecordRedactsServiceBodies(t *testing.T) {
	s, err := ReadScript(strings.NewReader(`{"rules": [{"match": {"host": "xhome.gssv-play-prod.xboxlive.com",
		"path": "/v2/login/user", "bodyContains": "offeringId"}, "answers": [{"body": {"gsToken": "g", "durationInSeconds": 14400}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := Must(New(Config{Script: s}))
	do(t, h, "POST", "https://xhome.gssv-play-prod.xboxlive.com/v2/login/user", "",
		`{"token": "xsts-SECRET-1", "offeringId": "xhome"}`)
	do(t, h, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", Token(xuid1, title1),
		`{"userIds": ["2533274791234567"], "settings": ["Gamertag"], "access_token": "access-SECRET-2"}`)
	exports := exportsOf(t, h)
	noSecretIn(t, exports, "xsts-SECRET-1", "access-SECRET-2")
	for _, want := range []string{`\"offeringId\": \"xhome\"`, `\"settings\": [\"Gamertag\"]`, `\"token\": \"REDACTED\"`} {
		if !bytes.Contains(exports["WriteHAR"], []byte(want)) {
			t.Errorf("the HAR lacks %s: it should still say what was sent", want)
		}
	}
}
