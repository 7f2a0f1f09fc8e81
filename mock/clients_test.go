package mock_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
)

// nodeClients returns the folder of the published Node clients the tests
// drive (mock/testdata/node, installed by npm ci), or skips the test where
// node or the clients are missing; with FGRL_REQUIRE_NODE set (CI) it fails
// instead.
func nodeClients(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs("testdata/node")
	_, nodeErr := exec.LookPath("node")
	var modErr error
	for _, m := range []string{"@xboxreplay/xboxlive-auth", "@xboxreplay/xboxlive-api", "xbox-webapi", "prismarine-auth"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m)); err != nil && modErr == nil {
			modErr = err
		}
	}
	if nodeErr == nil && modErr == nil {
		return dir
	}
	if os.Getenv("FGRL_REQUIRE_NODE") != "" {
		t.Fatalf("node or the published clients are missing (%v, %v): npm ci --prefix mock/testdata/node", nodeErr, modErr)
	}
	t.Skip("node or the published clients are missing: apt-get install nodejs npm; npm ci --prefix mock/testdata/node")
	return ""
}

// nodeAgainst serves handler over HTTPS with a certificate of a fresh
// mock CA for h's hosts, and returns a node command for script (in dir
// cmd.Dir, a scratch folder) that reaches it at the services' real names:
// resolve.cjs preloaded, the CA in NODE_EXTRA_CA_CERTS. The server closes
// when the test ends.
func nodeAgainst(t *testing.T, h *mock.Handler, handler http.Handler, script string) *exec.Cmd {
	t.Helper()
	ts := httptest.NewUnstartedServer(handler)
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	if ts.TLS, err = ca.TLSConfig(h.Hosts()); err != nil {
		t.Fatal(err)
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	scratch := t.TempDir()
	caFile := filepath.Join(scratch, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(ts.URL)
	cmd := exec.Command("node", "--require", filepath.Join(filepath.Dir(script), "resolve.cjs"), script)
	cmd.Dir = scratch
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+caFile, "FGRL_MOCK_ADDR="+u.Host,
		"FGRL_MOCK_HOSTS="+strings.Join(h.Hosts(), ","))
	return cmd
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
	cmd := nodeAgainst(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusTooManyRequests {
			mu.Lock()
			throttled = append(throttled, w.Header().Get("Retry-After"))
			mu.Unlock()
		}
	}), filepath.Join(dir, "drive.mjs"))
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

// TestPublishedDeviceClient drives @xboxreplay/xboxlive-auth's credential
// sign-in (login.live.com's page, its form posted with the world's
// account, the implicit grant's fragment) and prismarine-auth 3.1.1,
// unmodified, through their own flows against the mock over HTTPS at the
// services' real names: the device code sign-in at login.live.com, approved at once with
// no browser, then its "sisu" flow (a device token for its proof key,
// SISU's authorize, every call signed) and its "live" flow (a signed user
// token, a device token, a signed XSTS call with the device token); each
// flow's XSTS token then reads profile, presence and social as the same
// account, and writes a session through @xboxreplay/xboxlive-api's call:
// under its title's SCID it is written, under another title's refused
// 403. Its device code poll waits the 5 s interval the mock answers, once
// per flow.
func TestPublishedDeviceClient(t *testing.T) {
	dir := nodeClients(t)
	h := mock.NewHandler()
	cmd := nodeAgainst(t, h, h, filepath.Join(dir, "devices.mjs"))
	// The flows' title is the mock's default sign-in title (the client
	// names none); another title's SCID is refused a write (MPSD: 403).
	cmd.Env = append(cmd.Env, "FGRL_OWN_SCID="+mock.SCID("1234567890"), "FGRL_OTHER_SCID="+mock.SCID("1016898439"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() }) // every run ends
	defer done.Stop()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // the client's own messages ("[msa] Signed in with Microsoft")
		}
		var step map[string]any
		if err := json.Unmarshal([]byte(line), &step); err != nil {
			t.Fatalf("node printed %q", line)
		}
		got = append(got, step)
	}
	// The world's own answer for the account, with a token minted directly.
	req, _ := http.NewRequest("GET", "https://social.xboxlive.com/users/me/summary", nil)
	req.Header.Set("Authorization", mock.Token(mock.DefaultAccount.XUID, "1234567890"))
	req.Header.Set("x-xbl-contract-version", "2")
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	var summary struct{ TargetFollowingCount float64 }
	json.NewDecoder(resp.Body).Decode(&summary)
	resp.Body.Close()
	code := map[string]any{"uri": "https://www.microsoft.com/link", "userCode": true}
	sessions := map[string]any{"own": "written", "other": "403"}
	want := []map[string]any{
		{"flow": "password", "xuid": mock.DefaultAccount.XUID, "gamertag": mock.DefaultAccount.Gamertag, "presence": "Offline", "following": summary.TargetFollowingCount},
		{"flow": "sisu", "code": code, "xuid": mock.DefaultAccount.XUID, "gamertag": mock.DefaultAccount.Gamertag, "presence": "Offline", "following": summary.TargetFollowingCount, "sessions": sessions},
		{"flow": "live", "code": code, "xuid": mock.DefaultAccount.XUID, "gamertag": mock.DefaultAccount.Gamertag, "presence": "Offline", "following": summary.TargetFollowingCount, "sessions": sessions},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the client's flows (-want +got):\n%s\nstderr:\n%s", diff, stderr.String())
	}
	var signed, sisu int
	for _, c := range h.Calls(mock.CallFilter{}) {
		switch {
		case strings.HasPrefix(c.URL, "https://sisu.xboxlive.com/authorize") && c.Status == http.StatusOK:
			sisu++
		case strings.HasPrefix(c.URL, "https://device.auth.xboxlive.com/") && c.Status == http.StatusOK:
			signed++
		}
	}
	if sisu != 1 || signed != 2 {
		t.Errorf("%d SISU authorizations and %d device tokens, want 1 and 2", sisu, signed)
	}
}

