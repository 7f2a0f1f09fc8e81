package leakcheck

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The promise (leakcheck.go): "Package leakcheck is the test suites' one
// goroutine-leak check: goleak's, with what the standard library itself
// leaves running for a bounded time after a test has closed everything it
// started." and Options: "A net/http server connection that answered with
// "Connection: close" lingers in closeWriteAndWait for 500 ms [...]; it
// ends by itself and is no leak." RELIABILITY.md: "no test leaves a
// goroutine behind". The allowance must not hide net/http goroutines that
// do not end by themselves.

// found reports whether leakcheck's options see a goroutine beyond those
// running before, and what goleak said.
func found(before goleak.Option) (bool, string) {
	err := goleak.Find(append(Options(), before)...)
	if err == nil {
		return false, ""
	}
	return true, err.Error()
}

// held: a client's keep-alive connection left open (no CloseIdleConnections,
// the server never closed): the transport's persistConn readLoop and
// writeLoop and the server's conn.serve wait forever, all in net/http.
func TestAttackLeakIdleKeepAliveFound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	before := goleak.IgnoreCurrent()
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	leak, msg := found(before)
	tr.CloseIdleConnections()
	srv.Close()
	if !leak {
		t.Fatal("an idle keep-alive connection never closed passed leakcheck")
	}
	for _, fn := range []string{"persistConn", "(*conn).serve"} {
		if !strings.Contains(msg, fn) {
			t.Errorf("goleak's report does not name %s:\n%s", fn, msg)
		}
	}
}

// held: a call blocked on a server that never answers: the caller's
// goroutine waits in net/http's persistConn.roundTrip select forever.
func TestAttackLeakBlockedCallFound(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	before := goleak.IgnoreCurrent()
	tr := &http.Transport{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := (&http.Client{Transport: tr}).Get(srv.URL); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(50 * time.Millisecond)
	leak, msg := found(before)
	close(release)
	<-done
	tr.CloseIdleConnections()
	srv.Close()
	if !leak {
		t.Fatal("a call blocked forever in net/http passed leakcheck")
	}
	if !strings.Contains(msg, "roundTrip") {
		t.Errorf("goleak's report does not name roundTrip:\n%s", msg)
	}
}

// held: the allowance is for closeWriteAndWait only (goleak's
// IgnoreAnyFunction matches that frame, which only the 500 ms linger of a
// server connection holds): a server connection that waits for a silent
// client's next request (a raw connection left open) is found.
func TestAttackLeakServerConnWaitingFound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(ln)
	defer srv.Close()
	before := goleak.IgnoreCurrent()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	leak, msg := found(before)
	c.Close()
	srv.Close()
	if !leak || !strings.Contains(msg, "(*conn).serve") {
		t.Fatalf("a server connection waiting for a silent client passed leakcheck: %v %s", leak, msg)
	}
}
