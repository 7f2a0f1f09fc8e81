package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestLogoutBetweenARefreshsCheckAndWrite: a command that refreshes the
// stored sign-in's Microsoft token checks that the sign-in stored is still
// its own, then writes it. A logout that came between the two was undone:
// the check passed, logout removed the file, the write put it back,
// refresh token and all. The check and the write now hold the sign-in's
// lock, and logout waits for it: after both, nothing is stored. Here the
// logout starts inside that window (signInChecked) and is given 300 ms.
func TestLogoutBetweenARefreshsCheckAndWrite(t *testing.T) {
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	time.Sleep(1100 * time.Millisecond) // the mock's tokens name their second: the refresh gives new ones
	logout := make(chan int, 1)
	defer func(f func()) { signInChecked = f }(signInChecked)
	signInChecked = func() {
		signInChecked = func() {}
		go func() {
			var out, errb bytes.Buffer
			logout <- run(context.Background(), []string{"logout"}, &out, &errb, withTestEnv(t))
		}()
		time.Sleep(300 * time.Millisecond)
	}
	if code, out, errs := xblcall(t, "whoami"); code != 0 {
		t.Fatalf("whoami: exit %d %s%s", code, out, errs)
	}
	select {
	case code := <-logout:
		if code != 0 {
			t.Errorf("logout: exit %d", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("logout never ended")
	}
	if b, err := os.ReadFile(p); err == nil {
		t.Errorf("logout ended, and the sign-in is stored (%d bytes, refresh token: %v): the refresh's write came after it", len(b), strings.Contains(string(b), "refresh_token"))
	}
	if _, err := os.Stat(p + ".lock"); err == nil {
		t.Errorf("the lock is left behind")
	}
}

// TestSignInLockWaitsAndBreaksStale: a login waits for a lock another
// xblcall holds and writes once it is released; a lock left by a command
// killed holding it (older than staleLock) is broken at once; and one
// held past lockWait is an error naming the lock file, with nothing
// written.
func TestSignInLockWaitsAndBreaksStale(t *testing.T) {
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	lock := p + ".lock"
	write := func() error { return withSignInLock(context.Background(), testEnvOf(t), nil, true, st.writeTo) }

	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-staleLock - time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := write(); err != nil || time.Since(start) > time.Second {
		t.Errorf("a stale lock: %v after %v; want it broken at once", err, time.Since(start))
	}

	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, func() { os.Remove(lock) })
	start = time.Now()
	if err := write(); err != nil || time.Since(start) < 250*time.Millisecond {
		t.Errorf("a held lock: %v after %v; want a wait for its release, then the write", err, time.Since(start))
	}
	if _, err := os.Stat(lock); err == nil {
		t.Errorf("the lock is left behind")
	}

	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(w time.Duration) { lockWait = w }(lockWait)
	lockWait = 200 * time.Millisecond
	before, _ := os.ReadFile(p)
	st.Sandbox = "CHANGED.1"
	if err := write(); err == nil || !strings.Contains(err.Error(), "locked by another xblcall") || !strings.Contains(err.Error(), "signin.json.lock") {
		t.Errorf("a lock held past lockWait: %v; want an error naming the lock", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Errorf("written though the lock was held")
	}
}
