//go:build unix

package main

// An outside attack (attack9c116) on bfe66c5's sign-in and file-reading code:
// save through a link to a sign-in (linkedSignIn), forgetSignIn's listing,
// smallfile.Read for the stored sign-in, and readPEMFile as a206f22 left
// it (a bounded read that takes a pipe).

import (
	"bytes"
	"context"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
)

// attack9cRunWithin runs xblcall args in this process and fails the test when
// it has not ended within d.
func attack9cRunWithin(t *testing.T, d time.Duration, args ...string) (int, string, string, bool) {
	t.Helper()
	type res struct {
		code     int
		out, err string
	}
	done := make(chan res, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb, withTestEnv(t))
		done <- res{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err, true
	case <-time.After(d):
		t.Errorf("xblcall %s: still running after %v", strings.Join(args, " "), d)
		return -1, "", "", false
	}
}

// attack9cHolding lists the files under dir whose contents hold secret.
func attack9cHolding(dir, secret string) []string {
	var found []string
	filepath.WalkDir(dir, func(f string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if c, _ := os.ReadFile(f); secret != "" && strings.Contains(string(c), secret) {
				found = append(found, f)
			}
		}
		return nil
	})
	return found
}

// TestAttack9cLogoutLeavesKilledSaveBesideLinkedSignIn: signin.go forgetSignIn
// "removes the sign-in stored at p: the file, the file it links to when
// that holds a sign-in (one loadSignIn takes), and what a save killed
// before its rename left beside it (writeFileAtomic's temporary files:
// regular files named .signin.json.*), each of which holds the tokens";
// RELIABILITY.md ("An outside attack on the stored sign-in"): "`logout`
// beside a save's temporary file left by a kill (`.signin.json.*`, the
// refresh token in it)" -> "removed"; README.md "`logout` forgets them".
//
// Since bfe66c5 "a save through a link to a sign-in writes the file it
// names": save sets p = target and writeFileAtomic(target) makes its
// temporary file with os.CreateTemp(filepath.Dir(target),
// "."+filepath.Base(target)+".*"), i.e. beside the LINKED file, in the
// dotfiles directory. forgetSignIn lists only filepath.Dir(p), the config
// directory. A refresh through the link killed between CreateTemp and the
// rename (kill -9, a crash, a power cut during the Sync) leaves
// dotfiles/.signin.json.NNNN, refresh token and all; logout says "signed
// out" and leaves it, and pointing signin.json at it signs in again.
func TestAttack9cLogoutLeavesKilledSaveBesideLinkedSignIn(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	dot := filepath.Join(t.TempDir(), "dotfiles")
	os.MkdirAll(dot, 0o700)
	real := filepath.Join(dot, "signin.json")
	if err := os.Rename(p, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, p); err != nil {
		t.Fatal(err)
	}
	// A refresh through the link (whoami an hour later): its save goes to
	// the linked file, whose directory then holds the save's temporary file
	// until the rename.
	attack9Expire(t, real, st)
	time.Sleep(1100 * time.Millisecond) // the mock's tokens name their second
	if code, out, errs := xblcall(t, "whoami"); code != 0 {
		t.Fatalf("whoami: exit %d %s%s", code, out, errs)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("after the refresh signin.json is no longer the link: %v %v", fi, err)
	}
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	_, now := attack9Stored(t)
	// What that save, killed before its rename, leaves: CreateTemp's name
	// for the linked file, 0600, beside it.
	leftover := filepath.Join(dot, ".signin.json.2750183916")
	if err := os.WriteFile(leftover, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := xblcall(t, "logout"); code != 0 || !strings.Contains(out, "signed out") {
		t.Fatalf("logout: exit %d %s%s", code, out, errs)
	}
	left := append(attack9cHolding(dot, st.Microsoft.RefreshToken), attack9cHolding(dot, now.Microsoft.RefreshToken)...)
	left = append(left, attack9cHolding(filepath.Dir(p), now.Microsoft.RefreshToken)...)
	if len(left) == 0 {
		return
	}
	os.Remove(p)
	os.Symlink(leftover, p)
	code, out, _ := xblcall(t, "whoami")
	os.Remove(p)
	t.Errorf("logout said \"signed out\", but the killed save's temporary file beside the linked sign-in still holds the refresh token: %v (whoami from it: exit %d %q)",
		left, code, strings.TrimSpace(out))
}

// TestAttack9cServiceLoginTakesAPipeCAItCannotKeep: xblcall help login
// (serviceSignInHelp) "The stored sign-in keeps the files' paths, never
// the key; 'whoami' and 'call' sign in again from them"; RELIABILITY.md
// ("A second attack on the stored sign-in's fixes"): "a PEM file of CAs
// ... stays a bounded read that takes a pipe (`<(...)`, `/dev/stdin`)";
// --ca: "trust this CA certificate (PEM) besides the system's, such as a
// mock's". login --service --ca <(cat ca.pem) (here /dev/fd/N of a pipe)
// is read through certPool and taken: login prints "signed in as the
// service", exit 0, and stores the path /dev/fd/N. The next command (a new
// process: the pipe's descriptor gone, here closed) reads that path and
// fails, exit 2 "not a PEM certificate file"; with --ca /dev/stdin, every
// later whoami or call would read its own standard input (a terminal:
// waits for the user). --cert and --key given as pipes are refused at
// login (regular files only); --ca is taken and the stored sign-in made
// with it is unusable. It should be refused at login (or its contents
// kept), not reported as signed in.
func TestAttack9cServiceLoginTakesAPipeCAItCannotKeep(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	dir := t.TempDir()
	caFile, partner := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "partner.pem")
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile,
		"--partner-cert", partner, "--log-format", "off")
	via := "https://" + addrAfter(t, out.String(), "https://")
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Write(ca) // a CA certificate is far below a pipe's buffer
	w.Close()
	pipe := "/dev/fd/" + strconv.Itoa(int(r.Fd()))
	code, sout, serr, ok := attack9cRunWithin(t, 30*time.Second, "login", "--service", "--cert", partner, "--key", partner, "--via", via, "--ca", pipe)
	r.Close() // the shell's <(...) ends with the login process
	if !ok {
		return
	}
	if code != 0 {
		t.Logf("login --service --ca %s refused: exit %d %s", pipe, code, strings.TrimSpace(serr))
		return // refused at login: held
	}
	wcode, wout, werr, ok := attack9cRunWithin(t, 30*time.Second, "whoami")
	if ok && wcode != 0 {
		t.Errorf("login --service --ca %s (a pipe): exit 0 %q; the stored sign-in keeps the pipe's path and the next command fails: whoami exit %d %q",
			pipe, strings.TrimSpace(sout), wcode, strings.TrimSpace(wout+werr))
	}
}

