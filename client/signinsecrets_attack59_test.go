package client

// attack59: the third fixes attacked from outside: the tokens a 401 dropped
// stay among a sign-in's known secrets (SignIn.dropped, tokenSlot.dropped),
// reached through an error path that is not signInFailure (net/http's
// error quoting a malformed status line: no safetext.HideOpaque there,
// only the scrubbing of known secrets); DeviceLogin's withContext.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

const (
	attack59U1  = "eyAtk172UserFirst0011aa22bb33cc44dd55ee"
	attack59X1  = "eyAtk172XSTSFirst9988ff77ee66dd55cc44bb"
	attack59D1  = "eyAtk172DlgFirst1234abcd5678ef901234abcd"
	attack59X2  = "eyAtk172XSTSSecond5566aa77bb88cc99dd00ee"
	attack59XA1 = "eyAtk172XTokenA1first77aa66bb55cc44dd33"
	attack59DAo = "eyAtk172DelegationAold0123456789abcdef01"
	attack59DAn = "eyAtk172DelegationAnew0123456789abcdef02"
	attack59UA  = "2533274790000011"
)

// attack59Raw serves raw HTTP/1.1 on loopback: each request (one a
// connection) is answered with what answer returns for the host the client
// meant (X-Atk-Host, set by attack50Rewrite) and the body, written as is:
// a status line net/http's server could not write. It returns a client
// whose every request reaches it.
func attack59Raw(t *testing.T, answer func(host string, body []byte) string) *http.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				b, _ := io.ReadAll(req.Body)
				io.WriteString(c, answer(req.Header.Get("X-Atk-Host"), b))
			}(c)
		}
	}()
	target, _ := url.Parse("http://" + ln.Addr().String())
	return &http.Client{Transport: attack50Rewrite{target: target, base: &http.Transport{DisableKeepAlives: true}}}
}

// attack59JSON is a raw 200 answer with a JSON body.
func attack59JSON(status int, body string) string {
	return fmt.Sprintf("HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", status, len(body), body)
}

// attack59Token is a raw 200 answer of user.auth or XSTS.
func attack59Token(tok, xid, dlg string) string {
	now := time.Now().UTC()
	return attack59JSON(200, fmt.Sprintf(`{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"123","xid":%q,"DelegationToken":%q}]}}`,
		now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), tok, xid, dlg))
}

// attack59Malformed is an answer whose status line quotes echo: net/http's
// client fails with `malformed HTTP response "<line>"`, an error (not a
// refusal) that postAuth scrubs only of the secrets it knows.
func attack59Malformed(echo ...string) string {
	return "ECHO:" + strings.Join(echo, ":") + "\r\n\r\n"
}

// attack59SignIn is a SignIn against attack59Raw: the Microsoft token answers as
// attack50OK, user.auth answers user(n) for its n-th request (from 1),
// XSTS xsts(n).
func attack59SignIn(t *testing.T, user func(n int64) string, xsts func(n int64) string) *SignIn {
	var users, xstss atomic.Int64
	hc := attack59Raw(t, func(host string, body []byte) string {
		switch host {
		case "login.microsoftonline.com":
			return attack59JSON(200, fmt.Sprintf(`{"token_type":"Bearer","access_token":%q,"refresh_token":%q,"expires_in":3600}`, attack50Access, attack50Refresh))
		case "user.auth.xboxlive.com":
			return attack59Token(user(users.Add(1)), "", "")
		}
		return xsts(xstss.Add(1))
	})
	return attack50SignIn(hc)
}

// attack59Refused is a request a service refused with x's Authorization.
func attack59Refused(auth string) *http.Request {
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings", nil)
	req.Header.Set("Authorization", auth)
	return req
}