// TestPublishedWebAPIClient drives the npm xbox-webapi client, unmodified,
// through its own methods against a mock seeded with testdata/world.json:
// one world through every service it calls (the gamertag XSTS claims,
// Ada's friends and recent player, her titles, progress and stats).
func TestPublishedWebAPIClient(t *testing.T) {
	dir := nodeClients(t)
	f, err := os.Open("testdata/world.json")
	if err != nil {
		t.Fatal(err)
	}
	world, err := mock.ReadWorld(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	h := mock.Must(mock.New(mock.Config{World: world}))
	cmd := nodeAgainst(t, h, h, filepath.Join(dir, "webapi.cjs"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() }) // every run ends
	defer done.Stop()
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var got struct {
		XUID, Gamertag  string
		Profile         []string
		Presence        string
		Summary         float64
		Friends         [][]any
		Recent          [][]any
		TitleHistory    [][]any
		TitleInfo       []string
		History         [][]any
		Achievements    float64
		History360      float64
		Achievements360 float64
		Stats           [][]any
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("node printed %q: %v\n%s", stdout, err, stderr.String())
	}
	type view struct {
		XUID, Gamertag string
		Profile        []string
		Summary        float64
		Friends        [][]any
		Recent         [][]any
		TitleHistory   [][]any
		History        [][]any
		Stats          [][]any
	}
	sortRows := func(rows [][]any) [][]any {
		slices.SortFunc(rows, func(a, b []any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		return rows
	}
	want := view{XUID: mock.DefaultAccount.XUID, Gamertag: "Ada", Profile: []string{"GameDisplayName", "GameDisplayPicRaw", "Gamerscore", "Gamertag"},
		Summary: 2, Friends: [][]any{{"Bo", "object", "object"}, {"Cy", "object", "object"}}, Recent: [][]any{{"Cy", []any{"1234567890"}}},
		TitleHistory: [][]any{{"1234567890", float64(10)}, {"1717113201", float64(0)}},
		History:      [][]any{{"1234567890", float64(10)}, {"1717113201", float64(0)}},
		Stats:        [][]any{{"MinutesPlayed", "125"}}}
	gotView := view{XUID: got.XUID, Gamertag: got.Gamertag, Profile: got.Profile, Summary: got.Summary, Friends: got.Friends, Recent: got.Recent,
		TitleHistory: got.TitleHistory, History: sortRows(got.History), Stats: got.Stats}
	if diff := cmp.Diff(want, gotView); diff != "" {
		t.Errorf("the world through xbox-webapi (-want +got):\n%s", diff)
	}
	if got.Presence == "" || len(got.TitleInfo) != 1 || got.Achievements == 0 || got.History360 == 0 {
		t.Errorf("presence %q, title info %q, %v achievements, %v Xbox 360 titles: want each answered", got.Presence, got.TitleInfo, got.Achievements, got.History360)
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
