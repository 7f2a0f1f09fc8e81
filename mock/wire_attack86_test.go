package mock

// Wire-format attack: the mock's answers compared, field by field (name,
// case, JSON type, nesting), with the real services' answers as public
// recordings and client parsers give them:
//
//   - OpenXbox/xbox-webapi-python tests/data/responses/*.json (recorded
//     answers) and xbox/webapi/api/provider/*/ (the requests, with their
//     contract versions, and the pydantic models a client reads them with);
//   - microsoft/xbox-live-api (XSAPI) Source/Services/* (the requests it
//     sends, the fields its parsers read) and Tests/UnitTests/Tests/Services
//     (its recorded answers);
//   - the npm xbox-webapi package's tests/mock_data/*.mock (status line and
//     headers of recorded answers).
//
// The promise under test is the package's godoc: "It answers profile,
// presence, social, people hub, title hub, user search, privacy,
// achievements, user stats, leaderboards, MPSD (sessions, invites and search
// handles), SmartMatch and reputation calls in the shapes the real services
// answer (as XSAPI's tests and recorded answers show them; ...)".
//
// The skeletons below hold only facts of the recordings: each field's name
// and JSON type ("" a string, 0 a number, false a boolean, null any type,
// [x] an array of x), with neutral values.

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/wiretest"
)

const (
	attack86Me     = "2669321029139235" // "e", the python recordings' caller
	attack86Friend = "2584878536129841" // "Major Nelson", a mutual friend
	attack86Tux    = "2533274895244106" // "Tux", followed by the caller only
	attack86Title  = "1717113201"       // played by both
)

// attack86World is the recordings' world: the caller, a mutual friend who has
// played attack86Title, an account the caller follows, three titles played.
const attack86World = `{"accounts":[
 {"xuid":"2669321029139235","gamertag":"e","friends":["2584878536129841"],"follows":["2533274895244106"],
  "recentPlayers":[{"xuid":"2584878536129841","titles":["1717113201"]}],
  "titles":[{"titleId":"219630713","lastPlayed":"2017-06-20T19:29:37.2099455Z","achievements":{"1":100,"2":40}},
            {"titleId":"1717113201","lastPlayed":"2018-03-27T01:16:10.0389446Z","stats":{"MinutesPlayed":1220}},
            {"titleId":"1297290392","lastPlayed":"2017-12-19T05:33:33.873Z","achievements":{"1":100}}]},
 {"xuid":"2584878536129841","gamertag":"Major Nelson","friends":["2669321029139235"],
  "titles":[{"titleId":"1717113201","lastPlayed":"2015-01-26T22:54:54.663Z"}]},
 {"xuid":"2533274895244106","gamertag":"Tux"},
 {"xuid":"2533274826466726","gamertag":"TuX Rose"}]}`

func attack86Handler(t *testing.T) *Handler {
	t.Helper()
	w, err := ReadWorld(strings.NewReader(attack86World))
	if err != nil {
		t.Fatal(err)
	}
	return Must(New(Config{World: w}))
}

// attack86Call sends one request as xuid in title, with the contract version
// the client sends, through h in-process.
func attack86Call(t *testing.T, h *Handler, xuid, title, method, url, contract, body string) result {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", Token(xuid, title))
	if contract != "" {
		req.Header.Set("x-xbl-contract-version", contract)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return send(t, h, req)
}

// attack86OK sends the request and fails the test unless it is answered 200
// with a JSON Content-Type (the npm xbox-webapi recordings'
// "content-type: application/json").
func attack86OK(t *testing.T, h *Handler, method, url, contract, body string) string {
	t.Helper()
	r := attack86Call(t, h, attack86Me, attack86Title, method, url, contract, body)
	if r.status != http.StatusOK {
		t.Fatalf("%s %s: status %d, want 200; body %s", method, url, r.status, r.body)
	}
	if mt, _, err := mime.ParseMediaType(r.header.Get("Content-Type")); err != nil || mt != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, url, r.header.Get("Content-Type"))
	}
	return r.body
}

// attack86Shape reports what got lacks or mistypes of the recorded skeleton
// (fields the mock adds are not reported).
func attack86Shape(t *testing.T, what, skeleton, got string) {
	t.Helper()
	if !json.Valid([]byte(skeleton)) {
		t.Fatalf("%s: skeleton is not JSON", what)
	}
	if d := missingFields(wiretest.ShapeDiff([]byte(skeleton), []byte(got)), nil); d != "" {
		t.Errorf("%s: the mock's answer lacks or mistypes recorded fields (-recorded +mock):\n%s\nanswer: %s", what, d, got)
	}
}

