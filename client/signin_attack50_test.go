package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// attack50Hostile is a hostile sign-in server on loopback: every sign-in
// host (login.microsoftonline.com, user.auth, xsts.auth) is routed to it
// by the client's transport. route answers by host and path.
func attack50Hostile(t *testing.T, route func(w http.ResponseWriter, r *http.Request, host string)) *http.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route(w, r, r.Header.Get("X-Atk-Host"))
	}))
	t.Cleanup(srv.Close)
	target, _ := url.Parse(srv.URL)
	return &http.Client{Transport: attack50Rewrite{target: target, base: srv.Client().Transport}}
}

type attack50Rewrite struct {
	target *url.URL
	base   http.RoundTripper
}

func (a attack50Rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set("X-Atk-Host", r.URL.Host)
	r2.URL.Scheme, r2.URL.Host = a.target.Scheme, a.target.Host
	r2.Host = a.target.Host
	return a.base.RoundTrip(r2)
}

const (
	attack50Refresh = "M.R3_BAY.refresh-SECRET-0123456789abcdef"
	attack50Access  = "EwAccess-SECRET-abcdef0123456789"
	attack50User    = "eyUserToken-SECRET-fedcba9876543210"
)

func attack50OK(w http.ResponseWriter, r *http.Request, host string) bool {
	switch host {
	case "login.microsoftonline.com":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"token_type":"Bearer","access_token":%q,"refresh_token":%q,"expires_in":3600}`, attack50Access, attack50Refresh)
		return true
	case "user.auth.xboxlive.com":
		now := time.Now().UTC()
		fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"123"}]}}`,
			now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), attack50User)
		return true
	}
	return false
}

func attack50SignIn(hc *http.Client) *SignIn {
	return &SignIn{OAuth: MicrosoftOAuth("atk-client"), HTTPClient: hc, Timeout: 3 * time.Second,
		Microsoft: &oauth2.Token{RefreshToken: attack50Refresh}}
}

// TestAttack50SignInXSTSEchoesEarlierSecrets: a hostile sign-in server (one
// operator behind login, user.auth and xsts) refuses the XSTS step with a
// Message that quotes the Microsoft refresh and access tokens and the user
// token of the same sign-in.
//
// Promise (brief; signin.go signInFailure: "without the secrets the
// request posted"; SignInError is what reaches logs): the error carries no
// secret of the sign-in.
func TestAttack50SignInXSTSEchoesEarlierSecrets(t *testing.T) {
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		if attack50OK(w, r, host) {
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		msg := "refused: user " + attack50User + " access " + attack50Access + " refresh " + attack50Refresh
		json.NewEncoder(w).Encode(map[string]any{"XErr": 1, "Message": msg})
	})
	_, err := attack50SignIn(hc).XboxToken(context.Background())
	if err == nil {
		t.Fatal("XSTS refused, yet no error")
	}
	for name, s := range map[string]string{"user token (posted to XSTS)": attack50User, "access token": attack50Access, "refresh token": attack50Refresh} {
		if strings.Contains(err.Error(), s) || strings.Contains(fmt.Sprintf("%#v", err), s) {
			t.Errorf("the XSTS refusal's error carries the %s: %v", name, err)
		}
	}
}

// held: a server that answers 200 and then drips its body a byte at a
// time, forever, ends the sign-in within Timeout even for a caller whose
// context never ends ("Timeout bounds one sign-in, all its round trips
// together").
func TestAttack50SignInDripBodyEndsWithinTimeout(t *testing.T) {
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		if host == "login.microsoftonline.com" {
			attack50OK(w, r, host)
			return
		}
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"Token":"`))
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
				w.Write([]byte("a"))
				w.(http.Flusher).Flush()
			}
		}
	})
	s := attack50SignIn(hc)
	s.Timeout = time.Second
	start := time.Now()
	_, err := s.XboxToken(context.Background())
	if err == nil {
		t.Fatal("a never-ending answer gave a token")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sign-in took %v with Timeout 1s", d)
	}
	if strings.Contains(err.Error(), attack50Access) {
		t.Errorf("error carries the access token: %v", err)
	}
}

