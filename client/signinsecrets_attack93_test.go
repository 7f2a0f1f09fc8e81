package client

// Secrets: a transport (a proxy, a middleware) whose error quotes the
// whole request it failed to send, headers and body, at each sign-in step.
// No refresh token, access token, user token, device code, S-token,
// delegation token or Signature may reach the error's text, its %v, %+v,
// %#v, or the text of any cause errors.Unwrap reaches.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// attack93DumpErr fails a request with an error that quotes it whole.
func attack93DumpErr(r *http.Request) error {
	dump, _ := httputil.DumpRequestOut(r, true)
	return fmt.Errorf("proxy refused the request:\n%s", dump)
}

// attack93Leaks returns the secrets err shows anywhere: its text, %+v, %#v,
// and each cause's text and %#v.
func attack93Leaks(err error, secrets map[string]string) []string {
	var texts []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		texts = append(texts, e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e))
	}
	all := strings.Join(texts, "\n")
	var leaked []string
	for name, s := range secrets {
		if strings.Contains(all, s) {
			leaked = append(leaked, name)
		}
	}
	return leaked
}

// held: at every sign-in step, an error that quotes the request whole
// (its headers, its form or JSON body) is scrubbed of the step's secrets
// and of those the sign-in holds.
//
// Promise (README): "Tokens never appear in logs or errors"; signin.go
// postAuth: "Its error holds none of the secrets known returns ..., nor of
// what it posts or sends in a header"; microsoftError: "without the
// secrets the request posted".
func TestAttack93SignInDumpedRequestErrorsScrubbed(t *testing.T) {
	const (
		refresh = "M.R3_BAY.attack93+refresh/SECRET=0123456789"
		access  = "EwBAtk213+access/SECRET=0123456789abcdef"
		user    = "eyAtk213UserToken+SECRET/0123456789abcdef="
		stoken  = "eyAtk213ServiceToken+SECRET/0123456789="
		dlg     = "eyAtk213Delegation+SECRET/0123456789abcd="
		device  = "DAQABAAEAAAtk213+device/SECRET=0123456789"
	)
	ok := func(r *http.Request, token string) *http.Response {
		return attack93Answer(r, token, "uhs-A", "2533274790000001", time.Hour)
	}
	type step struct {
		name    string
		fail    string // the host whose request fails
		run     func(hc *http.Client) error
		secrets map[string]string
	}
	steps := []step{
		{"Microsoft refresh", "login.microsoftonline.com", func(hc *http.Client) error {
			s := &SignIn{OAuth: MicrosoftOAuth("attack93-client"), HTTPClient: hc, Microsoft: &oauth2.Token{RefreshToken: refresh, AccessToken: access, Expiry: time.Now().Add(-time.Hour)}}
			_, err := s.XboxToken(context.Background())
			return err
		}, map[string]string{"refresh token": refresh, "access token": access}},
		{"user token", "user.auth.xboxlive.com", func(hc *http.Client) error {
			s := &SignIn{OAuth: MicrosoftOAuth("attack93-client"), HTTPClient: hc, Microsoft: &oauth2.Token{RefreshToken: refresh, AccessToken: access, Expiry: time.Now().Add(time.Hour)}}
			_, err := s.XboxToken(context.Background())
			return err
		}, map[string]string{"refresh token": refresh, "access token": access}},
		{"XSTS token", "xsts.auth.xboxlive.com", func(hc *http.Client) error {
			s := &SignIn{OAuth: MicrosoftOAuth("attack93-client"), HTTPClient: hc, Microsoft: &oauth2.Token{RefreshToken: refresh, AccessToken: access, Expiry: time.Now().Add(time.Hour)}}
			_, err := s.XboxToken(context.Background())
			return err
		}, map[string]string{"refresh token": refresh, "access token": access, "user token": user}},
		{"XSAS", "service.auth.xboxlive.com", func(hc *http.Client) error {
			s := &ServiceSignIn{HTTPClient: hc}
			s.SetDelegation("2533274790000001", dlg)
			_, err := s.ServiceToken(context.Background())
			return err
		}, map[string]string{"delegation token": dlg}},
		{"XSTS delegated", "xsts.auth.xboxlive.com", func(hc *http.Client) error {
			s := &ServiceSignIn{HTTPClient: hc}
			s.SetDelegation("2533274790000001", dlg)
			_, err := s.Token(context.Background(), "2533274790000001")
			return err
		}, map[string]string{"S-token": stoken, "delegation token": dlg}},
		{"device code poll", "login.microsoftonline.com/token", func(hc *http.Client) error {
			_, err := DeviceLogin(context.Background(), MicrosoftOAuth("attack93-client"), hc, func(*oauth2.DeviceAuthResponse) {})
			return err
		}, map[string]string{"device code": device}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var signatures []string
			hc := &http.Client{Transport: attack93RT(func(r *http.Request) (*http.Response, error) {
				if sig := r.Header.Get("Signature"); sig != "" {
					signatures = append(signatures, sig)
				}
				target := r.URL.Host
				if r.URL.String() == MicrosoftTokenURL && st.fail == "login.microsoftonline.com/token" {
					target = st.fail
				}
				if target == st.fail {
					return nil, attack93DumpErr(r)
				}
				io.Copy(io.Discard, r.Body)
				switch r.URL.Host {
				case "user.auth.xboxlive.com":
					return ok(r, user), nil
				case "service.auth.xboxlive.com":
					return ok(r, stoken), nil
				case "login.microsoftonline.com":
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
						Body: io.NopCloser(strings.NewReader(fmt.Sprintf(`{"device_code":%q,"user_code":"ABCD","verification_uri":"https://microsoft.com/devicelogin","expires_in":900,"interval":1}`, device)))}, nil
				}
				return nil, fmt.Errorf("unexpected %s", r.URL)
			})}
			err := st.run(hc)
			var se *SignInError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *SignInError", err, err)
			}
			secrets := st.secrets
			for i, s := range signatures {
				secrets[fmt.Sprintf("Signature %d", i)] = s
			}
			if leaked := attack93Leaks(err, secrets); len(leaked) > 0 {
				t.Errorf("the error shows %v: %#v", leaked, err)
			}
		})
	}
}
