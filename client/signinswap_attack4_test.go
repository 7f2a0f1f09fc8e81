package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// attack4SwappingSignIn is a SignIn whose XSTS answers the first sign-in for
// me (userhash "hashA") and every later one for other (userhash "hashB"):
// a refresh that comes back as another user.
func attack4SwappingSignIn() (*SignIn, *atomic.Int64) {
	var n atomic.Int64
	fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		now := time.Now().UTC().Format(time.RFC3339)
		if strings.Contains(r.URL.Host, "user.auth") {
			return answer(r, fmt.Sprintf(`{"IssueInstant":%q,"NotAfter":%q,"Token":"U","DisplayClaims":{"xui":[{"uhs":"hashA"}]}}`, now, exp)), nil
		}
		xid, uhs := me, "hashA"
		if n.Add(1) > 1 {
			xid, uhs = other, "hashB"
		}
		return answer(r, fmt.Sprintf(`{"IssueInstant":%q,"NotAfter":%q,"Token":"X-%s","DisplayClaims":{"xui":[{"uhs":%q,"xid":%q,"gtg":"g"}]}}`,
			now, exp, xid, uhs, xid)), nil
	})
	s := &SignIn{OAuth: MicrosoftOAuth("client"), HTTPClient: &http.Client{Transport: fake},
		Microsoft: &oauth2.Token{AccessToken: "ms-access", RefreshToken: "ms-refresh", Expiry: time.Now().Add(time.Hour)}}
	return s, &n
}

// TestAttack4RefreshReturnsAnotherUser: SignIn is "a TokenSource for one
// signed-in user" (client/signin.go:76) and Token gives "the signed-in
// user's Authorization when xuid is theirs" (client/signin.go:137-147),
// refusing a token naming another XUID; ServiceSignIn's RefreshToken
// refuses a renewal that names another user (RELIABILITY.md,
// TestAttackDelegationOfAnotherUser). SignIn.RefreshToken, which the
// transport calls after a 401 to retry the refused request (made for me,
// with me's token) once more, hands back whatever the renewal names: a
// renewal that comes back as another user (a refresh of the Microsoft
// account that signs in someone else, a hostile or confused XSTS) sends
// me's call again under other's token, and the call for me's data is
// answered with other's view. The renewed token must be refused when it
// is not the refused token's user's.
func TestAttack4RefreshReturnsAnotherUser(t *testing.T) {
	ctx := context.Background()
	s, _ := attack4SwappingSignIn()
	tok, err := s.Token(ctx, me)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/xuid("+me+")/profile/settings", nil)
	req.Header.Set("Authorization", tok.Authorization)
	got, err := s.RefreshToken(req)
	if err == nil && !strings.HasPrefix(got, "XBL3.0 x=hashA;") {
		t.Errorf("RefreshToken for a request refused with user %s's token (%s) = %q, another user's token; want an error (ErrNoToken) or a token of the same user",
			me, tok.Authorization, got)
	}
}

// held: after such a renewal, Token(ctx, me) refuses the other user's
// token (client/signin.go:137-147).
func TestAttack4TokenAfterSwapRefuses(t *testing.T) {
	ctx := context.Background()
	s, _ := attack4SwappingSignIn()
	if _, err := s.Token(ctx, me); err != nil {
		t.Fatal(err)
	}
	s.Invalidate()
	if got, err := s.Token(ctx, me); err == nil {
		t.Errorf("Token(me) after the sign-in came back as %s: %q, want ErrNoToken", other, got.Authorization)
	}
}
