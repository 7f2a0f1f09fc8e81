package main

// An outside attack (attack14125) on the stored sign-in's lock
// (fgrl/signin.json.lock, withSignInLock): stale breaks, odd files in the
// lock's place, interrupts during the wait, renewals behind a held lock.

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack14LockDir makes a temporary XDG_CONFIG_HOME with its fgrl directory and
// returns the stored sign-in's path and its lock's.
func attack14LockDir(t *testing.T) (string, string) {
	t.Helper()
	setConfigDir(t, t.TempDir())
	p, err := signInPath(testEnvOf(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	return p, p + ".lock"
}

// attack14Stale makes the file at lock look left by a command killed holding it
// (older than staleLock).
func attack14Stale(t *testing.T, lock string) {
	t.Helper()
	old := time.Now().Add(-staleLock - time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
}

// attack14LowerWait lowers lockWait for the test.
func attack14LowerWait(t *testing.T, d time.Duration) {
	t.Helper()
	w := lockWait
	lockWait = d
	t.Cleanup(func() { lockWait = w })
}

// RELIABILITY.md "The stored sign-in's lock": "a lock older than 30 s,
// left by a command killed holding it, is broken"; signin.go
// withSignInLock: "so that a refresh's check and write, a login's write
// and a logout's removal never interleave". A command killed holding the
// lock, then (30 s on) two xblcall at once (a script's parallel `call`s
// renewing, a logout beside one): each finds the stale lock (Lstat) and
// removes "it"; when the slower one's remove comes after the faster one
// has broken the stale lock and made its own, it takes that fresh lock,
// makes its own, and both are inside at once (the faster one's deferred
// remove then takes the slower one's, letting a third in). Here two
// commands break one stale lock at once, each holding it 1 ms, up to 200
// times, here up to 200 (lockWait lowered to 0 so that the one that finds the lock held
// gives up at once rather than sleep; the stale branch does not look at
// it): on the code here about one try in 30 lets both in.
func TestAttack14StaleLockBreakLetsTwoHoldersIn(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	_, lock := attack14LockDir(t)
	attack14LowerWait(t, 0)
	var inside, most atomic.Int32
	fn := func(string) error {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		inside.Add(-1)
		return nil
	}
	rounds := 0
	for ; rounds < 200 && most.Load() < 2; rounds++ {
		if err := os.WriteFile(lock, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		attack14Stale(t, lock)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				withSignInLock(context.Background(), testEnvOf(t), nil, true, fn) // the one that finds a fresh lock gives up (lockWait 0)
			}()
		}
		close(start)
		wg.Wait()
		os.Remove(lock)
	}
	if m := most.Load(); m > 1 {
		t.Errorf("a stale lock broken by two commands at once: %d of them held the sign-in's lock at the same time (try %d)", m, rounds)
	}
}

// RELIABILITY.md "The stored sign-in's lock": "a lock older than 30 s,
// left by a command killed holding it, is broken; one held past 10 s is an
// error naming it, with nothing written"; signin.go: "Best effort: the
// next run refreshes again if this fails". A stale lock the command cannot
// remove (here a directory with a file in it; also a lock left by `sudo
// xblcall` in a directory the user cannot write): withSignInLock's stale
// branch ignores os.Remove's error and `continue`s past the deadline check
// and the sleep, so it spins (a whole core) forever. whoami with an
// expired token, whose renewal's save is best effort, never ends; login
// never ends. Given 6 s with lockWait at 200 ms (a login's device flow takes 2), each should have ended.
func TestAttack14UnremovableStaleLockSpinsForever(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	time.Sleep(1100 * time.Millisecond) // the mock's tokens name their second: the refresh gives new ones (OnRefresh)
	attack14LowerWait(t, 200*time.Millisecond)
	lock := p + ".lock"
	inner := filepath.Join(lock, "left")
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inner, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	attack14Stale(t, lock)
	for _, args := range [][]string{{"whoami"}, {"login", "--via", srv.URL}} {
		done := make(chan int, 1)
		var out, errb bytes.Buffer
		go func() { done <- run(context.Background(), args, &out, &errb, withTestEnv(t)) }()
		select {
		case code := <-done:
			t.Logf("%v: exit %d %s%s", args, code, out.String(), errb.String())
		case <-time.After(6 * time.Second):
			t.Errorf("%v with a stale lock that cannot be removed: still running after 6 s (lockWait 200 ms): the lock's wait spins forever", args)
			os.Remove(inner) // let it end: the directory, now empty and fresh, is a held lock
			<-done
			if err := os.Mkdir(lock, 0o700); err == nil || errors.Is(err, os.ErrExist) {
				os.WriteFile(inner, nil, 0o600)
				attack14Stale(t, lock)
			}
		}
	}
}

// README.md: "Exit status is 0 for success, ... 130 when interrupted";
// RELIABILITY.md (analyze's -o, TestAttack13OutputWrittenAfterInterruptExitsZero):
// once interrupted, "the earlier report stays, exit 130". A logout waits
// for the lock another xblcall holds; Ctrl-C (the context's end) does not
// end the wait (withSignInLock takes no context): when the other lets go,
// the interrupted logout removes the sign-in, prints "signed out" and exits
// 0; had the other held on, the wait would have run its whole 10 s. Here
// the interrupt comes 200 ms into the wait, the other lets go 700 ms
// later: logout should end with the interrupt (130) and forget nothing.
func TestAttack14LogoutInterruptedWhileWaitingStillSignsOut(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, _ := attack9Login(t, srv.URL)
	lock := p + ".lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil { // another xblcall holds it
		t.Fatal(err)
	}
	attack14LowerWait(t, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() { done <- run(ctx, []string{"logout"}, &out, &errb, withTestEnv(t)) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	interrupted := time.Now()
	time.AfterFunc(700*time.Millisecond, func() { os.Remove(lock) })
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("logout never ended")
	}
	took := time.Since(interrupted).Round(10 * time.Millisecond)
	_, err := os.Stat(p)
	if code != 130 || err != nil || took > 500*time.Millisecond {
		t.Errorf("logout interrupted while waiting for the lock: exit %d %q after %v more; sign-in still stored: %v (want 130, at once, nothing removed)",
			code, strings.TrimSpace(out.String()+errb.String()), took, err == nil)
	}
}

// The same with login: the device flow done, its save waits for the lock;
// interrupted there, it writes the new sign-in over the one stored once
// the other lets go, and exits 0.
func TestAttack14LoginInterruptedWhileWaitingStillWrites(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	setConfigDir(t, t.TempDir())
	h := mock.NewHandler()
	xsts := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Host == "xsts.auth.xboxlive.com" {
			xsts <- struct{}{}
		}
	}))
	defer srv.Close()
	p, _ := attack9Login(t, srv.URL)
	for len(xsts) > 0 { // the first login's
		<-xsts
	}
	before, _ := os.ReadFile(p)
	lock := p + ".lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	attack14LowerWait(t, 5*time.Second)
	time.Sleep(1100 * time.Millisecond) // the mock's tokens name their second: a new sign-in differs
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() { done <- run(ctx, []string{"login", "--via", srv.URL}, &out, &errb, withTestEnv(t)) }()
	select {
	case <-xsts:
	case <-time.After(10 * time.Second):
		t.Fatal("login never reached XSTS")
	}
	time.Sleep(200 * time.Millisecond) // login is waiting for the lock
	cancel()
	interrupted := time.Now()
	time.AfterFunc(700*time.Millisecond, func() { os.Remove(lock) })
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("login never ended")
	}
	took := time.Since(interrupted).Round(10 * time.Millisecond)
	after, _ := os.ReadFile(p)
	if code != 130 || !bytes.Equal(before, after) || took > 500*time.Millisecond {
		t.Errorf("login interrupted while waiting for the lock: exit %d %q after %v more; stored sign-in replaced: %v (want 130, at once, nothing written)",
			code, strings.TrimSpace(out.String()), took, !bytes.Equal(before, after))
	}
}

