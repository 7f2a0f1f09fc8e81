package client

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// TestServiceSignInRenewsOn401: calls refused 401 with the service's own
// X-token or a user's delegated one are sent once more with a renewed
// token, as XSAPI does (HandleAuthError): one XSTS request per token for a
// wave of refusals, the next wave at once after a 1 s backoff, and a
// service that refuses every token gets two attempts per call, never a
// loop.
func TestServiceSignInRenewsOn401(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := mock.NewHandler()
		s, p, ux := delegatingService(t, h)
		var revoked sync.Map // Authorization values the service refuses
		var refuseAll atomic.Bool
		var unauthorized, sent atomic.Int64
		service := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			if _, ok := revoked.Load(r.Header.Get("Authorization")); ok || refuseAll.Load() {
				unauthorized.Add(1)
				return &http.Response{StatusCode: 401, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			return h.RoundTrip(r)
		})
		c, err := New(Config{TitleID: "1234567890", Tokens: s, Transport: &transport.Transport{Base: service, TitleID: "1234567890",
			DisableBudget: true, RefreshToken: s.RefreshToken}})
		if err != nil {
			t.Fatal(err)
		}
		ref := SessionRef{SCID: mock.SCID("1234567890"), Template: "lobby", Name: "match-1"}
		calls := func() (failed int) {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() {
					_, err := c.As(ux.XUID).GetProfiles(ctx, []string{ux.XUID}, []string{"Gamertag"})
					if _, err2 := c.As("").GetSession(ctx, ref); err2 != nil && !isStatus(err2, 404) {
						err = err2
					}
					if err != nil {
						t.Error(err)
						mu.Lock()
						failed++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			return failed
		}
		revoke := func() {
			for _, xuid := range []string{"", ux.XUID} {
				tok, err := s.Token(ctx, xuid)
				if err != nil {
					t.Fatal(err)
				}
				revoked.Store(tok.Authorization, true)
			}
			// The mock mints the same X-token twice within a second (its
			// expiry, to the second, is in it): the renewals come later.
			time.Sleep(time.Second)
		}
		revoke()
		xsts := p.count("xsts.auth.xboxlive.com")
		if failed, n := calls(), unauthorized.Load(); failed != 0 || n < 2 || n > 6 {
			t.Errorf("a wave of 6 calls with revoked tokens: %d failed, %d 401s; want 0 failed, 2 to 6 401s", failed, n)
		}
		if got := p.count("xsts.auth.xboxlive.com") - xsts; got != 2 {
			t.Errorf("XSTS requests for the wave: %d, want 2 (one per token)", got)
		}

		revoke()
		start := time.Now()
		if failed := calls(); failed != 0 {
			t.Errorf("a second wave: %d failed", failed)
		}
		// Each call renews its user's token, then the service's: 1 s ±20 %
		// each (forcedRenewals, as SignIn's).
		if took := time.Since(start); took < 1600*time.Millisecond || took > 2400*time.Millisecond {
			t.Errorf("a second wave at once took %v; want 1.6 to 2.4 s, the 1 s (±20 %%) backoff of each token's renewal", took)
		}

		refuseAll.Store(true)
		sent.Store(0)
		if _, err := c.As("").GetSession(ctx, ref); !isStatus(err, 401) {
			t.Errorf("every token refused: %v, want the 401", err)
		}
		if got := sent.Load(); got != 2 {
			t.Errorf("every token refused: %d attempts, want 2 (one renewal, never a loop)", got)
		}
	})
}

// TestNewRenewsOn401ByDefault: the transport New makes when Config has
// none takes the token source's RefreshToken, so a Client over SignIn or
// ServiceSignIn renews on a 401 as XSAPI does.
func TestNewRenewsOn401ByDefault(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tokens TokenSource
		want   bool
	}{
		{"ServiceSignIn", &ServiceSignIn{}, true},
		{"SignIn", &SignIn{}, true},
		{"StaticTokens", StaticTokens{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{TitleID: "1234567890", Tokens: tc.tokens})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.cfg.Transport.(*transport.Transport).RefreshToken != nil; got != tc.want {
				t.Errorf("RefreshToken set: %t, want %t", got, tc.want)
			}
		})
	}
}

// TestForgetDuringRenewal: forgetting a user while a forced renewal has
// emptied its token's slot also forgets its userhash, which RefreshToken
// reads; it was looked up by the slot's token, so the entry stayed and
// the map grew with every user forgotten so.
func TestForgetDuringRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, ux := delegatingService(t, mock.NewHandler())
		if _, err := s.delegated(context.Background(), ux.XUID, ""); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.users[ux.XUID].slot.tok = XboxToken{} // as a forced renewal leaves it
		s.mu.Unlock()
		s.Forget(ux.XUID)
		if len(s.byHash) != 0 {
			t.Errorf("byHash after Forget = %v, want empty", s.byHash)
		}
	})
}