// held: RELIABILITY.md ("A second attack on the stored sign-in's fixes"):
// "a PEM file of CAs (`--ca-cert`, `--redis-ca`) stays a bounded read that
// takes a pipe (`<(...)`, `/dev/stdin`)"; proxycmd.go readPEMFile "A pipe
// is taken (--ca-cert <(...), /dev/stdin), read up to the bound". A CA
// given as /dev/fd/N of a pipe is read and makes a pool; a pipe fed 2 MiB
// and /dev/zero end with "larger than" (bounded, promptly).
func TestAttack9cHeldPEMFileTakesAPipeBounded(t *testing.T) {
	t.Parallel()
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	r, w, _ := os.Pipe()
	go func(w *os.File) { w.Write(ca.CertPEM()); w.Close() }(w) // w is another pipe's below
	if pool, err := certPool("/dev/fd/" + strconv.Itoa(int(r.Fd()))); err != nil || pool == nil {
		t.Errorf("certPool of a pipe holding a CA: %v", err)
	}
	r.Close()

	r, w, _ = os.Pipe()
	go func() { w.Write(bytes.Repeat([]byte("A"), 2<<20)); w.Close() }()
	done := make(chan error, 1)
	go func() { _, err := readPEMFile("/dev/fd/" + strconv.Itoa(int(r.Fd()))); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("readPEMFile of a pipe fed 2 MiB: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("readPEMFile of a pipe fed 2 MiB: still reading after 10 s")
	}
	r.Close()
	go func() { _, err := readPEMFile("/dev/zero"); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("readPEMFile of /dev/zero: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("readPEMFile of /dev/zero: still reading after 10 s")
	}
}

// held: xblcall help login "The tokens are stored in the user's config
// directory (fgrl/signin.json, mode 0600)"; RELIABILITY.md "a save through
// a link to a sign-in writes the file the link names, and the link
// stays". signin.json a link to a sign-in that is world-readable (0644),
// owned by another user (uid 65534 when run as root), in a directory
// others may write (0777): a refresh's save leaves the linked file 0600
// and ours, the link in place, and no temporary file in either directory.
func TestAttack9cHeldSaveThroughLinkKeeps0600(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	shared := filepath.Join(t.TempDir(), "shared")
	os.MkdirAll(shared, 0o777)
	os.Chmod(shared, 0o777)
	real := filepath.Join(shared, "signin.json")
	if err := os.Rename(p, real); err != nil {
		t.Fatal(err)
	}
	os.Symlink(real, p)
	attack9Expire(t, real, st)
	before, _ := os.ReadFile(real)
	os.Chmod(real, 0o644)
	if os.Getuid() == 0 {
		os.Chown(real, 65534, 65534)
	}
	time.Sleep(1100 * time.Millisecond)
	if code, out, errs := xblcall(t, "whoami"); code != 0 {
		t.Fatalf("whoami: exit %d %s%s", code, out, errs)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("signin.json after the refresh: %v %v, want the link", fi, err)
	}
	fi, err = os.Stat(real)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the linked sign-in after the refresh's save: %v %v, want 0600", fi, err)
	} else if sys, ok := fi.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		t.Errorf("the linked sign-in after the save is owned by uid %d", sys.Uid)
	}
	if b, _ := os.ReadFile(real); bytes.Equal(b, before) {
		t.Errorf("the refresh's save did not reach the linked file")
	}
	for _, d := range []string{shared, filepath.Dir(p)} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			if strings.HasPrefix(e.Name(), ".signin.json.") {
				t.Errorf("a temporary file left in %s: %s", d, e.Name())
			}
		}
	}
}

