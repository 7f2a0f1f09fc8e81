package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/mock"
)

// TestRehearsalFromNode: a test written in Node, against xblcall mock
// --script, plays a three-answer sequence, rehearses a two-minute presence
// outage with 429s, and ignores a 429 on purpose; xblcall check then fails
// with exit status 1 and the analyzer's finding.
func TestRehearsalFromNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("FGRL_REQUIRE_NODE") != "" {
			t.Fatal("no node and FGRL_REQUIRE_NODE is set")
		}
		t.Skip("no node on PATH")
	}
	url, _ := startMock(t, "--log-format", "off", "--script", "testdata/rehearsal.yaml")

	cmd := exec.Command(node, "testdata/rehearse.mjs")
	cmd.Env = append(os.Environ(), "FGRL_MOCK="+url, "FGRL_TOKEN="+mock.Token("2533274790000001", "1234567890"))
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v %s", err, stdout)
	}
	var got struct {
		Sequence  []int
		FaultsSet int
		Outage    [][]any
		Profile   int
		Ignored   []int
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("node printed %q: %v", stdout, err)
	}
	want := got
	want.Sequence, want.FaultsSet, want.Outage, want.Profile, want.Ignored = []int{503, 500, 200, 200}, 200,
		[][]any{{float64(429), "30"}}, 200, []int{429, 429, 429}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the Node test's view (-want +got)\n%s", d)
	}

	code, verdict, _ := xblcall(t, "check", "--mock", url, "--certify", "--no-429", "--expect", "GET userpresence.xboxlive.com/users/=8")
	if code != 1 || !strings.Contains(verdict, "certification: throttled-calls presence/read:") || !strings.Contains(verdict, "429: GET https://userpresence.xboxlive.com/users/xuid(2533274790000001)") {
		t.Errorf("xblcall check: exit %d\n%s", code, verdict)
	}
	if code, verdict, _ := xblcall(t, "check", "--mock", url, "--expect", "userpresence.xboxlive.com=8", "--expect", "GET profile.xboxlive.com/users/me/=1"); code != 0 || strings.TrimSpace(verdict) != "ok" {
		t.Errorf("xblcall check of counts: exit %d %q", code, verdict)
	}
}

// TestCheckUsage: xblcall check refuses what it cannot ask.
func TestCheckUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"check"}, {"check", "--expect", "nothing"}, {"check", "--expect", "host=-1"}, {"check", "--no-429", "--since", "yesterday"}} {
		if code, _, errs := xblcall(t, args...); code != 2 || errs == "" {
			t.Errorf("xblcall %v: exit %d %q, want 2", args, code, errs)
		}
	}
	if code, _, errs := xblcall(t, "check", "--no-429", "--mock", "http://127.0.0.1:1"); code != 1 || !strings.Contains(errs, "the mock at") {
		t.Errorf("no mock: exit %d %q", code, errs)
	}
}
