package client

// A second attack, as a hostile service and outsider, on the fixes of
// 525c8a5 and 55ad39d (2026-12-04). Each test asserts the right behaviour;
// those named in RELIABILITY.md failed before their fix.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/transport"
)

// keyClient is a Client with a proof-key token whose requests the
// default transport signs at each attempt.
func keyClient(t *testing.T, srv *httptest.Server, auth string, host string) *Client {
	t.Helper()
	key := proofKey(t)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	c, err := New(Config{TitleID: title, Transport: &transport.Transport{TitleID: title, Base: base},
		Endpoints: map[string]string{host: srv.URL},
		Tokens: TokenFunc(func(context.Context, string) (Token, error) {
			return Token{Authorization: auth, Key: key}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReattackSignatureOfKeyTokenRedacted: with a proof-key token the
// transport signs its own copy of each attempt, so the caller's request
// never had the Signature an error body echoed: the error carried it.
func TestReattackSignatureOfKeyTokenRedacted(t *testing.T) {
	signatureEchoed(t, func(w http.ResponseWriter, sig string) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"description":"bad signature %s"}`, sig)
	})
}

// signatureEchoed makes a call with a proof-key token, the transport
// signing each attempt, to a service that answers with echo given the
// Signature the attempt carried; the call's error must not hold it.
func signatureEchoed(t *testing.T, echo func(w http.ResponseWriter, sig string)) {
	t.Helper()
	var sent atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Store(r.Header.Get("Signature"))
		echo(w, r.Header.Get("Signature"))
	}))
	defer srv.Close()
	c := keyClient(t, srv, "XBL3.0 x=1111;SECRET-KEY-TOKEN-0123456789", "profile.xboxlive.com")
	err := failFastProfiles(c)
	sig, _ := sent.Load().(string)
	if err == nil || len(sig) < 40 {
		t.Fatalf("err %v, signature sent %q", err, sig)
	}
	if strings.Contains(err.Error(), sig[:40]) {
		t.Errorf("the error carries the attempt's Signature: %.400q", err.Error())
	}
}

// renewing is a TokenSource with a RefreshToken, as SignIn and
// ServiceSignIn: New gives it to the default transport.
type renewing struct{ old, renewed string }

func (r renewing) Token(context.Context, string) (Token, error) {
	return Token{Authorization: r.old}, nil
}
func (r renewing) RefreshToken(*http.Request) (string, error) { return r.renewed, nil }

// TestReattackRenewedTokenRedacted: after a 401 the transport sends the
// call again with a renewed token; an error echoing it was redacted
// against the first token only.
func TestReattackRenewedTokenRedacted(t *testing.T) {
	const old, renewed = "XBL3.0 x=1111;SECRET-OLD-TOKEN-0123456789", "XBL3.0 x=1111;SECRET-RENEWED-TOKEN-9876543210"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == old {
			w.WriteHeader(401)
			return
		}
		w.WriteHeader(403)
		fmt.Fprintf(w, `{"description":"forbidden for %s"}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	c, err := New(Config{TitleID: title, Tokens: renewing{old, renewed}, Endpoints: map[string]string{"profile.xboxlive.com": srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	c.cfg.Transport.(*transport.Transport).Base = base
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.As(me).GetProfiles(ctx, []string{me}, []string{"Gamertag"}) // not FailFast: a 401 is renewed only for a call that may be retried
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "SECRET-RENEWED") {
		t.Errorf("the error carries the renewed token: %.300q", err.Error())
	}
}

// TestReattackTokenInOtherTexts: the token echoed JSON-escaped (it was
// redacted before message decoded it), in a 429's debugMessage, or as a
// malformed status line net/http quotes in its error: each reached Error().
func TestReattackTokenInOtherTexts(t *testing.T) {
	const secret = "SECRET-HOSTILE-TOKEN-abcdef"
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"json escaped", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			tok := strings.Replace(r.Header.Get("Authorization"), "SECRET", `\u0053ECRET`, 1)
			fmt.Fprintf(w, `{"description":"not for %s"}`, tok)
		}},
		{"429 debugMessage", func(w http.ResponseWriter, r *http.Request) {
			write429(w, "too many from "+r.Header.Get("Authorization"))
		}},
		{"malformed status line", func(w http.ResponseWriter, r *http.Request) {
			conn, rw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			rw.WriteString(r.Header.Get("Authorization") + "\r\n\r\n")
			rw.Flush()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			c := hostileClient(t, srv, nil, "profile.xboxlive.com")
			err := failFastProfiles(c)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); strings.Contains(msg, secret[1:]) {
				t.Errorf("the error carries the token: %.300q", msg)
			}
		})
	}
}

// TestReattackForgottenUserNotRenewedAsAnother: two users given one
// userhash; A is forgotten, so the hash names B alone, and a 401 of A's
// call in flight was renewed with B's token: sent again as B.
func TestReattackForgottenUserNotRenewedAsAnother(t *testing.T) {
	s, ta := sharedHashUsers(t)
	s.Forget(me) // A's call is still in flight with ta
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings", nil)
	req.Header.Set("Authorization", ta.Authorization)
	if got, err := s.RefreshToken(req); err == nil {
		t.Errorf("a 401 of forgotten user A's call was renewed with %q (A's was %q): the call is sent again as B", got, ta.Authorization)
	}
}

// TestReattackServiceSignInRaces: SetDelegation, Forget, Token and
// RefreshToken at once (go test -race), and byHash empties when every user
// is forgotten.
func TestReattackServiceSignInRaces(t *testing.T) {
	var n atomic.Int64
	s := serviceAuth(t, func(r *http.Request, d string) *http.Response {
		return answer(r, fmt.Sprintf(`{"NotAfter":%q,"Token":"T-%s-%d","DisplayClaims":{"xui":[{"uhs":"h%s","xid":%q}]}}`,
			time.Now().Add(time.Hour).UTC().Format(time.RFC3339), d, n.Add(1), d, strings.Split(d, "/")[0]))
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	users := []string{me, other, "2533274800000001", "2533274800000002"}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				x := users[(i+j)%len(users)]
				s.SetDelegation(x, fmt.Sprintf("%s/%d", x, j%3))
				if tok, err := s.Token(ctx, x); err == nil {
					req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/", nil)
					req.Header.Set("Authorization", tok.Authorization)
					s.RefreshToken(req)
				}
				if j%5 == 0 {
					s.Forget(x)
				}
			}
		}()
	}
	wg.Wait()
	for _, x := range users {
		s.Forget(x)
	}
	time.Sleep(100 * time.Millisecond) // renewals still under way land
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.users) != 0 || len(s.byHash) != 0 {
		t.Errorf("every user forgotten: %d users, byHash %v", len(s.users), s.byHash)
	}
}

// TestReattackRTAUpgradeSignatureVerifies: the RTA upgrade's Signature
// verifies against the proof key's public part for what was sent, and
// each dial is signed afresh.
func TestReattackRTAUpgradeSignatureVerifies(t *testing.T) {
	key := proofKey(t)
	type seen struct {
		sig string
		err error
	}
	got := make(chan seen, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = "rta.xboxlive.com"
		err := xblsign.Verify(r, xblsign.ProofKeyOf(&key.PublicKey), time.Now(), xblsign.DefaultPolicy(), time.Minute)
		select {
		case got <- seen{r.Header.Get("Signature"), err}:
		default:
		}
		w.WriteHeader(503)
	}))
	defer srv.Close()
	c := keyRTAClient(t, srv.URL+"/base", key)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	ch, err := c.As("").Subscribe(ctx, Sessions())
	if err != nil {
		t.Fatal(err)
	}
	var sigs []seen
	for len(sigs) < 2 {
		select {
		case s := <-got:
			sigs = append(sigs, s)
			continue
		case <-ctx.Done():
		}
		break
	}
	cancel()
	for range ch {
	}
	if len(sigs) == 0 {
		t.Fatal("no upgrade came")
	}
	for _, s := range sigs {
		if s.err != nil {
			t.Errorf("the upgrade's Signature does not verify: %v", s.err)
		}
	}
	if len(sigs) == 2 && sigs[0].sig == sigs[1].sig {
		t.Errorf("two dials carried the same Signature")
	}
}

