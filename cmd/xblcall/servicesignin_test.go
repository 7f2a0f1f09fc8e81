package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
)

// TestLoginServiceThenCall: xblcall mock writes a partner certificate
// readable by its owner only; xblcall login --service signs in with it over
// the mock's HTTPS port; whoami names the service; call sends a signed
// service-auth call the multiplayer service takes; a key file others can
// read is refused.
func TestLoginServiceThenCall(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	dir := t.TempDir()
	caFile, partner := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "partner.pem")
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile,
		"--partner-cert", partner, "--log-format", "off")
	tlsAddr := addrAfter(t, out.String(), "https://")
	if st, err := os.Stat(partner); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("--partner-cert file: %v %v, want mode 0600", st, err)
	}
	via := "https://" + tlsAddr
	code, sout, serr := xblcall(t, "login", "--service", "--cert", partner, "--key", partner, "--via", via, "--ca", caFile)
	if code != 0 || !strings.Contains(sout, "signed in as the service of") {
		t.Fatalf("login --service: exit %d\n%s%s", code, sout, serr)
	}
	b, _ := os.ReadFile(filepath.Join(configDirOf(t), "fgrl", "signin.json"))
	if strings.Contains(string(b), "PRIVATE KEY") || strings.Contains(string(b), "XBL3.0") {
		t.Errorf("the stored sign-in holds a key or a token: %s", b)
	}
	if code, sout, serr := xblcall(t, "whoami"); code != 0 || !strings.Contains(sout, "the service fgrl-mock-backend in sandbox RETAIL") {
		t.Errorf("whoami: exit %d\n%s%s", code, sout, serr)
	}
	session := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + mock.SCID("1234567890") + "/sessiontemplates/lobby/sessions/s1"
	code, sout, serr = xblcall(t, "call", "-i", "-H", "x-xbl-contract-version: 107", session)
	if strings.Contains(sout, "401") || strings.Contains(sout, "403") || !strings.Contains(sout, "404") {
		t.Errorf("a service-auth call to multiplayer: exit %d\n%s%s", code, sout, serr)
	}
	profile := "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	if _, sout, serr := xblcall(t, "call", "-i", profile); !strings.Contains(sout, "403") {
		t.Errorf("a service-auth call to profile: %s%s, want 403", sout, serr)
	}

	if _, sout, serr := xblcall(t, "call", "-n", "3", "--json", "-H", "x-xbl-contract-version: 107", session); !strings.Contains(strings.Join(strings.Fields(sout), ""), `"404":3`) {
		t.Errorf("a load of service-auth calls: %s%s, want three 404s", sout, serr)
	}

	os.Chmod(partner, 0o644)
	if code, sout, serr := xblcall(t, "login", "--service", "--cert", partner, "--key", partner, "--via", via, "--ca", caFile); code == 0 ||
		!strings.Contains(serr, "readable by others") {
		t.Errorf("login with a key file others can read: exit %d\n%s%s", code, sout, serr)
	}
}

// TestServiceCallRenewsOn401 is XSAPI's one renewal on a 401 for a call made
// with the stored service sign-in: the mock's script answers the first
// session request 401, and the call renews the service's token and is
// answered by the mock (its 404 for a session nobody made).
func TestServiceCallRenewsOn401(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	dir := t.TempDir()
	caFile, partner, script := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "partner.pem"), filepath.Join(dir, "script.yaml")
	os.WriteFile(script, []byte("rules:\n  - name: token refused once\n    match: {host: sessiondirectory.xboxlive.com}\n    then: mock\n    answers:\n      - {status: 401}\n"), 0o600)
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile,
		"--partner-cert", partner, "--log-format", "off", "--script", script)
	via := "https://" + addrAfter(t, out.String(), "https://")
	if code, sout, serr := xblcall(t, "login", "--service", "--cert", partner, "--key", partner, "--via", via, "--ca", caFile); code != 0 {
		t.Fatalf("login --service: exit %d\n%s%s", code, sout, serr)
	}
	session := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + mock.SCID("1234567890") + "/sessiontemplates/lobby/sessions/s1"
	code, sout, serr := xblcall(t, "call", "-i", "-H", "x-xbl-contract-version: 107", session)
	if first, _, _ := strings.Cut(sout, "\n"); !strings.Contains(first, "404") {
		t.Errorf("a service call answered 401 once: exit %d, status line %q, want the mock's 404 after one renewal\n%s", code, first, serr)
	}
}

// TestServiceSignInFromNode: a backend written with Node's own crypto and
// https signs in against xblcall mock --https --partner-cert as the Go
// client does (testdata/s2s.mjs): S-token, service-auth and delegated
// X-tokens, signed calls taken, and an unsigned call and one signed over
// another path refused.
func TestServiceSignInFromNode(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("FGRL_REQUIRE_NODE") != "" {
			t.Fatal("node is missing")
		}
		t.Skip("node is missing")
	}
	dir := t.TempDir()
	caFile, partner := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "partner.pem")
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile,
		"--partner-cert", partner, "--log-format", "off")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "testdata/s2s.mjs")
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+caFile, "FGRL_PARTNER="+partner,
		"FGRL_MOCK_ADDR="+addrAfter(t, out.String(), "https://"))
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, b)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		step, status, _ := strings.Cut(line, " ")
		got[step] = status
	}
	want := map[string]string{"xsas": "200", "xsts-service": "200", "delegation-token": "yes", "xsts-delegated": "200",
		"service-mpsd": "404", "service-profile": "403", "delegated-profile": "200", "delegated-unsigned": "403",
		"delegated-other-path": "403"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Node backend's steps (-want +got):\n%s", diff)
	}
}
