package client

// Token expiry and renewal races: 64 goroutines needing a token at once
// when it has just expired (run under -race too).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"
)

// attack93Answer is a sign-in service's 200 answer: a token of life, issued
// now, for userhash uhs and xuid (none when uhs is "").
func attack93Answer(r *http.Request, token, uhs, xuid string, life time.Duration) *http.Response {
	now := time.Now().UTC()
	m := map[string]any{"IssueInstant": now.Format(time.RFC3339Nano), "NotAfter": now.Add(life).Format(time.RFC3339Nano), "Token": token}
	if uhs != "" {
		m["DisplayClaims"] = map[string]any{"xui": []map[string]string{{"uhs": uhs, "xid": xuid}}}
	}
	b, _ := json.Marshal(m)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(b))), Request: r}
}

// held: 64 callers of a SignIn whose XSTS token has just expired make one
// XSTS request (and no user token request: the user token is still good),
// and every one of them gets the renewed token.
//
// Promise (SignIn): "One sign-in runs at a time (single flight)"; "It is
// safe for concurrent use"; XboxToken "returns the XSTS token, renewing
// what has expired".
func TestAttack93SignInExpiryRace64(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		count := map[string]int{}
		hc := &http.Client{Transport: attack93RT(func(r *http.Request) (*http.Response, error) {
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			count[r.URL.Host]++
			n := count[r.URL.Host]
			mu.Unlock()
			switch r.URL.Host {
			case "user.auth.xboxlive.com":
				return attack93Answer(r, fmt.Sprintf("UT-%d", n), "uhs-A", "", 24*time.Hour), nil
			case "xsts.auth.xboxlive.com":
				time.Sleep(100 * time.Millisecond) // a wide window for the race
				return attack93Answer(r, fmt.Sprintf("XT-%d", n), "uhs-A", "2533274790000001", 10*time.Minute), nil
			}
			return nil, fmt.Errorf("unexpected host %s", r.URL.Host)
		})}
		s := &SignIn{OAuth: MicrosoftOAuth("attack93"), HTTPClient: hc,
			Microsoft: &oauth2.Token{AccessToken: "attack93-access-0123456789", Expiry: time.Now().Add(1000 * time.Hour)}}
		ctx := context.Background()
		if _, err := s.Token(ctx, ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10*time.Minute + time.Second) // expired
		got := make([]string, 64)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				xuid := ""
				if i%2 == 1 {
					xuid = "2533274790000001"
				}
				tok, err := s.Token(ctx, xuid)
				if err != nil {
					t.Errorf("caller %d: %v", i, err)
				}
				got[i] = tok.Authorization
			})
		}
		wg.Wait()
		for i, a := range got {
			if a != "XBL3.0 x=uhs-A;XT-2" {
				t.Errorf("caller %d got %q, want the renewed XBL3.0 x=uhs-A;XT-2", i, a)
			}
		}
		if count["xsts.auth.xboxlive.com"] != 2 || count["user.auth.xboxlive.com"] != 1 {
			t.Errorf("requests %v; want 2 XSTS (first, one renewal) and 1 user token", count)
		}
	})
}