// held: signin.go: "Best effort: the next run refreshes again if this
// fails"; RELIABILITY.md: "one held past 10 s is an error naming it, with
// nothing written". whoami with an expired token behind a lock another
// xblcall holds: it waits lockWait (here 300 ms; 10 s by default, with
// nothing said meanwhile), then still shows who is signed in (exit 0); the
// stored sign-in is left as it was and the other's lock is not removed.
func TestAttack14RenewalBehindHeldLockStillWorks(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	before, _ := os.ReadFile(p)
	lock := p + ".lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	attack14LowerWait(t, 300*time.Millisecond)
	time.Sleep(1100 * time.Millisecond)
	start := time.Now()
	code, out, errs := xblcall(t, "whoami")
	took := time.Since(start)
	if code != 0 || !strings.Contains(out, "MockPlayer") {
		t.Errorf("whoami behind a held lock: exit %d %q %q", code, out, errs)
	}
	if took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("whoami behind a held lock took %v (lockWait 300 ms)", took)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Errorf("the sign-in was written though another xblcall held its lock")
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("whoami removed the lock another xblcall holds: %v", err)
	}
}

// held: signin.go withSignInLock "so that a refresh's check and write, a
// login's write and a logout's removal never interleave"; attack9's
// "The sign-in the user made last should stay stored". A login of another
// account (B, at another mock) started while A's renewal is between its
// check and its write: the login waits for the lock, writes after A's
// renewal, and B stays stored.
func TestAttack14LoginOfAnotherAccountDuringARenewalsWindow(t *testing.T) {
	setConfigDir(t, t.TempDir())
	srvA := httptest.NewServer(mock.NewHandler())
	defer srvA.Close()
	srvB := httptest.NewServer(mock.Must(mock.New(mock.Config{Account: &mock.Account{XUID: "2533274790000042", Gamertag: "PlayerB"}})))
	defer srvB.Close()
	p, st := attack9Login(t, srvA.URL)
	attack9Expire(t, p, st)
	time.Sleep(1100 * time.Millisecond)
	login := make(chan string, 1)
	defer func(f func()) { signInChecked = f }(signInChecked)
	signInChecked = func() {
		signInChecked = func() {}
		go func() {
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"login", "--via", srvB.URL}, &out, &errb, withTestEnv(t))
			login <- strings.TrimSpace(out.String() + errb.String() + " exit " + strconv.Itoa(code))
		}()
		time.Sleep(300 * time.Millisecond)
	}
	if code, out, errs := xblcall(t, "whoami"); code != 0 {
		t.Fatalf("whoami: exit %d %s%s", code, out, errs)
	}
	select {
	case s := <-login:
		if !strings.Contains(s, "PlayerB") {
			t.Errorf("login as B: %q", s)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("login as B never ended")
	}
	if _, now := attack9Stored(t); now.Via != srvB.URL {
		t.Errorf("B's login (made last) lost: the stored sign-in is at %s", now.Via)
	}
	if _, err := os.Stat(p + ".lock"); err == nil {
		t.Errorf("the lock is left behind")
	}
}

