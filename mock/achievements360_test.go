package mock

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/internal/wiretest"
)

// recorded360 is one item of the Xbox 360 achievements answer (contract 1)
// as OpenXbox/xbox-webapi-python records it
// (tests/data/responses/achievements_360_all.json; its list cut to one item,
// every field kept).
const recorded360 = `{"achievements": [{"id": 1, "titleId": 1297290392, "name": "Booster-Blüte", "sequence": 0, "flags": 9,
	"unlockedOnline": false, "unlocked": false, "isSecret": false, "platform": 255, "gamerscore": 10, "imageId": 3,
	"description": "d", "lockedDescription": "l", "type": 1, "isRevoked": false, "timeUnlocked": "2002-11-15T00:00:00.0000000Z"}],
	"pagingInfo": {"continuationToken": null, "totalRecords": 15}, "version": "0001-01-01T00:00:00.0000000Z"}`

// TestAchievementsContract1: with contract 1 the achievements service
// answers in the Xbox 360 shape (all of a title at /titleachievements, the
// earned ones at /achievements), for the same achievements and progress
// the contract-2 answers hold; contract 2 keeps its shape; another contract
// is refused with 400, never answered in another's shape.
func TestAchievementsContract1(t *testing.T) {
	h := NewHandler()
	base := "https://achievements.xboxlive.com/users/xuid(" + xuid1 + ")"
	all := statsRequest(t, h, "GET", base+"/titleachievements?titleId="+title1, "1", "")
	if d := wiretest.ShapeDiff([]byte(recorded360), []byte(all.body)); all.status != 200 || d != "" {
		t.Fatalf("titleachievements %d (-recorded +mock):\n%s\n%s", all.status, d, all.body)
	}
	if earned := statsRequest(t, h, "GET", base+"/achievements?titleId="+title1, "1", ""); earned.status != 200 || !strings.Contains(earned.body, `"achievements":[]`) {
		t.Errorf("earned before any progress: %d %s", earned.status, earned.body)
	}
	upd := fmt.Sprintf(`{"action":"progressUpdate","serviceConfigId":%q,"titleId":%s,"userId":%q,"achievements":[{"id":"1","percentComplete":100}]}`,
		SCID(title1), title1, xuid1)
	if r := do(t, h, "POST", base+"/achievements/"+SCID(title1)+"/update", Token(xuid1, title1), upd); r.status != 200 && r.status != 204 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	earned := statsRequest(t, h, "GET", base+"/achievements?titleId="+title1, "1", "")
	if earned.status != 200 || strings.Count(earned.body, `"unlocked":true`) != 1 || strings.Count(earned.body, `"titleId"`) != 1 {
		t.Errorf("earned after unlocking one: %d %s", earned.status, earned.body)
	}
	if two := statsRequest(t, h, "GET", base+"/achievements?titleId="+title1, "2", ""); two.status != 200 || !strings.Contains(two.body, `"progressState":"Achieved"`) {
		t.Errorf("contract 2: %d %s", two.status, two.body)
	}
	for _, v := range []string{"3", "x"} {
		if r := statsRequest(t, h, "GET", base+"/achievements?titleId="+title1, v, ""); r.status != 400 {
			t.Errorf("contract %s: %d %s, want 400", v, r.status, r.body)
		}
	}
}

// The title history as OpenXbox/xbox-webapi-python records it, one title
// of each kept with every field: contract 2
// (tests/data/responses/achievements_one_recent_progress.json) and contract
// 1 (achievements_360_recent_progress.json); continuationToken null, as on
// a last page (achievements_360_all.json records it so).
const (
	recordedHistory = `{"titles": [{"lastUnlock": "2013-11-16T15:37:26.8018568Z", "titleId": 1331147,
		"serviceConfigId": "054b0100-2668-415d-b546-f5f300144fcb", "titleType": "LiveApp", "platform": "Durango", "name": "ESPN",
		"earnedAchievements": 1, "currentGamerscore": 0, "maxGamerscore": 0}], "pagingInfo": {"continuationToken": null, "totalRecords": 125}}`
	recordedHistory360 = `{"titles": [{"lastPlayed": "2017-12-19T05:33:33.8730000Z", "currentAchievements": 7, "currentGamerscore": 40,
		"sequence": 2, "titleId": 1161890157, "titleType": 1, "platforms": [1], "name": "SSX", "totalAchievements": 50,
		"totalGamerscore": 1000}], "pagingInfo": {"continuationToken": null, "totalRecords": 861},
		"version": "2018-03-28T01:28:51.8070000Z"}`
)