// attack86Online signs xuid in to attack86Title (XSAPI's presence write).
func attack86Online(t *testing.T, h *Handler, xuid string) {
	t.Helper()
	r := attack86Call(t, h, xuid, attack86Title, "POST", "https://userpresence.xboxlive.com/users/xuid("+xuid+")/devices/current/titles/current", "3", `{"state":"active"}`)
	if r.status != http.StatusOK {
		t.Fatalf("presence write: %d %s", r.status, r.body)
	}
}

// attack86Offline signs xuid out of attack86Title.
func attack86Offline(t *testing.T, h *Handler, xuid string) {
	t.Helper()
	r := attack86Call(t, h, xuid, attack86Title, "DELETE", "https://userpresence.xboxlive.com/users/xuid("+xuid+")/devices/current/titles/current", "3", "")
	if r.status/100 != 2 {
		t.Fatalf("presence clear: %d %s", r.status, r.body)
	}
}

// ---------------------------------------------------------------- breaks

// BREAK. Promise (godoc): "It answers ... people hub ... calls in the shapes
// the real services answer (as XSAPI's tests and recorded answers show
// them". Source: OpenXbox/xbox-webapi-python
// tests/data/responses/people_batch.json: every person asked with the
// presencedetail decoration has $.people[].presenceDetails holding one record
// per title ({"IsBroadcasting", "Device", "PresenceText", "State", "TitleId",
// "TitleType", "IsPrimary", "IsGame", "RichPresenceText"}), State "Active"
// for an online person; microsoft/xbox-live-api
// Tests/UnitTests/Tests/Services/PeoplehubTests.cpp peoplehubResponse
// records the same, and Source/Services/Social/Manager/peoplehub_service.cpp
// DeserializePresenceTitleRecord reads Device, PresenceText, State, TitleId
// and IsPrimary from each record (the Social Manager's presence of a friend).
// The mock answers presenceDetails [] for a friend online in a title, so a
// client sees no title, device or activity for anyone.
func TestAttack86PeopleHubPresenceDetailsOfOnlineFriend(t *testing.T) {
	h := attack86Handler(t)
	attack86Online(t, h, attack86Friend)
	const url = "https://peoplehub.xboxlive.com/users/me/people/batch/decoration/preferredcolor,detail,multiplayersummary,presencedetail"
	body := attack86OK(t, h, "POST", url, "3", `{"xuids":["`+attack86Friend+`"]}`)
	var got struct {
		People []struct {
			PresenceState   string           `json:"presenceState"`
			PresenceDetails []map[string]any `json:"presenceDetails"`
		} `json:"people"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.People) != 1 {
		t.Fatalf("answer %s: %v", body, err)
	}
	p := got.People[0]
	if p.PresenceState != "Online" {
		t.Fatalf("presenceState %q, want Online (the friend's presence was written)", p.PresenceState)
	}
	if len(p.PresenceDetails) == 0 {
		t.Fatalf("people_batch.json: an online person's presenceDetails holds a record per title; the mock's is empty: %s", body)
	}
	d := p.PresenceDetails[0]
	for _, k := range []string{"Device", "PresenceText", "State", "TitleId"} {
		if _, ok := d[k].(string); !ok {
			t.Errorf("presenceDetails[0].%s: %v, want a string", k, d[k])
		}
	}
	for _, k := range []string{"IsPrimary", "IsBroadcasting", "IsGame"} {
		if _, ok := d[k].(bool); !ok {
			t.Errorf("presenceDetails[0].%s: %v, want a boolean", k, d[k])
		}
	}
	if d["State"] != "Active" || d["TitleId"] != attack86Title {
		t.Errorf("presenceDetails[0] State %v TitleId %v, want Active and %s", d["State"], d["TitleId"], attack86Title)
	}
}

// BREAK. Promise (godoc): "It answers ... people hub ... calls in the shapes
// the real services answer (as XSAPI's tests and recorded answers show
// them". Source: microsoft/xbox-live-api
// Source/Services/Social/Manager/peoplehub_service.cpp MakeServiceCall asks
// for the decoration "titlehistory(TITLE)" (XblSocialManagerExtraDetailLevel
// TitleHistoryLevel) and DeserializeTitleHistory reads $.people[].titleHistory
// .lastTimePlayed (and lastTimePlayedText); Tests/UnitTests/Tests/Services/
// PeoplehubTests.cpp peoplehubResponse records titleHistory as
// {"titleName", "titleId", "lastTimePlayed", "lastTimePlayedText"} (all
// strings). The mock answers titleHistory null for a friend who has played
// the title, so XSAPI reports hasUserPlayed false for everyone.
func TestAttack86PeopleHubTitleHistoryDecoration(t *testing.T) {
	h := attack86Handler(t)
	url := "https://peoplehub.xboxlive.com/users/xuid(" + attack86Me + ")/people/social/decoration/presenceDetail,titlehistory(" + attack86Title + "),preferredcolor"
	body := attack86OK(t, h, "GET", url, "7", "")
	var got struct {
		People []struct {
			XUID         string          `json:"xuid"`
			TitleHistory json.RawMessage `json:"titleHistory"`
		} `json:"people"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range got.People {
		if p.XUID != attack86Friend {
			continue
		}
		found = true
		attack86Shape(t, "PeoplehubTests.cpp titleHistory", `{"titleName":"","titleId":"","lastTimePlayed":"","lastTimePlayedText":""}`, string(p.TitleHistory))
		var th struct {
			LastTimePlayed string `json:"lastTimePlayed"`
		}
		json.Unmarshal(p.TitleHistory, &th)
		if _, err := time.Parse(time.RFC3339, th.LastTimePlayed); err != nil {
			t.Errorf("titleHistory.lastTimePlayed %q: want the friend's last play of %s (2015-01-26T22:54:54.663Z)", th.LastTimePlayed, attack86Title)
		}
	}
	if !found {
		t.Fatalf("the friend is not in the people hub's social list: %s", body)
	}
}

// BREAK. Promise (godoc): "It answers ... people hub ... calls in the shapes
// the real services answer (as XSAPI's tests and recorded answers show
// them"; route.contract: "the x-xbl-contract-version whose shape the answer
// has (the one XSAPI sends)". Source: microsoft/xbox-live-api
// Source/Services/Social/Manager/peoplehub_service.cpp sends contract 7
// (SetXblServiceContractVersion(7)) and DeserializeSocialUser reads
// $.people[].isFriend (bool; isFavorite, isFollowedByCaller and
// isFollowingUser are derived from it) and $.people[].useAvatar (bool);
// Tests/UnitTests/Tests/Services/PeoplehubTests.cpp peoplehubResponse
// records "useAvatar": true. The mock's people hub person has neither
// (it answers contract 3's shape, "showUserAsAvatar" a string, to XSAPI's
// contract 7), so XSAPI's Social Manager sees every friend as not a friend
// and never a favorite.
func TestAttack86PeopleHubContract7Fields(t *testing.T) {
	h := attack86Handler(t)
	const url = "https://peoplehub.xboxlive.com/users/xuid(" + attack86Me + ")/people/batch/decoration/presenceDetail,preferredcolor"
	body := attack86OK(t, h, "POST", url, "7", `{"xuids":["`+attack86Friend+`"]}`)
	var got struct {
		People []map[string]any `json:"people"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.People) != 1 {
		t.Fatalf("answer %s: %v", body, err)
	}
	p := got.People[0]
	if v, ok := p["isFriend"].(bool); !ok || !v {
		t.Errorf("people[0].isFriend = %v (present %v), want true: a mutual friend (XSAPI peoplehub_service.cpp reads isFriend)", p["isFriend"], ok)
	}
	if _, ok := p["useAvatar"].(bool); !ok {
		t.Errorf("people[0].useAvatar = %v, want a boolean (PeoplehubTests.cpp peoplehubResponse; peoplehub_service.cpp reads it)", p["useAvatar"])
	}
}

// BREAK. Promise (godoc): "It answers ... people hub ... calls in the shapes
// the real services answer (as XSAPI's tests and recorded answers show
// them". Source: microsoft/xbox-live-api
// Source/Services/Social/Manager/peoplehub_service.cpp MakeServiceCall
// (RelationshipType::Social): XSAPI's Social Manager reads a user's friends
// with GET peoplehub /users/xuid(N)/people/friends/decoration/presenceDetail,
// contract 7, answered like the people hub's social list ({"people": [...]},
// PeoplehubTests.cpp). The mock answers this request 404 NotFound (it
// serves only /people/social), so XSAPI's Social Manager gets no social
// graph from it.
func TestAttack86PeopleHubXSAPIFriendsPath(t *testing.T) {
	h := attack86Handler(t)
	url := "https://peoplehub.xboxlive.com/users/xuid(" + attack86Me + ")/people/friends/decoration/presenceDetail"
	r := attack86Call(t, h, attack86Me, attack86Title, "GET", url, "7", "")
	if r.status != http.StatusOK {
		t.Fatalf("GET %s (XSAPI's social graph read): status %d, want 200; body %s", url, r.status, r.body)
	}
	attack86Shape(t, "PeoplehubTests.cpp peoplehubResponse", `{"people":[{"xuid":"","isFavorite":false,"isFollowingCaller":false,"isFollowedByCaller":false,"displayName":"","realName":"","displayPicRaw":"","gamertag":"","modernGamertag":"","modernGamertagSuffix":"","uniqueModernGamertag":"","gamerScore":"","presenceState":"","presenceDetails":[]}]}`, r.body)
}

// BREAK. Promise (godoc): "It answers ... title hub ... calls in the shapes
// the real services answer". Source: OpenXbox/xbox-webapi-python
// xbox/webapi/api/provider/titlehub get_title_info_by_pfn: GET titlehub
// /users/xuid(N)/titles/pfn(PFN)/decoration/achievement,alternateTitleId,
// detail,image,scid, contract 2, answered as
// tests/data/responses/titlehub_titleinfo.json ({"xuid", "titles": [...]}).
// The mock answers 404 "no such title: want titleid(T)", even for the PFN
// its own title hub gives the title ($.titles[0].pfn of a batch answer).
func TestAttack86TitleHubInfoByPFN(t *testing.T) {
	h := attack86Handler(t)
	body := attack86OK(t, h, "POST", "https://titlehub.xboxlive.com/titles/batch/decoration/achievement,image,scid", "2", `{"titleIds":["`+attack86Title+`"]}`)
	var batch struct {
		Titles []struct {
			PFN string `json:"pfn"`
		} `json:"titles"`
	}
	if err := json.Unmarshal([]byte(body), &batch); err != nil || len(batch.Titles) != 1 || batch.Titles[0].PFN == "" {
		t.Fatalf("batch answer %s: %v", body, err)
	}
	pfn := batch.Titles[0].PFN
	url := "https://titlehub.xboxlive.com/users/xuid(" + attack86Me + ")/titles/pfn(" + pfn + ")/decoration/achievement,alternateTitleId,detail,image,scid"
	r := attack86Call(t, h, attack86Me, attack86Title, "GET", url, "2", "")
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: status %d, want 200 (the title of pfn %q); body %s", url, r.status, pfn, r.body)
	}
	attack86Shape(t, "titlehub_titleinfo.json", `{"xuid":"","titles":[{"titleId":"","pfn":"","name":"","type":"","devices":[""],"displayImage":"","mediaItemType":"","isBundle":false,"achievement":{"currentAchievements":0,"totalAchievements":0,"currentGamerscore":0,"totalGamerscore":0,"progressPercentage":0,"sourceVersion":0},"images":[{"url":"","type":""}]}]}`, r.body)
}

// BREAK. Promise (godoc): "It answers ... title hub ... calls in the shapes
// the real services answer". Source: OpenXbox/xbox-webapi-python
// tests/data/responses/titlehub_batch.json and titlehub_titleinfo.json: with
// the "detail" decoration (which get_titles_batch and get_title_info ask for
// by default) $.titles[].detail is an object ({"attributes", "availabilities",
// "capabilities", "description", "developerName", "genres", "publisherName",
// "minAge", "releaseDate", "shortDescription", "vuiDisplayName",
// "xboxLiveGoldRequired"}; the provider's models.Detail requires
// description, developerName, publisherName, capabilities). The mock
// answers detail null when detail is asked for (titlehub.go says so: "the
// mock has no store"), which the godoc's promise does not admit.
func TestAttack86TitleHubDetailDecoration(t *testing.T) {
	h := attack86Handler(t)
	body := attack86OK(t, h, "POST", "https://titlehub.xboxlive.com/titles/batch/decoration/achievement,detail,image,scid", "2", `{"titleIds":["`+attack86Title+`"]}`)
	var got struct {
		Titles []struct {
			Detail json.RawMessage `json:"detail"`
		} `json:"titles"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Titles) != 1 {
		t.Fatalf("answer %s: %v", body, err)
	}
	attack86Shape(t, "titlehub_batch.json $.titles[0].detail",
		`{"attributes":[],"availabilities":[],"capabilities":[""],"description":"","developerName":"","genres":[],"publisherName":"","shortDescription":"","xboxLiveGoldRequired":false}`,
		string(got.Titles[0].Detail))
}

// ----------------------------------------------------------------- held

// held: OpenXbox/xbox-webapi-python tests/data/responses/profile_by_xuid.json,
// asked as the python profile provider's get_profile_by_xuid asks (GET
// profile /users/xuid(N)/profile/settings?settings=<its 15 settings>,
// contract 3): profileUsers[{id, hostId, settings[{id, value}],
// isSponsoredUser}], every setting asked answered, in order, its value a
// string.
func TestAttack86ProfileByXUIDPython(t *testing.T) {
	h := attack86Handler(t)
	settings := []string{"Gamertag", "ModernGamertag", "ModernGamertagSuffix", "UniqueModernGamertag", "RealNameOverride", "Bio",
		"Location", "Gamerscore", "GameDisplayPicRaw", "TenureLevel", "AccountTier", "XboxOneRep", "PreferredColor", "Watermarks", "IsQuarantined"}
	body := attack86OK(t, h, "GET", "https://profile.xboxlive.com/users/xuid("+attack86Me+")/profile/settings?settings="+strings.Join(settings, ","), "3", "")
	attack86Shape(t, "profile_by_xuid.json", `{"profileUsers":[{"id":"","hostId":"","settings":[{"id":"","value":""}],"isSponsoredUser":false}]}`, body)
	var got struct {
		ProfileUsers []struct {
			ID       string `json:"id"`
			Settings []struct {
				ID string `json:"id"`
			} `json:"settings"`
		} `json:"profileUsers"`
	}
	json.Unmarshal([]byte(body), &got)
	if len(got.ProfileUsers) != 1 || got.ProfileUsers[0].ID != attack86Me || len(got.ProfileUsers[0].Settings) != len(settings) {
		t.Fatalf("answer %s", body)
	}
	for i, s := range got.ProfileUsers[0].Settings {
		if s.ID != settings[i] {
			t.Errorf("settings[%d].id %q, want %q", i, s.ID, settings[i])
		}
	}
}

// held: OpenXbox/xbox-webapi-python tests/data/responses/people_summary_own.json,
// people_summary_by_xuid.json and people_summary_by_gamertag.json, asked as
// the python people provider's get_friends_summary_* ask (GET social
// /users/{me|xuid(N)|gt(G)}/summary, contract 2): the counts numbers, the
// flags booleans, legacyFriendStatus a string; the own summary with
// availablePeopleSlots, recentChangeCount (numbers) and watermark (a string).
func TestAttack86SocialSummaryPython(t *testing.T) {
	h := attack86Handler(t)
	const other = `{"targetFollowingCount":0,"targetFollowerCount":0,"isCallerFollowingTarget":false,"isTargetFollowingCaller":false,"hasCallerMarkedTargetAsFavorite":false,"hasCallerMarkedTargetAsIdentityShared":false,"legacyFriendStatus":""}`
	const own = `{"targetFollowingCount":0,"targetFollowerCount":0,"isCallerFollowingTarget":false,"isTargetFollowingCaller":false,"hasCallerMarkedTargetAsFavorite":false,"hasCallerMarkedTargetAsIdentityShared":false,"legacyFriendStatus":"","availablePeopleSlots":0,"recentChangeCount":0,"watermark":""}`
	attack86Shape(t, "people_summary_own.json", own, attack86OK(t, h, "GET", "https://social.xboxlive.com/users/me/summary", "2", ""))
	attack86Shape(t, "people_summary_by_xuid.json", other, attack86OK(t, h, "GET", "https://social.xboxlive.com/users/xuid("+attack86Friend+")/summary", "2", ""))
	attack86Shape(t, "people_summary_by_gamertag.json", other, attack86OK(t, h, "GET", "https://social.xboxlive.com/users/gt(Major%20Nelson)/summary", "2", ""))
}

// held: OpenXbox/xbox-webapi-python tests/data/responses/presence.json (an
// offline user last seen: xuid, state, lastSeen{deviceType, titleId,
// titleName, timestamp}, all strings, timestamp ISO 8601) asked as
// get_presence asks (GET userpresence /users/xuid(N)?level=user, contract 3),
// presence_own.json (a user never seen: xuid and state only) as
// get_presence_own asks (GET /users/me?level=all), and presence_batch.json
// (an array of such records) as get_presence_batch asks (POST /users/batch
// {"users", "onlineOnly", "level"}).
func TestAttack86PresencePython(t *testing.T) {
	h := attack86Handler(t)
	attack86Online(t, h, attack86Friend)
	attack86Offline(t, h, attack86Friend)
	const lastSeen = `{"xuid":"","state":"","lastSeen":{"deviceType":"","titleId":"","titleName":"","timestamp":""}}`
	body := attack86OK(t, h, "GET", "https://userpresence.xboxlive.com/users/xuid("+attack86Friend+")?level=user", "3", "")
	attack86Shape(t, "presence.json", lastSeen, body)
	var p struct {
		State    string `json:"state"`
		LastSeen *struct {
			Timestamp string `json:"timestamp"`
		} `json:"lastSeen"`
	}
	json.Unmarshal([]byte(body), &p)
	if p.State != "Offline" || p.LastSeen == nil {
		t.Fatalf("a user signed out: %s, want Offline with lastSeen", body)
	}
	if _, err := time.Parse(time.RFC3339Nano, p.LastSeen.Timestamp); err != nil {
		t.Errorf("lastSeen.timestamp %q is not ISO 8601: %v", p.LastSeen.Timestamp, err)
	}

	tux := Must(New(Config{World: mustWorld(t)}))
	r := attack86Call(t, tux, attack86Tux, attack86Title, "GET", "https://userpresence.xboxlive.com/users/me?level=all", "3", "")
	if r.status != 200 {
		t.Fatalf("presence own: %d %s", r.status, r.body)
	}
	attack86Shape(t, "presence_own.json", `{"xuid":"","state":""}`, r.body)

	batch := attack86OK(t, h, "POST", "https://userpresence.xboxlive.com/users/batch", "3", `{"users":["`+attack86Friend+`"],"onlineOnly":false,"level":"user"}`)
	attack86Shape(t, "presence_batch.json", "["+lastSeen+"]", batch)
	if !strings.HasPrefix(strings.TrimSpace(batch), "[") || !strings.Contains(batch, `"lastSeen"`) {
		t.Errorf("presence batch %s: want a JSON array of records with lastSeen", batch)
	}
}

func mustWorld(t *testing.T) World {
	t.Helper()
	w, err := ReadWorld(strings.NewReader(attack86World))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// held: OpenXbox/xbox-webapi-python tests/data/responses/people_batch.json,
// asked as get_friends_own_batch asks (POST peoplehub /users/me/people/batch/
// decoration/preferredcolor,detail,multiplayersummary,presencedetail
// {"xuids"}, contract 3): every field of a recorded person with its JSON
// type (the presenceDetails records are TestAttack86PeopleHubPresenceDetails*'s),
// multiplayerSummary {InMultiplayerSession, InParty}, preferredColor's three
// strings, detail's counts and flags.
func TestAttack86PeopleHubBatchPython(t *testing.T) {
	h := attack86Handler(t)
	const person = `{"xuid":"","isFavorite":false,"isFollowingCaller":false,"isFollowedByCaller":false,"isIdentityShared":false,"addedDateTimeUtc":null,"displayName":null,"realName":"","displayPicRaw":"","showUserAsAvatar":"","gamertag":"","gamerScore":"","modernGamertag":"","modernGamertagSuffix":"","uniqueModernGamertag":"","xboxOneRep":"","presenceState":"","presenceText":"","presenceDevices":null,"isBroadcasting":false,"isCloaked":null,"isQuarantined":false,"isXbox360Gamerpic":false,"lastSeenDateTimeUtc":null,"suggestion":null,"recommendation":null,"search":null,"titleHistory":null,"multiplayerSummary":{"InMultiplayerSession":0,"InParty":0},"recentPlayer":null,"follower":null,"preferredColor":{"primaryColor":"","secondaryColor":"","tertiaryColor":""},"presenceDetails":null,"titlePresence":null,"titleSummaries":null,"presenceTitleIds":null,"detail":{"accountTier":"","bio":null,"isVerified":false,"location":null,"tenure":null,"watermarks":[],"blocked":false,"mute":false,"followerCount":0,"followingCount":0,"hasGamePass":false},"communityManagerTitles":null,"socialManager":null,"broadcast":null,"tournamentSummary":null,"avatar":null,"linkedAccounts":[],"colorTheme":"","preferredFlag":"","preferredPlatforms":[]}`
	body := attack86OK(t, h, "POST", "https://peoplehub.xboxlive.com/users/me/people/batch/decoration/preferredcolor,detail,multiplayersummary,presencedetail", "3",
		`{"xuids":["`+attack86Friend+`","`+attack86Tux+`"]}`)
	attack86Shape(t, "people_batch.json", `{"people":[`+person+`]}`, body)
	var got struct {
		People []json.RawMessage `json:"people"`
	}
	json.Unmarshal([]byte(body), &got)
	if len(got.People) != 2 {
		t.Errorf("people: %d, want the 2 asked for", len(got.People))
	}
}

// held: OpenXbox/xbox-webapi-python tests/data/responses/titlehub_batch.json,
// asked as get_titles_batch asks (POST titlehub /titles/batch/decoration/
// achievement,detail,image,scid, contract 2), by title ID: xuid null, each
// title's ids and names strings, devices an array of strings, the
// achievement section's six numbers, images [{url, type}] (detail is
// TestAttack86TitleHubDetailDecoration's).
func TestAttack86TitleHubBatchPython(t *testing.T) {
	h := attack86Handler(t)
	body := attack86OK(t, h, "POST", "https://titlehub.xboxlive.com/titles/batch/decoration/achievement,detail,image,scid", "2", `{"titleIds":["`+attack86Title+`"]}`)
	attack86Shape(t, "titlehub_batch.json", `{"xuid":null,"titles":[{"titleId":"","pfn":"","bingId":null,"serviceConfigId":"","windowsPhoneProductId":"","name":"","type":"","devices":[""],"displayImage":"","mediaItemType":"","modernTitleId":"","isBundle":false,"achievement":{"currentAchievements":0,"totalAchievements":0,"currentGamerscore":0,"totalGamerscore":0,"progressPercentage":0,"sourceVersion":0},"stats":null,"gamePass":null,"images":[{"url":"","type":""}],"titleHistory":null,"detail":null,"friendsWhoPlayed":null,"alternateTitleIds":[],"contentBoards":null,"xboxLiveTier":""}]}`, body)
	if !strings.Contains(body, `"titleId":"`+attack86Title+`"`) {
		t.Errorf("batch answer lacks title %s: %s", attack86Title, body)
	}
}

// held: OpenXbox/xbox-webapi-python tests/data/responses/userstats_by_scid.json
// and userstats_by_scid_with_metadata.json (GET userstats /users/xuid(N)/
// scids/S/stats/NAME[?include=valuemetadata], contract 2 and 3:
// statlistscollection[{arrangebyfield, arrangebyfieldid, stats[{xuid, scid,
// name, type, value (a string), properties{}}]}]) and
// userstats_batch_by_scid.json (POST /batch, contract 2: groups[{name,
// statlistscollection}] and statlistscollection with groupproperties{}).
func TestAttack86UserStatsPython(t *testing.T) {
	h := attack86Handler(t)
	scid := SCID(attack86Title)
	const one = `{"statlistscollection":[{"arrangebyfield":"","arrangebyfieldid":"","stats":[{"xuid":"","scid":"","name":"","type":"","value":"","properties":{}}]}]}`
	base := "https://userstats.xboxlive.com/users/xuid(" + attack86Me + ")/scids/" + scid + "/stats/MinutesPlayed"
	b := attack86OK(t, h, "GET", base, "2", "")
	attack86Shape(t, "userstats_by_scid.json", one, b)
	if !strings.Contains(b, `"value":"1220"`) {
		t.Errorf("stat value: %s, want \"1220\" as a string", b)
	}
	attack86Shape(t, "userstats_by_scid_with_metadata.json", one, attack86OK(t, h, "GET", base+"?include=valuemetadata", "3", ""))
	batch := attack86OK(t, h, "POST", "https://userstats.xboxlive.com/batch", "2",
		`{"arrangebyfield":"xuid","groups":[{"name":"Hero","titleId":"`+attack86Title+`"}],"stats":[{"name":"MinutesPlayed","scid":"`+scid+`"}],"xuids":["`+attack86Me+`"]}`)
	attack86Shape(t, "userstats_batch_by_scid.json", `{"groups":[{"name":"","statlistscollection":[]}],"statlistscollection":[{"arrangebyfield":"","arrangebyfieldid":"","stats":[{"groupproperties":{},"xuid":"","scid":"","name":"","type":"","value":"","properties":{}}]}]}`, batch)
}

// held: OpenXbox/xbox-webapi-python tests/data/responses/achievements_360_all.json
// (GET achievements /users/xuid(N)/titleachievements?titleId=T, contract 1),
// achievements_360_earned.json (GET /users/xuid(N)/achievements?titleId=T,
// contract 1) and achievements_360_recent_progress.json (GET
// /users/xuid(N)/history/titles, contract 1): ids, titleIds, flags, platform,
// gamerscore numbers; timeUnlocked and lastPlayed ISO 8601 strings; pagingInfo
// {continuationToken, totalRecords}; version a string.
func TestAttack86Achievements360Python(t *testing.T) {
	h := attack86Handler(t)
	const ach = `{"achievements":[{"id":0,"titleId":0,"name":"","sequence":0,"flags":0,"unlockedOnline":false,"unlocked":false,"isSecret":false,"platform":0,"gamerscore":0,"imageId":0,"description":"","lockedDescription":"","type":0,"isRevoked":false,"timeUnlocked":""}],"pagingInfo":{"continuationToken":null,"totalRecords":0},"version":""}`
	all := attack86OK(t, h, "GET", "https://achievements.xboxlive.com/users/xuid("+attack86Me+")/titleachievements?titleId=1297290392", "1", "")
	attack86Shape(t, "achievements_360_all.json", ach, all)
	earned := attack86OK(t, h, "GET", "https://achievements.xboxlive.com/users/xuid("+attack86Me+")/achievements?titleId=1297290392", "1", "")
	attack86Shape(t, "achievements_360_earned.json", ach, earned)
	if !strings.Contains(earned, `"unlocked":true`) {
		t.Errorf("earned list lacks the unlocked achievement: %s", earned)
	}
	hist := attack86OK(t, h, "GET", "https://achievements.xboxlive.com/users/xuid("+attack86Me+")/history/titles", "1", "")
	attack86Shape(t, "achievements_360_recent_progress.json", `{"titles":[{"lastPlayed":"","currentAchievements":0,"currentGamerscore":0,"sequence":0,"titleId":0,"titleType":0,"platforms":[0],"name":"","totalAchievements":0,"totalGamerscore":0}],"pagingInfo":{"continuationToken":null,"totalRecords":0},"version":""}`, hist)
	var hv struct {
		Titles []struct {
			LastPlayed string `json:"lastPlayed"`
		} `json:"titles"`
	}
	json.Unmarshal([]byte(hist), &hv)
	if len(hv.Titles) == 0 {
		t.Fatalf("no titles: %s", hist)
	}
	for _, ti := range hv.Titles {
		if _, err := time.Parse(time.RFC3339Nano, ti.LastPlayed); err != nil {
			t.Errorf("lastPlayed %q: %v", ti.LastPlayed, err)
		}
	}
}

// held: OpenXbox/xbox-webapi-python tests/data/responses/usersearch_live_search.json,
// asked as get_live_search asks (GET usersearch /suggest?q=Q, contract 1):
// results[{text, result{id (a string), gamertag, displayPicUri, score (a
// number)}}].
func TestAttack86UserSearchPython(t *testing.T) {
	h := attack86Handler(t)
	body := attack86OK(t, h, "GET", "https://usersearch.xboxlive.com/suggest?q=tux", "1", "")
	attack86Shape(t, "usersearch_live_search.json", `{"results":[{"text":"","result":{"id":"","gamertag":"","displayPicUri":"","score":0}}]}`, body)
	if !strings.Contains(body, `"id":"`+attack86Tux+`"`) {
		t.Errorf("search for tux lacks Tux: %s", body)
	}
}

// held: microsoft/xbox-live-api Tests/UnitTests/Tests/Services/PrivacyTests.cpp
// defaultCheckPermissionsResponse and Source/Services/Privacy/privacy_service.cpp
// (GET privacy /users/xuid(N)/permission/validate?setting=S&target=xuid(M),
// contract 1): {"isAllowed": a boolean[, "reasons": [{"reason"}]]}.
func TestAttack86PrivacyPermissionXSAPI(t *testing.T) {
	h := attack86Handler(t)
	body := attack86OK(t, h, "GET", "https://privacy.xboxlive.com/users/xuid("+attack86Me+")/permission/validate?setting=CommunicateUsingText&target=xuid("+attack86Friend+")", "1", "")
	attack86Shape(t, "PrivacyTests.cpp defaultCheckPermissionsResponse", `{"isAllowed":false}`, body)
}

// held: microsoft/xbox-live-api Tests/UnitTests/Tests/Services/TestResponses/
// Multiplayer.json searchHandleJson (POST sessiondirectory /handles, contract
// 107) and searchHandlesRequestJson / searchHandlesResponseJson (POST
// /handles/query): results[{type, sessionRef{scid, templateName, name},
// searchAttributes{tags[], strings{}, numbers{}}, version, id, createTime,
// customProperties{}, relatedInfo{joinRestriction, closed, maxMembersCount,
// membersCount, visibility, sessionOwners[]}}] (roleInfo left out: the
// mock documents that its sessions have no roles).
func TestAttack86SearchHandlesXSAPI(t *testing.T) {
	h := attack86Handler(t)
	scid := SCID(attack86Title)
	sess := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + scid + "/sessiontemplates/GlobalLFGSessionTemplateName/sessions/LFGSession"
	r := attack86Call(t, h, attack86Me, attack86Title, "PUT", sess, "107",
		`{"constants":{"custom":{},"system":{"maxMembersCount":10,"version":1,"visibility":"open"}},"properties":{"custom":{"Map":"Helmand Valley"}},"members":{"me":{"constants":{"system":{"xuid":"`+attack86Me+`","initialize":true}},"properties":{"system":{"active":true}}}}}`)
	if r.status/100 != 2 {
		t.Fatalf("session write: %d %s", r.status, r.body)
	}
	r = attack86Call(t, h, attack86Me, attack86Title, "POST", "https://sessiondirectory.xboxlive.com/handles", "107",
		`{"type":"search","sessionRef":{"scid":"`+scid+`","templateName":"GlobalLFGSessionTemplateName","name":"LFGSession"},"searchAttributes":{"tags":["micsrequired"],"strings":{"Class":"A"},"numbers":{"Skill_I":14}},"version":1}`)
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		t.Fatalf("search handle: %d %s", r.status, r.body)
	}
	const handle = `{"type":"","sessionRef":{"scid":"","templateName":"","name":""},"searchAttributes":{"tags":[""],"strings":{},"numbers":{}},"version":0,"id":"","createTime":"","customProperties":{},"relatedInfo":{"joinRestriction":"","closed":false,"maxMembersCount":0,"membersCount":0,"visibility":"","sessionOwners":[""]}}`
	body := attack86OK(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles/query?include=relatedInfo,customProperties", "107",
		`{"type":"search","scid":"`+scid+`","templateName":"GlobalLFGSessionTemplateName","orderBy":"Numbers/Skill_I asc","filter":"Strings/Class eq 'A'"}`)
	attack86Shape(t, "Multiplayer.json searchHandlesResponseJson", `{"results":[`+handle+`]}`, body)
	if !strings.Contains(body, `"LFGSession"`) {
		t.Errorf("query lacks the handle: %s", body)
	}
}
