package main

// An outside attack (attack17129) on fbc9ba4: the notice a wait for the stored
// sign-in's lock prints (withSignInLock's w, after lockNotice), and a
// renewal's save waiting with the command's context (stored.signIn).

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack17LowerLockTimes lowers lockWait and lockNotice for the test.
func attack17LowerLockTimes(t *testing.T, wait, notice time.Duration) {
	t.Helper()
	w, n := lockWait, lockNotice
	lockWait, lockNotice = wait, notice
	t.Cleanup(func() { lockWait, lockNotice = w, n })
}

// attack17HoldLock makes the lock beside p, held by "another xblcall", and lets
// it go after d.
func attack17HoldLock(t *testing.T, p string, d time.Duration) {
	t.Helper()
	lock := p + ".lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := time.AfterFunc(d, func() { os.Remove(lock) })
	t.Cleanup(func() { tm.Stop() })
}

// signin.go withSignInLock: "once it has lasted lockNotice, a line to w
// (when not nil) says what it waits for"; RELIABILITY.md "A renewal's save
// behind a held lock": "every wait for the lock (`login`, `logout`, a
// renewal) says once, on stderr, after a second, what it waits for (the
// lock's path, quoted; no token)"; "The stored sign-in's lock": "one held
// past 10 s is an error naming it"; the error itself: "try again, or
// remove that file if no xblcall runs". Under a config directory whose
// path is long (here 151 bytes of directory name under the test's
// TempDir: a valid path, far below PATH_MAX), the lock's path is cut to
// its first 200 bytes (safetext.Quote keeps the head): the notice and the
// error name ".../ddd..." and never the file the user is told to remove.
func TestAttack17LockNoticeNamesTheLockUnderALongConfigDir(t *testing.T) {
	// Serial: it lowers lockWait and lockNotice (attack17LowerLockTimes).
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 150))
	setConfigDir(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "fgrl"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "fgrl", "signin.json")
	if err := os.WriteFile(p+".lock", nil, 0o600); err != nil { // another xblcall holds it
		t.Fatal(err)
	}
	attack17LowerLockTimes(t, 300*time.Millisecond, 50*time.Millisecond)
	code, out, errs := xblcall(t, "logout")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code == 0 || strings.Contains(out, "signed out") || len(lines) != 2 {
		t.Fatalf("logout behind a held lock: exit %d %q %q; want a failure, one notice line and the error", code, out, errs)
	}
	if !strings.Contains(lines[0], "waiting for another xblcall") || !strings.Contains(lines[0], "signin.json.lock") {
		t.Errorf("the notice does not name the lock it waits for (%d-byte path): %q", len(p+".lock"), lines[0])
	}
	if !strings.Contains(lines[1], "locked by another xblcall") || !strings.Contains(lines[1], "signin.json.lock") {
		t.Errorf("the lock's error does not name the file to remove (%d-byte path): %q", len(p+".lock"), lines[1])
	}
}