// TestReattackRTASigningFailureEnds: a proof key the signer cannot use
// (P-384 where ES256 is asked: xblsign.ErrKey) is reported at once in a
// ConnectionState, and no upgrade reaches the service unsigned.
func TestReattackRTASigningFailureEnds(t *testing.T) {
	var dials atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dials.Add(1)
		w.WriteHeader(503)
	}))
	defer srv.Close()
	bad, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader) // xblsign.Sign refuses it: ErrKey
	if err != nil {
		t.Fatal(err)
	}
	c := keyRTAClient(t, srv.URL, bad)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ch, err := c.As("").Subscribe(ctx, Sessions())
	if err != nil {
		return // refused at once: fine
	}
	var first Event
	select {
	case first = <-ch:
	case <-ctx.Done():
	}
	cancel()
	for range ch {
	}
	if cs, ok := first.(*ConnectionState); !ok || cs.Err == nil {
		t.Errorf("first event %#v, want a ConnectionState carrying the signing failure", first)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d upgrades reached the service unsigned", n)
	}
}

// TestReattackSameOriginRedirectSigned: a redirect within the origin of a
// call signed with a proof key: through fgrl's transport, which signs each
// attempt, it is followed and the new request's signature verifies;
// through a Transport that is not fgrl's the request was signed once, for
// the first path, and the copied Signature no longer matched the request
// it led to: such a call now follows no redirect.
func TestReattackSameOriginRedirectSigned(t *testing.T) {
	for _, fgrl := range []bool{false, true} {
		t.Run(fmt.Sprint("fgrl transport ", fgrl), func(t *testing.T) {
			key := proofKey(t)
			verr := make(chan error, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, "/moved") {
					http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
					return
				}
				r.Host = "profile.xboxlive.com"
				select {
				case verr <- xblsign.Verify(r, xblsign.ProofKeyOf(&key.PublicKey), time.Now(), xblsign.DefaultPolicy(), time.Minute):
				default:
				}
				io.WriteString(w, `{"profileUsers":[]}`)
			}))
			defer srv.Close()
			var rt http.RoundTripper = plainTransport(t)
			if fgrl {
				rt = &transport.Transport{TitleID: title, Base: plainTransport(t)}
			}
			c, err := New(Config{TitleID: title, Transport: rt, Endpoints: map[string]string{"profile.xboxlive.com": srv.URL},
				Tokens: TokenFunc(func(context.Context, string) (Token, error) {
					return Token{Authorization: "XBL3.0 x=1;T", Key: key}, nil
				})})
			if err != nil {
				t.Fatal(err)
			}
			callErr := failFastProfiles(c)
			select {
			case err := <-verr:
				if err != nil {
					t.Errorf("the request a same-origin redirect led to carries a Signature that does not verify: %v", err)
				}
			default:
				var e *Error
				if fgrl || !errors.As(callErr, &e) || e.StatusCode != http.StatusTemporaryRedirect {
					t.Errorf("the redirect was not followed: %v", callErr)
				}
			}
		})
	}
}

