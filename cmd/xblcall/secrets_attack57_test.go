package main

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

const attack57SecretToken = "XBL3.0 x=123;ATKSECRETTOKENVALUE171"

// attack57EchoRaw serves raw HTTP/1.1 on loopback: each answer echoes the
// request's Authorization in its status line's reason phrase (path /reason)
// or in a 503's Retry-After (path /retry-after), as a hostile or debugging
// service may; net/http's server cannot write either.
func attack57EchoRaw(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				auth := req.Header.Get("Authorization")
				switch req.URL.Path {
				case "/retry-after":
					c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: " + auth + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
				default:
					c.Write([]byte("HTTP/1.1 200 " + auth + "\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"))
				}
			}(c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// BREAK. Promise (xblcall help call): "Tokens are never printed, even with
// -v." (and RELIABILITY.md's Secrets: -v prints the Authorization
// REDACTED). The -v trace (tracer.RoundTrip) prints each answer's status
// line unscrubbed: a service that echoes the token in its reason phrase
// has it printed on standard error. (-i, printResponse, scrubs the same
// status line: TestAttack57CallIncludeStatusReasonHoldsNoToken.)
func TestAttack57CallVerboseStatusReasonHoldsNoToken(t *testing.T) {
	t.Parallel()
	base := attack57EchoRaw(t)
	code, out, errs := attack4Run("call", "-v", "--no-retry", "--token", attack57SecretToken, base+"/reason")
	if code != 0 {
		t.Errorf("exit %d, want 0 for a 200: %s", code, errs)
	}
	if strings.Contains(out+errs, "ATKSECRETTOKENVALUE171") {
		t.Errorf("call -v printed the token a status line echoed:\nstdout %q\nstderr %q", out, errs)
	}
}

// BREAK. Promise (xblcall help call): "Tokens are never printed, even with
// -v." The -v trace prints an answer's Retry-After as it came ("(Retry-After:
// %s)", 64 bytes): a 503 whose Retry-After echoes the token has its first
// bytes printed on standard error.
func TestAttack57CallVerboseRetryAfterHoldsNoToken(t *testing.T) {
	t.Parallel()
	base := attack57EchoRaw(t)
	code, out, errs := attack4Run("call", "-v", "--no-retry", "--token", attack57SecretToken, base+"/retry-after")
	if code != 1 {
		t.Errorf("exit %d, want 1 for a 503: %s", code, errs)
	}
	if strings.Contains(out+errs, "ATKSECRETTOKENVALUE171") {
		t.Errorf("call -v printed the token a Retry-After echoed:\nstdout %q\nstderr %q", out, errs)
	}
}

// held: "Tokens are never printed" (xblcall help call): with -i (no -v)
// the same status line echoing the token is printed scrubbed.
func TestAttack57CallIncludeStatusReasonHoldsNoToken(t *testing.T) {
	t.Parallel()
	base := attack57EchoRaw(t)
	code, out, errs := attack4Run("call", "-i", "--no-retry", "--token", attack57SecretToken, base+"/reason")
	if code != 0 || strings.Contains(out+errs, "ATKSECRETTOKENVALUE171") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

// held: README ("Against a mock ... nothing leaves the machine", "stores
// them ... never printed") and RELIABILITY.md (the record of calls holds
// no refresh or access token, device code, RpsTicket): after xblcall login
// --via a mock in another "process", a renewal of the Microsoft token
// (expired in the stored sign-in) and a call, the mock's calls.har holds
// neither the refresh token nor the access token stored, and login's own
// output neither.
func TestAttack57LoginRenewalLeavesNoSecretInMockHAR(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBLCALL_MOCK", "")
	h := mock.NewHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, out, errs := xblcall(t, "login", "--via", srv.URL)
	if code != 0 {
		t.Fatalf("login: exit %d %s %s", code, out, errs)
	}
	st, err := loadSignIn(testEnvOf(t))
	if err != nil || st.Microsoft == nil {
		t.Fatalf("stored: %v", err)
	}
	secrets := []string{st.Microsoft.RefreshToken, st.Microsoft.AccessToken}
	for _, s := range secrets {
		if s == "" || strings.Contains(out+errs, s) {
			t.Errorf("login printed a token (or stored none): %q", s)
		}
	}
	// Expire the stored Microsoft token: the next call renews it with the
	// refresh token.
	st.Microsoft.Expiry = st.Microsoft.Expiry.AddDate(-1, 0, 0)
	p, _ := signInPath(testEnvOf(t))
	if err := st.writeTo(p); err != nil {
		t.Fatal(err)
	}
	code, out, errs = xblcall(t, "call", "-v", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag")
	if code != 0 {
		t.Fatalf("call: exit %d %s", code, errs)
	}
	var b strings.Builder
	if err := h.WriteHAR(&b, mock.CallFilter{}); err != nil { // what /_fgrl/api/calls.har serves
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "refresh_token") {
		t.Fatalf("calls.har shows no renewal: %.300s", b.String())
	}
	for _, s := range secrets {
		if strings.Contains(b.String(), s) || strings.Contains(out+errs, s) {
			t.Errorf("a stored token is in calls.har or call's output: %.20s...", s)
		}
	}
}
