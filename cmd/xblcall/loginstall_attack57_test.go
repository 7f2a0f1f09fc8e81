package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BREAK. Promise (client.DeviceLogin, which `xblcall login` runs with the
// command's context: "asks for a code, calls show with it ..., and waits
// until the user has entered it, or ctx ends"; README: exit "130 when
// interrupted"). Against a sign-in service that takes the connection and
// never answers the device code request (login --via a stalled loopback
// server), Ctrl-C does not end the sign-in: golang.org/x/oauth2's
// DeviceAuth builds its request without the context, and the client has
// no timeout. The command is left running until runBounded's 10 s grace
// gives up on it ("interrupted; gave up on the command after 10s"); with
// no Ctrl-C, login waits forever before printing any code.
func TestAttack57LoginStalledDeviceCodeEndsOnInterrupt(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	go func() { // take every connection, read nothing, answer nothing
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
	cmd := exec.Command(filepath.Join(installXblcall(t), "xblcall"), "login", "--via", "http://"+ln.Addr().String())
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "XBL_TOKEN=", "XBLCALL_MOCK=", "XBL_CLIENT_ID=")
	var errs bytes.Buffer
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(time.Second) // the device code request is sent and waits
	select {
	case err := <-done:
		t.Fatalf("login ended before any answer: %v %s", err, errs.String())
	default:
	}
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	var werr error
	select {
	case werr = <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		werr = <-done
	}
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
	}
	if code != 130 || took > 3*time.Second {
		t.Errorf("login stalled at the device code, Ctrl-C: exit %d after %v (want 130 within 3 s): %q", code, took.Round(100*time.Millisecond), errs.String())
	}
}