// held: signin.go withSignInLock "holds ... while it checks and writes"
// (defer os.Remove(lock)): an error in fn, and a panic in fn, leave no
// lock behind, so the next command does not wait.
func TestAttack14LockRemovedAfterErrorAndPanic(t *testing.T) {
	t.Parallel()
	_, lock := attack14LockDir(t)
	boom := errors.New("boom")
	if err := withSignInLock(context.Background(), testEnvOf(t), nil, true, func(string) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("fn's error: %v", err)
	}
	if _, err := os.Lstat(lock); err == nil {
		t.Errorf("the lock is left behind after fn's error")
	}
	func() {
		defer func() { recover() }()
		withSignInLock(context.Background(), testEnvOf(t), nil, false, func(string) error { panic("boom") })
	}()
	if _, err := os.Lstat(lock); err == nil {
		t.Errorf("the lock is left behind after fn's panic")
	}
}

// held: RELIABILITY.md "one held past 10 s is an error naming it"; xblcall
// help login "never printed". A config directory whose name holds
// terminal escapes and a newline: logout behind a held lock fails (not 0),
// its one-line message names signin.json.lock quoted, with no raw escape,
// and prints no token.
func TestAttack14LockErrorMessageIsQuotedAndSecretFree(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	dir := filepath.Join(t.TempDir(), "cfg\x1b]0;pwned\x07\nxblcall logout: signed out")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	setConfigDir(t, dir)
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	if err := os.WriteFile(p+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	attack14LowerWait(t, 200*time.Millisecond)
	code, out, errs := xblcall(t, "logout")
	if code == 0 || !strings.Contains(errs, "signin.json.lock") || !strings.Contains(errs, "locked by another xblcall") {
		t.Errorf("logout behind a held lock: exit %d %q %q", code, out, errs)
	}
	if strings.ContainsAny(errs, "\x1b\x07") || strings.Count(errs, "\n") > 1 || strings.Contains(out, "signed out") {
		t.Errorf("the lock's error printed raw: %q %q", out, errs)
	}
	for _, s := range []string{st.Microsoft.RefreshToken, st.Microsoft.AccessToken} {
		if strings.Contains(out+errs, s) {
			t.Errorf("a token printed")
		}
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("logout that failed on the lock removed the sign-in: %v", err)
	}
}

// held: attack9's TestAttack9LogoutThroughASymlink (logout forgets the file
// the link names) with the lock: signin.json a link to a dotfiles
// manager's file; the lock is beside the link (where every command looks
// for it), not beside the file it names. Logout behind a held lock fails
// and leaves the linked file; once the lock is let go, logout removes it.
func TestAttack14LogoutThroughLinkLocksBesideTheLink(t *testing.T) {
	// Serial: it lowers lockWait (attack14LowerWait).
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, _ := attack9Login(t, srv.URL)
	real := filepath.Join(t.TempDir(), "signin.json")
	if err := os.Rename(p, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, p); err != nil {
		t.Fatal(err)
	}
	attack14LowerWait(t, 200*time.Millisecond)
	if err := os.WriteFile(p+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := xblcall(t, "logout"); code == 0 || !strings.Contains(errs, "signin.json.lock") {
		t.Errorf("logout through a link behind a held lock: exit %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(real); err != nil {
		t.Errorf("the linked sign-in removed though the lock was held: %v", err)
	}
	if _, err := os.Lstat(real + ".lock"); err == nil {
		t.Errorf("a lock made beside the linked file")
	}
	os.Remove(p + ".lock")
	if code, out, errs := xblcall(t, "logout"); code != 0 || !strings.Contains(out, "signed out") {
		t.Errorf("logout through a link: exit %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(real); err == nil {
		t.Errorf("the linked sign-in stays after logout")
	}
	if _, err := os.Lstat(p + ".lock"); err == nil {
		t.Errorf("the lock is left behind")
	}
}
