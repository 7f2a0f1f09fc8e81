package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestNodePreload: Node, preloading the file xblcall mock --node-preload
// writes, reaches the mock at a served host's real name on port 443 with
// https.get and with fetch (undici), trusting only the CA --ca-out wrote;
// a host the mock does not serve is not sent to it. Runs where node is
// installed (FGRL_REQUIRE_NODE=1: must). Before, the only way was the test
// fixture mock/testdata/node/resolve.cjs.
func TestNodePreload(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("FGRL_REQUIRE_NODE") != "" {
			t.Fatal("no node on PATH and FGRL_REQUIRE_NODE is set")
		}
		t.Skip("no node on PATH")
	}
	dir := t.TempDir()
	preload, ca := filepath.Join(dir, "mock.cjs"), filepath.Join(dir, "ca.pem")
	startMock(t, "--https", "127.0.0.1:0", "--ca-out", ca, "--node-preload", preload)
	script := filepath.Join(dir, "t.js")
	os.WriteFile(script, []byte(`const https = require("node:https");
const dns = require("node:dns");
const url = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag";
const headers = {Authorization: process.env.TOKEN, "x-xbl-contract-version": "2"};
const gamertag = (body) => JSON.parse(body).profileUsers[0].settings[0].value;
https.get(url, {headers}, (res) => {
  let body = ""; res.on("data", (c) => body += c);
  res.on("end", async () => {
    console.log("https", res.statusCode, gamertag(body));
    const r = await fetch(url, {headers});
    console.log("fetch", r.status, gamertag(await r.text()));
    dns.lookup("notserved.example", (err, address) => console.log("other", err ? "not resolved" : address));
  });
}).on("error", (e) => { console.error(e.message); process.exit(1); });
`), 0o600)
	cmd := exec.Command("node", "--require", preload, script)
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+ca, "TOKEN="+mock.Token("2533274791234567", "1234567890"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	for _, want := range []string{"https 200 MockPlayer", "fetch 200 MockPlayer"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("node printed %q, want a line %q", out, want)
		}
	}
	if strings.Contains(string(out), "other 127.0.0.1") {
		t.Errorf("a host the mock does not serve resolved to it: %s", out)
	}
}

// TestNodePreloadFile: the preload names every host served and the
// --https port, on loopback for a listener on every interface; without
// --https, --node-preload is a usage error.
func TestNodePreloadFile(t *testing.T) {
	t.Parallel()
	hosts := mock.NewHandler().Hosts()
	for _, tt := range []struct {
		name     string
		addr     *net.TCPAddr
		wantAddr string
	}{
		{"loopback", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}, "const address = '127.0.0.1';\nconst family = 4;\nconst port = 8443;"},
		{"every interface", &net.TCPAddr{IP: net.IPv4zero, Port: 443}, "const address = '127.0.0.1';\nconst family = 4;\nconst port = 443;"},
		{"IPv6", &net.TCPAddr{IP: net.IPv6loopback, Port: 9443}, "const address = '::1';\nconst family = 6;\nconst port = 9443;"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := string(nodePreloadFor(hosts, tt.addr))
			if !strings.Contains(got, tt.wantAddr) {
				t.Errorf("preload lacks %q:\n%s", tt.wantAddr, got)
			}
			for _, h := range hosts {
				if !strings.Contains(got, `"`+h+`"`) {
					t.Errorf("preload does not name %s", h)
				}
			}
		})
	}
	code, _, errs := xblcall(t, "mock", "--addr", "127.0.0.1:0", "--node-preload", filepath.Join(t.TempDir(), "m.cjs"))
	if code != 2 || !strings.Contains(errs, "--https") {
		t.Errorf("--node-preload without --https: exit %d %s, want 2 naming --https", code, errs)
	}
}
