package main

// An outside attack (attack9113) on 48e1870's fixes of the stored sign-in:
// stored.same (a refresh saved only while the sign-in is still the one
// read), forgetSignIn (logout removes a linked sign-in file and a killed
// save's temporary files) and watch reading the stored sign-in first.

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
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestAttack9LogoutDeletesLinkedFileThatIsNoSignIn: signin.go forgetSignIn
// "removes the sign-in stored at p: the file, the file it links to when it
// is a link to a sign-in (the one loadSignIn reads)"; RELIABILITY.md
// ("An outside attack on the stored sign-in"): logout "removes the file the
// link names when it holds a sign-in". signin.json a link to one of the
// user's own JSON files that holds no sign-in at all, only a "service" (or
// "Microsoft", matched without case) object: loadSignIn refuses it as
// "damaged", so whoami does not read it as a sign-in; logout deletes it.
func TestAttack9LogoutDeletesLinkedFileThatIsNoSignIn(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"service":   `{"service": {"name": "web", "image": "nginx"}}` + "\n",
		"Microsoft": `{"Microsoft": {"tenant": "contoso", "telemetry": "off"}}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			setConfigDir(t, t.TempDir())
			p := filepath.Join(configDirOf(t), "fgrl", "signin.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			mine := filepath.Join(t.TempDir(), "project", "settings.json")
			os.MkdirAll(filepath.Dir(mine), 0o755)
			if err := os.WriteFile(mine, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(mine, p); err != nil {
				t.Fatal(err)
			}
			if code, _, errs := xblcall(t, "whoami"); code == 0 || !strings.Contains(errs, "damaged") {
				t.Fatalf("whoami: exit %d %q (want: damaged, not a sign-in)", code, errs)
			}
			code, out, errs := xblcall(t, "logout")
			if b, err := os.ReadFile(mine); err != nil || string(b) != content {
				t.Errorf("logout (exit %d %q%s) deleted %s, a file signin.json linked to that loadSignIn calls damaged (no sign-in, no token): %v",
					code, strings.TrimSpace(out), errs, filepath.Base(mine), err)
			}
		})
	}
}

// TestAttack9LogoutGlobMetaInConfigDir: forgetSignIn removes "what a save
// killed before its rename left beside it (writeFileAtomic's temporary
// files)"; RELIABILITY.md: logout beside `.signin.json.*` left by a kill:
// "removed". The config directory's own name goes into filepath.Glob
// unescaped: under a config directory named "cfg[1]" (XDG_CONFIG_HOME, a
// home folder with brackets) the pattern matches cfg1/fgrl/.signin.json.*,
// so logout deletes another directory's file and leaves the leftover
// beside the sign-in, refresh token and all; under "cfg[" the pattern is
// malformed, Glob fails, and the leftover stays.
func TestAttack9LogoutGlobMetaInConfigDir(t *testing.T) {
	t.Parallel()
	for _, dirName := range []string{"cfg[1]", "cfg["} {
		t.Run(dirName, func(t *testing.T) {
			base := t.TempDir()
			cfg := filepath.Join(base, dirName)
			setConfigDir(t, cfg)
			srv := httptest.NewServer(mock.NewHandler())
			defer srv.Close()
			p, st := attack9Login(t, srv.URL)
			b, _ := os.ReadFile(p)
			leftover := filepath.Join(filepath.Dir(p), ".signin.json.2750183916")
			if err := os.WriteFile(leftover, b, 0o600); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(base, "cfg1", "fgrl", ".signin.json.keep")
			os.MkdirAll(filepath.Dir(other), 0o700)
			if err := os.WriteFile(other, []byte("not this sign-in's\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if code, out, errs := xblcall(t, "logout"); code != 0 || !strings.Contains(out, "signed out") {
				t.Fatalf("logout: exit %d %s%s", code, out, errs)
			}
			if c, err := os.ReadFile(leftover); err == nil && strings.Contains(string(c), st.Microsoft.RefreshToken) {
				t.Errorf("after logout under %q, the save's leftover %s beside the sign-in still holds the refresh token", dirName, filepath.Base(leftover))
			}
			if _, err := os.Stat(other); err != nil {
				t.Errorf("logout under %q removed %s, a file in another directory: %v", dirName, other, err)
			}
		})
	}
}

// TestAttack9LogoutThroughALinkAfterARefresh: RELIABILITY.md ("An outside
// attack on the stored sign-in"): "`logout` with `signin.json` a link to
// the sign-in file (a dotfiles manager's) ... removes the file the link
// names when it holds a sign-in, and the link"; README.md "`logout`
// forgets them". The first refresh of such a sign-in (whoami, an hour
// later) saves by renaming over signin.json, which replaces the link with
// a regular file; the file it named keeps the old refresh token, still
// accepted (a Microsoft refresh token, like the mock's, stays valid after
// use). logout then says "signed out" and the tokens stay in the linked
// file, usable: pointing signin.json at it again signs in.
func TestAttack9LogoutThroughALinkAfterARefresh(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	real := filepath.Join(t.TempDir(), "dotfiles", "signin.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	if err := os.Rename(p, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, p); err != nil {
		t.Fatal(err)
	}
	attack9Expire(t, real, st)
	time.Sleep(1100 * time.Millisecond) // the mock's tokens name their second: the refresh gives new ones
	if code, out, errs := xblcall(t, "whoami"); code != 0 {
		t.Fatalf("whoami: exit %d %s%s", code, out, errs)
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		t.Logf("the refresh's save replaced the link signin.json with a regular file")
	}
	if code, out, errs := xblcall(t, "logout"); code != 0 || !strings.Contains(out, "signed out") {
		t.Fatalf("logout: exit %d %s%s", code, out, errs)
	}
	b, err := os.ReadFile(real)
	if err != nil || !strings.Contains(string(b), st.Microsoft.RefreshToken) {
		return // forgotten
	}
	os.Remove(p)
	os.Symlink(real, p)
	code, out, _ := xblcall(t, "whoami")
	t.Errorf("logout said \"signed out\", but the file signin.json linked to still holds the refresh token (whoami from it again: exit %d %q)",
		code, strings.TrimSpace(out))
}

// TestAttack9LogoutDirectoryNamedLikeATempFile: forgetSignIn removes
// "writeFileAtomic's temporary files" (os.CreateTemp: regular files);
// xblcall help logout "forget the stored sign-in", printing "signed out".
// A directory beside it whose name matches the glob (.signin.json.d, the
// user's, with a file in it) is no temporary file: logout tries to remove
// it, fails ("directory not empty"), exits 2 without "signed out" having
// removed signin.json, and fails the same way on every later run.
func TestAttack9LogoutDirectoryNamedLikeATempFile(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, _ := attack9Login(t, srv.URL)
	d := filepath.Join(filepath.Dir(p), ".signin.json.d")
	os.MkdirAll(d, 0o700)
	os.WriteFile(filepath.Join(d, "notes"), []byte("mine\n"), 0o600)
	for i := 0; i < 2; i++ {
		if code, out, errs := xblcall(t, "logout"); code != 0 || !strings.Contains(out, "signed out") {
			t.Errorf("logout #%d beside a directory %s (no temporary file): exit %d %q %q", i+1, filepath.Base(d), code, out, strings.TrimSpace(errs))
		}
	}
	if _, err := os.Stat(filepath.Join(d, "notes")); err != nil {
		t.Errorf("the directory's file: %v", err)
	}
}

// TestAttack9LogoutEndsOnALinkToAFIFO: RELIABILITY.md "Bad input never
// panics, hangs or grows memory", and its rows on files naming a FIFO
// ("`LoadPartnerCertificate` waited for ever on the FIFO" -> "refused, not
// a regular file (opened without blocking)"; "--ca-cert ... naming
// /dev/zero or a FIFO fed without end" -> "at most 1 MiB"). forgetSignIn
// reads the file signin.json links to with os.ReadFile, unbounded and
// blocking: with the link naming a FIFO no one writes, logout never ends
// (a link to /dev/zero would read without end, growing memory: not run
// here).
func TestAttack9LogoutEndsOnALinkToAFIFO(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	p := filepath.Join(configDirOf(t), "fgrl", "signin.json")
	os.MkdirAll(filepath.Dir(p), 0o700)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(fifo, p); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() { done <- run(context.Background(), []string{"logout"}, &out, &errb, withTestEnv(t)) }()
	select {
	case code := <-done:
		t.Logf("logout: exit %d %q %q", code, out.String(), errb.String())
	case <-time.After(5 * time.Second):
		t.Errorf("logout with signin.json a link to a FIFO: still running after 5 s")
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil { // let it go
			f.Close()
		}
		<-done
	}
}

// held: forgetSignIn "the file it links to when it is a link to a sign-in
// (the one loadSignIn reads)". A chain of links (signin.json -> a link in
// another directory -> the sign-in file there): logout removes the sign-in
// file at the end of the chain and signin.json; nothing else in either
// directory (a sibling file beside the target, another's
// .signin.json.* beside the target) is touched, and whoami is signed out.
func TestAttack9LogoutHeldLinkChainAndOtherDir(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	other := t.TempDir()
	real := filepath.Join(other, "signin.json")
	if err := os.Rename(p, real); err != nil {
		t.Fatal(err)
	}
	mid := filepath.Join(t.TempDir(), "link")
	os.Symlink(real, mid)
	os.Symlink(mid, p)
	sib := filepath.Join(other, ".signin.json.1234")
	os.WriteFile(sib, []byte("someone else's\n"), 0o600)
	keep := filepath.Join(other, "notes.txt")
	os.WriteFile(keep, []byte("mine\n"), 0o600)
	if code, out, errs := xblcall(t, "logout"); code != 0 || !strings.Contains(out, "signed out") {
		t.Fatalf("logout: exit %d %s%s", code, out, errs)
	}
	if b, err := os.ReadFile(real); err == nil && strings.Contains(string(b), st.Microsoft.RefreshToken) {
		t.Errorf("the sign-in at the end of the chain still holds the refresh token")
	}
	for _, f := range []string{sib, keep} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("logout removed %s: %v", f, err)
		}
	}
	if code, _, _ := xblcall(t, "whoami"); code == 0 {
		t.Errorf("whoami after logout: exit 0")
	}
}

// held: signin.go signIn "saving each refreshed Microsoft token while the
// sign-in stored is still this one". Two commands of one sign-in refresh
// at once (both held at the token endpoint, then let go): the one whose
// save comes second finds the sign-in changed and does not save; as the
// refresh token the other saved stays valid (the mock's, as Microsoft's,
// are not revoked by a later refresh), both succeed and the next run,
// refreshing again, signs in.
func TestAttack9HeldTwoRefreshesAtOnce(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	g := &attack9Gated{h: mock.NewHandler(), arrived: make(chan struct{}, 2)}
	srv := httptest.NewServer(g)
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	time.Sleep(1100 * time.Millisecond)
	release := g.hold()
	defer release()
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errb bytes.Buffer
			codes[i] = run(context.Background(), []string{"whoami"}, &out, &errb, withTestEnv(t))
		}()
	}
	<-g.arrived
	<-g.arrived
	release()
	wg.Wait()
	if codes[0] != 0 || codes[1] != 0 {
		t.Errorf("two whoami refreshing at once: exits %v", codes)
	}
	_, now := attack9Stored(t)
	if now.Microsoft.RefreshToken == st.Microsoft.RefreshToken {
		t.Errorf("neither refresh was saved")
	}
	attack9Expire(t, p, now)
	time.Sleep(1100 * time.Millisecond)
	if code, out, errs := xblcall(t, "whoami"); code != 0 {
		t.Errorf("the next run: exit %d %s%s", code, out, errs)
	}
}

// held: signin.go signIn "a command that ran across a logout, or a login
// since, does not bring its own back". A login again with the same
// account, client and mock while a command of the first sign-in is held
// at its refresh: the command's refresh, let go after, does not replace
// the newer sign-in (its refresh token differs from the one the command
// read).
func TestAttack9HeldSameAccountReLoginKept(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	h := mock.NewHandler()
	gate, arrived := make(chan struct{}), make(chan struct{}, 1)
	var held atomic.Bool
	held.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token") {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if strings.Contains(string(b), "grant_type=refresh_token") && held.Load() {
				arrived <- struct{}{}
				<-gate
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	var once sync.Once
	release := func() { once.Do(func() { held.Store(false); close(gate) }) }
	defer release()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() { done <- run(context.Background(), []string{"whoami"}, &out, &errb, withTestEnv(t)) }()
	<-arrived // whoami read the first sign-in and is refreshing
	time.Sleep(1100 * time.Millisecond)
	_, again := attack9Login(t, srv.URL) // the same account, client and mock
	if again.Microsoft.RefreshToken == st.Microsoft.RefreshToken {
		t.Skip("the login gave the same refresh token")
	}
	time.Sleep(1100 * time.Millisecond)
	release()
	if code := <-done; code != 0 {
		t.Logf("whoami: exit %d %s", code, errb.String())
	}
	if _, now := attack9Stored(t); now.Microsoft.RefreshToken != again.Microsoft.RefreshToken {
		t.Errorf("the newer login (same account, client and mock) was replaced by a command running since before")
	}
}

// held: README.md "a stored sign-in's tokens are renewed only where it was
// made"; watch.go config: "a sign-in made at a mock (login --via) watches
// at that mock, as its tokens go only where it was made". A hand-edited
// signin.json: via a non-loopback http://example.com is refused (exit 2)
// before any request; via an https loopback server without a CA (the
// mock's certificate not trusted) fails the handshake: the server gets no
// request, so no token. Neither prints a token.
func TestAttack9WatchHeldEditedVia(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	var hits atomic.Int64
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mock.NewHandler().ServeHTTP(w, r)
	}))
	defer tlsSrv.Close()
	for _, via := range []string{"http://example.com", tlsSrv.URL} {
		ed := st
		ed.Via = via
		b, _ := json.Marshal(ed)
		os.WriteFile(p, b, 0o600)
		var out, errb bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		code := run(ctx, []string{"watch", "presence", "2533274791234567", "--for", "2s", "--events", "1"}, &out, &errb, withTestEnv(t))
		cancel()
		all := out.String() + errb.String()
		if code == 0 {
			t.Errorf("watch with a stored via %s: exit 0 %q", via, all)
		}
		if strings.Contains(all, st.Microsoft.RefreshToken) || strings.Contains(all, st.Microsoft.AccessToken) || strings.Contains(all, "XBL3.0") {
			t.Errorf("watch printed a token: %q", all)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the untrusted https server got %d requests", hits.Load())
	}
}

// held: watch.go config and xblcall help watch "Tokens are never
// printed"; "It runs until ... --for has passed". A sign-in made at a
// mock, watch with no --via: it watches at that mock, ends at --for
// (exit 0), and prints no token.
func TestAttack9WatchHeldMockSignInEndsQuietly(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	h := mock.NewHandler()
	var rta atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/connect") || r.Host == "rta.xboxlive.com" {
			rta.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	_, st := attack9Login(t, srv.URL)
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	code := run(ctx, []string{"watch", "presence", "2533274791234567", "--for", "2s"}, &out, &errb, withTestEnv(t))
	all := out.String() + errb.String()
	if code != 0 || rta.Load() == 0 || time.Since(start) > 10*time.Second {
		t.Errorf("watch: exit %d after %v, %d RTA connections at the mock: %q", code, time.Since(start), rta.Load(), all)
	}
	if strings.Contains(all, st.Microsoft.RefreshToken) || strings.Contains(all, st.Microsoft.AccessToken) || strings.Contains(all, "XBL3.0") {
		t.Errorf("watch printed a token: %q", all)
	}
}
