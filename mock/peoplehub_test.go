package mock

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/internal/wiretest"
)

// recordedHub is the people hub's friends answer as OpenXbox/xbox-webapi-python
// records it (tests/data/responses/people_friends_own.json: both people,
// every field kept, long values shortened).
const recordedHub = `{"people": [
 {"xuid": "2533274838782903", "isFavorite": true, "isFollowingCaller": true, "isFollowedByCaller": true, "isIdentityShared": true,
  "addedDateTimeUtc": "2016-06-29T20:59:22.5050886Z", "displayName": "I", "realName": "", "displayPicRaw": "https://images-eds-ssl.xboxlive.com/image?url=7&format=png",
  "showUserAsAvatar": "1", "gamertag": "I", "gamerScore": "27210", "modernGamertag": "I", "modernGamertagSuffix": "", "uniqueModernGamertag": "I",
  "xboxOneRep": "GoodPlayer", "presenceState": "Offline", "presenceText": "Offline", "presenceDevices": null, "isBroadcasting": false,
  "isCloaked": null, "isQuarantined": false, "isXbox360Gamerpic": false, "lastSeenDateTimeUtc": null,
  "suggestion": {"Type": null, "Priority": 0, "Reasons": null, "TitleId": null}, "recommendation": null, "search": null, "titleHistory": null,
  "multiplayerSummary": {"InMultiplayerSession": 0, "InParty": 0}, "recentPlayer": {"titles": [], "text": null},
  "follower": {"text": null, "followedDateTime": "0001-01-01T00:00:00"},
  "preferredColor": {"primaryColor": "744DA9", "secondaryColor": "24153B", "tertiaryColor": "4c208a"}, "presenceDetails": [],
  "titlePresence": {"IsCurrentlyPlaying": false, "PresenceText": null, "TitleName": null, "TitleId": null}, "titleSummaries": null,
  "presenceTitleIds": [], "detail": {"accountTier": "Gold", "bio": "Bio", "isVerified": false, "location": "Rock Hill", "tenure": "8",
  "watermarks": [], "blocked": false, "mute": false, "followerCount": 81, "followingCount": 73, "hasGamePass": false},
  "communityManagerTitles": null, "socialManager": {"titleIds": [], "pages": []}, "broadcast": [], "tournamentSummary": null,
  "avatar": {"updateTimeOffset": "0001-01-01T00:00:00+00:00", "spritesheetMetadata": null}, "linkedAccounts": [],
  "colorTheme": "gamerpicblur", "preferredFlag": "", "preferredPlatforms": []},
 {"xuid": "2533274913657542", "isFavorite": true, "isFollowingCaller": true, "isFollowedByCaller": true, "isIdentityShared": false,
  "addedDateTimeUtc": "2012-12-14T03:41:43.177Z", "displayName": "e", "realName": "", "displayPicRaw": "http://images-eds.xboxlive.com/image?url=r",
  "showUserAsAvatar": "2", "gamertag": "e", "gamerScore": "3802", "modernGamertag": "e", "modernGamertagSuffix": "", "uniqueModernGamertag": "e",
  "xboxOneRep": "GoodPlayer", "presenceState": "Offline", "presenceText": "Last seen 17h ago: Home", "presenceDevices": null,
  "isBroadcasting": false, "isCloaked": null, "isQuarantined": false, "isXbox360Gamerpic": true, "lastSeenDateTimeUtc": "2020-10-08T04:19:58.3208237Z",
  "suggestion": {"Type": null, "Priority": 0, "Reasons": null, "TitleId": null}, "recommendation": null, "search": null, "titleHistory": null,
  "multiplayerSummary": {"InMultiplayerSession": 0, "InParty": 0}, "recentPlayer": {"titles": [], "text": null},
  "follower": {"text": null, "followedDateTime": "0001-01-01T00:00:00"},
  "preferredColor": {"primaryColor": "107c10", "secondaryColor": "102b14", "tertiaryColor": "155715"},
  "presenceDetails": [{"IsBroadcasting": false, "Device": "XboxOne", "PresenceText": "Last seen 17h ago: Home", "State": "LastSeen",
   "TitleId": "750323071", "TitleType": null, "IsPrimary": true, "IsGame": false, "RichPresenceText": null}],
  "titlePresence": {"IsCurrentlyPlaying": false, "PresenceText": null, "TitleName": null, "TitleId": null}, "titleSummaries": null,
  "presenceTitleIds": ["750323071"], "detail": {"accountTier": "Silver", "bio": "", "isVerified": false, "location": "home", "tenure": "0",
  "watermarks": [], "blocked": false, "mute": false, "followerCount": 18, "followingCount": 12, "hasGamePass": false},
  "communityManagerTitles": null, "socialManager": {"titleIds": [], "pages": []}, "broadcast": [], "tournamentSummary": null,
  "avatar": {"updateTimeOffset": "0001-01-01T00:00:00+00:00", "spritesheetMetadata": null}, "linkedAccounts": [],
  "colorTheme": "gamerpicblur", "preferredFlag": "", "preferredPlatforms": []}],
 "recommendationSummary": null, "friendFinderState": null, "accountLinkDetails": null}`

// TestPeopleHub: the friends list with the decorations xbox-webapi-python
// asks for answers in the recorded shape, lists the people the social
// service lists with the gamertags the profile service answers, and the
// batch call answers for the XUIDs asked.
func TestPeopleHub(t *testing.T) {
	h := NewHandler()
	h.SetAccount(Account{XUID: derivedPeople(xuid1)[0].XUID, Gamertag: "Friendly"})
	r := statsRequest(t, h, "GET", "https://peoplehub.xboxlive.com/users/me/people/social/decoration/preferredcolor,detail,multiplayersummary,presencedetail", "3", "")
	if d := wiretest.ShapeDiff([]byte(recordedHub), []byte(r.body)); r.status != 200 || d != "" {
		t.Fatalf("friends %d (-recorded +mock):\n%s", r.status, d)
	}
	var hub struct{ People []hubPerson }
	json.Unmarshal([]byte(r.body), &hub)
	if len(hub.People) != peoplePerUser || hub.People[0].Gamertag != "Friendly" || hub.People[0].XUID != derivedPeople(xuid1)[0].XUID || hub.People[0].Detail == nil {
		t.Errorf("friends: %d people, first %+v", len(hub.People), hub.People[0])
	}
	r = statsRequest(t, h, "POST", "https://peoplehub.xboxlive.com/users/me/people/batch/decoration/detail", "3", `{"xuids": ["2533274790000042", "`+derivedPeople(xuid1)[1].XUID+`"]}`)
	json.Unmarshal([]byte(r.body), &hub)
	if r.status != 200 || len(hub.People) != 2 || hub.People[0].IsFollowedByCaller || !hub.People[1].IsFollowedByCaller || hub.People[0].Gamertag != "Player0042" {
		t.Errorf("batch: %d %s", r.status, r.body)
	}
	if r := statsRequest(t, h, "GET", "https://peoplehub.xboxlive.com/users/me/people/social", "3", ""); r.status != 200 || !strings.Contains(r.body, `"detail":null`) {
		t.Errorf("undecorated: %d %.200s", r.status, r.body)
	}
}
