package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// RELIABILITY.md (fourth wave): "`logout` also removes, beside the linked
// file, the save's leftovers that hold a sign-in (only those: another's
// `.signin.json.*` there stays)"; signin.go: "A save through the link
// makes its temporary file beside the file the link names". A file there
// named .signin.json.work that holds ANOTHER account's sign-in (another
// client id and refresh token: no save of ours wrote it) is not a leftover
// of our save, yet logout deletes it: it reads "holds a sign-in" as "ours".
func TestAttack9fLogoutRemovesAnotherAccountsSignInBesideLink(t *testing.T) {
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
	other := st
	m := *st.Microsoft
	m.RefreshToken, m.AccessToken = "another-accounts-refresh", "another-accounts-access"
	other.Microsoft, other.ClientID = &m, "00000000-0000-0000-0000-00000000beef"
	b, _ := json.Marshal(other)
	work := filepath.Join(dot, ".signin.json.work")
	if err := os.WriteFile(work, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := xblcall(t, "logout"); code != 0 || !strings.Contains(out, "signed out") {
		t.Fatalf("logout: exit %d %s%s", code, out, errs)
	}
	if _, err := os.Stat(work); err != nil {
		t.Errorf("logout of one account deleted %s, another account's sign-in beside the linked file (no save of ours wrote it): %v", filepath.Base(work), err)
	}
}

// held: servicesignin.go "--ca ... not a regular file" is judged by
// os.Stat, which follows links: a relative symlink to a regular CA file
// is taken, stored as an absolute path, and the next command signs in
// from it.
func TestAttack9fServiceLoginHeldCASymlinkRelative(t *testing.T) {
	// Serial: it changes the working directory (os.Chdir).
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	dir := t.TempDir()
	caFile, partner := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "partner.pem")
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile,
		"--partner-cert", partner, "--log-format", "off")
	via := "https://" + addrAfter(t, out.String(), "https://")
	if err := os.Symlink("ca.pem", filepath.Join(dir, "link.pem")); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	code, sout, serr, ok := attack9cRunWithin(t, 30*time.Second, "login", "--service", "--cert", partner, "--key", partner, "--via", via, "--ca", "link.pem")
	if !ok {
		return
	}
	if code != 0 {
		t.Fatalf("login --service --ca link.pem (a symlink to a regular file): exit %d %s%s", code, sout, serr)
	}
	os.Chdir(wd)
	if wcode, wout, werr, ok := attack9cRunWithin(t, 30*time.Second, "whoami"); ok && wcode != 0 {
		t.Errorf("whoami after login --ca link.pem from another directory: exit %d %s%s", wcode, wout, werr)
	}
}