// held: RELIABILITY.md "Bad input never panics, hangs or grows memory" and
// ("A second attack on the stored sign-in's fixes") "the stored sign-in
// ... read by one internal/smallfile.Read: a regular file only, opened
// without waiting for a writer, bounded"; replaceable: "Renaming over a
// device ..., a FIFO or a directory would replace it, not write to it; so
// would renaming over a link to one". signin.json a link to /dev/zero, to
// a 2 MiB file, to a directory, or a chain of two links ending in a FIFO
// someone reads: whoami, logout and login each end within 10 s; whoami
// refuses; logout leaves what the link named (none holds a sign-in);
// login writes nothing into the FIFO and leaves /dev/zero a device.
func TestAttack9cHeldOddSignInFilesEndPromptly(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBL_CLIENT_ID", "")
	setenv(t, "XBLCALL_MOCK", "")
	big := filepath.Join(t.TempDir(), "big.json")
	os.WriteFile(big, append([]byte(`{"clientId":"x","microsoft":{"refresh_token":"`), bytes.Repeat([]byte("a"), 2<<20)...), 0o600)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "keep"), []byte("mine\n"), 0o600)
	fifoDir := t.TempDir()
	fifo := filepath.Join(fifoDir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	mid := filepath.Join(t.TempDir(), "mid")
	os.Symlink(fifo, mid)
	for name, target := range map[string]string{"/dev/zero": "/dev/zero", "2 MiB": big, "directory": dir, "chain to a FIFO": mid} {
		t.Run(name, func(t *testing.T) {
			setConfigDir(t, t.TempDir())
			p := filepath.Join(configDirOf(t), "fgrl", "signin.json")
			os.MkdirAll(filepath.Dir(p), 0o700)
			os.Symlink(target, p)
			if code, _, errs, ok := attack9cRunWithin(t, 10*time.Second, "whoami"); ok && code == 0 {
				t.Errorf("whoami: exit 0 %q", errs)
			}
			if _, _, _, ok := attack9cRunWithin(t, 10*time.Second, "login", "--via", srv.URL); !ok {
				return
			}
			if name == "chain to a FIFO" {
				buf := make([]byte, 4096)
				if n, _ := reader.Read(buf); n > 0 {
					t.Errorf("login wrote %d bytes into the FIFO", n)
				}
			}
			os.Remove(p)
			os.Symlink(target, p)
			if _, _, _, ok := attack9cRunWithin(t, 10*time.Second, "logout"); !ok {
				return
			}
			if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
				t.Errorf("the directory's file: %v", err)
			}
			if fi, err := os.Stat(target); err != nil {
				t.Errorf("logout removed %s: %v", target, err)
			} else if target == "/dev/zero" && fi.Mode()&fs.ModeCharDevice == 0 {
				t.Errorf("/dev/zero is no longer a device: %v", fi.Mode())
			}
		})
	}
}
