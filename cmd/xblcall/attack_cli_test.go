package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckVerdictFailsClosed: check passes (exit 0, "ok") only on a
// whole pass: 200, ok, no failures, and under --certify a green or yellow
// report. Before: a 422 reading ok, an ok listing a failure, a --certify
// answer with no report or a red one all exited 0 printing "ok".
func TestCheckVerdictFailsClosed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		status  int
		body    string
		certify bool
	}{
		{"422 that reads ok", 422, `{"ok":true,"failures":[]}`, false},
		{"ok with a failure", 200, `{"ok":true,"failures":["429: GET https://x at t"]}`, false},
		{"certify without a report", 200, `{"ok":true,"failures":[]}`, true},
		{"certify with a red report", 200, `{"ok":true,"failures":[],"report":{"verdict":"red","calls":5}}`, true},
		{"certify with an incomplete report", 200, `{"ok":true,"failures":[],"report":{"verdict":"incomplete","calls":5}}`, true},
		{"certify of no calls", 200, `{"ok":true,"failures":[],"report":{"verdict":"green","calls":0}}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			args := []string{"check", "--mock", srv.URL, "--no-429"}
			if c.certify {
				args = append(args, "--certify")
			}
			code, out, errs := xblcall(t, args...)
			if code != 1 || strings.Contains(out, "ok") {
				t.Errorf("%d %s: exit %d, stdout %q, stderr %q; want exit 1, no ok", c.status, c.body, code, out, errs)
			}
		})
	}
	// A whole pass still passes.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true,"failures":[],"report":{"verdict":"green","calls":3}}`)
	}))
	defer srv.Close()
	if code, out, errs := xblcall(t, "check", "--mock", srv.URL, "--certify"); code != 0 || out != "ok\n" {
		t.Errorf("a whole pass: exit %d, %q %q", code, out, errs)
	}
}

// TestCheckCertifyNoCalls: a mock that saw no calls cannot be certified
// (analyze: "the traces hold no calls", exit 2). Before: green, exit 0.
func TestCheckCertifyNoCalls(t *testing.T) {
	t.Parallel()
	url, _ := startMock(t)
	code, out, errs := xblcall(t, "check", "--mock", url, "--certify")
	if code != 1 || strings.Contains(out, "ok") {
		t.Errorf("check --certify of no calls: exit %d, %q %q; want exit 1", code, out, errs)
	}
}

// TestLoadRateThatNeverEnds: --rate 1e-300 spaces the second start
// 1e300 s after the first, which the limiter waits as forever: a usage
// error. Before: the run sat at "calls 1/2" until interrupted.
func TestLoadRateThatNeverEnds(t *testing.T) {
	t.Parallel()
	for _, r := range []string{"1e-300", "1e-9"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var out, errs bytes.Buffer
		start := time.Now()
		code := run(ctx, []string{"call", "--mock", "-n", "2", "--rate", r, loadURL}, &out, &errs, withTestEnv(t))
		if code != 2 || time.Since(start) > 3*time.Second {
			t.Errorf("--rate %s -n 2: exit %d after %v: %s%s; want exit 2 at once", r, code, time.Since(start), out.String(), errs.String())
		}
	}
}

// TestWriteOverSpecialFile: --ca-out naming a FIFO (or, as root,
// /dev/null) must not replace it: exit 2, the FIFO left as it was.
// Before: renamed over, a PEM file where the FIFO was (as root, /dev/full
// became a regular file).
func TestWriteOverSpecialFile(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var out, errs bytes.Buffer
	code := run(ctx, []string{"mock", "--addr", "127.0.0.1:0", "--ca-out", fifo}, &out, &errs, withTestEnv(t))
	fi, err := os.Lstat(fifo)
	if code != 2 || err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("--ca-out FIFO: exit %d (%s), the FIFO now %v %v; want exit 2, the FIFO kept", code, errs.String(), fi.Mode(), err)
	}
}

// TestCheckErrorHoldsNoAdminToken: a server at --mock that echoes the
// request (a proxy's error page, the wrong service) must not make check
// print the admin token in its error. Before: "the mock answered 401:
// {\"auth\":\"Bearer <token>\"}" on stderr.
func TestCheckErrorHoldsNoAdminToken(t *testing.T) {
	t.Parallel()
	const secret = "ADMINSECRET0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, `{"auth":"`+r.Header.Get("Authorization")+`"}`)
	}))
	defer srv.Close()
	code, out, errs := xblcall(t, "check", "--mock", srv.URL, "--admin-token", secret, "--no-429")
	if code != 1 || strings.Contains(out+errs, secret) {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit 1 and no admin token", code, out, errs)
	}
}