// held: RELIABILITY.md (03:55) "the tokens a 401 dropped stay among the
// sign-in's known secrets": one 401, and the renewal's XSTS answer is a
// malformed status line quoting the XSTS token just dropped, its
// delegation token and the previous user token: net/http's error quoting
// it is scrubbed of all three.
func TestAttack59SignInOne401NetworkErrorScrubbed(t *testing.T) {
	s := attack59SignIn(t, func(n int64) string { return fmt.Sprintf("eyAtk172User%02dabcdef0123456789abcdef", n) },
		func(n int64) string {
			if n == 1 {
				return attack59Token(attack59X1, "2533274791234567", attack59D1)
			}
			return attack59Malformed(attack59X1, attack59D1, "eyAtk172User01abcdef0123456789abcdef")
		})
	x, err := s.XboxToken(context.Background())
	if err != nil || x.Token != attack59X1 {
		t.Fatalf("first sign-in: %+v %v", x, err)
	}
	_, err = s.RefreshToken(attack59Refused(x.Authorization()))
	if err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("want net/http's malformed-answer error, got %v", err)
	}
	attack54Leaks(t, err, map[string]string{"XSTS token a 401 dropped": attack59X1, "its delegation token": attack59D1,
		"previous user token": "eyAtk172User01abcdef0123456789abcdef"})
}

// BREAK. Promise: RELIABILITY.md (03:55) "the tokens a 401 dropped stay
// among the sign-in's known secrets" (SignIn.dropped: "calls under way
// still carry them, so a step's refusal must not quote them");
// RELIABILITY.md "client errors never repeat a token". A call is refused
// 401 with X1: Renew drops X1 (dropped = {X1, ...}) and signs in again;
// that renewal fails (XSTS 500). Another call, sent with X1 before the 401,
// is refused 401 too: Renew runs again with nothing held, so
// `s.dropped = s.heldLocked()` sets dropped to nothing: X1, which no
// renewal has replaced and every call under way still carries, is no
// longer known. The second renewal's XSTS answer (a malformed status line
// quoting X1) reaches the caller with X1 whole.
func TestAttack59SignInRenewAfterFailedRenewalForgetsDropped(t *testing.T) {
	s := attack59SignIn(t, func(n int64) string { return fmt.Sprintf("eyAtk172User%02dabcdef0123456789abcdef", n) },
		func(n int64) string {
			switch n {
			case 1:
				return attack59Token(attack59X1, "2533274791234567", attack59D1)
			case 2:
				return attack59JSON(500, `{}`)
			}
			return attack59Malformed(attack59X1, attack59D1)
		})
	x, err := s.XboxToken(context.Background())
	if err != nil || x.Token != attack59X1 {
		t.Fatalf("first sign-in: %+v %v", x, err)
	}
	if _, err := s.RefreshToken(attack59Refused(x.Authorization())); err == nil {
		t.Fatal("the first renewal (XSTS 500) did not fail")
	} else {
		attack54Leaks(t, err, map[string]string{"X1": attack59X1})
	}
	_, err = s.RefreshToken(attack59Refused(x.Authorization())) // a call sent with X1 before the first 401
	if err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("want net/http's malformed-answer error, got %v", err)
	}
	attack54Leaks(t, err, map[string]string{"XSTS token X1, refused and still carried by calls under way": attack59X1,
		"X1's delegation token": attack59D1})
}

// BREAK. Promise: RELIABILITY.md (03:55) "the tokens a 401 dropped stay
// among the sign-in's known secrets"; SignIn.Renew's own comment (calls
// under way still carry them). Two 401s in a row: X1 refused, renewed to
// X2; X2 refused (calls sent with X1 are still under way: a 401 of X1
// after X2 came is answered with X2 at once, without a renewal). The
// second renewal sets dropped to {X2, U2}: X1 and U1 (a user token lives
// 14 days) are forgotten, and its error quotes them whole.
func TestAttack59SignInTwo401sForgetFirstDropped(t *testing.T) {
	u := func(n int64) string { return fmt.Sprintf("eyAtk172User%02dabcdef0123456789abcdef", n) }
	s := attack59SignIn(t, u, func(n int64) string {
		switch n {
		case 1:
			return attack59Token(attack59X1, "2533274791234567", attack59D1)
		case 2:
			return attack59Token(attack59X2, "2533274791234567", "")
		}
		return attack59Malformed(attack59X1, attack59D1, u(1))
	})
	x1, err := s.XboxToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	x2, err := s.RefreshToken(attack59Refused(x1.Authorization()))
	if err != nil || !strings.Contains(x2, attack59X2) {
		t.Fatalf("first renewal: %q %v", x2, err)
	}
	_, err = s.RefreshToken(attack59Refused(x2))
	if err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("want net/http's malformed-answer error, got %v", err)
	}
	attack54Leaks(t, err, map[string]string{"X1 (a 401 dropped it)": attack59X1, "X1's delegation token": attack59D1,
		"the first user token (a 401 dropped it)": u(1)})
}

