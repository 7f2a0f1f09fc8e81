package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestWriteThroughLinkToSpecialFile: a file written by renaming over
// (--ca-out) that is a symbolic link to a FIFO (or a device: /dev/stdout
// is a link to the process's descriptor) is refused, exit 2, the link
// kept, as a FIFO named directly is. Before: exit 0 with the link itself
// replaced by a regular file (as root, --ca-out /dev/stdout would have
// replaced /dev/stdout for every program).
func TestWriteThroughLinkToSpecialFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	link := filepath.Join(dir, "ca.pem")
	if err := os.Symlink(fifo, link); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var out, errs bytes.Buffer
	code := run(ctx, []string{"mock", "--addr", "127.0.0.1:0", "--ca-out", link}, &out, &errs, withTestEnv(t))
	fi, err := os.Lstat(link)
	if code != 2 || err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("--ca-out a link to a FIFO: exit %d (%s), the link now %v %v; want exit 2, the link kept", code, errs.String(), fi.Mode(), err)
	}
}

// slowWriter is a standard output that takes 200 ms a write (a pager, a
// slow pipe): the reader, not the server, is slow.
type slowWriter struct{ b bytes.Buffer }

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(200 * time.Millisecond)
	return w.b.Write(p)
}

// TestSlowStdoutNotCutAsTrickle: call's bound on reading an answer's
// body (--attempt-timeout) is on the server's sending it, not on the time
// standard output takes to take it. A server that sends 256 KiB at once,
// printed to an output that takes 200 ms a write: the whole body printed,
// exit 0. Before: exit 1, "the answer's body took longer than 500ms", the
// body cut short.
func TestSlowStdoutNotCutAsTrickle(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 256<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(body))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var out slowWriter
	var errs bytes.Buffer
	code := run(ctx, []string{"call", "--via", srv.URL, "--token", "XBL3.0 x=1;t", "--attempt-timeout", "500ms",
		"https://profile.xboxlive.com/users/me/profile/settings"}, &out, &errs, withTestEnv(t))
	if code != 0 || !strings.Contains(out.b.String(), body) {
		t.Errorf("a fast body to a slow output: exit %d, %d bytes printed of %d: %s", code, out.b.Len(), len(body), clip(errs.String()))
	}
}

// TestCheckAnswerThatIsNoVerdict: check passes only on the mock's
// verdict, which always lists its failures (none: []). A server at --mock
// that answers any POST 200 {"ok":true} (a health endpoint, a catch-all
// route), or a verdict whose failures are null, checked nothing this can
// see. Before: "ok", exit 0, with and without --json.
func TestCheckAnswerThatIsNoVerdict(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"ok":true}`, `{"ok":true,"failures":null}`, `{"ok":true,"status":"healthy"}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, body)
		}))
		for _, asJSON := range [][]string{nil, {"--json"}} {
			code, out, errs := xblcall(t, append([]string{"check", "--mock", srv.URL, "--no-429"}, asJSON...)...)
			if code != 1 {
				t.Errorf("200 %s %v: exit %d, stdout %q, stderr %q; want exit 1", body, asJSON, code, out, errs)
			}
		}
		srv.Close()
	}
}

// TestCheckSinceInTheFuture: check --since a time after the mock's
// clock judges no call and passes nothing. Before: the mock had answered a
// 429, and check --no-429 --since an hour ahead printed ok, exit 0.
func TestCheckSinceInTheFuture(t *testing.T) {
	t.Parallel()
	base, _ := startMock(t)
	req, _ := http.NewRequest("PUT", base+"/_fgrl/api/faults", strings.NewReader(`{"services":[{"service":"social","status":429}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code, _, errs := xblcall(t, "call", "--token", mock.Token("1", "2"), "-H", "Host: social.xboxlive.com", base+"/users/me/people"); code != 1 {
		t.Fatalf("a call under a 429 fault: exit %d: %s", code, clip(errs))
	}
	if code, _, _ := xblcall(t, "check", "--mock", base, "--no-429"); code != 1 {
		t.Fatalf("check --no-429 after a 429: exit %d, want 1", code)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if code, out, errs := xblcall(t, "check", "--mock", base, "--no-429", "--since", future); code != 1 {
		t.Errorf("check --no-429 --since %s: exit %d, stdout %q, stderr %q; want exit 1", future, code, out, clip(errs))
	}
}

// TestCheckErrorHoldsNoEscapedAdminToken: check's error never quotes
// the admin token, nor the token as a JSON answer escapes it (Go's
// encoding/json writes <, > and & as \u003c, \u003e, \u0026). Before:
// "the mock answered 401: {\"auth\":\"Bearer s3cret\u003c\u0026\u003eTOKEN\"}".
func TestCheckErrorHoldsNoEscapedAdminToken(t *testing.T) {
	t.Parallel()
	const secret = "s3cret<&>TOKEN"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]string{"auth": r.Header.Get("Authorization")})
		w.WriteHeader(401)
		w.Write(b)
	}))
	defer srv.Close()
	code, out, errs := xblcall(t, "check", "--mock", srv.URL, "--admin-token", secret, "--no-429")
	if code != 1 || strings.Contains(out+errs, "s3cret") || strings.Contains(out+errs, "TOKEN") {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit 1 and no admin token", code, out, errs)
	}
}