// TestReattackPagesLegitimateEnds: a listing that holds empty pages
// between full ones is read whole. (One that gives back the token its
// page was fetched with is an error since the third attack: the same page
// for ever, TestAttack3PagesSameTokenAgainIsError.)
func TestReattackPagesLegitimateEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscan(strings.TrimPrefix(r.URL.Query().Get("continuationToken"), "p"), &i)
		items := `[]`
		if i%10 == 0 {
			items = fmt.Sprintf(`[{"id":"%d"}]`, i)
		}
		next := fmt.Sprint("p", i+1)
		if i >= 200 {
			next = "" // the last page
		}
		fmt.Fprintf(w, `{"achievements":%s,"pagingInfo":{"continuationToken":%q}}`, items, next)
	}))
	defer srv.Close()
	c := hostileClient(t, srv, plainTransport(t), "achievements.xboxlive.com")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	for _, err := range c.As(me).AllAchievements(ctx, me, title, 10) {
		if err != nil {
			t.Fatalf("after %d items: %v", n, err)
		}
		n++
	}
	if n != 21 {
		t.Errorf("%d items, want 21", n)
	}
}

// TestReattackSignInErrorCarriesNoPostedToken: an XSTS refusal whose
// Message echoes the delegation token it was posted reached SignInError's
// text (clipped, not redacted).
func TestReattackSignInErrorCarriesNoPostedToken(t *testing.T) {
	const delegation = "SECRET-DELEGATION-TOKEN-0123456789abcdef"
	s := serviceAuth(t, func(r *http.Request, delegation string) *http.Response {
		resp := answer(r, fmt.Sprintf(`{"XErr":0,"Message":"invalid delegation token %s"}`, delegation))
		resp.StatusCode = 400
		return resp
	})
	s.SetDelegation(me, delegation)
	_, err := s.Token(context.Background(), me)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "DELEGATION-TOKEN") {
		t.Errorf("the sign-in error carries the delegation token it posted: %.300q", err.Error())
	}
}

// TestReattackSameOriginForms: a redirect named with another scheme, host
// or port in any spelling is not followed (URL.Host compared as written:
// case, trailing dot, :443 and IPv6 forms all count as another origin,
// which refuses rather than leaks); userinfo is not part of the origin.
func TestReattackSameOriginForms(t *testing.T) {
	first := httptest.NewRequest("GET", "https://profile.xboxlive.com/a", nil)
	for _, to := range []string{
		"https://PROFILE.xboxlive.com/b", "https://profile.xboxlive.com./b", "https://profile.xboxlive.com:443/b",
		"http://profile.xboxlive.com/b", "https://profile.xboxlive.com.evil.example/b", "https://[::1]/b",
		"https://profile.xboxlive.com:8443/b", "https://evil.example/b",
	} {
		req := httptest.NewRequest("GET", to, nil)
		if err := sameOrigin(req, []*http.Request{first}); err == nil {
			t.Errorf("a redirect to %s is followed", to)
		}
	}
	req := httptest.NewRequest("GET", "https://user:pw@profile.xboxlive.com/b", nil)
	if err := sameOrigin(req, []*http.Request{first}); err != nil {
		t.Errorf("userinfo on the same origin: %v", err)
	}
}
