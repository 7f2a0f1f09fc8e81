package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"
)

// answer is a sign-in endpoint's 200 answer of body.
func answer(r *http.Request, body string) *http.Response {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}
}

// serviceAuth is a ServiceSignIn whose sign-in services are fakes: XSAS
// answers an S-token, XSTS what xsts makes of the request and of the
// delegation token it posts.
func serviceAuth(t *testing.T, xsts func(r *http.Request, delegation string) *http.Response) *ServiceSignIn {
	fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		var req struct {
			Properties struct{ DelegationToken string }
		}
		json.NewDecoder(r.Body).Decode(&req)
		if strings.Contains(r.URL.Host, "service.auth") {
			return answer(r, fmt.Sprintf(`{"NotAfter":%q,"Token":"S"}`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))), nil
		}
		return xsts(r, req.Properties.DelegationToken), nil
	})
	return &ServiceSignIn{HTTPClient: &http.Client{Transport: fake}, ProofKey: proofKey(t)}
}

// sharedHash is an XSTS that gives me (delegation "dA") and other ("dB")
// the same userhash, and a new token each time.
func sharedHash() func(r *http.Request, delegation string) *http.Response {
	var n atomic.Int64
	return func(r *http.Request, delegation string) *http.Response {
		xid := map[string]string{"dA": me, "dB": other}[delegation]
		return answer(r, fmt.Sprintf(`{"NotAfter":%q,"Token":"T-%s-%d","DisplayClaims":{"xui":[{"uhs":"samehash","xid":%q}]}}`,
			time.Now().Add(time.Hour).UTC().Format(time.RFC3339), xid, n.Add(1), xid))
	}
}

// sharedHashUsers is a ServiceSignIn acting for me and other, whom XSTS
// gave one userhash, each with a token; ta is me's.
func sharedHashUsers(t *testing.T) (*ServiceSignIn, Token) {
	t.Helper()
	ctx := context.Background()
	s := serviceAuth(t, sharedHash())
	s.SetDelegation(me, "dA")
	s.SetDelegation(other, "dB")
	ta, err := s.Token(ctx, me)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Token(ctx, other); err != nil {
		t.Fatal(err)
	}
	return s, ta
}

// proofKey is a fresh ECDSA P-256 key.
func proofKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestSignInRefusesRedirect guards the tokens a sign-in posts: an auth
// endpoint answering 307 or 308 must not get the request, Microsoft access
// token or S-token and all, posted again to the host it names, and the
// caller's client is left as it was. An outside attack found sign-ins
// following such redirects.
func TestSignInRefusesRedirect(t *testing.T) {
	const accessSecret, serviceSecret = "MS-ACCESS-SECRET", "S-TOKEN-SECRET"
	var mu sync.Mutex
	var stolen []string // the bodies the evil host got
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		stolen = append(stolen, string(b))
		mu.Unlock()
		fmt.Fprintf(w, `{"NotAfter":%q,"Token":"T","DisplayClaims":{"xui":[{"uhs":"h","xid":%q}]}}`,
			time.Now().Add(time.Hour).UTC().Format(time.RFC3339), me)
	}))
	defer evil.Close()
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "service.auth.xboxlive.com" {
			fmt.Fprintf(w, `{"NotAfter":%q,"Token":%q}`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), serviceSecret)
			return
		}
		http.Redirect(w, r, evil.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer auth.Close()
	authURL, _ := url.Parse(auth.URL)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if strings.HasSuffix(r.URL.Hostname(), ".xboxlive.com") { // to the loopback auth server, as the attack did
			r = r.Clone(r.Context())
			r.Host, r.URL.Scheme, r.URL.Host = r.URL.Host, "http", authURL.Host
		}
		return tr.RoundTrip(r)
	})}

	s := &SignIn{OAuth: MicrosoftOAuth("c"), HTTPClient: hc,
		Microsoft: &oauth2.Token{AccessToken: accessSecret, RefreshToken: "r", Expiry: time.Now().Add(time.Hour)}}
	if x, err := s.XboxToken(context.Background()); err == nil {
		t.Errorf("sign-in redirected: got %+v, want an error", x)
	} else if !strings.Contains(err.Error(), "307") {
		t.Errorf("sign-in redirected: %v, want the 307 as the failure", err)
	}
	ss := &ServiceSignIn{HTTPClient: hc, ProofKey: proofKey(t)}
	if x, err := ss.ServiceToken(context.Background()); err == nil {
		t.Errorf("service sign-in redirected: got %+v, want an error", x)
	}
	if hc.CheckRedirect != nil {
		t.Error("the caller's HTTPClient was changed")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, b := range stolen {
		if strings.Contains(b, accessSecret) || strings.Contains(b, serviceSecret) {
			t.Errorf("the redirect's target got a token: %.200s", b)
		}
	}
}

// TestServiceRefreshNeverAnotherUsersToken guards delegated auth when XSTS
// gives two users the same userhash: a call of user A refused 401 is
// renewed with A's token or refused, never sent again with user B's. An
// outside attack found A's call retried as B.
func TestServiceRefreshNeverAnotherUsersToken(t *testing.T) {
	s, ta := sharedHashUsers(t)
	for _, stale := range []string{ta.Authorization, "XBL3.0 x=samehash;forged"} {
		req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings", nil)
		req.Header.Set("Authorization", stale)
		got, err := s.RefreshToken(req)
		if strings.Contains(got, other) {
			t.Errorf("refused with %.40q, renewed as the other user: %q", stale, got)
		} else if err == nil && !strings.Contains(got, "T-"+me+"-") {
			t.Errorf("refused with %.40q, renewed as %q; want user A's token or an error", stale, got)
		}
	}
}

