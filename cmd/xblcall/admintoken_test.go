package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAdminTokenFromEnvironment: check and mock take the admin token from
// $XBLCALL_ADMIN_TOKEN when --admin-token is not given (a token on the
// command line is in the process list), send and take it as the flag's,
// and print it nowhere; a flag given beats the variable.
func TestAdminTokenFromEnvironment(t *testing.T) {
	const secret, flagged = "ENVADMINSECRET0123456789", "FLAGADMINSECRET0123456789"
	setenv(t, adminTokenEnv, secret)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(401)
		io.WriteString(w, `{"auth":"`+r.Header.Get("Authorization")+`"}`)
	}))
	defer srv.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "Bearer " + secret},
		{[]string{"--admin-token", flagged}, "Bearer " + flagged},
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		code, out, errs := xblcall(t, append([]string{"check", "--mock", srv.URL, "--no-429"}, c.args...)...)
		mu.Lock()
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("check %v sent Authorization %q, want %q", c.args, got, c.want)
		}
		mu.Unlock()
		if code != 1 || strings.Contains(out+errs, secret) || strings.Contains(out+errs, flagged) {
			t.Errorf("check %v: exit %d, stdout %q, stderr %q: want exit 1 and no admin token", c.args, code, out, errs)
		}
	}

	// The mock admits a peer off this machine with the variable's token.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	var errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"mock", "--addr", "127.0.0.1:0"}, out, &errb, withTestEnv(t)) }()
	for !strings.Contains(out.String(), "metrics http") {
		select {
		case code := <-done:
			t.Fatalf("mock: exit %d: %s", code, errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if !strings.Contains(out.String(), "admin token: the one given (--admin-token or $XBLCALL_ADMIN_TOKEN, not printed)") || strings.Contains(out.String()+errb.String(), secret) {
		t.Errorf("mock's banner: %q", out.String())
	}
	cancel()
	<-done
}
