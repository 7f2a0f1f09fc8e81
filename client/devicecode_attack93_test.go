package client

// The device code flow's polling (RFC 8628 3.4, 3.5): authorization_pending,
// slow_down, expired_token and access_denied answers, the code's expiry and
// the caller's context, in virtual time.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"

	"github.com/xblgo/fgrl/hresult"
)

// attack93Device is an identity platform whose device code lives expiresIn
// seconds with the given interval, and whose token endpoint answers the
// n-th poll (from 0) with answers[n] ("" past the list: the last one);
// "ok" is a token. It records when each poll came, after show was
// called.
type attack93Device struct {
	expiresIn, interval int
	answers             []string

	mu    sync.Mutex
	shown time.Time
	polls []time.Duration
}

func (d *attack93Device) client() *http.Client {
	return &http.Client{Transport: attack93RT(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(b))
		json := func(status int, body string) *http.Response {
			return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
				Body: io.NopCloser(strings.NewReader(body)), Request: r}
		}
		switch r.URL.String() {
		case MicrosoftDeviceCodeURL:
			body := fmt.Sprintf(`{"device_code":"attack93-device-code-SECRET-0123456789","user_code":"ABCD-EFGH","verification_uri":"https://microsoft.com/devicelogin","expires_in":%d`, d.expiresIn)
			if d.interval != 0 {
				body += fmt.Sprintf(`,"interval":%d`, d.interval)
			}
			return json(200, body+"}"), nil
		case MicrosoftTokenURL:
			if form.Get("device_code") != "attack93-device-code-SECRET-0123456789" {
				return json(400, `{"error":"invalid_grant","error_description":"unknown device code"}`), nil
			}
			d.mu.Lock()
			n := len(d.polls)
			d.polls = append(d.polls, time.Since(d.shown))
			d.mu.Unlock()
			a := d.answers[min(n, len(d.answers)-1)]
			if a == "timeout" { // the connection timed out
				return nil, &net.OpError{Op: "read", Net: "tcp", Err: attack93Timeout{}}
			}
			if a == "ok" {
				return json(200, `{"token_type":"Bearer","access_token":"attack93-access","refresh_token":"attack93-refresh","expires_in":3600}`), nil
			}
			return json(400, fmt.Sprintf(`{"error":%q,"error_description":"AADSTS: %s"}`, a, a)), nil
		}
		return nil, fmt.Errorf("unexpected %s", r.URL)
	})}
}

func (d *attack93Device) login(ctx context.Context) (*oauth2.Token, error) {
	return DeviceLogin(ctx, MicrosoftOAuth("attack93-client"), d.client(), func(*oauth2.DeviceAuthResponse) {
		d.mu.Lock()
		d.shown = time.Now()
		d.mu.Unlock()
	})
}

func (d *attack93Device) gaps() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	var g []time.Duration
	last := time.Duration(0)
	for _, p := range d.polls {
		g = append(g, (p - last).Round(time.Second))
		last = p
	}
	return g
}

// held: the device code flow polls at the interval the service gave, adds
// 5 s to it at each slow_down for that and every later poll (RFC 8628
// 3.5), keeps polling on authorization_pending, and returns the token.
//
// Promise (DeviceLogin): "waits until the user has entered it, or ctx
// ends"; signin.go: "the Microsoft identity platform's device code flow".
func TestAttack93DeviceLoginSlowDownGrowsInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &attack93Device{expiresIn: 900, interval: 5,
			answers: []string{"authorization_pending", "slow_down", "slow_down", "authorization_pending", "ok"}}
		tok, err := d.login(context.Background())
		if err != nil || tok.AccessToken != "attack93-access" {
			t.Fatalf("token %+v, %v", tok, err)
		}
		want := []time.Duration{5 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 15 * time.Second}
		if got := d.gaps(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("gaps between polls %v, want %v (5 s, +5 s at each slow_down)", got, want)
		}
	})
}

// held: a user who never enters the code: polling ends when the device
// code expires (expires_in), with a *SignInError whose cause is the
// deadline, and no poll after it.
//
// Promise (package doc): "of a sign-in a *SignInError"; SignInError.Is:
// "errors.Is(err, hresult.HTTP_E_STATUS_REQUEST_TIMEOUT) holds for a
// sign-in that timed out".
func TestAttack93DeviceLoginEndsAtExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &attack93Device{expiresIn: 60, interval: 5, answers: []string{"authorization_pending"}}
		start := time.Now()
		_, err := d.login(context.Background())
		if took := time.Since(start); took > 61*time.Second || took < 55*time.Second {
			t.Errorf("a code of 60 s polled for %v", took)
		}
		var se *SignInError
		if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, hresult.HTTP_E_STATUS_REQUEST_TIMEOUT) {
			t.Errorf("error %v (%T), want a *SignInError that timed out", err, err)
		}
		if n := len(d.gaps()); n > 12 {
			t.Errorf("%d polls in 60 s at 5 s", n)
		}
		if err != nil && strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), "attack93-device-code-SECRET") {
			t.Errorf("the error quotes the device code: %#v", err)
		}
	})
}

