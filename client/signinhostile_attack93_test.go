package client

// Hostile sign-in servers: slow, never-ending, huge, cut off, or answering
// 200 with JSON that lacks the token or has the wrong types. Every call
// must end within its context (or Timeout), every failure must be a
// *SignInError with the HRESULT of its cause, and memory must stay
// bounded.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/xblgo/fgrl/hresult"
)

// attack93Server routes every sign-in host to one loopback server; route
// answers by the host the client asked for.
func attack93Server(t *testing.T, route func(w http.ResponseWriter, r *http.Request, host string)) *http.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route(w, r, r.Header.Get("X-Atk213-Host"))
	}))
	t.Cleanup(srv.Close)
	target, _ := url.Parse(srv.URL)
	base := srv.Client().Transport
	return &http.Client{Transport: attack93RT(func(r *http.Request) (*http.Response, error) {
		r2 := r.Clone(r.Context())
		r2.Header.Set("X-Atk213-Host", r.URL.Host)
		r2.URL.Scheme, r2.URL.Host, r2.Host = target.Scheme, target.Host, target.Host
		return base.RoundTrip(r2)
	})}
}

type attack93RT func(*http.Request) (*http.Response, error)

func (f attack93RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack93User is a SignIn whose Microsoft access token is valid for long,
// so that its first request is the user token's.
func attack93User(hc *http.Client) *SignIn {
	return &SignIn{OAuth: MicrosoftOAuth("attack93-client"), HTTPClient: hc,
		Microsoft: &oauth2.Token{AccessToken: "attack93-access-SECRET-0123456789", RefreshToken: "attack93-refresh-SECRET-0123456789",
			Expiry: time.Now().Add(24 * time.Hour)}}
}

// A user.auth (for SignIn) or XSTS (for ServiceSignIn, after XSAS gave
// its S-token) that answers 200 and then sends its body a byte every 50
// ms, forever: Timeout ends the sign-in, which timed out.
//
// Promise (SignInError.Is): "so that errors.Is(err,
// hresult.HTTP_E_STATUS_REQUEST_TIMEOUT) holds for a sign-in that timed
// out"; HRESULT: "else the HRESULT of the cause (a deadline, a network
// error)"; SignIn.Timeout: "Timeout bounds one sign-in, all its round trips
// together".
func TestAttack93SignInDripBodyTimeoutIsTimeout(t *testing.T) {
	drip := func(w http.ResponseWriter, r *http.Request, host string) {
		io.Copy(io.Discard, r.Body)
		if host == "service.auth.xboxlive.com" { // the S-token at once: XSTS is the step that drips
			now := time.Now().UTC()
			fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":"S-token"}`, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
			return
		}
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"Token":"`))
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
				w.Write([]byte("a"))
				w.(http.Flusher).Flush()
			}
		}
	}
	for _, tc := range []struct {
		name string
		run  func(hc *http.Client) error
	}{
		{"SignIn user token", func(hc *http.Client) error {
			s := attack93User(hc)
			s.Timeout = 500 * time.Millisecond
			_, err := s.XboxToken(context.Background())
			return err
		}},
		{"ServiceSignIn XSTS", func(hc *http.Client) error {
			s := &ServiceSignIn{HTTPClient: hc, Timeout: 500 * time.Millisecond}
			_, err := s.ServiceToken(context.Background())
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := attack93Server(t, drip)
			start := time.Now()
			err := tc.run(hc)
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v with Timeout 500ms", d)
			}
			var se *SignInError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *SignInError", err, err)
			}
			if se.HRESULT() != hresult.HTTP_E_STATUS_REQUEST_TIMEOUT || !errors.Is(err, hresult.HTTP_E_STATUS_REQUEST_TIMEOUT) {
				t.Errorf("a sign-in that timed out reading the answer: HRESULT %v, errors.Is timeout %v, Err %v; error %q",
					se.HRESULT(), errors.Is(err, hresult.HTTP_E_STATUS_REQUEST_TIMEOUT), se.Err, err)
			}
		})
	}
}

// A user.auth server that sends 200 and a Content-Length of 500, 20 bytes of
// the body, then drops the connection: the request failed with a network
// error (unexpected EOF) mid-answer.
//
// Promise (SignInError): "Err error // the cause, when a request failed (a
// deadline, a network error)"; HRESULT: "else the HRESULT of the cause (a
// deadline, a network error), else of the HTTP status, else
// E_XBL_AUTH_UNKNOWN_ERROR"; Unwrap: "Unwrap returns the cause."
func TestAttack93SignInCutOffAnswerKeepsCause(t *testing.T) {
	hc := attack93Server(t, func(w http.ResponseWriter, r *http.Request, host string) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"Token\":\"abcdefghij")
		buf.Flush()
	})
	_, err := attack93User(hc).XboxToken(context.Background())
	var se *SignInError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T), want a *SignInError", err, err)
	}
	if se.Err == nil || !errors.Is(err, io.ErrUnexpectedEOF) || se.HRESULT() == hresult.E_XBL_AUTH_UNKNOWN_ERROR {
		t.Errorf("an answer cut off by the network: Err %v, errors.Is(io.ErrUnexpectedEOF) %v, HRESULT %v; want the cause kept "+
			"(its HRESULT E_FAIL), not E_XBL_AUTH_UNKNOWN_ERROR; error %q",
			se.Err, errors.Is(err, io.ErrUnexpectedEOF), se.HRESULT(), err)
	}
}

// attack93Endless is a body that never ends, counting what was read of it.
type attack93Endless struct{ n *atomic.Int64 }