// held: an XSTS answer that is 200 with a Token and NotAfter but no
// DisplayClaims is a clear SignInError naming what is missing, no token
// with an empty userhash ("XboxToken is an XSTS token and who it is for").
func TestAttack50SignInXSTSWithoutDisplayClaims(t *testing.T) {
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		if attack50OK(w, r, host) {
			return
		}
		now := time.Now().UTC()
		fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":"xsts-SECRET-0123456789"}`, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	})
	x, err := attack50SignIn(hc).XboxToken(context.Background())
	var se *SignInError
	if err == nil || !asSignInError(err, &se) || !strings.Contains(err.Error(), "DisplayClaims") {
		t.Fatalf("got %+v, %v; want a SignInError naming DisplayClaims", x, err)
	}
	if strings.Contains(err.Error(), "xsts-SECRET") {
		t.Errorf("error carries the XSTS token: %v", err)
	}
}

func asSignInError(err error, se **SignInError) bool {
	e, ok := err.(*SignInError)
	*se = e
	return ok
}

// held: an XSTS answer whose NotAfter is in the past and without
// IssueInstant is refused (postAuth: "a token with life left"), and one
// whose NotAfter is absurdly far ahead does not make the call hang or
// panic.
func TestAttack50SignInNotAfterPastAndAbsurd(t *testing.T) {
	var notAfter atomic.Value
	notAfter.Store("2001-01-01T00:00:00Z")
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		if attack50OK(w, r, host) {
			return
		}
		fmt.Fprintf(w, `{"NotAfter":%q,"Token":"xsts-tok-0123456789","DisplayClaims":{"xui":[{"uhs":"123","xid":"2533274791234567"}]}}`, notAfter.Load().(string))
	})
	s := attack50SignIn(hc)
	if _, err := s.XboxToken(context.Background()); err == nil {
		t.Fatal("a token whose NotAfter passed in 2001 was taken")
	}
	notAfter.Store("9999-12-31T23:59:59Z")
	s = attack50SignIn(hc)
	x, err := s.XboxToken(context.Background())
	if err != nil || x.UserHash != "123" {
		t.Fatalf("absurd NotAfter: %+v %v", x, err)
	}
}

// held: a sign-in server that redirects (307) the XSTS request elsewhere
// does not get the user token posted to where it points ("no redirect is
// followed: a 3xx is a failure").
func TestAttack50SignInXSTSRedirectNotFollowed(t *testing.T) {
	var got atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), attack50User) || r.Header.Get("Authorization") != "" {
			got.Add(1)
		}
	}))
	defer thief.Close()
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		if attack50OK(w, r, host) {
			return
		}
		http.Redirect(w, r, thief.URL+"/steal", http.StatusTemporaryRedirect)
	})
	_, err := attack50SignIn(hc).XboxToken(context.Background())
	if err == nil {
		t.Fatal("a redirect gave a token")
	}
	if got.Load() != 0 {
		t.Errorf("the user token reached the redirect's target")
	}
}

// held: DeviceLogin against a hostile identity platform that echoes the
// device code in its refusal: the error carries no device code
// (microsoftError: "without the secrets the request posted").
func TestAttack50DeviceLoginEchoedDeviceCode(t *testing.T) {
	const dc = "DAQABAAEAAAD-device-code-SECRET-0123456789"
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/devicecode") {
			fmt.Fprintf(w, `{"device_code":%q,"user_code":"ABCD-EFGH","verification_uri":"https://microsoft.com/devicelogin","expires_in":900,"interval":1}`, dc)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"expired_token %s","error_description":"the code %s has expired"}`, dc, dc)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := DeviceLogin(ctx, MicrosoftOAuth("atk-client"), hc, func(*oauth2.DeviceAuthResponse) {})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), dc) {
		t.Errorf("DeviceLogin's error carries the device code: %v", err)
	}
}
