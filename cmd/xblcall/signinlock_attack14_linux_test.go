//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// attack14Lutimes sets the times of the link p itself (utimensat with
// AT_SYMLINK_NOFOLLOW), as a link left long ago has them.
func attack14Lutimes(t *testing.T, p string, at time.Time) {
	t.Helper()
	name, err := syscall.BytePtrFromString(p)
	if err != nil {
		t.Fatal(err)
	}
	ts := [2]syscall.Timespec{syscall.NsecToTimespec(at.UnixNano()), syscall.NsecToTimespec(at.UnixNano())}
	const atFDCWD, atSymlinkNofollow = -100, 0x100
	fd := atFDCWD
	if _, _, e := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(fd), uintptr(unsafe.Pointer(name)),
		uintptr(unsafe.Pointer(&ts[0])), atSymlinkNofollow, 0, 0); e != 0 {
		t.Fatal(e)
	}
}

// held: RELIABILITY.md "The stored sign-in's lock": "made with `O_EXCL`; a
// lock older than 30 s ... is broken; one held past 10 s is an error
// naming it, with nothing written". signin.json.lock a symbolic link to
// another file of the user's (a dangling one too): O_EXCL does not follow
// it, so it is a held lock (an error naming it after lockWait, nothing
// written); old, it is broken by removing the link, not the file it names;
// that file is never written, truncated or removed, and the lock made in
// its place is removed after the write.
func TestAttack14LockSymlinkNeverTouchesItsTarget(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	p, lock := attack14LockDir(t)
	attack14LowerWait(t, 200*time.Millisecond)
	victim := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := &stored{ClientID: "c", Microsoft: nil, Sandbox: "RETAIL"}
	for _, target := range []string{victim, filepath.Join(filepath.Dir(victim), "missing")} {
		os.Remove(lock)
		if err := os.Symlink(target, lock); err != nil {
			t.Fatal(err)
		}
		if err := withSignInLock(context.Background(), testEnvOf(t), nil, true, st.writeTo); err == nil || !strings.Contains(err.Error(), "signin.json.lock") {
			t.Errorf("a fresh link as the lock: %v; want the held lock's error", err)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("written though the lock (a link) was held")
		}
		attack14Lutimes(t, lock, time.Now().Add(-staleLock-time.Minute))
		if err := withSignInLock(context.Background(), testEnvOf(t), nil, true, st.writeTo); err != nil {
			t.Errorf("a stale link as the lock: %v; want it broken", err)
		}
		if _, err := os.Lstat(lock); err == nil {
			t.Errorf("the lock is left behind")
		}
		os.Remove(p)
		if b, err := os.ReadFile(victim); err != nil || string(b) != "keep me" {
			t.Fatalf("the file the lock linked to: %q %v", b, err)
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(victim), "missing")); err == nil {
			t.Errorf("a dangling link's target made")
		}
	}
}

// held: the same promises, signin.json.lock a FIFO: O_EXCL refuses it
// without opening it (no wait for a writer), so a fresh one is a held lock
// (the error after lockWait), an old one is broken.
func TestAttack14LockFIFONoHang(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	_, lock := attack14LockDir(t)
	attack14LowerWait(t, 200*time.Millisecond)
	if err := syscall.Mkfifo(lock, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- withSignInLock(context.Background(), testEnvOf(t), nil, false, func(string) error { return nil })
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "locked by another xblcall") {
			t.Errorf("a fresh FIFO as the lock: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO as the lock: hung")
	}
	attack14Stale(t, lock)
	if err := withSignInLock(context.Background(), testEnvOf(t), nil, false, func(string) error { return nil }); err != nil {
		t.Errorf("a stale FIFO as the lock: %v", err)
	}
	if _, err := os.Lstat(lock); err == nil {
		t.Errorf("the lock is left behind")
	}
}
