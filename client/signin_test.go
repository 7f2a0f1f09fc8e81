package client

import (
	"bytes"
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

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/mock"
)

// signInAt signs in at the mock h with the device code flow and returns the
// SignIn, as xblcall login does.
func signInAt(t *testing.T, h *mock.Handler) *SignIn {
	t.Helper()
	hc := &http.Client{Transport: h}
	cfg := MicrosoftOAuth("00000000-0000-0000-0000-000000000000")
	var shown *oauth2.DeviceAuthResponse
	tok, err := DeviceLogin(context.Background(), cfg, hc, func(da *oauth2.DeviceAuthResponse) { shown = da })
	if err != nil {
		t.Fatal(err)
	}
	if shown == nil || shown.UserCode == "" || shown.VerificationURI != "https://microsoft.com/devicelogin" || tok.RefreshToken == "" {
		t.Fatalf("device code %+v, token %+v", shown, tok)
	}
	s := &SignIn{OAuth: cfg, Microsoft: tok}
	s.HTTPClient = hc
	return s
}

// TestSignIn: the device code flow, the user and XSTS tokens, and calls the
// mock's services accept with them.
func TestSignIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s := signInAt(t, h)
		x, err := s.XboxToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if x.XUID != mock.DefaultAccount.XUID || x.Gamertag != "MockPlayer" || x.UserHash != mock.UserHash(x.XUID) ||
			time.Until(x.NotAfter) != 16*time.Hour {
			t.Errorf("XSTS token %+v", x)
		}
		c, err := New(Config{TitleID: "1234567890", Tokens: s, Transport: h})
		if err != nil {
			t.Fatal(err)
		}
		profiles, err := c.As(x.XUID).GetProfiles(context.Background(), []string{x.XUID}, []string{"Gamertag"})
		if err != nil || len(profiles) != 1 {
			t.Errorf("GetProfiles with the signed-in token: %v %v", profiles, err)
		}
		if _, err := s.Token(context.Background(), "2533274790000000"); !errors.Is(err, ErrNoToken) {
			t.Errorf("another user's token: %v", err)
		}
	})
}

// TestSignInRefresh: the XSTS token is renewed before it expires, the
// Microsoft token refreshed (and the rotated refresh token handed to
// OnRefresh); an expired refresh token is a clear error.
func TestSignInRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s := signInAt(t, h)
		var stored []string
		s.OnRefresh = func(tok *oauth2.Token) { stored = append(stored, tok.RefreshToken) }
		first, err := s.XboxToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(16*time.Hour - 4*time.Minute) // inside the 5 minute margin
		second, err := s.XboxToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !second.NotAfter.After(first.NotAfter) {
			t.Errorf("not renewed: %v then %v", first.NotAfter, second.NotAfter)
		}
		time.Sleep(15 * 24 * time.Hour) // past the user token's 14 days: the Microsoft token is refreshed
		if _, err := s.XboxToken(context.Background()); err != nil || len(stored) == 0 {
			t.Fatalf("after 15 days: %v, %d refreshes stored", err, len(stored))
		}
		time.Sleep(91 * 24 * time.Hour) // past the refresh token's life
		_, err = s.XboxToken(context.Background())
		var se *SignInError
		if !errors.As(err, &se) || se.Step != "Microsoft account" || !strings.Contains(err.Error(), "invalid_grant") {
			t.Errorf("after 106 days: %v", err)
		}
	})
}

// TestSignInXErr: each refusal XSTS answers with becomes an error naming
// its cause.
func TestSignInXErr(t *testing.T) {
	tests := []struct {
		xerr int64
		want string
	}{
		{XErrNoProfile, "has no Xbox profile"},
		{XErrChildAccount, "child account"},
		{XErrCountry, "country or region"},
		{XErrBanned, "banned"},
		{XErrTermsOfUse, "terms of use"},
		{XErrAgeVerification, "age verification"},
		{XErrGuardian, "guardian"},
		{123, "XErr 123"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := mock.Must(mock.New(mock.Config{Account: &mock.Account{XUID: "2533274790000001", XErr: tt.xerr}}))
				s := signInAt(t, h)
				_, err := s.XboxToken(context.Background())
				var se *SignInError
				if !errors.As(err, &se) || se.XErr != tt.xerr || se.Status != 401 || se.Step != "XSTS token" ||
					!strings.Contains(err.Error(), tt.want) {
					t.Errorf("err %v", err)
				}
			})
		})
	}
}

