package mock_test

import (
	"bufio"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestNodeWebSocketSubscribes: Node's built-in WebSocket client (undici),
// at the real name wss://rta.xboxlive.com/connect over the mock's TLS,
// subscribes as XSAPI does and gets the answer [1,1,0] and then the event
// "Scarlett:true" when the friend it follows sets their presence.
func TestNodeWebSocketSubscribes(t *testing.T) {
	dir := nodeClients(t)
	const me, friend, title = "2533274791234567", "2533274799999999", "1234567890"
	h := mock.Must(mock.New(mock.Config{World: mock.World{Accounts: []mock.WorldAccount{
		{XUID: me, Friends: []string{friend}}, {XUID: friend, Friends: []string{me}}}}}))
	t.Cleanup(h.DropRTA)
	cmd := nodeAgainst(t, h, h, filepath.Join(dir, "rta.mjs"))
	if exec.Command("node", "-e", "if (typeof WebSocket === 'undefined') process.exit(1)").Run() != nil {
		cmd.Args = append([]string{cmd.Args[0], "--experimental-websocket"}, cmd.Args[1:]...) // Node 20 and 21
	}
	cmd.Env = append(cmd.Env, "FGRL_TOKEN="+mock.Token(me, title), "FGRL_TARGET="+friend)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got []string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		got = append(got, lines.Text())
		if len(got) == 1 {
			req, _ := http.NewRequest("POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", strings.NewReader(`{"state":"active"}`))
			req.Header.Set("Authorization", mock.Token(friend, title))
			if resp, err := h.RoundTrip(req); err != nil || resp.StatusCode != 200 {
				t.Fatalf("presence write: %v %v", err, resp)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	want := []string{"[1,1,0]", `[3,` + "", `"Scarlett:true"]`}
	if len(got) != 2 || got[0] != want[0] || !strings.HasPrefix(got[1], want[1]) || !strings.HasSuffix(got[1], want[2]) {
		t.Errorf("node printed %q, want [1,1,0] then an event Scarlett:true", got)
	}
}
