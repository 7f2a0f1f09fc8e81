package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadmeTLSBlock runs the README's "Any language, over HTTPS" block
// line by line, as written but for the ports, with an installed xblcall
// (built into a directory on PATH) and bash: the mock with --https and
// --ca-out and --node-preload, the token, both curl lines, the Python line
// and the Node line with the preload
// (my_tests.py and my_tests.js are written here: each reads the profile
// the curl lines read, as a user's tests would; each must print the
// token's gamertag, MockPlayer), and the stable-CA lines
// (openssl, then the mock on that CA, which a curl trusting ca.pem then
// reaches). A line ending in & or starting the mock runs in the
// background until the next mock or the end; every other line must exit
// 0. Comment lines and the .NET line (no command) are skipped.
func TestReadmeTLSBlock(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "openssl", "python3", "node", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("FGRL_REQUIRE_NODE") != "" {
				t.Fatalf("no %s on PATH and FGRL_REQUIRE_NODE is set", tool)
			}
			t.Skipf("no %s on PATH", tool)
		}
	}
	block := readmeBlock(t, "### Using the mock from any language")
	dir, bin := t.TempDir(), installXblcall(t)
	plain, tls := freePort(t), freePort(t)
	ports := strings.NewReplacer("8080", plain, "8443", tls)
	profile := "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	os.WriteFile(filepath.Join(dir, "my_tests.py"), []byte(`import json, os, urllib.request
req = urllib.request.Request("`+profile+`", headers={"Authorization": os.environ["TOKEN"], "x-xbl-contract-version": "3"})
print(json.load(urllib.request.urlopen(req))["profileUsers"][0]["settings"][0]["value"])
`), 0o600)
	// my_tests.js calls the real name on port 443, as a user's tests do:
	// the preload the mock wrote (--node-preload) takes it to the mock.
	os.WriteFile(filepath.Join(dir, "my_tests.js"), []byte(`const https = require("node:https");
https.get("`+profile+`", {headers: {Authorization: process.env.TOKEN, "x-xbl-contract-version": "3"}}, (res) => {
  let body = ""; res.on("data", (c) => body += c);
  res.on("end", () => { if (res.statusCode !== 200) { console.error(res.statusCode, body); process.exit(1); }
    console.log(JSON.parse(body).profileUsers[0].settings[0].value); });
}).on("error", (e) => { console.error(e.message); process.exit(1); });
`), 0o600)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var mock *exec.Cmd
	stopMock := func() {
		if mock != nil {
			mock.Process.Kill()
			mock.Wait()
			mock = nil
		}
	}
	t.Cleanup(stopMock)
	ran := 0
	for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		line = strings.TrimSpace(ports.Replace(line))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "xblcall mock ") {
			stopMock() // the next mock takes the same ports
			mock = exec.Command("bash", "-c", "exec "+strings.TrimSuffix(line, "&"))
			mock.Dir, mock.Env = dir, env
			if err := mock.Start(); err != nil {
				t.Fatal(err)
			}
			waitServing(t, "127.0.0.1:"+tls)
			ran++
			continue
		}
		if name, value, ok := strings.Cut(line, "=$("); ok && !strings.Contains(name, " ") {
			cmd := exec.Command("bash", "-c", strings.TrimSuffix(value, ")"))
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			env = append(env, name+"="+strings.TrimSpace(string(out)))
			ran++
			continue
		}
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", line, err, clip(string(out)))
		} else if (strings.Contains(line, "curl") || strings.Contains(line, "my_tests")) && !strings.Contains(string(out), `"MockPlayer"`) && strings.TrimSpace(string(out)) != "MockPlayer" {
			t.Errorf("%s: printed no gamertag: %s", line, clip(string(out)))
		}
		ran++
	}
	// The last mock serves on the CA openssl made: a client that trusts
	// that ca.pem reaches it.
	out, err := exec.Command("curl", "-sS", "--cacert", filepath.Join(dir, "ca.pem"), "--resolve", "profile.xboxlive.com:"+tls+":127.0.0.1",
		"-H", "Authorization: "+mustToken(t, env), strings.Replace(profile, ".com/", ".com:"+tls+"/", 1)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"MockPlayer"`) {
		t.Errorf("the mock on openssl's CA: %v %s", err, clip(string(out)))
	}
	if ran != 8 {
		t.Errorf("ran %d lines of the block, want 8", ran)
	}
}

// readmeBlock is the first ```sh block after heading in README.md.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, heading)
	if i < 0 {
		t.Fatalf("README has no %q", heading)
	}
	s = s[i:]
	s = s[strings.Index(s, "```sh")+5:]
	return s[:strings.Index(s, "```")]
}

func mustToken(t *testing.T, env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TOKEN="); ok {
			return v
		}
	}
	t.Fatal("no TOKEN line ran")
	return ""
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// waitServing waits up to 20 s for addr to accept connections.
func waitServing(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing serves %s after 20 s", addr)
}
