package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// verifying is a base that checks each request's Signature against a
// proof key under a policy, as a service checks a call made with a token
// bound to that key, and answers the first failOnce attempts 503.
type verifying struct {
	base     http.RoundTripper
	pub      xblsign.ProofKey
	policy   xblsign.Policy
	failOnce bool

	mu    sync.Mutex
	errs  []error
	sigs  map[string]bool
	sends int
}

func (v *verifying) RoundTrip(req *http.Request) (*http.Response, error) {
	err := xblsign.Verify(req, v.pub, time.Now(), v.policy, time.Second)
	v.mu.Lock()
	v.errs = append(v.errs, err)
	v.sends++
	first := v.sends == 1
	if v.sigs[req.Header.Get("Signature")] {
		v.errs = append(v.errs, errors.New("signature sent twice"))
	}
	v.sigs[req.Header.Get("Signature")] = true
	v.mu.Unlock()
	if v.failOnce && first {
		return &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"3"}}, Body: http.NoBody, Request: req}, nil
	}
	return v.base.RoundTrip(req)
}

func TestCallsSignedWithTheTokensKey(t *testing.T) {
	const me, title = "2533274791234567", "1234567890"
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	zeroBody := xblsign.Policy{Version: 1, SupportedAlgorithms: []string{"ES256"}, MaxBodyBytes: 0}
	cases := []struct {
		name      string
		policies  map[string]SignaturePolicy
		verify    xblsign.Policy
		transport func(base http.RoundTripper) http.RoundTripper
		sends     int
	}{
		{"the fgrl transport signs the retry afresh", nil, xblsign.DefaultPolicy(),
			func(b http.RoundTripper) http.RoundTripper {
				return &transport.Transport{Base: b, TitleID: title, DisableBudget: true}
			}, 2},
		{"a host's own policy", map[string]SignaturePolicy{"profile.xboxlive.com": zeroBody}, zeroBody,
			func(b http.RoundTripper) http.RoundTripper {
				return &transport.Transport{Base: b, TitleID: title, DisableBudget: true}
			}, 2},
		{"another RoundTripper gets the request signed once", nil, xblsign.DefaultPolicy(),
			func(b http.RoundTripper) http.RoundTripper { return b }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := &verifying{base: mock.NewHandler(), pub: xblsign.ProofKeyOf(&key.PublicKey),
					policy: tc.verify, failOnce: tc.sends > 1, sigs: map[string]bool{}}
				c, err := New(Config{TitleID: title, Transport: tc.transport(v), SignaturePolicies: tc.policies,
					Tokens: TokenFunc(func(context.Context, string) (Token, error) {
						return Token{Authorization: mock.Token(me, title), Key: key, Signature: "ignored"}, nil
					})})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.As(me).GetProfiles(context.Background(), []string{me}, []string{"Gamertag"}); err != nil && tc.sends > 1 {
					t.Fatal(err)
				}
				if v.sends != tc.sends {
					t.Errorf("sent %d times, want %d", v.sends, tc.sends)
				}
				for i, err := range v.errs {
					if err != nil {
						t.Errorf("attempt %d: %v", i+1, err)
					}
				}
			})
		})
	}
}

func TestSignaturePoliciesChecked(t *testing.T) {
	_, err := New(Config{TitleID: "1", Tokens: StaticTokens{},
		SignaturePolicies: map[string]SignaturePolicy{"x": {Version: 1, SupportedAlgorithms: []string{"RS256"}}}})
	if !errors.Is(err, xblsign.ErrPolicy) {
		t.Errorf("New with an RS256-only policy: %v, want ErrPolicy", err)
	}
}
