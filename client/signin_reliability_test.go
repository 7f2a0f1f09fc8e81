package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// hanging answers nothing: it blocks until the request's context ends.
var hanging = roundTripFunc(func(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
})

// TestSignInEnds: a sign-in against endpoints that never answer ends, at
// the caller's deadline or at Timeout, whichever is first; with an expired
// Microsoft token the refresh at the token endpoint is bounded the same way.
func TestSignInEnds(t *testing.T) {
	tests := []struct {
		name     string
		expiry   time.Duration // of the Microsoft access token
		deadline time.Duration // the caller's; 0 for none
		want     time.Duration
	}{
		{"user token, caller's deadline", time.Hour, 2 * time.Second, 2 * time.Second},
		{"user token, no deadline", time.Hour, 0, DefaultSignInTimeout},
		{"Microsoft refresh, caller's deadline", -time.Hour, 3 * time.Second, 3 * time.Second},
		{"Microsoft refresh, no deadline", -time.Hour, 0, DefaultSignInTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &SignIn{OAuth: MicrosoftOAuth("c"), Microsoft: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: time.Now().Add(tt.expiry)}}
				s.HTTPClient = &http.Client{Transport: hanging}
				ctx := context.Background()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				start := time.Now()
				_, err := s.XboxToken(ctx)
				if took := time.Since(start); took != tt.want || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("ended after %v with %v; want %v, deadline exceeded", took, err, tt.want)
				}
				time.Sleep(DefaultSignInTimeout) // the sign-in the caller left ends too
			})
		})
	}
}

// TestSignInWaitersLeave: callers waiting behind a slow sign-in leave at
// their own deadlines; the sign-in goes on and serves whoever still waits.
func TestSignInWaitersLeave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s := signInAt(t, h)
		release := make(chan struct{})
		s.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-release // the services are slow today
			return h.RoundTrip(r)
		})}
		var wg sync.WaitGroup
		var patient XboxToken
		var patientErr error
		wg.Go(func() { patient, patientErr = s.XboxToken(context.Background()) })
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if _, err := s.XboxToken(ctx); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("an impatient caller: %v after %v, want deadline exceeded after 1s", err, time.Since(start))
		}
		close(release)
		wg.Wait()
		if patientErr != nil || patient.XUID != mock.DefaultAccount.XUID {
			t.Errorf("the patient caller: %+v %v", patient, patientErr)
		}
	})
}

// TestSignInClockSkew: with the local clock 20 hours ahead of the
// services' (every NotAfter they send is already past locally), a token is
// still used for its own lifetime: one sign-in for ten hours of calls.
func TestSignInClockSkew(t *testing.T) {
	for _, skew := range []time.Duration{20 * time.Hour, -20 * time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := mock.Must(mock.New(mock.Config{Now: func() time.Time { return time.Now().Add(-skew) }}))
				s := signInAt(t, h)
				counting := &countingRT{base: h}
				s.HTTPClient = &http.Client{Transport: counting}
				var renewed []time.Duration
				start := time.Now()
				last := ""
				for range 200 { // every 6 minutes for 20 hours
					x, err := s.XboxToken(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if n := x.NotAfter.String(); n != last { // the mock's tokens differ only in NotAfter
						renewed, last = append(renewed, time.Since(start)), n
					}
					time.Sleep(6 * time.Minute)
				}
				// The mock's tokens live 16 hours: the first at 0, the next
				// at the first call within the 5 minute margin of its expiry.
				if len(renewed) != 2 || renewed[1] != 16*time.Hour {
					t.Errorf("tokens got at %v (%d sign-in requests); want at 0 and 16h (the first call inside the 5 minute margin)", renewed, counting.n.Load())
				}
			})
		})
	}
}

// fakeAuth is a user.auth and xsts.auth that mint a new token each time
// (numbered), living an hour, and count the requests.
type fakeAuth struct{ user, xsts atomic.Int64 }

func (f *fakeAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	n := &f.user
	if r.URL.Host == "xsts.auth.xboxlive.com" {
		n = &f.xsts
	}
	now := time.Now().UTC()
	body := fmt.Sprintf(`{"IssueInstant":%q,"NotAfter":%q,"Token":"%s%d","DisplayClaims":{"xui":[{"uhs":"42","xid":"2533274791234567"}]}}`,
		now.Format(time.RFC3339Nano), now.Add(time.Hour).Format(time.RFC3339Nano), r.URL.Host, n.Add(1))
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// TestSignInRenewOncePerWave: 30 calls sent with a token that the service
// has stopped taking get their 401s together; they share one new sign-in
// and are retried with its token (no call signs in for itself). A second
// wave soon after waits the renewal backoff (1 s, ±20%) first.
func TestSignInRenewOncePerWave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		auth := &fakeAuth{}
		s := &SignIn{OAuth: MicrosoftOAuth("c"), Microsoft: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: time.Now().Add(24 * time.Hour)}}
		s.HTTPClient = &http.Client{Transport: auth}
		var revoked sync.Map // Authorization values the service refuses
		var unauthorized atomic.Int64
		service := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			status := 200
			if _, ok := revoked.Load(r.Header.Get("Authorization")); ok {
				status = 401
				unauthorized.Add(1)
			}
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		hc := &http.Client{Transport: &transport.Transport{Base: service, TitleID: "1234567890", DisableBudget: true,
			RefreshToken: s.RefreshToken}}
		wave := func() {
			t.Helper()
			x, err := s.XboxToken(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			revoked.Store(x.Authorization(), true)
			var wg sync.WaitGroup
			for range 30 { // each a copy of one request, as xblcall call -n sends
				wg.Go(func() {
					req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings", nil)
					req.Header.Set("Authorization", x.Authorization())
					resp, err := hc.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Errorf("status %d after the refresh", resp.StatusCode)
					}
				})
			}
			wg.Wait()
		}
		wave()
		if auth.xsts.Load() != 2 || auth.user.Load() != 2 || unauthorized.Load() != 30 {
			t.Errorf("30 calls refused: %d user and %d XSTS sign-ins in all, %d 401s; want 2, 2, 30",
				auth.user.Load(), auth.xsts.Load(), unauthorized.Load())
		}
		start := time.Now()
		wave()
		if took := time.Since(start); took < 800*time.Millisecond || took > 1200*time.Millisecond || auth.xsts.Load() != 3 {
			t.Errorf("a second wave at once signed in after %v (%d XSTS sign-ins); want after the 1 s backoff, 3",
				took, auth.xsts.Load())
		}
	})
}

// TestSignInErrorsClipped: whatever the token endpoints send as error code,
// description or message reaches the error clipped and escaped.
func TestSignInErrorsClipped(t *testing.T) {
	huge := strings.Repeat("\x1b[31mX", 4000)
	tests := []struct {
		name   string
		expiry time.Duration // of the Microsoft access token: past, to refresh it
		status int
		body   string
	}{
		{"Microsoft error code", -time.Hour, 400, `{"error":"` + jsonEscape(huge) + `","error_description":"` + jsonEscape(huge) + `"}`},
		{"XSTS message", time.Hour, 401, `{"XErr":1,"Message":"` + jsonEscape(huge) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &SignIn{OAuth: MicrosoftOAuth("c"), Microsoft: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: time.Now().Add(tt.expiry)}}
			s.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: tt.status, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(tt.body)), Request: r}, nil
			})}
			_, err := s.XboxToken(context.Background())
			if err == nil || len(err.Error()) > 400 || strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("error of %d bytes: %.200q", len(err.Error()), err)
			}
		})
	}
}

func jsonEscape(s string) string { return strings.ReplaceAll(s, "\x1b", `\u001b`) }