// call.go callFlags: "-s, --silent: print no retry or wait lines on
// stderr". `call -s` with the stored sign-in, its Microsoft token due for
// renewal, behind a lock another xblcall holds for 400 ms (lockNotice
// lowered to 50 ms): the renewal's save waits, and its "xblcall: waiting
// for another xblcall to release the stored sign-in's lock" line is
// printed on stderr though --silent asked for no wait lines (the notice is
// given e.stderr whatever --silent says: call.go request ->
// o.storedToken(ctx, e.stderr)).
func TestAttack17CallSilentStillPrintsTheLockWait(t *testing.T) {
	// Serial: it lowers lockWait and lockNotice (attack17LowerLockTimes).
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	time.Sleep(1100 * time.Millisecond) // the mock's tokens name their second: the renewal's differ
	attack17LowerLockTimes(t, 5*time.Second, 50*time.Millisecond)
	attack17HoldLock(t, p, 400*time.Millisecond)
	code, out, errs := xblcall(t, "call", "-s", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag")
	if code != 0 || !strings.Contains(out, `"profileUsers"`) {
		t.Fatalf("call -s: exit %d %q %q", code, out, errs)
	}
	if strings.Contains(errs, "waiting") {
		t.Errorf("call --silent (\"print no retry or wait lines on stderr\") printed a wait line: %q", errs)
	}
}

// held: RELIABILITY.md "A renewal's save behind a held lock": "every wait
// for the lock (`login`, `logout`, a renewal) says once, on stderr, after a
// second, what it waits for (the lock's path, quoted; no token)"; signIn's
// godoc: "saving each refreshed Microsoft token while the sign-in stored
// is still this one"; whoami's example "xblcall whoami --json | jq -r
// .xuid" (stdout machine-read). whoami --json renewing behind a lock held
// 400 ms: stdout is only the JSON, stderr one notice naming the lock with
// no token, and the renewed refresh token is stored once the lock is free.
func TestAttack17WhoamiJSONRenewalBehindLockToldOnStderrAndStored(t *testing.T) {
	// Serial: it lowers lockWait and lockNotice (attack17LowerLockTimes).
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	old := st.Microsoft.RefreshToken
	attack9Expire(t, p, st)
	time.Sleep(1100 * time.Millisecond)
	attack17LowerLockTimes(t, 5*time.Second, 50*time.Millisecond)
	attack17HoldLock(t, p, 400*time.Millisecond)
	code, out, errs := xblcall(t, "whoami", "--json")
	var who map[string]string
	dec := json.NewDecoder(strings.NewReader(out))
	if code != 0 || dec.Decode(&who) != nil || who["xuid"] != "2533274791234567" || dec.More() {
		t.Fatalf("whoami --json: exit %d stdout %q stderr %q", code, out, errs)
	}
	if strings.Count(errs, "\n") != 1 || strings.Count(errs, "waiting for another xblcall") != 1 || !strings.Contains(errs, `"`+p+`.lock"`) {
		t.Errorf("stderr %q: want one line naming the lock", errs)
	}
	_, now := attack9Stored(t)
	if now.Microsoft.RefreshToken == old {
		t.Errorf("the renewed refresh token was not stored after the lock was let go")
	}
	for _, s := range []string{old, now.Microsoft.RefreshToken, now.Microsoft.AccessToken} {
		if strings.Contains(out+errs, s) {
			t.Errorf("a token was printed")
		}
	}
	if _, err := os.Lstat(p + ".lock"); err == nil {
		t.Errorf("a lock is left behind")
	}
}

// held: withSignInLock's notice quotes the lock's path (safetext.Quote);
// the project's rule: file text is clipped and escaped. A config directory
// whose name holds a terminal escape, a newline and a carriage return: the
// notice is one line, with no control byte in it.
func TestAttack17LockNoticeEscapesHostileConfigDir(t *testing.T) {
	// Serial: it lowers lockWait and lockNotice (attack17LowerLockTimes).
	dir := filepath.Join(t.TempDir(), "a\x1b[2J\x1b]0;pwned\a\nforged: line\rb")
	setConfigDir(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "fgrl"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "fgrl", "signin.json")
	attack17LowerLockTimes(t, 5*time.Second, 50*time.Millisecond)
	attack17HoldLock(t, p, 300*time.Millisecond)
	code, out, errs := xblcall(t, "logout")
	if code != 0 || !strings.Contains(out, "signed out") {
		t.Fatalf("logout: exit %d %q %q", code, out, errs)
	}
	if strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") || strings.Count(errs, "waiting for another xblcall") != 1 {
		t.Errorf("stderr %q: want one notice line", errs)
	}
	for _, c := range strings.TrimSuffix(errs, "\n") {
		if c < 0x20 || c == 0x7f {
			t.Errorf("stderr %q: a control character %U", errs, c)
			break
		}
	}
}

// held: main.go: Ctrl-C exits 130; RELIABILITY.md "A renewal's save behind
// a held lock": "The save now waits with the command's context"; the
// project's rule that an interrupted command writes nothing. whoami whose
// Microsoft token is being renewed, interrupted while the refresh is at
// the service: it exits 130 at once; the refresh lands afterwards (the
// sign-in's flight goes on without the caller's cancellation) and its
// OnRefresh is not allowed to write the sign-in or leave a lock.
func TestAttack17InterruptedRenewalWritesNothing(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	g := &attack9Gated{h: mock.NewHandler(), arrived: make(chan struct{}, 4)}
	srv := httptest.NewServer(g)
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	before, _ := os.ReadFile(p)
	time.Sleep(1100 * time.Millisecond)
	release := g.hold()
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var out, errb syncBuffer
	go func() { done <- run(ctx, []string{"whoami", "--json"}, &out, &errb, withTestEnv(t)) }()
	select {
	case <-g.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the refresh never reached the mock")
	}
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("whoami did not end with the interrupt")
	}
	release()
	time.Sleep(500 * time.Millisecond) // the flight's refresh lands, OnRefresh runs
	after, _ := os.ReadFile(p)
	if code != 130 || out.String() != "" || !bytes.Equal(before, after) {
		t.Errorf("whoami interrupted during its renewal: exit %d stdout %q; sign-in rewritten: %v (want 130, nothing printed or written)",
			code, out.String(), !bytes.Equal(before, after))
	}
	if _, err := os.Lstat(p + ".lock"); err == nil {
		t.Errorf("a lock is left behind")
	}
}