// BREAK. Promise: RELIABILITY.md (03:55) "a slot's dropped token is known
// too" (tokenSlot.secrets: "the one a 401 last dropped (calls under way
// still carry it)"); ServiceSignIn.knownSecrets "each user's delegation
// token and X-token (and the tokens a 401 dropped)". User A's X-token XA1
// is refused 401: RefreshToken drops it and renews. While the renewal
// waits for XSTS, the game hands in A's new delegation token
// (SetDelegation): the new delegation has an empty slot, so XA1 (still
// carried by A's calls under way) is no longer known. The renewal under
// way fails with net/http's error quoting XA1: shown whole.
func TestAttack59ServiceSetDelegationDuringRenewalForgetsDropped(t *testing.T) {
	var xa atomic.Int64
	asked := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	hc := attack59Raw(t, func(host string, body []byte) string {
		switch host {
		case "service.auth.xboxlive.com":
			return attack59Token(attack54STok, "", "")
		}
		if !strings.Contains(string(body), attack59DAo) && !strings.Contains(string(body), attack59DAn) {
			return attack59Token(attack54XSvc, "", "")
		}
		if xa.Add(1) == 1 {
			return attack59Token(attack59XA1, attack59UA, "")
		}
		once.Do(func() { close(asked) })
		<-release
		return attack59Malformed(attack59XA1)
	})
	s := &ServiceSignIn{HTTPClient: hc, Timeout: 5 * time.Second}
	if err := s.SetDelegation(attack59UA, attack59DAo); err != nil {
		t.Fatal(err)
	}
	tok, err := s.Token(context.Background(), attack59UA)
	if err != nil || !strings.Contains(tok.Authorization, attack59XA1) {
		t.Fatalf("first X-token: %+v %v", tok, err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := s.RefreshToken(attack59Refused(tok.Authorization))
		got <- err
	}()
	select {
	case <-asked:
	case <-time.After(5 * time.Second):
		t.Fatal("no renewal reached XSTS")
	}
	if err := s.SetDelegation(attack59UA, attack59DAn); err != nil { // the user's new delegation token
		t.Fatal(err)
	}
	close(release)
	err = <-got
	if err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("want net/http's malformed-answer error, got %v", err)
	}
	attack54Leaks(t, err, map[string]string{"user A's X-token a 401 dropped (still in use)": attack59XA1})
}

// held: SignIn "is safe for concurrent use"; Renew "Calls refused with
// the same stale token share one sign-in". 64 goroutines renew the same
// refused token at once (run with -race): XSTS is asked once more, and
// every caller gets the new token.
func TestAttack59SignInConcurrentRenewShareOne(t *testing.T) {
	var xsts atomic.Int64
	s := attack59SignIn(t, func(n int64) string { return fmt.Sprintf("eyAtk172User%02dabcdef0123456789abcdef", n) },
		func(n int64) string {
			time.Sleep(50 * time.Millisecond)
			xsts.Store(n)
			return attack59Token(fmt.Sprintf("eyAtk172XSTS%02dabcdef0123456789abcdef", n), "2533274791234567", attack59D1)
		})
	x, err := s.XboxToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	auths := make([]string, 64)
	errs := make([]error, 64)
	for i := range auths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			auths[i], errs[i] = s.RefreshToken(attack59Refused(x.Authorization()))
			s.XboxToken(context.Background())
		}()
	}
	wg.Wait()
	for i := range auths {
		if errs[i] != nil || auths[i] != auths[0] || auths[i] == x.Authorization() {
			t.Fatalf("caller %d: %q %v (first %q)", i, auths[i], errs[i], auths[0])
		}
	}
	if xsts.Load() != 2 {
		t.Errorf("XSTS asked %d times, want 2 (one sign-in, one shared renewal)", xsts.Load())
	}
}

// attack59Stalled is a loopback server that takes every connection and never
// answers; it returns its address.
func attack59Stalled(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	return ln.Addr().String()
}

