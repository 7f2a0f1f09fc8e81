package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeProxyApps are the programs the README's proxy block runs, written
// as a user's would be: each reads the profile through HTTPS_PROXY with
// the CA the block names, unchanged but for that, and prints the gamertag.
var readmeProxyApps = map[string]string{
	"my_app.py": `import json, os, urllib.request
req = urllib.request.Request("https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag",
    headers={"Authorization": os.environ["TOKEN"], "x-xbl-contract-version": "3"})
print(json.load(urllib.request.urlopen(req))["profileUsers"][0]["settings"][0]["value"])
`,
	"my_app.js": `const https = require("node:https");
const { HttpsProxyAgent } = require("https-proxy-agent");
https.get("https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag",
  { agent: new HttpsProxyAgent(process.env.HTTPS_PROXY), headers: { Authorization: process.env.TOKEN, "x-xbl-contract-version": "3" } }, (res) => {
  let body = ""; res.on("data", (c) => body += c);
  res.on("end", () => { if (res.statusCode !== 200) { console.error(res.statusCode, body); process.exit(1); }
    console.log(JSON.parse(body).profileUsers[0].settings[0].value); });
}).on("error", (e) => { console.error(e.message); process.exit(1); });
`,
	// The same read with requests, run when it is installed (it is not in
	// Python's standard library): it trusts REQUESTS_CA_BUNDLE.
	"my_app_requests.py": `import os, requests
r = requests.get("https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag",
    headers={"Authorization": os.environ["TOKEN"], "x-xbl-contract-version": "3"}, timeout=30)
r.raise_for_status()
print(r.json()["profileUsers"][0]["settings"][0]["value"])
`,
}

// TestReadmeProxyBlock runs the README's "For code in other languages"
// block line by line, as written but for the ports, with an installed
// xblcall: the mock, the proxy --via the mock with --ca-out, the token,
// the curl burst of 30 profile reads at once (it must print 10 200s and 20
// 429s), the Python and Node programs (each must print the gamertag,
// MockPlayer; with requests installed, the same program on requests), and
// the mock's check that it answered no call 429. This is the issue's "Done
// when": curl through xblcall proxy --via <mock> --ca-out ca.pem.
func TestReadmeProxyBlock(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "python3", "node", "go"} {
		needTool(t, tool)
	}
	modules := nodeModules(t)
	block := readmeBlock(t, "## For code in other languages")
	dir, bin := t.TempDir(), installXblcall(t)
	for name, src := range readmeProxyApps {
		os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600)
	}
	mockPort, proxyPort := freePort(t), freePort(t)
	ports := strings.NewReplacer("8080", mockPort, "3128", proxyPort)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NODE_PATH="+modules,
		"NO_PROXY=", "no_proxy=")
	var ran int
	for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		line = strings.TrimSpace(ports.Replace(line))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ran++
		if name, value, ok := strings.Cut(line, "=$("); ok && !strings.Contains(name, " ") {
			out, err := bashLine(dir, env, strings.TrimSuffix(value, ")")).Output()
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			env = append(env, name+"="+strings.TrimSpace(string(out)))
			continue
		}
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			env = append(env, kv)
			continue
		}
		if strings.HasPrefix(line, "xblcall ") { // a server, in the background until the test ends
			server := strings.TrimSpace(line[:strings.Index(line, "&")])
			cmd := bashLine(dir, env, "exec "+server)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			port := mockPort
			if strings.HasPrefix(server, "xblcall proxy") {
				port = proxyPort
			}
			waitServing(t, "127.0.0.1:"+port)
			continue
		}
		out, err := bashLine(dir, env, line).CombinedOutput()
		switch {
		case err != nil:
			t.Errorf("%s: %v\n%s", line, err, clip(string(out)))
		case strings.Contains(line, "seq 30"):
			if got, want := strings.Fields(string(out)), []string{"10", "200", "20", "429"}; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("the curl burst printed %q, want 10 200s and 20 429s", out)
			}
		case strings.Contains(line, "my_app"):
			if strings.TrimSpace(string(out)) != "MockPlayer" {
				t.Errorf("%s printed %q, want MockPlayer", line, out)
			}
			if strings.Contains(line, "my_app.py") && exec.Command("python3", "-c", "import requests").Run() == nil {
				rq := strings.Replace(line, "my_app.py", "my_app_requests.py", 1)
				if out, err := bashLine(dir, env, rq).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "MockPlayer" {
					t.Errorf("%s: %v %q, want MockPlayer", rq, err, out)
				}
			}
		}
	}
	if ran != 8 {
		t.Errorf("ran %d lines of the block, want 8", ran)
	}
}

// bashLine is bash -c line in dir with env.
func bashLine(dir string, env []string, line string) *exec.Cmd {
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}