// held: a game backend acting for 8 users and as itself, all of whose
// X-tokens have just expired: 64 callers at once (7 or 8 per identity)
// make one XSTS request per token and no new S-token, and each caller
// gets the renewed token of the identity it asked for, never another
// user's.
//
// Promise (ServiceSignIn): "One renewal of each token runs at a time
// (single flight)"; Token "returns the service's Authorization for xuid ""
// (service auth), or the one acting for xuid (delegated auth,
// SetDelegation)"; "It is safe for concurrent use".
func TestAttack93ServiceSignInExpiryRace64(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		count := map[string]int{}
		hc := &http.Client{Transport: attack93RT(func(r *http.Request) (*http.Response, error) {
			b, _ := io.ReadAll(r.Body)
			switch r.URL.Host {
			case "service.auth.xboxlive.com":
				mu.Lock()
				count["xsas"]++
				mu.Unlock()
				return attack93Answer(r, "S-token", "", "", 14*24*time.Hour), nil
			case "xsts.auth.xboxlive.com":
				var req struct {
					Properties struct{ ServiceToken, DelegationToken string }
				}
				json.Unmarshal(b, &req)
				who := strings.TrimPrefix(req.Properties.DelegationToken, "dlg-")
				mu.Lock()
				count[who]++
				n := count[who]
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
				if who == "" {
					return attack93Answer(r, fmt.Sprintf("XT-svc-%d", n), "", "", 10*time.Minute), nil
				}
				return attack93Answer(r, fmt.Sprintf("XT-%s-%d", who, n), "uhs-"+who, who, 10*time.Minute), nil
			}
			return nil, fmt.Errorf("unexpected host %s", r.URL.Host)
		})}
		s := &ServiceSignIn{HTTPClient: hc}
		ids := []string{""}
		for i := 1; i <= 8; i++ {
			xuid := fmt.Sprintf("253327479000000%d", i)
			ids = append(ids, xuid)
			if err := s.SetDelegation(xuid, "dlg-"+xuid); err != nil {
				t.Fatal(err)
			}
		}
		ctx := context.Background()
		for _, id := range ids {
			if _, err := s.Token(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(10*time.Minute + time.Second) // every X-token expired
		got := make([]string, 64)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				tok, err := s.Token(ctx, ids[i%len(ids)])
				if err != nil {
					t.Errorf("caller %d (%q): %v", i, ids[i%len(ids)], err)
				}
				got[i] = tok.Authorization
			})
		}
		wg.Wait()
		for i, a := range got {
			id := ids[i%len(ids)]
			want := "XBL3.0 x=uhs-" + id + ";XT-" + id + "-2"
			if id == "" {
				want = "XBL3.0 x=-;XT-svc-2"
			}
			if a != want {
				t.Errorf("caller %d for %q got %q, want %q", i, id, a, want)
			}
		}
		for _, id := range ids {
			if count[id] != 2 {
				t.Errorf("XSTS requests for %q: %d, want 2 (first, one renewal)", id, count[id])
			}
		}
		if count["xsas"] != 1 {
			t.Errorf("XSAS requests: %d, want 1 (the S-token lives two weeks)", count["xsas"])
		}
	})
}

// held: when the XSTS token has just expired and 64 callers arrive at once,
// half needing a token (Token) and half renewing the expired one after a
// 401 (RefreshToken, as the transport calls it), there is still one
// renewal and every caller gets the same renewed token.
//
// Promise (SignIn.Renew): "Calls refused with the same stale token share
// one sign-in: a sign-in under way is joined, and a token that has already
// replaced stale is returned at once"; SignIn: "One sign-in runs at a time
// (single flight)".
func TestAttack93SignInExpiryAnd401Race64(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		count := map[string]int{}
		hc := &http.Client{Transport: attack93RT(func(r *http.Request) (*http.Response, error) {
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			count[r.URL.Host]++
			n := count[r.URL.Host]
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			switch r.URL.Host {
			case "user.auth.xboxlive.com":
				return attack93Answer(r, fmt.Sprintf("UT-%d", n), "uhs-A", "", 24*time.Hour), nil
			case "xsts.auth.xboxlive.com":
				return attack93Answer(r, fmt.Sprintf("XT-%d", n), "uhs-A", "2533274790000001", 10*time.Minute), nil
			}
			return nil, fmt.Errorf("unexpected host %s", r.URL.Host)
		})}
		s := &SignIn{OAuth: MicrosoftOAuth("attack93"), HTTPClient: hc,
			Microsoft: &oauth2.Token{AccessToken: "attack93-access-0123456789", Expiry: time.Now().Add(1000 * time.Hour)}}
		ctx := context.Background()
		first, err := s.Token(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10*time.Minute + time.Second)
		got := make([]string, 64)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				if i%2 == 0 {
					tok, err := s.Token(ctx, "")
					if err != nil {
						t.Errorf("caller %d: %v", i, err)
					}
					got[i] = tok.Authorization
					return
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", "https://profile.xboxlive.com/users/me/profile/settings", nil)
				req.Header.Set("Authorization", first.Authorization)
				a, err := s.RefreshToken(req)
				if err != nil {
					t.Errorf("caller %d (RefreshToken): %v", i, err)
				}
				got[i] = a
			})
		}
		wg.Wait()
		for i, a := range got {
			if a != "XBL3.0 x=uhs-A;XT-2" {
				t.Errorf("caller %d got %q, want the one renewal's XBL3.0 x=uhs-A;XT-2", i, a)
			}
		}
		if count["xsts.auth.xboxlive.com"] != 2 {
			t.Errorf("XSTS requests %d, want 2 (first, one renewal); all %v", count["xsts.auth.xboxlive.com"], count)
		}
	})
}