// TestSignInConcurrent: many callers at once get the same token from one
// sign-in (the mock counts the XSTS requests).
func TestSignInConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s := signInAt(t, h)
		counting := &countingRT{base: h}
		s.HTTPClient = &http.Client{Transport: counting}
		var wg sync.WaitGroup
		tokens := make([]string, 20)
		for i := range tokens {
			wg.Go(func() {
				tok, err := s.Token(context.Background(), "")
				if err != nil {
					t.Error(err)
				}
				tokens[i] = tok.Authorization
			})
		}
		wg.Wait()
		for _, tok := range tokens {
			if tok != tokens[0] || tok == "" {
				t.Fatalf("tokens differ: %q and %q", tokens[0], tok)
			}
		}
		if n := counting.n.Load(); n != 2 { // one user token, one XSTS token
			t.Errorf("%d sign-in requests for 20 callers, want 2", n)
		}
	})
}

type countingRT struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// TestBrowserLogin: the authorization code flow with a loopback redirect;
// the test is the browser: it opens the URL at the mock and follows the
// mock's redirect back to the loopback address.
func TestBrowserLogin(t *testing.T) {
	h := mock.NewHandler()
	cfg := MicrosoftOAuth("00000000-0000-0000-0000-000000000000")
	var wg sync.WaitGroup
	defer wg.Wait() // the browser is done before the test ends
	browser := func(u string) {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", u, nil)
			resp, err := h.RoundTrip(req) // the mock's sign-in page approves at once
			if err != nil || resp.StatusCode != http.StatusFound {
				t.Errorf("authorize: %v %v", resp, err)
				return
			}
			back, err := http.Get(resp.Header.Get("Location"))
			if err != nil || back.StatusCode != 200 {
				t.Errorf("redirect back: %v %v", back, err)
				return
			}
			back.Body.Close()
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tok, err := BrowserLogin(ctx, cfg, &http.Client{Transport: h}, browser)
	if err != nil {
		t.Fatal(err)
	}
	s := &SignIn{OAuth: cfg, Microsoft: tok}
	s.HTTPClient = &http.Client{Transport: h}
	if x, err := s.XboxToken(ctx); err != nil || x.XUID != mock.DefaultAccount.XUID {
		t.Errorf("XSTS after a browser sign-in: %+v %v", x, err)
	}
}

// FuzzSignInAnswer: whatever an authentication service answers, SignIn
// returns a token or a SignInError, and never panics.
func FuzzSignInAnswer(f *testing.F) {
	f.Add(200, []byte(`{"IssueInstant":"2010-10-10T03:06:35.5251155Z","NotAfter":"2999-10-10T19:06:35.5251155Z","Token":"t","DisplayClaims":{"xui":[{"uhs":"u","xid":"1","gtg":"g"}]}}`))
	f.Add(401, []byte(`{"Identity":"0","XErr":2148916233,"Message":"","Redirect":"x"}`))
	f.Add(200, []byte(`{"Token":"t","NotAfter":"soon"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Body: io.NopCloser(bytes.NewReader(body)), Header: http.Header{}, Request: r}, nil
		})
		s := &SignIn{OAuth: MicrosoftOAuth("c"), Microsoft: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: time.Now().Add(time.Hour)}}
		s.HTTPClient = &http.Client{Transport: rt}
		x, err := s.XboxToken(context.Background())
		var se *SignInError
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("an error that is no SignInError: %v", err)
		}
		if err == nil && (x.UserHash == "" || x.Token == "") {
			t.Fatalf("a token without a userhash: %+v", x)
		}
	})
}

// TestSignInErrorHRESULT: a sign-in failure carries an HRESULT, as every
// error of the module does: the XErr (itself an HRESULT), the cause's, the
// status's, or E_XBL_AUTH_UNKNOWN_ERROR; and errors.Is finds it.
func TestSignInErrorHRESULT(t *testing.T) {
	tests := []struct {
		name string
		err  *SignInError
		want hresult.HRESULT
	}{
		{"banned", &SignInError{Step: "XSTS token", Status: 401, XErr: XErrBanned}, hresult.HRESULT(0x8015DC03)},
		{"deadline", &SignInError{Step: "XSTS token", Err: context.DeadlineExceeded}, hresult.HTTP_E_STATUS_REQUEST_TIMEOUT},
		{"status", &SignInError{Step: "Xbox user token", Status: 400}, hresult.HTTP_E_STATUS_BAD_REQUEST},
		{"nothing known", &SignInError{Step: "Microsoft account"}, hresult.E_XBL_AUTH_UNKNOWN_ERROR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error = fmt.Errorf("wrapped: %w", tt.err)
			if got := hresult.Of(err); got != tt.want || !errors.Is(err, tt.want) {
				t.Errorf("hresult.Of = %v, errors.Is %v; want %v", got, errors.Is(err, tt.want), tt.want)
			}
		})
	}
}
