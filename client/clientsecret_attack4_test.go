package client

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestAttack4ClientSecretEchoedInSignInError: RELIABILITY.md "Secrets" says
// "client errors never repeat a token", and client/signin.go:633-637
// (microsoftError) promises a Microsoft account request's error "without
// the secrets the request posted ..., which the service may echo". A
// SignIn's OAuth config may be a confidential client's (MicrosoftOAuth
// with a ClientSecret: golang.org/x/oauth2 posts it as client_secret with
// AuthStyleInParams); the refresh's error scrubs the refresh and access
// tokens only, so a token endpoint echoing the posted form in its
// error_description (as it may echo the refresh token) puts the client
// secret in the SignInError.
func TestAttack4ClientSecretEchoedInSignInError(t *testing.T) {
	const secret = "CLIENTSECRETd9a8f7e6c5b4a3928170"
	fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"error":"invalid_client","error_description":"the request was ` +
				strings.ReplaceAll(string(b), `"`, `'`) + `"}`))}, nil
	})
	cfg := MicrosoftOAuth("client")
	cfg.ClientSecret = secret
	s := &SignIn{OAuth: cfg, HTTPClient: &http.Client{Transport: fake},
		Microsoft: &oauth2.Token{AccessToken: "ms-access-old", RefreshToken: "ms-refresh-REFRESHSECRET", Expiry: time.Now().Add(-time.Hour)}}
	_, err := s.XboxToken(context.Background())
	if err == nil {
		t.Fatal("sign-in succeeded against a refusing token endpoint")
	}
	if strings.Contains(err.Error(), "REFRESHSECRET") {
		t.Errorf("the error repeats the refresh token: %v", err)
	}
	if strings.Contains(err.Error(), "CLIENTSECRET") {
		t.Errorf("the error repeats the posted client secret: %v", err)
	}
}
