package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/xblgo/fgrl/datafile"
)

// The world of testdata/world.json: Ada (the default account's XUID) is
// friends with Bo and follows Cy; all three played title1.
const (
	ada = xuid1
	bo  = "2533274792000001"
	cy  = "2533274792000002"
)

func seeded(t testing.TB) *Handler {
	t.Helper()
	h, err := New(Config{World: loadWorld(t, "testdata/world.json")})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// loadWorld reads a world file of testdata.
func loadWorld(t testing.TB, name string) World {
	t.Helper()
	w, err := LoadWorld(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// as sends a request as xuid in title1 with a contract version.
func as(t *testing.T, h *Handler, xuid, method, url, contract, body string) result {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", Token(xuid, title1))
	req.Header.Set("x-xbl-contract-version", contract)
	r := send(t, h, req)
	if r.status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, url, r.status, r.body)
	}
	return r
}

func TestReadWorldErrors(t *testing.T) {
	const ok = `{"accounts": [
  {"xuid": "1", "gamertag": "Ada"},
  {"xuid": "2", "gamertag": "Bo"}
]}`
	for _, tc := range []struct {
		name, file string
		want       datafile.Error
	}{
		{"syntax", "{\"accounts\": [\n  {\"xuid\": \"1\"},\n  {\"xuid\" \"2\"}\n]}", datafile.Error{Line: 3, Field: "accounts[1].xuid", Reason: "not JSON: invalid character"}},
		{"truncated", "{\"accounts\": [\n  {\"xuid\": \"1\"", datafile.Error{Line: 2, Field: "accounts[0]", Reason: "the file ends inside the document"}},
		{"unknown field", "{\"accounts\": [\n  {\"xuid\": \"1\",\n   \"gamertags\": \"x\"}]}", datafile.Error{Line: 3, Field: "accounts[0].gamertags", Reason: "no such field"}},
		{"wrong type", "{\"accounts\": [\n  {\"xuid\": \"1\",\n   \"gamerscore\": \"lots\"}]}", datafile.Error{Line: 3, Field: "accounts[0].gamerscore", Reason: "a string where a whole number belongs"}},
		{"more after", ok + "\n{}", datafile.Error{Line: 5, Reason: "more after the document"}},
		{"bad xuid", strings.Replace(ok, `"2"`, `"x2"`, 1), datafile.Error{Line: 3, Field: "accounts[1].xuid", Reason: "not a XUID (a decimal number that fits in 64 bits, with no leading zero)"}},
		{"same xuid", strings.Replace(ok, `"2"`, `"1"`, 1), datafile.Error{Line: 3, Field: "accounts[1].xuid", Reason: "accounts[0] has the same XUID"}},
		{"same gamertag", strings.Replace(ok, `"Bo"`, `"ADA"`, 1), datafile.Error{Line: 3, Field: "accounts[1].gamertag", Reason: "accounts[0] has the same gamertag"}},
		{"long gamertag", strings.Replace(ok, `"Bo"`, `"Bartholomew The Great"`, 1), datafile.Error{Line: 3, Field: "accounts[1].gamertag", Reason: "longer than 15 characters"}},
		{"tier", strings.Replace(ok, `"Bo"}`, "\"Bo\",\n   \"tier\": \"Platinum\"}", 1), datafile.Error{Line: 4, Field: "accounts[1].tier", Reason: `want "Gold" or "Silver"`}},
		{"friend unknown", strings.Replace(ok, `"Ada"}`, "\"Ada\",\n   \"friends\": [\"2\",\n     \"3\"]}", 1), datafile.Error{Line: 4, Field: "accounts[0].friends[1]", Reason: "no account of the world has this XUID"}},
		{"friend self", strings.Replace(ok, `"Ada"}`, `"Ada", "friends": ["1"]}`, 1), datafile.Error{Line: 2, Field: "accounts[0].friends[0]", Reason: "the account itself"}},
		{"friend and follow", strings.Replace(ok, `"Ada"}`, "\"Ada\", \"friends\": [\"2\"],\n \"follows\": [\"2\"]}", 1), datafile.Error{Line: 3, Field: "accounts[0].follows[0]", Reason: "already in friends"}},
		{"favourite not followed", strings.Replace(ok, `"Bo"}`, "\"Bo\",\n \"favorites\": [\"1\"]}", 1), datafile.Error{Line: 4, Field: "accounts[1].favorites[0]", Reason: "not one of the friends or follows, or named twice"}},
		{"recent player title", strings.Replace(ok, `"Bo"}`, "\"Bo\",\n \"recentPlayers\": [{\"xuid\": \"1\",\n \"titles\": [\"t\"]}]}", 1), datafile.Error{Line: 5, Field: "accounts[1].recentPlayers[0].titles[0]", Reason: "not a title ID (a decimal number that fits in 32 bits, with no leading zero)"}},
		{"achievement id", strings.Replace(ok, `"Bo"}`, "\"Bo\", \"titles\": [{\"titleId\": \"7\",\n \"achievements\": {\"9\": 100}}]}", 1), datafile.Error{Line: 4, Field: "accounts[1].titles[0].achievements.9", Reason: "not an achievement of the mock's titles (1 to 5)"}},
		{"achievement percent", strings.Replace(ok, `"Bo"}`, "\"Bo\", \"titles\": [{\"titleId\": \"7\",\n \"achievements\": {\"1\": 101}}]}", 1), datafile.Error{Line: 4, Field: "accounts[1].titles[0].achievements.1", Reason: "progress is a percentage, 0 to 100"}},
		{"last played", strings.Replace(ok, `"Bo"}`, "\"Bo\", \"titles\": [{\"titleId\": \"7\",\n \"lastPlayed\": \"yesterday\"}]}", 1), datafile.Error{Line: 4, Field: "accounts[1].titles[0].lastPlayed", Reason: "not an RFC 3339 time"}},
		{"title twice", strings.Replace(ok, `"Bo"}`, "\"Bo\", \"titles\": [{\"titleId\": \"7\"},\n {\"titleId\": \"7\"}]}", 1), datafile.Error{Line: 4, Field: "accounts[1].titles[1].titleId", Reason: "named twice"}},
		{"yaml unknown field", "accounts:\n  - xuid: \"1\"\n    gamertag: Ada\n  - xuid: \"2\"\n    gamertags: Bo\n", datafile.Error{Line: 5, Field: "accounts[1].gamertags", Reason: "no such field"}},
		{"yaml friend unknown", "accounts:\n  - xuid: \"1\"\n    friends:\n      - \"2\"\n      - \"3\"\n  - xuid: \"2\"\n", datafile.Error{Line: 5, Field: "accounts[0].friends[1]", Reason: "no account of the world has this XUID"}},
		{"yaml wrong type", "accounts:\n  - xuid: \"1\"\n    gamerscore: lots\n", datafile.Error{Line: 3, Field: "accounts[0].gamerscore", Reason: "a string where a whole number belongs"}},
		{"yaml syntax", "accounts:\n  - xuid: \"1\"\n\tgamertag: Ada\n", datafile.Error{Line: 3, Reason: "not YAML: found character that cannot start any token"}},
		{"yaml key twice", "accounts:\n  - xuid: \"1\"\n    xuid: \"2\"\n", datafile.Error{Line: 3, Field: "accounts[0].xuid", Reason: "named twice"}},
		{"app without a client ID", strings.Replace(ok, "]}", "],\n\"apps\": [{\"redirectUris\": [\"https://x.example/\"]}]}", 1), datafile.Error{Line: 5, Field: "apps[0].clientId", Reason: "a client ID is 1 to 128 printable characters, no space"}},
		{"app unknown field", strings.Replace(ok, "]}", "],\n\"apps\": [{\"clientId\": \"a\",\n \"redirectUri\": \"https://x.example/\"}]}", 1), datafile.Error{Line: 6, Field: "apps[0].redirectUri", Reason: "no such field"}},
		{"app twice", strings.Replace(ok, "]}", "],\n\"apps\": [{\"clientId\": \"a\", \"redirectUris\": [\"https://x.example/\"]},\n{\"clientId\": \"A\", \"redirectUris\": [\"https://x.example/\"]}]}", 1), datafile.Error{Line: 6, Field: "apps[1].clientId", Reason: "apps[0] has the same client ID"}},
		{"app without redirect URIs", strings.Replace(ok, "]}", "],\n\"apps\": [{\"clientId\": \"a\"}]}", 1), datafile.Error{Line: 5, Field: "apps[0].redirectUris", Reason: "1 to 64 redirect URIs"}},
		{"redirect URI relative", strings.Replace(ok, "]}", "],\n\"apps\": [{\"clientId\": \"a\", \"redirectUris\": [\"https://x.example/\",\n \"/cb\"]}]}", 1), datafile.Error{Line: 6, Field: "apps[0].redirectUris[1]", Reason: "not an absolute URI without a fragment, of at most 2048 bytes"}},
		{"redirect URI with a fragment", strings.Replace(ok, "]}", "],\n\"apps\": [{\"clientId\": \"a\", \"redirectUris\": [\"https://x.example/#f\"]}]}", 1), datafile.Error{Line: 5, Field: "apps[0].redirectUris[0]", Reason: "not an absolute URI without a fragment, of at most 2048 bytes"}},
		{"YAML too large", "accounts:\n" + strings.Repeat("  - xuid: \"1\"\n", datafile.MaxYAMLBytes/14), datafile.Error{Reason: "YAML larger than 1048576 bytes: write a file this large in JSON"}},
		{"gamerscore below", strings.Replace(ok, `"Bo"}`, "\"Bo\",\n \"gamerscore\": 5, \"titles\": [{\"titleId\": \"7\", \"achievements\": {\"1\": 100}}]}", 1), datafile.Error{Line: 4, Field: "accounts[1].gamerscore", Reason: "below the 10 its unlocked achievements give, or above 100000000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadWorld(strings.NewReader(tc.file))
			checkDataError(t, err, tc.want, "world")
		})
	}
	if _, err := ReadWorld(strings.NewReader(ok)); err != nil {
		t.Errorf("a good world: %v", err)
	}
	big := `{"accounts": [` + strings.Repeat(" ", MaxWorldBytes) + `]}`
	if _, err := ReadWorld(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a world over MaxWorldBytes: %v", err)
	}
}

// TestWorldRefusedWhole: a world that cannot be changes nothing, from New,
// SetWorld and the admin API alike.
func TestWorldRefusedWhole(t *testing.T) {
	bad := World{Accounts: []WorldAccount{{XUID: "1", Friends: []string{"2"}}}}
	if _, err := New(Config{World: bad}); err == nil || !strings.Contains(err.Error(), "accounts[0].friends[0]") {
		t.Errorf("New with a bad world: %v", err)
	}
	h := seeded(t)
	before := h.World()
	if err := h.SetWorld(bad); err == nil {
		t.Error("SetWorld took a bad world")
	}
	if d := cmp.Diff(before, h.World()); d != "" {
		t.Errorf("a refused world changed it (-before +after)\n%s", d)
	}
}

// TestOneWorld: every service answers the same seeded world: the gamertag
// XSTS claims is the profile's, the friends social lists are people hub's,
// the title history lists the titles with achievements or stats, the stats
// rank the leaderboard, the gamerscore sums the unlocks.
func TestOneWorld(t *testing.T) {
	h := seeded(t)
	xsts := xstsGamertag(t, h)
	var prof profileResponse
	decodeJSON(t, as(t, h, ada, "GET", "https://profile.xboxlive.com/users/gt(aDA)/profile/settings?settings=Gamertag,Gamerscore,AccountTier", "2", ""), &prof)
	var boProf profileResponse
	decodeJSON(t, as(t, h, ada, "GET", "https://profile.xboxlive.com/users/xuid("+bo+")/profile/settings?settings=Gamerscore,AccountTier", "2", ""), &boProf)

	var social struct {
		People []person `json:"people"`
	}
	decodeJSON(t, as(t, h, ada, "GET", "https://social.xboxlive.com/users/me/people", "3", ""), &social)
	var sum summary
	decodeJSON(t, as(t, h, ada, "GET", "https://social.xboxlive.com/users/me/summary", "2", ""), &sum)
	var hub, recent struct {
		People []hubPerson `json:"people"`
	}
	decodeJSON(t, as(t, h, ada, "GET", "https://peoplehub.xboxlive.com/users/me/people/social/decoration/detail", "3", ""), &hub)
	decodeJSON(t, as(t, h, ada, "GET", "https://peoplehub.xboxlive.com/users/me/people/recentplayers", "3", ""), &recent)

	var history hubTitles
	decodeJSON(t, as(t, h, ada, "GET", "https://titlehub.xboxlive.com/users/xuid("+ada+")/titles/titlehistory/decoration/achievement,titlehistory", "2", ""), &history)
	var stats struct {
		Lists []statList `json:"statlistscollection"`
	}
	decodeJSON(t, as(t, h, ada, "GET", "https://userstats.xboxlive.com/users/xuid("+ada+")/scids/"+SCID(title1)+"/stats/kills,deaths", "2", ""), &stats)
	var board leaderboardAnswer
	decodeJSON(t, as(t, h, ada, "GET", "https://leaderboards.xboxlive.com/scids/"+SCID(title1)+"/leaderboards/stat(kills)", "3", ""), &board)

	type view struct {
		XSTS, Profile          []string
		Social, Hub            []string
		Following, Followers   int
		Recent                 []string
		History, HistoryPlayed []string
		Stats, Board           []string
	}
	got := view{XSTS: []string{xsts}, Following: sum.TargetFollowingCount, Followers: sum.TargetFollowerCount}
	for _, s := range append(prof.ProfileUsers[0].Settings, boProf.ProfileUsers[0].Settings...) {
		got.Profile = append(got.Profile, s.Value)
	}
	for _, p := range social.People {
		got.Social = append(got.Social, p.XUID+" friend="+boolText(p.IsFriend)+" favourite="+boolText(p.IsFavorite))
	}
	for _, p := range hub.People {
		got.Hub = append(got.Hub, p.XUID+" "+p.Gamertag+" "+p.Detail.AccountTier+" "+p.GamerScore)
	}
	for _, p := range recent.People {
		got.Recent = append(got.Recent, p.Gamertag+" "+strings.Join(p.RecentPlayer.Titles, ","))
	}
	for _, ti := range history.Titles {
		got.History = append(got.History, ti.TitleID)
		got.HistoryPlayed = append(got.HistoryPlayed, ti.TitleHistory.LastTimePlayed)
	}
	for _, s := range stats.Lists[0].Stats {
		got.Stats = append(got.Stats, s.Name+"="+s.Value)
	}
	for _, r := range board.UserList {
		got.Board = append(got.Board, r.Gamertag+"="+*r.Value)
	}
	want := view{
		XSTS:      []string{"Ada"},
		Profile:   []string{"Ada", "1500", "Gold", "20", "Silver"},
		Social:    []string{bo + " friend=true favourite=true", cy + " friend=false favourite=false"},
		Hub:       []string{bo + " Bo Silver 20", cy + " Cy Gold 0"},
		Following: 2, Followers: 1,
		Recent:        []string{"Cy " + title1},
		History:       []string{"1234567890", "1717113201"},
		HistoryPlayed: []string{"2025-06-01T18:30:00.0000000Z", defaultPlayed},
		Stats:         []string{"kills=42"},
		Board:         []string{"Bo=77", "Ada=42", "Cy=5"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the world as the services answer it (-want +got)\n%s", d)
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestResetWorld: progress and presence written after seeding go at a
// reset; what the world seeded stays, and unlocks add to the seeded
// gamerscore.
func TestResetWorld(t *testing.T) {
	h := seeded(t)
	gamerscore := func() string {
		var p profileResponse
		decodeJSON(t, as(t, h, ada, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamerscore", "2", ""), &p)
		return p.ProfileUsers[0].Settings[0].Value
	}
	scid := SCID(title1)
	as(t, h, ada, "POST", "https://achievements.xboxlive.com/users/xuid("+ada+")/achievements/"+scid+"/update", "2",
		`{"action":"progressUpdate","serviceConfigId":"`+scid+`","titleId":`+title1+`,"userId":"`+ada+`","achievements":[{"id":"2","percentComplete":100}]}`)
	as(t, h, ada, "POST", "https://userpresence.xboxlive.com/users/xuid("+ada+")/devices/current/titles/current", "3", `{"state":"active"}`)
	if g := gamerscore(); g != "1510" {
		t.Errorf("after an unlock: gamerscore %s, want 1510", g)
	}
	if s := h.world.presenceOf(ada).State; s != "Online" {
		t.Fatalf("presence after a write: %s", s)
	}
	h.ResetWorld()
	if g, s := gamerscore(), h.world.presenceOf(ada).State; g != "1500" || s != "Offline" {
		t.Errorf("after a reset: gamerscore %s and presence %s, want the seeded 1500 and Offline", g, s)
	}
	if p := h.world.progressOf(ada, title1); p["1"] != 100 || p["2"] != 40 {
		t.Errorf("after a reset: progress %v, want the seeded 1: 100, 2: 40", p)
	}
	if err := h.SetWorld(World{}); err != nil {
		t.Fatal(err)
	}
	if g := h.world.gamertagOf(ada); g != DefaultAccount.Gamertag {
		t.Errorf("the default world again: gamertag %q, want %q", g, DefaultAccount.Gamertag)
	}
}

func TestAdminWorld(t *testing.T) {
	h := NewHandler()
	srv := serveAll(t, h)
	call := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+"/_fgrl/"+path, strings.NewReader(body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	file, _ := os.ReadFile("testdata/world.json")
	bad := bytes.Replace(file, []byte(`"tier": "Silver"`), []byte(`"tier": "Bronze"`), 1)
	if code, body := call("PUT", "api/world", string(bad)); code != http.StatusBadRequest || !strings.Contains(body, "line 21: accounts[1].tier") {
		t.Errorf("a bad world: %d %s, want 400 naming line 21 and the field", code, body)
	}
	if g := h.world.gamertagOf(ada); g != DefaultAccount.Gamertag {
		t.Errorf("a refused world changed the gamertag to %q", g)
	}
	if code, body := call("PUT", "api/world", string(file)); code != http.StatusOK || !strings.Contains(body, `"gamertag":"Ada"`) {
		t.Fatalf("seeding: %d %s", code, body)
	}
	if g := h.world.gamertagOf(ada); g != "Ada" {
		t.Errorf("after seeding: gamertag %q, want Ada", g)
	}
	h.world.storePresence(presenceRecord{XUID: ada, State: "Online"})
	if code, _ := call("POST", "api/world/reset", ""); code != http.StatusNoContent || h.world.presenceOf(ada).State != "Offline" {
		t.Errorf("reset: %d, presence %s", code, h.world.presenceOf(ada).State)
	}
	if code, body := call("GET", "api/world", ""); code != http.StatusOK || !strings.Contains(body, `"Bo"`) {
		t.Errorf("GET: %d %s", code, body)
	}
	if code, _ := call("DELETE", "api/world", ""); code != http.StatusNoContent || h.world.gamertagOf(ada) != DefaultAccount.Gamertag {
		t.Errorf("DELETE: %d, gamertag %q", code, h.world.gamertagOf(ada))
	}
}

// TestWorldIDsHaveOneSpelling: a world's accounts are one a XUID and a
// title is named once in an account, but both were compared as text: "1"
// and "01" (and "0001"), the same decimal number and each a XUID, were two
// accounts; "7" and "07" two titles. A XUID or title ID is written with no
// leading zero (internal/xblid).
func TestWorldIDsHaveOneSpelling(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       datafile.Error
	}{
		{"accounts 1 and 01", `{"accounts": [{"xuid": "1"}, {"xuid": "01"}]}`, datafile.Error{Line: 1, Field: "accounts[1].xuid", Reason: "not a XUID"}},
		{"a friend that is the account itself", `{"accounts": [{"xuid": "1", "friends": ["01"]}]}`, datafile.Error{Line: 1, Field: "accounts[0].friends[0]", Reason: "not a XUID"}},
		{"titles 7 and 07", `{"accounts": [{"xuid": "1", "titles": [{"titleId": "7"}, {"titleId": "07"}]}]}`, datafile.Error{Line: 1, Field: "accounts[0].titles[1].titleId", Reason: "not a title ID"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadWorld(strings.NewReader(tc.text))
			checkDataError(t, err, tc.want, "world")
		})
	}
}

// TestTitlesBoundedInAll: a world's accounts hold at most 100,000 titles
// in all, and as many recent players (each at most 1,000): a file is
// refused at the first past them, before it is decoded, and a World made
// in Go by SetWorld.
func TestTitlesBoundedInAll(t *testing.T) {
	for _, list := range []string{"titles", "recentPlayers"} {
		t.Run(list, func(t *testing.T) {
			account := `{"` + list + `": [` + strings.TrimSuffix(strings.Repeat("{},", maxTitles), ",") + `]}`
			file := `{"accounts": [` + strings.TrimSuffix(strings.Repeat(account+",\n", maxInAll/maxTitles+1), ",\n") + `]}`
			_, err := ReadWorld(strings.NewReader(file))
			checkDataError(t, err, datafile.Error{Line: 101, Field: "accounts[100]." + list, Reason: "more than 100000 entries in all the lists like it"}, "world")
		})
	}
	w := World{}
	for i := range maxInAll/maxTitles + 1 {
		a := WorldAccount{XUID: strconv.Itoa(i + 1)}
		for j := range maxTitles {
			a.Titles = append(a.Titles, WorldTitle{TitleID: strconv.Itoa(j + 1)})
		}
		w.Accounts = append(w.Accounts, a)
	}
	checkDataError(t, NewHandler().SetWorld(w), datafile.Error{Field: "accounts[100].titles", Reason: "more than 100000 titles in all the accounts"}, "world")
}

// FuzzReadWorld: any input is refused with a *datafile.Error or read into a
// world that writes back as the same world.
func FuzzReadWorld(f *testing.F) {
	file, _ := os.ReadFile("testdata/world.json")
	f.Add(file)
	f.Add([]byte(`{"accounts": [{"xuid": "1", "friends": ["2"]}]}`))
	f.Add([]byte(`{"accounts": [{"xuid": "1", "titles": [{"titleId": "2", "achievements": {"01": 5}}]}]}`))
	f.Add([]byte("{\"accounts\": [\n{\"xuid\": \"1\",\n\"gamertag\": \"\\u0000\"}]}"))
	f.Add([]byte("accounts:\n  - xuid: \"1\"\n    gamertag: Ada\n    friends: [\"2\"]\n  - xuid: \"2\"\n    titles:\n      - titleId: \"7\"\n        achievements: {1: 100}\n"))
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Add([]byte(`{"accounts": [], "apps": [{"clientId": "a", "redirectUris": ["ms-xal-a://auth", "http://localhost/cb"]}]}`))
	f.Add([]byte("apps:\n  - clientId: A\n    redirectUris: [\"https://x.example/cb\"]\n  - clientId: a\n    redirectUris: []\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ReadWorld(bytes.NewReader(b))
		if err != nil {
			var we *datafile.Error
			if !errors.As(err, &we) || len(err.Error()) > 400 {
				t.Fatalf("error %T %q", err, err)
			}
			return
		}
		again, _ := json.Marshal(w)
		w2, err := ReadWorld(bytes.NewReader(again))
		if err != nil {
			t.Fatalf("a world read back: %v", err)
		}
		if d := cmp.Diff(w, w2, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("a world changed on the way back (-first +second)\n%s", d)
		}
	})
}

// TestPresenceHeartbeat: a write answers X-Heartbeat-After: 300 and the
// record lasts twice that unrenewed, then reads Offline, last seen at the
// write; a user who never wrote is last seen in their latest title.
func TestPresenceHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := seeded(t)
		if p := h.world.presenceOf(ada); p.State != "Offline" || p.LastSeen == nil || p.LastSeen.TitleID != title1 ||
			p.LastSeen.Timestamp != "2025-06-01T18:30:00.0000000Z" {
			t.Errorf("before any write: %+v, want Offline, last seen in %s at 2025-06-01T18:30:00.0000000Z", p, title1)
		}
		if p := h.world.presenceOf("2533274799999999"); p.LastSeen != nil {
			t.Errorf("a user who played nothing: last seen %+v, want none", p.LastSeen)
		}
		written := time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")
		r := as(t, h, ada, "POST", "https://userpresence.xboxlive.com/users/xuid("+ada+")/devices/current/titles/current", "3", `{"state":"active"}`)
		if hb := r.header.Get("X-Heartbeat-After"); hb != "300" {
			t.Errorf("X-Heartbeat-After %q, want 300", hb)
		}
		time.Sleep(heartbeatExpiry)
		if s := h.world.presenceOf(ada).State; s != "Online" {
			t.Errorf("at the expiry: %s, want Online", s)
		}
		time.Sleep(time.Second)
		if p := h.world.presenceOf(ada); p.State != "Offline" || p.LastSeen == nil || p.LastSeen.Timestamp != written {
			t.Errorf("past the expiry: %+v, want Offline, last seen at %s", p, written)
		}
	})
}

// checkDataError fails t unless err is a *datafile.Error naming file that
// equals want, except that its reason need only start with want's.
func checkDataError(t *testing.T, err error, want datafile.Error, file string) {
	t.Helper()
	var got *datafile.Error
	if !errors.As(err, &got) {
		t.Fatalf("error %v, want a *datafile.Error", err)
	}
	if !strings.HasPrefix(got.Reason, want.Reason) {
		t.Errorf("reason %q, want it to start %q", got.Reason, want.Reason)
	}
	got.Reason, want.File = want.Reason, file
	if d := cmp.Diff(want, *got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// TestFriendshipNamedOnOneSide: a friendship is followed both ways
// (WorldAccount.Friends), whichever of the two accounts names it: the other
// lists it in its people too, as a friend who follows it. Before, only the
// account that named it did, and the other's people were empty.
func TestFriendshipNamedOnOneSide(t *testing.T) {
	w := World{Accounts: []WorldAccount{{XUID: ada, Gamertag: "Ada"}, {XUID: bo, Gamertag: "Bo", Friends: []string{ada}}}}
	h, err := New(Config{World: w})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ me, other string }{{ada, bo}, {bo, ada}} {
		r := as(t, h, tc.me, "GET", "https://social.xboxlive.com/users/xuid("+tc.me+")/people", "1", "")
		var got struct {
			People []struct {
				XUID              string `json:"xuid"`
				IsFollowingCaller bool   `json:"isFollowingCaller"`
			} `json:"people"`
		}
		if err := json.Unmarshal([]byte(r.body), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.People) != 1 || got.People[0].XUID != tc.other || !got.People[0].IsFollowingCaller {
			t.Errorf("%s's people: %s, want %s, following back", tc.me, r.body, tc.other)
		}
	}
}