// BREAK. Promise: DeviceLogin "waits until the user has entered it, or ctx
// ends"; RELIABILITY.md (04:00) "client.DeviceLogin's client sends a
// request made without a context under the call's, so Ctrl-C ends it at
// once". A caller's http.Client with a Timeout (a common setting: 60 s
// here) against a device code endpoint that never answers: ctx ends after
// 300 ms, yet DeviceLogin waits for the client's Timeout. net/http's
// Client gives a request made without a context a deadline context of its
// own before the transport sees it, so withContext (Done() == nil) finds
// it "with a context" and leaves it as it is.
func TestAttack59DeviceLoginClientTimeoutIgnoresCtx(t *testing.T) {
	addr := attack59Stalled(t)
	cfg := &oauth2.Config{ClientID: "atk", Endpoint: oauth2.Endpoint{DeviceAuthURL: "http://" + addr + "/devicecode",
		TokenURL: "http://" + addr + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := DeviceLogin(ctx, cfg, &http.Client{Timeout: 8 * time.Second}, func(*oauth2.DeviceAuthResponse) {})
		done <- err
	}()
	select {
	case err := <-done:
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("DeviceLogin ended %v after start (ctx ended at 300 ms): %v", took.Round(100*time.Millisecond), err)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("DeviceLogin still waiting 3 s after start, 2.7 s after ctx ended (the client's 8 s Timeout decides)")
		<-done
	}
}

// held: DeviceLogin "signs a Microsoft account in" with the caller's
// client: its Transport (a proxy's, a TLS configuration's) sends both
// requests, its cookie jar is kept, and hc itself is not changed.
func TestAttack59DeviceLoginKeepsCallerClient(t *testing.T) {
	var sent atomic.Int64
	hc := attack59Raw(t, func(host string, body []byte) string {
		if strings.Contains(string(body), "device_code") {
			return attack59JSON(200, `{"access_token":"eyAtk172Access0123456789abcdef","token_type":"Bearer","refresh_token":"M.Atk172Refresh0123456789","expires_in":3600}`)
		}
		return attack59JSON(200, `{"device_code":"attack59devicecode0123456789","user_code":"ABCD-EFGH","verification_uri":"https://microsoft.com/link","expires_in":900,"interval":1}`)
	})
	base := hc.Transport
	hc.Transport = attack59Counting{base: base, n: &sent}
	jar, _ := cookiejar.New(nil)
	hc.Jar = jar
	before := *hc
	cfg := MicrosoftOAuth("atk-client")
	shown := false
	tok, err := DeviceLogin(context.Background(), cfg, hc, func(*oauth2.DeviceAuthResponse) { shown = true })
	if err != nil || !shown || tok.AccessToken == "" {
		t.Fatalf("%v %v %+v", err, shown, tok)
	}
	if sent.Load() < 2 {
		t.Errorf("the caller's transport sent %d requests, want 2", sent.Load())
	}
	if hc.Transport != before.Transport || hc.CheckRedirect != nil || hc.Jar != jar {
		t.Errorf("the caller's client changed")
	}
}

type attack59Counting struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (c attack59Counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// BREAK (judged: the two promises disagree). Promise: microsoftError
// "makes a SignInError of a failed Microsoft account request: the OAuth
// error code and description when the service sent them" and
// SignInError.Error "names the step and the cause". The Microsoft identity
// platform's answer to an unknown client ID (AADSTS700016) names the
// application identifier the request sent, which is no credential (the
// client ID is public, in every sign-in URL) and is what the user must
// check; safetext.HideOpaque (RELIABILITY.md 03:55: "loses each run of 24
// bytes or more of a token's alphabet") replaces the GUID with "[36 bytes
// hidden]", so the user cannot see which ID was refused.
func TestAttack59MicrosoftErrorHidesApplicationID(t *testing.T) {
	const id = "c36a9fb6-4f2a-41ff-90bd-ae7cc92031eb"
	hc := attack59Raw(t, func(host string, body []byte) string {
		return attack59JSON(400, `{"error":"unauthorized_client","error_description":"AADSTS700016: Application with identifier '`+id+`' was not found in the directory 'Microsoft Accounts'."}`)
	})
	_, err := DeviceLogin(context.Background(), MicrosoftOAuth(id), hc, func(*oauth2.DeviceAuthResponse) {})
	var se *SignInError
	if !errors.As(err, &se) {
		t.Fatalf("want a SignInError, got %v", err)
	}
	if !strings.Contains(err.Error(), id) {
		t.Errorf("the refusal does not name the application identifier it was sent: %v", err)
	}
}
