package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/xblauth"
)

const atkToken = "eyJhbGciOi+JIUzI1/NiJ9.abcDEF+ghi/JKL=="

// atkReqErr is a Base's error (a middleware's, a proxy library's) that
// keeps the request it failed to send, and whose text is clean.
type atkReqErr struct {
	Req *http.Request
	Err error
}

func (e *atkReqErr) Error() string { return "send failed: " + e.Err.Error() }
func (e *atkReqErr) Unwrap() error { return e.Err }

type atkBase func(*http.Request) (*http.Response, error)

func (f atkBase) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestScrubTransportRequestInError: an error RoundTrip returns must not
// lead, by errors.As, to the request as sent, whose Authorization and
// Signature headers hold the token and its signature.
func TestScrubTransportRequestInError(t *testing.T) {
	tr := &Transport{RetryWindow: -1, Base: atkBase(func(r *http.Request) (*http.Response, error) {
		return nil, &atkReqErr{Req: r, Err: errors.New("connection reset by peer")}
	})}
	for _, via := range []string{"RoundTrip", "http.Client"} {
		err := sendVia(t, tr, via, "XBL3.0 x=123456789;"+atkToken)
		var re *atkReqErr
		if errors.As(err, &re) && re.Req != nil && strings.Contains(re.Req.Header.Get("Authorization"), atkToken) {
			t.Errorf("%s: errors.As(*atkReqErr) gives the request with its token: Authorization %q", via, re.Req.Header.Get("Authorization"))
		}
	}
}

// atkNoNet is a Base's error that reports its HRESULT (no network) and
// quotes the request's Authorization header.
type atkNoNet struct{ s string }

func (e *atkNoNet) Error() string            { return e.s }
func (e *atkNoNet) HRESULT() hresult.HRESULT { return hresult.E_HC_NO_NETWORK }

// TestScrubTransportNoNetworkReporter: a Base's error that reports
// E_HC_NO_NETWORK (which is never retried) and quotes the token: the error
// RoundTrip returns keeps that HRESULT, and the call is sent once, as for
// the same error without the token. Scrubbing must not change a decision.
func TestScrubTransportNoNetworkReporter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, text := range []string{"network down", "network down; sent Authorization: XBL3.0 x=123456789;" + atkToken} {
			calls := 0
			tr := &Transport{DisableBudget: true, Base: atkBase(func(r *http.Request) (*http.Response, error) {
				calls++
				return nil, &atkNoNet{s: text}
			})}
			req, _ := http.NewRequestWithContext(context.Background(), "GET", profileURL, nil)
			req.Header.Set("Authorization", "XBL3.0 x=123456789;"+atkToken)
			_, err := tr.RoundTrip(req)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(fmt.Sprintf("%v %#v", err, err), atkToken) {
				t.Errorf("error tells the token: %v", err)
			}
			if got := hresult.Of(err); got != hresult.E_HC_NO_NETWORK {
				t.Errorf("%q: hresult.Of = %v, want E_HC_NO_NETWORK", text, got)
			}
			if calls != 1 {
				t.Errorf("%q: sent %d times, want once (no network is permanent)", text, calls)
			}
		}
	})
}

// TestScrubTransportDecisions: permanent and hresult.Of decide the same
// on an error and on it scrubbed of a token its text tells.
func TestScrubTransportDecisions(t *testing.T) {
	ss := xblauth.Secrets{}.HeaderSecrets(http.Header{"Authorization": {"XBL3.0 x=123456789;" + atkToken}})
	quote := "GET " + profileURL + " Authorization: XBL3.0 x=123456789;" + atkToken
	cases := map[string]error{
		"dns not found, name tells": &net.DNSError{Err: "no such host", Name: atkToken + ".example", IsNotFound: true},
		"wrapped reporter":          fmt.Errorf("%s: %w", quote, &atkNoNet{s: "down"}),
		"cert, outer tells":         fmt.Errorf("%s: %w", quote, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
		"hostname tells":            x509.HostnameError{Certificate: &x509.Certificate{DNSNames: []string{"a.example"}}, Host: atkToken},
		"deadline":                  fmt.Errorf("%s: %w", quote, context.DeadlineExceeded),
	}
	for name, err := range cases {
		s := ss.ScrubError(err)
		if strings.Contains(s.Error(), atkToken) {
			t.Errorf("%s: scrubbed text tells the token", name)
		}
		if a, b := permanent(err), permanent(s); a != b {
			t.Errorf("%s: permanent changed by scrubbing: %v, scrubbed %v", name, a, b)
		}
		if a, b := hresult.Of(err), hresult.Of(s); a != b {
			t.Errorf("%s: hresult.Of changed by scrubbing: %v, scrubbed %v", name, a, b)
		}
	}
}

// sendVia sends a GET of profileURL with auth through tr, by its RoundTrip
// or by an http.Client over it (via), and returns the error, which it
// requires.
func sendVia(t *testing.T, tr *Transport, via, auth string) error {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", profileURL, nil)
	req.Header.Set("Authorization", auth)
	var err error
	if via == "RoundTrip" {
		_, err = tr.RoundTrip(req)
	} else {
		_, err = (&http.Client{Transport: tr}).Do(req)
	}
	if err == nil {
		t.Fatalf("%s: no error", via)
	}
	return err
}
