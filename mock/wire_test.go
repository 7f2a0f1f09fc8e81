package mock

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/xblgo/fgrl/internal/wiretest"
)

// hosts maps each recorded call to the host XSAPI sends it to.
var wireHosts = map[string]string{
	"GetProfiles": "profile.xboxlive.com", "GetPresence": "userpresence.xboxlive.com",
	"GetPresenceBatch": "userpresence.xboxlive.com", "SetPresence": "userpresence.xboxlive.com",
	"GetPeople": "social.xboxlive.com", "CheckPermission": "privacy.xboxlive.com",
	"ListAchievements": "achievements.xboxlive.com", "GetAchievement": "achievements.xboxlive.com",
	"UpdateAchievement": "achievements.xboxlive.com", "GetStats": "userstats.xboxlive.com",
	"GetStatsBatch": "userstats.xboxlive.com", "GetLeaderboard": "leaderboards.xboxlive.com",
	"GetStatLeaderboard": "leaderboards.xboxlive.com", "GetSession": "sessiondirectory.xboxlive.com",
	"WriteSession": "sessiondirectory.xboxlive.com", "SendInvites": "sessiondirectory.xboxlive.com",
	"CreateMatchTicket": "smartmatch.xboxlive.com", "SubmitReputationFeedback": "reputation.xboxlive.com",
	"GetFriends": "peoplehub.xboxlive.com", "GetRecentPlayers": "peoplehub.xboxlive.com",
	"GetTitleHistory": "titlehub.xboxlive.com", "GetTitle": "titlehub.xboxlive.com",
	"GetAchievementHistory": "achievements.xboxlive.com", "SearchUsers": "usersearch.xboxlive.com",
	"GetProfileByGamertag": "profile.xboxlive.com",
}

// wireAccount is the recordings' caller as they name it: 2669321029139235
// is "e" (profile_batch.json, profile_by_gamertag.json).
var wireAccount = Account{XUID: "2669321029139235", Gamertag: "e"}

// inWireWorld are the exchanges answered from testdata/wire-world.json,
// the world as the recordings describe it (the caller "e", a friend and
// recent player "Major Nelson", gamertags holding "tux", two titles
// played), so that their answers have something in them.
var inWireWorld = map[string]bool{"GetFriends": true, "GetRecentPlayers": true, "GetTitleHistory": true,
	"GetAchievementHistory": true, "SearchUsers": true, "GetProfileByGamertag": true}

// replayExchange sends x's request, as XSAPI sends it, to h.
func replayExchange(t *testing.T, h *Handler, x *wiretest.Exchange) result {
	t.Helper()
	host, ok := wireHosts[x.Name]
	if !ok {
		t.Fatalf("no host for %s", x.Name)
	}
	var body io.Reader
	if x.Request != nil {
		body = bytes.NewReader(x.Request)
	}
	req, err := http.NewRequest(x.Method, "https://"+host+x.URL(), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", Token(x.Caller, x.Title))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	for k, v := range x.Header {
		req.Header.Set(k, v)
	}
	return send(t, h, req)
}

// TestWireShapes: the mock's answer to each request XSAPI sends has the
// status and the shape (field names, nesting, JSON types) the service's
// recorded answer has. Nothing of the client is used.
func TestWireShapes(t *testing.T) {
	for _, name := range wiretest.Names() {
		t.Run(name, func(t *testing.T) {
			x, err := wiretest.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			c := Config{Account: &wireAccount}
			if inWireWorld[name] {
				c.World = loadWorld(t, "testdata/wire-world.json")
			}
			if x.Scid != "" {
				c.SCIDs = map[string]string{x.Title: x.Scid}
			}
			h := Must(New(c))
			for _, b := range x.Before {
				bx, err := wiretest.Load(b)
				if err != nil {
					t.Fatal(err)
				}
				if r := replayExchange(t, h, bx); r.status != bx.Status {
					t.Fatalf("before %s: status %d %s, want %d", b, r.status, r.body, bx.Status)
				}
			}
			r := replayExchange(t, h, x)
			if r.status != x.Status {
				t.Fatalf("status %d, want %d; body %s", r.status, x.Status, r.body)
			}
			if x.Answer == nil {
				if r.body != "" {
					t.Errorf("answer %q, want no body", r.body)
				}
				return
			}
			if diff := wiretest.ShapeDiff(x.Answer, []byte(r.body)); diff != "" {
				t.Errorf("%s answer shape mismatch (-recorded +mock):\n%s", name, diff)
			}
		})
	}
}
