package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// heldSignInLock makes a config directory whose sign-in's lock another
// xblcall holds (fresh, so not broken), and returns the lock's path.
func heldSignInLock(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	setConfigDir(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "fgrl"), 0o700); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "fgrl", "signin.json.lock")
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return lock
}

// TestRenewalsSaveEndsWithTheCommand: a renewed Microsoft token is saved
// holding the sign-in's lock; behind a lock another xblcall holds, the
// save waited lockWait under context.Background(), whatever the command's
// context did (Ctrl-C held a watch or a call up to 10 s). It now ends with
// the command's context, and says it is waiting.
func TestRenewalsSaveEndsWithTheCommand(t *testing.T) {
	heldSignInLock(t)
	defer func(w, n time.Duration) { lockWait, lockNotice = w, n }(lockWait, lockNotice)
	lockWait, lockNotice = 5*time.Second, 50*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	st := &stored{Microsoft: &oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh"}}
	s := st.signIn(ctx, testEnvOf(t), http.DefaultClient, &errb)
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	s.OnRefresh(&oauth2.Token{AccessToken: "new-access", RefreshToken: "new-refresh"})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the renewal's save behind a held lock took %v after the command's context ended at 300ms; want it to end with the context", took)
	}
	if got := errb.String(); strings.Count(got, "waiting for another xblcall") != 1 || strings.Contains(got, "refresh") && strings.Contains(got, "new-") {
		t.Errorf("stderr %q: want one line saying what it waits for, and no token", got)
	}
}

// TestSignInLockWaitIsTold: a wait for the lock says so once it has lasted
// lockNotice, once, naming the lock; a lock taken at once says nothing.
func TestSignInLockWaitIsTold(t *testing.T) {
	lock := heldSignInLock(t)
	defer func(w, n time.Duration) { lockWait, lockNotice = w, n }(lockWait, lockNotice)
	lockWait, lockNotice = 400*time.Millisecond, 50*time.Millisecond
	var errb bytes.Buffer
	if err := withSignInLock(context.Background(), testEnvOf(t), &errb, false, func(string) error { return nil }); err == nil {
		t.Fatal("a lock held past lockWait: no error")
	}
	if got := errb.String(); strings.Count(got, "waiting for another xblcall to release the stored sign-in's lock") != 1 || !strings.Contains(got, lock) {
		t.Errorf("stderr %q: want one line naming %s", got, lock)
	}
	os.Remove(lock)
	errb.Reset()
	if err := withSignInLock(context.Background(), testEnvOf(t), &errb, false, func(string) error { return nil }); err != nil || errb.Len() != 0 {
		t.Errorf("a free lock: %v, stderr %q; want nothing said", err, errb.String())
	}
}
