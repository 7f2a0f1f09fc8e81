package mock_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
)

// nodeClients returns the folder of the published Node clients the tests
// drive (mock/testdata/node, installed by npm ci), or skips the test where
// node or the clients are missing; with FGRL_REQUIRE_NODE set (CI) it fails
// instead.
func nodeClients(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs("testdata/node")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "@xboxreplay", "xboxlive-auth"))
	if nodeErr == nil && modErr == nil {
		return dir
	}
	if os.Getenv("FGRL_REQUIRE_NODE") != "" {
		t.Fatalf("node or the published clients are missing (%v, %v): npm ci --prefix mock/testdata/node", nodeErr, modErr)
	}
	t.Skip("node or the published clients are missing: apt-get install nodejs npm; npm ci --prefix mock/testdata/node")
	return ""
}

// TestPublishedNodeClient drives @xboxreplay/xboxlive-auth and
// @xboxreplay/xboxlive-api, unmodified, against the mock over HTTPS at the
// services' real names: sign in at login.live.com, the user token and
// XSTS, profile and presence; past the access token's expiry the old token
// is refused and the client refreshes at login.live.com and goes on; a
// burst of profile calls gets the service's 429s with Retry-After.
func TestPublishedNodeClient(t *testing.T) {
	dir := nodeClients(t)
	var mu sync.Mutex
	now := time.Now()
	h := mock.Must(mock.New(mock.Config{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}))
	var throttled []string // Retry-After of each 429
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusTooManyRequests {
			mu.Lock()
			throttled = append(throttled, w.Header().Get("Retry-After"))
			mu.Unlock()
		}
	}))
	ca, err := mock.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	if ts.TLS, err = ca.TLSConfig(h.Hosts()); err != nil {
		t.Fatal(err)
	}
	ts.StartTLS()
	defer ts.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(ts.URL)
	cmd := exec.Command("node", "--require", "./resolve.cjs", "drive.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+caFile, "FGRL_MOCK_ADDR="+u.Host,
		"FGRL_MOCK_HOSTS="+strings.Join(h.Hosts(), ","))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() }) // every run ends
	defer done.Stop()
	var steps []map[string]any
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var step map[string]any
		if err := json.Unmarshal(sc.Bytes(), &step); err != nil {
			t.Fatalf("node printed %q", sc.Text())
		}
		steps = append(steps, step)
		if step["step"] == "signed-in" {
			mu.Lock()
			now = now.Add(2 * time.Hour) // past the access token's hour
			mu.Unlock()
			stdin.Write([]byte("advanced\n"))
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	want := []map[string]any{
		{"step": "signed-in", "xuid": mock.DefaultAccount.XUID, "gamertag": mock.DefaultAccount.Gamertag, "presence": "Offline", "expiresIn": float64(3600)},
		{"step": "refreshed", "expiredToken": "401", "gamertag": mock.DefaultAccount.Gamertag},
		{"step": "burst", "served": float64(9), "refused": []any{"429", "429", "429"}},
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("the client's steps (-want +got):\n%s\nstderr:\n%s", diff, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(throttled) != 3 || throttled[0] == "" {
		t.Errorf("the mock's 429s carried Retry-After %q, want 3 values", throttled)
	}
}

// statusRecorder notes the status a handler writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