func (e attack93Endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n.Add(int64(len(p)))
	return len(p), nil
}
func (e attack93Endless) Close() error { return nil }

// held: answers that are endless, huge, or 200 with JSON lacking the token
// or of the wrong types, at each step (the Microsoft account, user.auth,
// XSTS, XSAS): each call ends with a *SignInError naming the step, whose
// HRESULT is a failure; an endless answer is read no further than a small
// bound.
//
// Promise (package doc): "Every failure of a call is an *Error, and of a
// sign-in a *SignInError"; signin.go maxAuthBody "bounds an
// authentication answer".
func TestAttack93SignInHostileAnswers(t *testing.T) {
	now := time.Now().UTC()
	good := func(host string) string {
		return fmt.Sprintf(`{"IssueInstant":%q,"NotAfter":%q,"Token":"T-%s","DisplayClaims":{"xui":[{"uhs":"42","xid":"2533274790000001"}]}}`,
			now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), host)
	}
	bodies := map[string]string{
		"no token":            fmt.Sprintf(`{"NotAfter":%q}`, now.Add(time.Hour).Format(time.RFC3339)),
		"token a number":      fmt.Sprintf(`{"Token":12345,"NotAfter":%q}`, now.Add(time.Hour).Format(time.RFC3339)),
		"NotAfter a number":   `{"Token":"T","NotAfter":1700000000}`,
		"NotAfter garbage":    `{"Token":"T","NotAfter":"soon"}`,
		"xui an object":       fmt.Sprintf(`{"Token":"T","NotAfter":%q,"DisplayClaims":{"xui":{"uhs":"1"}}}`, now.Add(time.Hour).Format(time.RFC3339)),
		"uhs a number":        fmt.Sprintf(`{"Token":"T","NotAfter":%q,"DisplayClaims":{"xui":[{"uhs":1}]}}`, now.Add(time.Hour).Format(time.RFC3339)),
		"null":                `null`,
		"array":               `[]`,
		"not JSON":            `<html>hello</html>`,
		"XErr a string (401)": `{"XErr":"2148916233","Message":"no"}`,
	}
	for _, step := range []string{"user.auth.xboxlive.com", "xsts.auth.xboxlive.com"} {
		for name, body := range bodies {
			t.Run(step+"/"+name, func(t *testing.T) {
				hc := &http.Client{Transport: attack93RT(func(r *http.Request) (*http.Response, error) {
					status, b := 200, good(r.URL.Host)
					if r.URL.Host == step {
						b = body
						if strings.Contains(name, "(401)") {
							status = 401
						}
					}
					return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
						Body: io.NopCloser(strings.NewReader(b)), Request: r}, nil
				})}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				x, err := attack93User(hc).XboxToken(ctx)
				var se *SignInError
				if !errors.As(err, &se) {
					t.Fatalf("got %+v, %v (%T); want a *SignInError", x, err, err)
				}
				if h := se.HRESULT(); h == hresult.S_OK || int32(h) >= 0 {
					t.Errorf("HRESULT %v is no failure", h)
				}
				if want := map[string]string{"user.auth.xboxlive.com": "Xbox user token", "xsts.auth.xboxlive.com": "XSTS token"}[step]; se.Step != want {
					t.Errorf("step %q, want %q: %v", se.Step, want, err)
				}
			})
		}
	}
	for _, step := range []string{"login.microsoftonline.com", "user.auth.xboxlive.com", "xsts.auth.xboxlive.com", "service.auth.xboxlive.com"} {
		t.Run("endless/"+step, func(t *testing.T) {
			var read atomic.Int64
			hc := &http.Client{Transport: attack93RT(func(r *http.Request) (*http.Response, error) {
				if r.URL.Host == step {
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
						Body: attack93Endless{&read}, Request: r}, nil
				}
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(good(r.URL.Host))), Request: r}, nil
			})}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var err error
			if step == "service.auth.xboxlive.com" {
				_, err = (&ServiceSignIn{HTTPClient: hc}).ServiceToken(ctx)
			} else {
				s := attack93User(hc)
				if step == "login.microsoftonline.com" {
					s.Microsoft.Expiry = time.Now().Add(-time.Hour)
				}
				_, err = s.XboxToken(ctx)
			}
			var se *SignInError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *SignInError", err, err)
			}
			if n := read.Load(); n > 2<<20 {
				t.Errorf("read %d bytes of an endless answer", n)
			}
		})
	}
}

// held: a sign-in server that never answers: a caller whose context ends
// leaves at once with a *SignInError wrapping its context's error, and a
// caller without a deadline is released by Timeout.
//
// Promise (SignIn.XboxToken): "It returns a SignInError wrapping ctx's
// error when ctx ends first"; SignIn: "callers waiting for it leave when
// their own context ends".
func TestAttack93SignInSlowServerEndsWithContext(t *testing.T) {
	release := make(chan struct{})
	hc := attack93Server(t, func(w http.ResponseWriter, r *http.Request, host string) {
		io.Copy(io.Discard, r.Body) // so that the server sees the client leave
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the handlers
	s := attack93User(hc)
	s.Timeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.XboxToken(ctx)
	if d := time.Since(start); d > time.Second {
		t.Errorf("the caller with 200 ms left after %v", d)
	}
	var se *SignInError
	if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v (%T), want a *SignInError wrapping the deadline", err, err)
	}
	start = time.Now()
	_, err = s.XboxToken(context.Background())
	if d := time.Since(start); d > 4*time.Second || !errors.As(err, &se) {
		t.Errorf("a caller without deadline: %v after %v; want a *SignInError within Timeout", err, d)
	}
}
