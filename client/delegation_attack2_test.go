package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// noXid answers as next does, but with the XSTS answers' display claims
// stripped of the user's XUID (xui[0].xid): as XSTS answers for a relying
// party whose claims name the user by hash only.
type noXid struct{ next http.RoundTripper }

func (n noXid) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := n.next.RoundTrip(req)
	if err != nil || req.URL.Host != "xsts.auth.xboxlive.com" || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		if dc, ok := m["DisplayClaims"].(map[string]any); ok {
			if xui, ok := dc["xui"].([]any); ok {
				for _, u := range xui {
					if u, ok := u.(map[string]any); ok {
						delete(u, "xid")
					}
				}
			}
		}
		b, _ = json.Marshal(m)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
	return resp, nil
}

// TestAttack2DelegationOfAnotherUserNoXid: the check that the delegation
// token given for user A is A's (bd7c2fc) is skipped when XSTS's answer
// names no XUID (`x.XUID != "" && ...`). For a relying party whose claims
// carry only the user hash, a game client that sends user B's delegation
// token as A's gets the backend an X-token acting for B, handed out as
// A's: the check fails open exactly where it cannot tell. Token(ctx, A)
// must not hand out a token it could not confirm is A's.
func TestAttack2DelegationOfAnotherUserNoXid(t *testing.T) {
	h := mock.NewHandler()
	s, p, ux := delegatingService(t, h)
	s.HTTPClient = &http.Client{Transport: noXid{p}}
	const a = "2535000000000001"
	if a == ux.XUID {
		t.Fatal("pick another XUID")
	}
	if err := s.SetDelegation(a, ux.DelegationToken); err != nil {
		t.Fatal(err)
	}
	tok, err := s.Token(context.Background(), a)
	if err == nil {
		t.Errorf("Token(%s) with user %s's delegation token, XSTS's answer naming no XUID: %.40q, no error; want an error (the token's user is not known to be %s)", a, ux.XUID, tok.Authorization, a)
	}
}
