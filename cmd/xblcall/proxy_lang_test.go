package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/xblgo/fgrl/mock"
)

// langBurst is what each language's script prints of its burst.
type langBurst struct {
	Served    int      `json:"served"`
	Local429  int      `json:"local429"`
	Gamertags []string `json:"gamertags"`
	Refused   []string `json:"refused"` // the published client's failures, as it reports them
	Other     []string `json:"other"`
}

// needTool returns tool's path, or skips the test without it; with
// FGRL_REQUIRE_NODE set (CI) it fails instead.
func needTool(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("FGRL_REQUIRE_NODE") != "" {
			t.Fatalf("no %s on PATH and FGRL_REQUIRE_NODE is set", tool)
		}
		t.Skipf("no %s on PATH", tool)
	}
}

// nodeModules returns mock/testdata/node/node_modules, or skips (fails with
// FGRL_REQUIRE_NODE) when npm ci has not installed them.
func nodeModules(t *testing.T) string {
	t.Helper()
	needTool(t, "node")
	dir, _ := filepath.Abs("../../mock/testdata/node/node_modules")
	for _, m := range []string{"https-proxy-agent", "@xboxreplay/xboxlive-api"} {
		if _, err := os.Stat(filepath.Join(dir, m)); err != nil {
			if os.Getenv("FGRL_REQUIRE_NODE") != "" {
				t.Fatalf("%s is missing: npm ci --prefix mock/testdata/node", m)
			}
			t.Skipf("%s is missing: npm ci --prefix mock/testdata/node", m)
		}
	}
	return dir
}

// TestProxyFromOtherLanguages: a burst of 30 profile reads at once from
// a Node application (https-proxy-agent) and from a Python one (urllib,
// standard library), each through its own xblcall proxy --via the mock,
// failing fast: the allowance served (10), local 429s with Retry-After and
// FGRL's body for the rest, and the mock answers no call 429. The published
// @xboxreplay/xboxlive-api client, unmodified, with only HTTPS_PROXY set
// (its axios sends the proxy requests in absolute form) and the proxy's
// --fail-fast, gets the same.
func TestProxyFromOtherLanguages(t *testing.T) {
	t.Parallel()
	token := mock.Token("2533274791234567", "1234567890")
	for _, tc := range []struct {
		name, tool, script string
		proxyArgs          []string
		want               langBurst
	}{
		{"node", "node", "proxyburst.cjs", nil, langBurst{Served: 10, Local429: 20, Gamertags: []string{"MockPlayer"}}},
		{"python", "python3", "proxyburst.py", nil, langBurst{Served: 10, Local429: 20, Gamertags: []string{"MockPlayer"}}},
		{"published client", "node", "proxypublished.cjs", []string{"--fail-fast"},
			langBurst{Served: 10, Gamertags: []string{"MockPlayer"}, Refused: repeat("429", 20)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needTool(t, tc.tool)
			env := os.Environ()
			if tc.tool == "node" {
				env = append(env, "NODE_PATH="+nodeModules(t))
			}
			mockOut, _ := servedMock(t, "--addr", "127.0.0.1:0", "--log-format", "off")
			mockAddr := addrAfter(t, mockOut.String(), "http://")
			caFile := filepath.Join(t.TempDir(), "ca.pem")
			addr, _, _ := servedProxy(t, append([]string{"--addr", "127.0.0.1:0", "--via", "http://" + mockAddr, "--ca-out", caFile,
				"--log-format", "off"}, tc.proxyArgs...)...)
			script, _ := filepath.Abs(filepath.Join("testdata", tc.script))
			cmd := exec.Command(tc.tool, script)
			cmd.Dir = t.TempDir()
			cmd.Env = append(env, "HTTPS_PROXY=http://"+addr, "NO_PROXY=", "no_proxy=", "TOKEN="+token,
				"NODE_EXTRA_CA_CERTS="+caFile, "SSL_CERT_FILE="+caFile)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.script, err, stderrOf(err))
			}
			var got langBurst
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%s printed %q", tc.script, out)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", tc.script, diff)
			}
			mockNo429(t, mockAddr)
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// stderrOf is what a failed command wrote on standard error.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
