package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
)

// scriptedRead is what scripted.cjs prints of one read: the client's error
// (its status code and message) or what it read.
type scriptedRead struct {
	Status   int    `json:"status,omitempty"`
	Message  string `json:"message,omitempty"`
	XUID     string `json:"xuid,omitempty"`
	Gamertag string `json:"gamertag,omitempty"`
}

// TestPublishedClientPlaysScript: a published client nobody here wrote
// (@xboxreplay/xboxlive-api 3.4.3, its call method, through axios) reads
// a script's answers from `xblcall mock --script` over HTTPS at the real
// name, as it reads the services': a scripted 503, 429 and 404 come to it
// as its own errors of those statuses, a reset and a truncated body as
// network errors, a hang as its own timeout, a scripted JSON body as the
// data it parses, and after the script the mock's own answer; the
// client's own getPlayerXUID asks a path the mock does not serve: 404.
func TestPublishedClientPlaysScript(t *testing.T) {
	t.Parallel()
	env := append(os.Environ(), "NODE_PATH="+nodeModules(t))
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile, "--log-format", "off",
		"--script", "testdata/scripted.yaml")
	tlsAddr := addrAfter(t, out.String(), "https://")
	resolve, _ := filepath.Abs("../../mock/testdata/node/resolve.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--require", resolve, "testdata/scripted.cjs")
	cmd.Env = append(env, "NODE_EXTRA_CA_CERTS="+caFile, "FGRL_MOCK_ADDR="+tlsAddr, "FGRL_MOCK_HOSTS=profile.xboxlive.com",
		"TOKEN="+mock.Token("2533274790000001", "1234567890"))
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderrOf(err))
	}
	var got []scriptedRead
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("node printed %q", b)
	}
	// The client's own words for each (@xboxreplay/xboxlive-api's call:
	// 400, 401, 403, 404 and 429 are errors of their own, any other
	// failure an internal error of status 500 with axios's message).
	want := []scriptedRead{
		{Status: 500, Message: "Request failed with status code 503"},
		{Status: 429, Message: "Too many requests."},
		{Status: 404, Message: "Not found."},
		{Status: 500, Message: "socket hang up"},
		{Status: 500, Message: "aborted"},
		{Status: 500, Message: "timeout of 1000ms exceeded"},
		{XUID: "2533274790000777", Gamertag: "Scripted"},
		{XUID: mock.DefaultAccount.XUID, Gamertag: mock.DefaultAccount.Gamertag},
		// getPlayerXUID's /users/gt(MockPlayer)/settings: not a path the
		// mock serves (docs/MOCK.md)
		{Status: 404, Message: "Not found."},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("what the published client read (-want +got):\n%s", d)
	}
}
