package client

// Outside attack (helper 168) on redirects: to another host, to the same
// host under another name, scheme or port.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// held: Config.Transport: "A redirect is followed only within its origin
// (scheme, host and port): one to another origin is the call's answer,
// an error, so no token or signature is sent where the call was not
// made": a 302 or 307 to another host, to the same server under
// another name (localhost), scheme (https) or port sends nothing there,
// with the default transport and with a plain one.
func TestAttack53RedirectLeavesNoCredentials(t *testing.T) {
	var elsewhere atomic.Int64
	var leaked atomic.Value
	other := attack53Server(t, func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if a := r.Header.Get("Authorization") + r.Header.Get("Signature"); a != "" {
			leaked.Store(a)
		}
		w.WriteHeader(200)
	})
	otherTLS := httptest.NewTLSServer(other.Config.Handler)
	t.Cleanup(otherTLS.Close)
	var target atomic.Value
	var here atomic.Int64
	srv := attack53Server(t, func(w http.ResponseWriter, r *http.Request) {
		if here.Add(1) > 1 && r.Header.Get("Authorization") != "" {
			leaked.Store("followed to " + r.Host + r.URL.String())
		}
		code := 307
		if strings.Contains(target.Load().(string), "302") {
			code = 302
		}
		http.Redirect(w, r, strings.TrimSuffix(target.Load().(string), "#302"), code)
	})
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	targets := []string{
		other.URL + "/users/xuid(" + me + ")",
		other.URL + "/users/xuid(" + me + ")#302",
		otherTLS.URL + "/users/xuid(" + me + ")",
		"http://localhost" + port + "/users/xuid(" + me + ")",
		"https://127.0.0.1" + port + "/users/xuid(" + me + ")",
		"http://[::1]" + port + "/users/xuid(" + me + ")",
		"//localhost" + port + "/x",
	}
	for _, plain := range []bool{false, true} {
		var c *Client
		if plain {
			base := &http.Transport{}
			t.Cleanup(base.CloseIdleConnections)
			var err error
			c, err = New(Config{TitleID: title, Transport: base, Endpoints: map[string]string{"userpresence.xboxlive.com": srv.URL},
				Tokens: TokenFunc(func(_ context.Context, x string) (Token, error) {
					tk := attack53Token(x)
					tk.Signature = "" // a plain transport follows no signed redirect at all; unsigned, the origin rule alone
					return tk, nil
				})})
			if err != nil {
				t.Fatal(err)
			}
		} else {
			c = attack53Client(t, srv, nil, "userpresence.xboxlive.com")
		}
		for _, tg := range targets {
			target.Store(tg)
			here.Store(0)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := c.As(me).GetPresence(ctx, "2533274799999999")
			cancel()
			var e *Error
			if !errors.As(err, &e) || e.StatusCode < 300 || e.StatusCode > 399 {
				t.Errorf("plain %v, redirect to %s: %v, want the 3xx as an *Error", plain, tg, err)
			}
		}
	}
	if n := elsewhere.Load(); n > 0 {
		t.Errorf("%d requests reached another origin", n)
	}
	if l := leaked.Load(); l != nil {
		t.Errorf("credentials sent where the call was not made: %v", l)
	}
}