// held: expired_token and access_denied end the flow at once (no further
// poll) with a *SignInError naming the service's code, without the device
// code.
//
// Promise (RFC 8628 3.5 as the package doc cites the device code flow;
// package doc: "of a sign-in a *SignInError").
func TestAttack93DeviceLoginTerminalErrors(t *testing.T) {
	for _, code := range []string{"expired_token", "access_denied"} {
		t.Run(code, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &attack93Device{expiresIn: 900, interval: 5, answers: []string{"authorization_pending", code, "ok"}}
				_, err := d.login(context.Background())
				var se *SignInError
				if !errors.As(err, &se) || se.Step != "Microsoft account" || se.Status != 400 || !strings.Contains(err.Error(), code) {
					t.Errorf("error %v (%T)", err, err)
				}
				if n := len(d.gaps()); n != 2 {
					t.Errorf("%d polls, want 2 (none after %s)", n, code)
				}
				if err != nil && strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), "attack93-device-code-SECRET") {
					t.Errorf("the error quotes the device code: %#v", err)
				}
			})
		})
	}
}

// held: the caller's context ends the polling at once, with a
// *SignInError wrapping its error (E_ABORT for a cancel).
//
// Promise (DeviceLogin): "waits until the user has entered it, or ctx
// ends".
func TestAttack93DeviceLoginContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &attack93Device{expiresIn: 900, interval: 5, answers: []string{"authorization_pending"}}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(12*time.Second, cancel)
		start := time.Now()
		_, err := d.login(ctx)
		if took := time.Since(start); took != 12*time.Second {
			t.Errorf("cancelled at 12 s, returned at %v", took)
		}
		var se *SignInError
		if !errors.As(err, &se) || !errors.Is(err, context.Canceled) || se.HRESULT() != hresult.E_ABORT {
			t.Errorf("error %v (%T), want a *SignInError wrapping context.Canceled", err, err)
		}
		time.Sleep(time.Minute)
		if n := len(d.gaps()); n != 2 {
			t.Errorf("%d polls, want 2 (at 5 and 10 s, none after the cancel)", n)
		}
	})
}

// held: a device code answer without interval polls every 5 s (RFC 8628
// 3.2: "If no value is provided, clients MUST use 5 as the default").
func TestAttack93DeviceLoginDefaultInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &attack93Device{expiresIn: 900, answers: []string{"authorization_pending", "authorization_pending", "ok"}}
		if _, err := d.login(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(d.gaps()), fmt.Sprint([]time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second}); got != want {
			t.Errorf("gaps %s, want %s", got, want)
		}
	})
}

// attack93Timeout is a connection's timeout, as net reports one.
type attack93Timeout struct{}

func (attack93Timeout) Error() string   { return "i/o timeout" }
func (attack93Timeout) Timeout() bool   { return true }
func (attack93Timeout) Temporary() bool { return true }

// One poll of the device code flow meets a connection timeout; the user
// enters the code meanwhile. RFC 8628 3.5: "On encountering a connection
// timeout, clients MUST unilaterally reduce their polling frequency before
// retrying" (doubling the interval is RECOMMENDED): the flow goes on.
//
// Promise (DeviceLogin): "waits until the user has entered it, or ctx
// ends"; signin.go: "the Microsoft identity platform's device code flow"
// (RFC 8628). A single timed-out poll ends the whole sign-in: the user
// must start again with a new code.
func TestAttack93DeviceLoginPollTimeoutRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &attack93Device{expiresIn: 900, interval: 5, answers: []string{"authorization_pending", "timeout", "authorization_pending", "ok"}}
		tok, err := d.login(context.Background())
		if err != nil || tok == nil {
			t.Fatalf("one poll timed out, the code still valid for 14 minutes: DeviceLogin gave up after %d polls: %v", len(d.gaps()), err)
		}
		if g := d.gaps(); len(g) < 3 || g[2] <= 5*time.Second {
			t.Errorf("gaps between polls %v: want a longer one after the timeout", g)
		}
	})
}
