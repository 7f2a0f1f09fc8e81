package client

import (
	"context"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestAttackDelegationOfAnotherUser: a backend told to act for user A
// (SetDelegation(A, token)) with a delegation token that is in fact user
// B's (a game client lying about whose token it sends) must not get, as
// A's, an X-token acting for B: XSTS's answer names B (xui[0].xid), and
// Token(ctx, A) hands it out as A's.
func TestAttackDelegationOfAnotherUser(t *testing.T) {
	h := mock.NewHandler()
	s, _, ux := delegatingService(t, h)
	const a = "2535000000000001" // a user the backend believes it acts for
	if a == ux.XUID {
		t.Fatal("pick another XUID")
	}
	if err := s.SetDelegation(a, ux.DelegationToken); err != nil {
		t.Fatal(err)
	}
	tok, err := s.Token(context.Background(), a)
	if err == nil {
		t.Errorf("Token(%s) with user %s's delegation token: %q, no error; want an error (the X-token names another user)", a, ux.XUID, tok.Authorization)
	}
}
