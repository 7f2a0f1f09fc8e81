package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// The service sign-in these tests drive is the one Microsoft's GDK
// documentation describes ("Title service calls to Xbox services"): a
// Business Partner Certificate and a proof key get an S-token from XSAS
// (two weeks), XSTS exchanges it for service-auth and delegated X-tokens,
// and every call is signed with the proof key.

// partnerTLS is what a TLS handshake with a partner certificate leaves on
// the mock's side, for the in-process mock (no sockets, so that it runs in
// a synctest bubble): it counts the sign-in requests by host, and answers
// fail of them 503.
type partnerTLS struct {
	h    *mock.Handler
	conn *tls.ConnectionState

	mu    sync.Mutex
	hosts map[string]int
	fail  bool
}

func (p *partnerTLS) RoundTrip(req *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.hosts[req.URL.Host]++
	fail := p.fail
	p.mu.Unlock()
	if fail {
		return &http.Response{StatusCode: 503, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	}
	r := req.Clone(req.Context())
	r.TLS = p.conn
	return p.h.RoundTrip(r)
}

func (p *partnerTLS) count(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hosts[host]
}

// newPartner issues a partner certificate valid over the bubble's years
// and returns it with the mock side of its handshake.
func newPartner(t *testing.T, h *mock.Handler) (tls.Certificate, *partnerTLS) {
	t.Helper()
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	certPEM, keyPEM, err := ca.IssuePartner(tlsca.Partner{Name: "game-backend", NotBefore: now.Add(-time.Hour), NotAfter: now.Add(tlsca.PartnerLife)})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	return pair, &partnerTLS{h: h, hosts: map[string]int{},
		conn: &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}, VerifiedChains: [][]*x509.Certificate{{leaf, ca.Cert}}}}
}

// delegatingService returns a service signed in with a partner
// certificate of h's CA (its sign-in requests counted by p) and acting
// for a user signed in at h, whose token for the service's relying party
// is ux.
func delegatingService(t *testing.T, h *mock.Handler) (*ServiceSignIn, *partnerTLS, XboxToken) {
	t.Helper()
	cert, p := newPartner(t, h)
	user := signInAt(t, h)
	user.RelyingParty = mock.MockServiceRelyingParty
	ux, err := user.XboxToken(context.Background())
	if err != nil || ux.DelegationToken == "" {
		t.Fatalf("the user's token for the service's relying party: %+v, %v; want a DelegationToken", ux, err)
	}
	s := &ServiceSignIn{Certificate: cert, HTTPClient: &http.Client{Transport: p}}
	if err := s.SetDelegation(ux.XUID, ux.DelegationToken); err != nil {
		t.Fatal(err)
	}
	return s, p, ux
}

// TestServiceSignInRenewsAcrossExpiry: a backend acts for a user and as
// itself for twenty days of virtual time; its S-token (two weeks) and
// X-tokens (eight hours) are renewed before they expire, and no call is
// refused.
func TestServiceSignInRenewsAcrossExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := mock.NewHandler()
		s, p, ux := delegatingService(t, h)
		c, err := New(Config{TitleID: "1234567890", Tokens: s, Transport: &transport.Transport{Base: h, TitleID: "1234567890"}})
		if err != nil {
			t.Fatal(err)
		}
		ref := SessionRef{SCID: mock.SCID("1234567890"), Template: "lobby", Name: "match-1"}
		for hour := 0; hour < 20*24; hour++ {
			if _, err := c.As(ux.XUID).GetProfiles(ctx, []string{ux.XUID}, []string{"Gamertag"}); err != nil {
				t.Fatalf("hour %d: a delegated call: %v", hour, err)
			}
			if _, err := c.As("").GetSession(ctx, ref); err != nil && !isStatus(err, 404) {
				t.Fatalf("hour %d: a service-auth call: %v", hour, err)
			}
			time.Sleep(time.Hour)
		}
		t.Logf("sign-in requests: %d XSAS, %d XSTS; calls: %d", p.count("service.auth.xboxlive.com"), p.count("xsts.auth.xboxlive.com"), len(h.Calls(mock.CallFilter{})))
		// Twenty days: the S-token at the start and once renewed; each
		// X-token every eight hours less the margin.
		if got, want := p.count("service.auth.xboxlive.com"), 2; got != want {
			t.Errorf("S-tokens asked for: %d, want %d", got, want)
		}
		if got, max := p.count("xsts.auth.xboxlive.com"), 2*(20*24/7+1); got > max || got < 2*(20*24/8) {
			t.Errorf("X-tokens asked for: %d, want two per eight hours (at most %d)", got, max)
		}
		if n := len(h.Calls(mock.CallFilter{Status: 401})) + len(h.Calls(mock.CallFilter{Status: 403})); n != 0 {
			t.Errorf("%d calls refused", n)
		}
	})
}

func isStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == status
}

