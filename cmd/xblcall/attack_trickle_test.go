package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCallEndsOnATrickledBody: a server that sends its headers at once,
// then its body a byte every 100 ms for 60 s. Without --timeout, call (one
// call, and each call of a load run) ends within its attempt timeout of
// the answer (here 1 s), exit 1 naming the bound. Before: the body was read
// for as long as it trickled (12 s and on, exit 130 at the test's
// interrupt; up to 64 MiB, a year and more at a byte a second).
func TestCallEndsOnATrickledBody(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		for range 600 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	for _, load := range [][]string{nil, {"-n", "2", "-c", "2"}} {
		ctx, interrupt := context.WithTimeout(context.Background(), 8*time.Second)
		args := append([]string{"call", "--via", srv.URL, "--token", "XBL3.0 x=1;t", "--attempt-timeout", "1s"}, load...)
		var out, errs bytes.Buffer
		start := time.Now()
		code := run(ctx, append(args, "https://profile.xboxlive.com/users/me/profile/settings"), &out, &errs, withTestEnv(t))
		took := time.Since(start)
		interrupt()
		if code != 1 || took > 5*time.Second || !strings.Contains(errs.String(), "longer than 1s") {
			t.Errorf("call %v against a trickled body: exit %d after %v: %s", load, code, took, clip(errs.String()))
		}
	}
}