// TestSignInTokenXUIDClipped guards the errors' text: the XUID XSTS
// names, when the token is for another user, reaches the error clipped and
// escaped. An outside attack sent 30 KB of it, terminal escapes and
// newlines in it.
func TestSignInTokenXUIDClipped(t *testing.T) {
	huge, _ := json.Marshal(strings.Repeat("\x1b[2J\nX", 5000))
	s := &SignIn{OAuth: MicrosoftOAuth("c"), Microsoft: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: time.Now().Add(time.Hour)}}
	s.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return answer(r, fmt.Sprintf(`{"NotAfter":%q,"Token":"T","DisplayClaims":{"xui":[{"uhs":"h","xid":%s}]}}`,
			time.Now().Add(time.Hour).UTC().Format(time.RFC3339), huge)), nil
	})}
	_, err := s.Token(context.Background(), me)
	if err == nil || len(err.Error()) > 300 || strings.ContainsAny(err.Error(), "\x1b\n") {
		t.Errorf("error of %d bytes: %.200q", len(err.Error()), err)
	}
}

// TestSignInDeadlineIsSignInError guards the package's promise that every
// failure of a sign-in is a *SignInError: one ended by the caller's
// deadline or by Timeout is one, and errors.Is still finds
// context.DeadlineExceeded. An outside attack got bare context errors.
func TestSignInDeadlineIsSignInError(t *testing.T) {
	tests := []struct {
		name     string
		service  bool          // ServiceSignIn, not SignIn
		expiry   time.Duration // of the Microsoft access token
		deadline time.Duration // the caller's; Timeout is 200 ms
	}{
		{"caller's deadline", false, time.Hour, 20 * time.Millisecond},
		{"Timeout, Microsoft refresh", false, -time.Hour, time.Second},
		{"Timeout, user token", false, time.Hour, time.Second},
		{"service, caller's deadline", true, 0, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
				defer cancel()
				hc := &http.Client{Transport: hanging}
				var err error
				if tt.service {
					_, err = (&ServiceSignIn{HTTPClient: hc, ProofKey: proofKey(t), Timeout: 200 * time.Millisecond}).ServiceToken(ctx)
				} else {
					_, err = (&SignIn{OAuth: MicrosoftOAuth("c"), HTTPClient: hc, Timeout: 200 * time.Millisecond,
						Microsoft: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: time.Now().Add(tt.expiry)}}).XboxToken(ctx)
				}
				var se *SignInError
				if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v (%T); want a *SignInError, deadline exceeded", err, err)
				}
				time.Sleep(time.Second) // the sign-in the caller left ends too
			})
		})
	}
}

// TestSignInRefusesExpiredAnswer guards freshness: an answer whose
// NotAfter has passed, with no IssueInstant to judge its lifetime by, is
// a failure, not a token. An outside attack had every call sign in again
// (50 calls, 100 sign-in requests) on such answers.
func TestSignInRefusesExpiredAnswer(t *testing.T) {
	s := &SignIn{OAuth: MicrosoftOAuth("c"), Microsoft: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: time.Now().Add(time.Hour)}}
	s.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return answer(r, fmt.Sprintf(`{"NotAfter":%q,"Token":"T","DisplayClaims":{"xui":[{"uhs":"h","xid":%q}]}}`,
			time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), me)), nil
	})}
	x, err := s.XboxToken(context.Background())
	var se *SignInError
	if !errors.As(err, &se) {
		t.Errorf("got %+v, %v; want a *SignInError", x, err)
	}
}

// TestPercentBounded guards Percent's promise of 0 to 100 whatever numbers
// the service sends: NaN, infinities and overflowing shares among them. An
// outside attack got math.MinInt64 from NaN.
func TestPercentBounded(t *testing.T) {
	for _, tt := range []struct{ current, target string }{
		{"NaN", "100"}, {"5", "NaN"}, {"Inf", "Inf"}, {"1", "1e-320"}, {"-Inf", "1"},
		{"1e308", "1e-308"}, {"Inf", "1"}, {"1", "Inf"}, {"1", "-Inf"}, {"50", "100"},
	} {
		a := Achievement{Progression: Progression{Requirements: []Requirement{{Current: tt.current, Target: tt.target}}}}
		if p := a.Percent(); p < 0 || p > 100 {
			t.Errorf("Percent of %s/%s = %d, want 0 to 100", tt.current, tt.target, p)
		}
	}
	if p := (&Achievement{Progression: Progression{Requirements: []Requirement{{Current: "50", Target: "100"}}}}).Percent(); p != 50 {
		t.Errorf("Percent of 50/100 = %d, want 50", p)
	}
}

// TestPartnerCertOddFiles guards LoadPartnerCertificate against the files
// put at its paths: a name with terminal escapes and newlines reaches the
// error quoted, and a FIFO is refused at once rather than waited on for
// ever. An outside attack found both.
func TestPartnerCertOddFiles(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "no\x1b[2Jsuch\nfile.pem")
	if _, err := LoadPartnerCertificate(name, name); err == nil || strings.ContainsAny(err.Error(), "\x1b\n") {
		t.Errorf("missing file: %q", err)
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %q, want it to be os.ErrNotExist", err)
	}

	fifo := filepath.Join(dir, "cert.pem")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := LoadPartnerCertificate(fifo, fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a FIFO read as a certificate")
		}
	case <-time.After(2 * time.Second):
		t.Error("LoadPartnerCertificate waits on a FIFO")
		for { // let it go: a writer that comes and goes, for each open
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}
