package client

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/mock"
)

// TestAttack3RefusedDelegationLeavesNothing: held. The backend acts for user
// B (a real delegation, token cached, its userhash in byHash); a game
// client then sends B's delegation token as user A's. A's Token is
// refused, and after it: no X-token in A's slot, A in no byHash entry,
// a 401 of B's X-token renews B's (not A's), and after Forget(B) a 401 of
// B's token renews no one.
func TestAttack3RefusedDelegationLeavesNothing(t *testing.T) {
	ctx := context.Background()
	h := mock.NewHandler()
	s, _, ux := delegatingService(t, h)
	bt, err := s.Token(ctx, ux.XUID)
	if err != nil {
		t.Fatal(err)
	}
	const a = "2535000000000001"
	if err := s.SetDelegation(a, ux.DelegationToken); err != nil {
		t.Fatal(err)
	}
	if tok, err := s.Token(ctx, a); err == nil {
		t.Fatalf("Token(A) with B's delegation token: %.40q, no error", tok.Authorization)
	}
	s.mu.Lock()
	for uhs, users := range s.byHash {
		if users[a] {
			t.Errorf("A in byHash[%s] after its delegation was refused", uhs)
		}
	}
	if tok := s.users[a].slot.tok; tok.Token != "" {
		t.Errorf("A's slot holds a token after refusal: %+v", tok)
	}
	s.mu.Unlock()
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/", nil)
	req.Header.Set("Authorization", bt.Authorization)
	got, err := s.RefreshToken(req)
	if err != nil {
		t.Fatalf("RefreshToken of B's token: %v", err)
	}
	if got2, err := s.Token(ctx, ux.XUID); err != nil || got2.Authorization != got {
		t.Errorf("the renewal of B's token was not B's: %v", err)
	}
	if _, err := s.Token(ctx, a); err == nil {
		t.Errorf("A's Token after B's renewal: no error")
	}
	s.Forget(ux.XUID)
	req.Header.Set("Authorization", got)
	if x, err := s.RefreshToken(req); err == nil {
		t.Errorf("RefreshToken of forgotten B's token: %.40q, no error", x)
	}
}

// TestSetDelegationRefusesNoXUID: SetDelegation takes XUIDs only (a third
// attack noticed "" taken: an XSTS answer naming no XUID would then have
// matched it, though Token(ctx, "") gives the service's own token and
// never reaches it); a second spelling of a number ("0" before it) is no
// XUID either, so one user is one delegation.
func TestSetDelegationRefusesNoXUID(t *testing.T) {
	s := &ServiceSignIn{}
	for _, x := range []string{"", "02533274791234567", "2533274791234567 ", "-1", "xuid(2533274791234567)"} {
		if err := s.SetDelegation(x, "token"); !errors.Is(err, xblid.ErrXUID) {
			t.Errorf("SetDelegation(%q): %v, want an error wrapping xblid.ErrXUID", x, err)
		}
	}
	if err := s.SetDelegation("2533274791234567", "token"); err != nil {
		t.Errorf("a XUID: %v", err)
	}
}
