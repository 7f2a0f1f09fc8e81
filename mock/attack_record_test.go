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

// Attacks on the mock's record of calls by an outside reviewer; each test
// fails on the code as it stands.

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

// TestAttackRecordKeepsNamedCredentialsInQuery: at a service host the
// record redacts only the query parameters secretParam names, so the
// credentials the promise names (an Authorization, a Signature, an
// RpsTicket, a user token), sent as query parameters, are recorded and
// exported whole.
func TestAttackRecordKeepsNamedCredentialsInQuery(t *testing.T) {
	h := NewHandler()
	serveRaw(t, h, "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag&Authorization=XBL3.0%20x%3D1%3Bauth-SECRET-1"+
		"&Signature=sig-SECRET-2&RpsTicket=t%3Drps-SECRET-3&UserToken=usertoken-SECRET-4")
	noSecretIn(t, exportsOf(t, h), "auth-SECRET-1", "sig-SECRET-2", "rps-SECRET-3", "usertoken-SECRET-4")
}

// TestAttackRecordKeepsQueryAfterHash: net/http reads a request-target
// "/p#?access_token=X" as path "/p#" and query "access_token=X" (its
// ParseRequestURI assumes no fragment), so the service sees the token;
// RedactParams reads the same text as a fragment whose one name is
// "?access_token", no secret, and the record keeps the token.
func TestAttackRecordKeepsQueryAfterHash(t *testing.T) {
	h := NewHandler()
	target := "/users/me/profile/settings#?access_token=frag-SECRET-1&settings=Gamertag"
	req, _ := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: profile.xboxlive.com\r\n\r\n")))
	if got := req.URL.Query().Get("access_token"); got != "frag-SECRET-1" {
		t.Fatalf("net/http reads access_token %q from %s", got, target)
	}
	serveRaw(t, h, "profile.xboxlive.com", target)
	noSecretIn(t, exportsOf(t, h), "frag-SECRET-1")
}

// TestAttackRecordKeepsBodySecretsOutsideSignIn: a request body at an
// xboxlive.com host that is not *.auth.xboxlive.com or sisu.xboxlive.com
// is recorded and exported verbatim, so the XSTS token an xCloud client
// posts to {offering}.gssv-play-prod.xboxlive.com/v2/login/user ({"token":
// ..., "offeringId": "xhome"}, as the public xCloud clients send it), or
// an OAuth form posted to any service host, reaches calls.har, although
// the same names in a query (token, access_token) are redacted on every
// host. A test that scripts the login answer (bodyContains) makes the
// mock read, and so record, every body.
func TestAttackRecordKeepsBodySecretsOutsideSignIn(t *testing.T) {
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
	noSecretIn(t, exportsOf(t, h), "xsts-SECRET-1", "access-SECRET-2")
}
