package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// pxAtk2Tokens returns user xuid's Authorization value and the secret
// part of it (the token after the ';').
func pxAtk2Tokens(xuid string) (auth, tok string) {
	auth = mock.Token(xuid, title)
	_, tok, _ = strings.Cut(auth, ";")
	return auth, tok
}

// pxAtk2Logged returns a logger writing text lines into the returned buffer.
func pxAtk2Logged() (*slog.Logger, *syncBuffer) {
	var b syncBuffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}

// pxAtk2Request sends text inside a fresh decrypted tunnel to
// profile.xboxlive.com and returns the answer and its body.
func pxAtk2Request(t *testing.T, f *fixture, text string) (*http.Response, string) {
	t.Helper()
	tc, br := pxAtkTunnel(t, f, "profile.xboxlive.com")
	defer tc.Close()
	io.WriteString(tc, text)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// errBodyReader yields some bytes, then an error whose text quotes what it
// was given (a service's stream reset that names the request's headers).
type errBodyReader struct {
	sent bool
	err  error
}

func (r *errBodyReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		return copy(p, "{\"partial\":"), nil
	}
	return 0, r.err
}
func (r *errBodyReader) Close() error { return nil }

// TestAttackAnswerBodyErrorQuotingTokenNotLogged: the service's answer breaks
// off part way with an error whose text quotes the call's Authorization
// and Signature (a stream reset naming the request). Promise (Config.Logger,
// package doc): "no token reaches its log, status or errors" and the log
// has "never a token nor the query".
func TestAttackAnswerBodyErrorQuotingTokenNotLogged(t *testing.T) {
	logger, logs := pxAtk2Logged()
	auth, tok := pxAtk2Tokens(xuid1)
	f := serve(t, func(c *Config) {
		withBase(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			err := fmt.Errorf("stream reset by the service for the request with Authorization %q Signature %q query %q",
				r.Header.Get("Authorization"), r.Header.Get("Signature"), r.URL.RawQuery)
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
				Body: &errBodyReader{err: err}, ContentLength: -1, Request: r}, nil
		}))(c)
		c.Logger = logger
		c.Transport.Logger = logger
	})
	resp, body := pxAtk2Request(t, f, "GET /users/me/profile/settings?settings=Gamertag&access_token=QUERY-SECRET HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"+
		"Authorization: "+auth+"\r\nSignature: SIGNATURE-SECRET\r\nx-xbl-contract-version: 3\r\nConnection: close\r\n\r\n")
	t.Logf("status %d, body %q", resp.StatusCode, body)
	for _, s := range []string{tok, "SIGNATURE-SECRET", "QUERY-SECRET"} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("the log holds the secret %q:\n%s", s, logs.String())
		}
		if strings.Contains(body, s) {
			t.Errorf("the answer's body holds the secret %q", s)
		}
	}
}

// TestAttackUpstreamErrorQuotingOddTokens: the service's error quotes the
// Authorization the application sent under a lower-case name, twice (two
// tokens), and a Signature: the 502 body and the log hold none of them.
// Promise: "no token reaches its log, status or errors".
func TestAttackUpstreamErrorQuotingOddTokens(t *testing.T) {
	logger, logs := pxAtk2Logged()
	auth1, tok1 := pxAtk2Tokens(xuid1)
	auth2, tok2 := pxAtk2Tokens(xuid2)
	f := serve(t, func(c *Config) {
		withBase(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("the service refused headers %v", r.Header)
		}))(c)
		c.Transport.RetryWindow = -1
		c.Logger = logger
		c.Transport.Logger = logger
	})
	resp, body := pxAtk2Request(t, f, "GET /users/me/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"+
		"authorization: "+auth1+"\r\nAUTHORIZATION: "+auth2+"\r\nsignature: SIGNATURE-SECRET\r\nx-xbl-contract-version: 3\r\nConnection: close\r\n\r\n")
	t.Logf("status %d, body %q", resp.StatusCode, body)
	for _, s := range []string{tok1, tok2, "SIGNATURE-SECRET"} {
		if strings.Contains(body, s) {
			t.Errorf("the %d answer's body holds the secret %q", resp.StatusCode, s)
		}
		if strings.Contains(logs.String(), s) {
			t.Errorf("the log holds the secret %q", s)
		}
	}
}

// TestAttackServiceAnswerHeadersQuotingToken: the service's 503 quotes
// the token in its headers and body; the proxy's log and status hold
// none of it (the application's own answer may).
func TestAttackServiceAnswerHeadersQuotingToken(t *testing.T) {
	logger, logs := pxAtk2Logged()
	auth, tok := pxAtk2Tokens(xuid1)
	f := serve(t, func(c *Config) {
		withBase(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"Www-Authenticate": {"XBL3.0 error=" + r.Header.Get("Authorization")}, "Retry-After": {"1"}}
			return &http.Response{StatusCode: 503, Header: h, Body: io.NopCloser(strings.NewReader("bad " + r.Header.Get("Authorization"))),
				ContentLength: -1, Request: r}, nil
		}))(c)
		c.Transport.RetryWindow = -1
		c.Logger = logger
		c.Transport.Logger = logger
	})
	resp, body := pxAtk2Request(t, f, "GET /users/me/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"+
		"Authorization: "+auth+"\r\nFgrl-No-Retry: true\r\nx-xbl-contract-version: 3\r\nConnection: close\r\n\r\n")
	t.Logf("status %d, body %q", resp.StatusCode, body)
	_, status := rawRequest(t, f.addr, "GET /_fgrl/api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if strings.Contains(logs.String(), tok) {
		t.Errorf("the log holds the token:\n%s", logs.String())
	}
	if strings.Contains(status, tok) {
		t.Errorf("the status holds the token")
	}
}