// TestServiceSignInFloodIsBounded: many callers at once make one sign-in;
// while XSAS fails, a flood of calls makes a request only as often as the
// backoff allows, and each caller returns at once with the failure.
func TestServiceSignInFloodIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := mock.NewHandler()
		cert, p := newPartner(t, h)
		s := &ServiceSignIn{Certificate: cert, HTTPClient: &http.Client{Transport: p}}
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				if _, err := s.ServiceToken(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := p.count("service.auth.xboxlive.com") + p.count("xsts.auth.xboxlive.com"); got != 2 {
			t.Errorf("100 callers at once made %d sign-in requests, want 2 (one S-token, one X-token)", got)
		}

		failing, _ := newPartner(t, h)
		f := &ServiceSignIn{Certificate: failing, HTTPClient: &http.Client{Transport: p}}
		p.mu.Lock()
		p.fail, p.hosts = true, map[string]int{}
		p.mu.Unlock()
		start := time.Now()
		for time.Since(start) < 10*time.Second {
			for range 100 {
				if _, err := f.ServiceToken(ctx); err == nil {
					t.Fatal("a sign-in succeeded against a failing XSAS")
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		// Retries after 1, 2 and 4 s: four requests in ten seconds, not
		// ten thousand.
		if got := p.count("service.auth.xboxlive.com"); got != 4 {
			t.Errorf("10 s of 1,000 calls a second against a failing XSAS made %d requests, want 4", got)
		}
	})
}

// TestServiceSignInRefusedOnBadSignature: a call signed with another key
// than the one the tokens are bound to is refused (403), as is one not
// signed at all.
func TestServiceSignInRefusedOnBadSignature(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := mock.NewHandler()
		cert, p := newPartner(t, h)
		s := &ServiceSignIn{Certificate: cert, HTTPClient: &http.Client{Transport: p}}
		other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ref := SessionRef{SCID: mock.SCID("1234567890"), Template: "lobby", Name: "match-1"}
		for _, tc := range []struct {
			name string
			key  *ecdsa.PrivateKey
		}{{"another key", other}, {"no key", nil}} {
			c, err := New(Config{TitleID: "1234567890", Transport: h, Tokens: TokenFunc(func(ctx context.Context, xuid string) (Token, error) {
				tok, err := s.Token(ctx, xuid)
				tok.Key = tc.key
				return tok, err
			})})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.As("").GetSession(ctx, ref); !isStatus(err, 403) {
				t.Errorf("%s: %v, want 403", tc.name, err)
			}
		}
	})
}

func TestLoadPartnerCertificateRefusesReadableKey(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssuePartner(tlsca.Partner{Name: "game-backend"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "partner.pem"), filepath.Join(dir, "partner.key")
	os.WriteFile(certFile, certPEM, 0o644)
	for _, tc := range []struct {
		mode os.FileMode
		want error
	}{{0o600, nil}, {0o640, ErrKeyReadable}, {0o604, ErrKeyReadable}} {
		os.Remove(keyFile)
		if err := os.WriteFile(keyFile, keyPEM, tc.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(keyFile, tc.mode)
		if _, err := LoadPartnerCertificate(certFile, keyFile); !errors.Is(err, tc.want) {
			t.Errorf("key file %v: %v, want %v", tc.mode, err, tc.want)
		}
	}
}

// TestServiceSignInUnderScriptedTrouble: a script makes XSTS fail twice,
// then answer; the sign-in backs off (1 s, then 2 s) and gets its token. A
// script that makes XSAS hang past Timeout ends the sign-in at Timeout.
func TestServiceSignInUnderScriptedTrouble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := mock.NewHandler()
		cert, p := newPartner(t, h)
		err := h.SetScript(mock.Script{Rules: []mock.ScriptRule{{Match: mock.ScriptMatch{Host: "xsts.auth.xboxlive.com"},
			Answers: []mock.ScriptAnswer{{Status: 503}, {Status: 503}}, Then: "mock"}}})
		if err != nil {
			t.Fatal(err)
		}
		s := &ServiceSignIn{Certificate: cert, HTTPClient: &http.Client{Transport: p}}
		start := time.Now()
		var got []string
		for range 4 {
			_, err := s.ServiceToken(ctx)
			got = append(got, time.Since(start).String()+" "+fmt.Sprint(err == nil))
			time.Sleep(time.Second)
		}
		want := []string{"0s false", "1s false", "2s false", "3s true"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sign-ins under a failing XSTS (-want +got):\n%s", diff)
		}

		if err := h.SetScript(mock.Script{Rules: []mock.ScriptRule{{Match: mock.ScriptMatch{Host: "service.auth.xboxlive.com"},
			Answers: []mock.ScriptAnswer{{Latency: throttle.Duration(10 * time.Minute)}}}}}); err != nil {
			t.Fatal(err)
		}
		hung := &ServiceSignIn{Certificate: cert, HTTPClient: &http.Client{Transport: p}, Timeout: 10 * time.Second}
		start = time.Now()
		if _, err := hung.ServiceToken(ctx); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 10*time.Second {
			t.Errorf("against a hanging XSAS: %v after %v, want a deadline at 10s", err, time.Since(start))
		}
	})
}
