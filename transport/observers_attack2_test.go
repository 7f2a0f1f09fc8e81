package transport_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// A second outside attack on what observers see (2026-12-04): the URL's
// credentials in every form RedactURL knows, in linear time; a 429 that
// echoes the URL; the log's error clipped. Each test failed before its fix.

// baseErrorTexts sends rawURL through a transport whose Base fails with an
// error quoting the URL as text, and returns every text an observer or the
// caller got: Event.Err, the log, the caller's error.
func baseErrorTexts(t *testing.T, rawURL string) []string {
	t.Helper()
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return nil, errors.New("dial " + req.URL.String() + ": connection refused")
	})
	var logs strings.Builder
	var errs []string
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: func(_ context.Context, e transport.Event) {
			if e.Err != nil {
				errs = append(errs, e.Err.Error())
			}
		}}
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
	if _, err := tr.RoundTrip(req); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) == 0 {
		t.Fatal("no error seen")
	}
	return append(errs, logs.String())
}

// TestObservedBaseErrorQuotesURLForms: the promise (RELIABILITY, "a Base whose
// error quotes the URL as text") is that the error is scrubbed of what
// xblauth.RedactURL takes out of the URL. RedactURL takes a credential out
// of a fragment (an OAuth implicit grant's #access_token=), out of a pair
// after a ';' and out of a value with a bad escape; URLSecrets read the
// query through url.Values only, which holds none of them, so each token
// reached Event.Err, the log and the caller.
func TestObservedBaseErrorQuotesURLForms(t *testing.T) {
	const secret = "QUERYSECRET0123456789"
	for name, u := range map[string]string{
		"fragment":   policyURL + "#access_token=" + secret,
		"semicolon":  policyURL + "&x=1;access_token=" + secret,
		"bad escape": policyURL + "&access_token=" + secret + "%zz",
		"upper case": policyURL + "&ACCESS_TOKEN=" + secret,
	} {
		t.Run(name, func(t *testing.T) {
			for _, s := range baseErrorTexts(t, u) {
				if strings.Contains(s, secret) {
					t.Errorf("the URL's token in %.400q", s)
				}
			}
		})
	}
}

// TestObservedBaseErrorKeepsItsCause: scrubbing the URL's credentials must not
// take out what is no credential. A query value that is no secret but is
// escaped otherwise than url.QueryEscape would (%20 for a space) was taken
// for a secret (neither form found in the redacted URL), so the words of
// the error it matched became [redacted]: the error said
// "dial ...: [redacted]" instead of "connection refused".
func TestObservedBaseErrorKeepsItsCause(t *testing.T) {
	for _, s := range baseErrorTexts(t, policyURL+"&access_token=QUERYSECRET0123456789&note=connection%20refused") {
		if !strings.Contains(s, "connection refused") || strings.Contains(s, "QUERYSECRET0123456789") {
			t.Errorf("the error's cause lost, or its token kept: %.400q", s)
		}
	}
}

// TestObservedQuerySecretsLinear: a URL of 9,000 query pairs (about 450 KB)
// and one access_token, and a Base that fails quoting it. URLSecrets
// searched the whole redacted URL once for each pair's value, 9,000
// searches of 400 KB each: quadratic in the URL. The failed call must cost
// about what reading the URL costs. With 20,000 pairs, past net/url's
// 10,000 (urlmaxqueryparams), url.Values held none of them and the token
// was not scrubbed at all. 9,000 pairs named like tokens must be scrubbed
// too, in bounded time.
//
// Time is judged against the same call with a quarter of the pairs, the
// quickest of three runs each, not against a clock: twice as long a URL
// may take at most ten times as long four times over (linear is four,
// quadratic sixteen), on a loaded machine too.
func TestObservedQuerySecretsLinear(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	for _, c := range []struct {
		name string
		n    int
	}{{"p", 9000}, {"p", 20000}, {"token", 9000}} {
		t.Run(fmt.Sprint(c.name, c.n), func(t *testing.T) {
			url := func(n int) string {
				var b strings.Builder
				b.WriteString(policyURL + "&access_token=QUERYSECRET0123456789")
				for i := range n {
					fmt.Fprintf(&b, "&%s%05d=v%032d", c.name, i, i)
				}
				return b.String()
			}
			call := func(u string, n int) func() {
				return func() {
					base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
						return nil, errors.New("dial " + req.URL.String() + ": connection refused")
					})
					tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1}
					req, err := http.NewRequest("GET", u, nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
					_, err = tr.RoundTrip(req)
					last := fmt.Sprintf("v%032d", n-1)
					if err == nil || strings.Contains(err.Error(), "QUERYSECRET0123456789") || c.name == "token" && strings.Contains(err.Error(), last) {
						t.Fatalf("the error %.200q", err)
					}
				}
			}
			// Alternately, the least of three (internal/scaletest).
			qu, wu := url(c.n/4), url(c.n)
			g := scaletest.Measure(3, call(qu, c.n/4), call(wu, c.n))
			t.Logf("a failed call of a %d-byte URL, then of a %d-byte one: %v", len(qu), len(wu), g)
			if g.Ratio() > 10 && g.Large() > 50*time.Millisecond {
				t.Errorf("one failed call of a %d-byte URL against one of %d bytes: %v", len(wu), len(qu), g)
			}
		})
	}
}

// TestObservedEchoedQueryToken: a 429 whose debugMessage and limitType echo the
// request's URL, access_token and all (a service or proxy that quotes
// what it refused). parse429 promises the service's text goes on "without
// the credentials the attempt sent"; it took out the headers' only, so the
// query's token reached Event.Body, ThrottleError.Body and fgrlotel's span
// attributes.
func TestObservedEchoedQueryToken(t *testing.T) {
	const secret = "QUERYSECRET0123456789"
	for name, u := range map[string]string{
		"query":     policyURL + "&access_token=" + secret,
		"semicolon": policyURL + ";access_token=" + secret,
	} {
		t.Run(name, func(t *testing.T) {
			base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				return answer429(req, `{"version":1,"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"`+secret+`","debugMessage":"refused `+req.URL.String()+`"}`), nil
			})
			var texts []string
			tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
				Observe: func(_ context.Context, e transport.Event) {
					if e.Body != nil {
						texts = append(texts, e.Body.LimitType, e.Body.DebugMessage)
					}
				}}
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			var te *transport.ThrottleError
			if errors.As(err, &te) && te.Body != nil {
				texts = append(texts, te.Body.LimitType, te.Body.DebugMessage, te.Error())
			}
			if len(texts) == 0 {
				t.Fatal("no body seen")
			}
			for _, s := range texts {
				if strings.Contains(s, secret[:12]) {
					t.Errorf("the query's token echoed: %.200q", s)
				}
			}
		})
	}
}

// TestObservedLogErrorClipped: a service (real loopback) answering with a status
// line whose code is 1 MB long. net/http's error quotes the code whole
// ("malformed HTTP status code \"999...\""), and the log's "error" field
// carried it whole: each record of the attempt 1 MB, where the method and
// host beside it are clipped (TestObservedLogFieldsClipped).
func TestObservedLogErrorClipped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				c.Write([]byte("HTTP/1.1 " + strings.Repeat("9", 1<<20) + "\x1b[2J OK\r\nContent-Length: 0\r\n\r\n"))
			}()
		}
	}()
	var logs strings.Builder
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &transport.Transport{Base: base, RetryWindow: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/x", nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error")
	}
	if logs.Len() == 0 {
		t.Fatal("nothing logged")
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if len(line) > 4000 {
			t.Errorf("a log record of %d bytes: %.200s...", len(line), line)
		}
	}
}