// TestTitleHistory: the title history lists the titles in which the user
// has achievement progress, with the counts its achievements answer, in
// the recorded shape of each contract.
func TestTitleHistory(t *testing.T) {
	h := NewHandler()
	hist := "https://achievements.xboxlive.com/users/xuid(" + xuid1 + ")/history/titles"
	if r := statsRequest(t, h, "GET", hist, "2", ""); r.status != 200 || !strings.Contains(r.body, `"titles":[]`) {
		t.Errorf("history before any progress: %d %s", r.status, r.body)
	}
	upd := fmt.Sprintf(`{"action":"progressUpdate","serviceConfigId":%q,"titleId":%s,"userId":%q,"achievements":[{"id":"1","percentComplete":100},{"id":"2","percentComplete":40}]}`,
		SCID(title1), title1, xuid1)
	if r := do(t, h, "POST", "https://achievements.xboxlive.com/users/xuid("+xuid1+")/achievements/"+SCID(title1)+"/update", Token(xuid1, title1), upd); r.status >= 300 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	two := statsRequest(t, h, "GET", hist, "2", "")
	if d := wiretest.ShapeDiff([]byte(recordedHistory), []byte(two.body)); two.status != 200 || d != "" {
		t.Errorf("contract 2 %d (-recorded +mock):\n%s", two.status, d)
	}
	if !strings.Contains(two.body, `"titleId":`+title1) || !strings.Contains(two.body, `"earnedAchievements":1`) || !strings.Contains(two.body, `"currentGamerscore":10`) {
		t.Errorf("contract 2 lacks the title's progress: %s", two.body)
	}
	one := statsRequest(t, h, "GET", hist, "1", "")
	if d := wiretest.ShapeDiff([]byte(recordedHistory360), []byte(one.body)); one.status != 200 || d != "" {
		t.Errorf("contract 1 %d (-recorded +mock):\n%s", one.status, d)
	}
}

// recordedChallenge is an achievement whose time window, deep link and
// in-app reward carry values: the shape of xbox-webapi-python's
// tests/data/responses/achievements_one_details.json (its first
// achievement) with those fields as microsoft/xbox-live-api
// Tests/UnitTests/Tests/Services/AchievementsTests.cpp's answer gives them
// (timeWindow's startDate and endDate; a second, InApp reward with name,
// description and mediaAsset; deeplink a string).
const recordedChallenge = `{"achievements": [{"id": "39", "serviceConfigId": "1370999b-fca2-4c53-8ec5-73493bcb67e5", "name": "On My Mark",
  "titleAssociations": [{"name": "Halo 5: Guardians", "id": 219630713}], "progressState": "NotStarted",
  "progression": {"requirements": [{"id": "77f38077-80fc-4d29-9264-e712f311815d", "current": null, "target": "1", "operationType": "Sum",
    "valueType": "Integer", "ruleParticipationType": "Individual"}], "timeUnlocked": "0001-01-01T00:00:00.0000000Z"},
  "mediaAssets": [{"name": "e7c471bc.png", "type": "Icon", "url": "http://images-eds.xboxlive.com/image?url=z951"}],
  "platforms": ["Durango"], "isSecret": false, "description": "Simultaneously assassinated two Elites in Blue Team co-op.",
  "lockedDescription": "Simultaneously assassinate two Elites in Blue Team co-op.", "productId": "9a924f64-6ac5-4380-b249-8162269c15cc",
  "achievementType": "Challenge", "participationType": "Individual",
  "timeWindow": {"startDate": "2013-02-01T00:00:00Z", "endDate": "2100-07-01T00:00:00Z"},
  "rewards": [{"name": null, "description": null, "value": "10", "type": "Gamerscore", "mediaAsset": null, "valueType": "Int"},
    {"name": "Default Name for InAppReward", "description": "Default Description for InAppReward", "value": "1", "type": "InApp",
     "valueType": "String", "mediaAsset": {"name": "Icon Name", "type": "Icon", "url": "http://www.xbox.com"}}],
  "estimatedTime": "06:12:14", "deeplink": "aWFtYWRlZXBsaW5r", "isRevoked": false}],
  "pagingInfo": {"continuationToken": null, "totalRecords": 1}}`

// TestAchievementValues: each title's challenge has a time window, a deep
// link and an in-app reward with values, in the recorded shape; the others
// keep them null.
func TestAchievementValues(t *testing.T) {
	h := NewHandler()
	r := do(t, h, "GET", "https://achievements.xboxlive.com/users/xuid("+xuid1+")/achievements/"+SCID(title1)+"/"+challengeID, Token(xuid1, title1), "")
	if d := wiretest.ShapeDiff([]byte(recordedChallenge), []byte(r.body)); r.status != 200 || d != "" {
		t.Errorf("%d (-recorded +mock)\n%s", r.status, d)
	}
	var list achievementList
	decodeJSON(t, do(t, h, "GET", "https://achievements.xboxlive.com/users/xuid("+xuid1+")/achievements?titleId="+title1, Token(xuid1, title1), ""), &list)
	var got []string
	for _, a := range list.Achievements {
		got = append(got, fmt.Sprintf("%s %s window=%v deeplink=%v rewards=%d", a.ID, a.AchievementType, a.TimeWindow != nil, a.Deeplink != nil, len(a.Rewards)))
	}
	want := []string{"1 Persistent window=false deeplink=false rewards=1", "2 Persistent window=false deeplink=false rewards=1",
		"3 Persistent window=false deeplink=false rewards=1", "4 Persistent window=false deeplink=false rewards=1",
		"5 Challenge window=true deeplink=true rewards=2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}
