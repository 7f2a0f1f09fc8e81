package mock

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/internal/wiretest"
)

// The title hub's title information as OpenXbox/xbox-webapi-python records
// it (tests/data/responses/titlehub_titleinfo.json taken without the detail
// decoration: every field kept, lists cut to one item, long values
// shortened). The title history's recording is the npm xbox-webapi
// package's, in testdata/recorded (the newest, asking for the decorations
// published clients ask for).
const (
	recordedTitleInfo = `{"xuid": "2719584417856940", "titles": [{"titleId": "1717113201", "pfn": "Microsoft.SeaofThieves_8wekyb3d8bbwe",
		"bingId": null, "serviceConfigId": "00000000-0000-0000-0000-000066591171", "windowsPhoneProductId": "200c2ce3-f2d5-4085-ac78-b8cf7226ffd6",
		"name": "Sea of Thieves", "type": "Game", "devices": ["PC", "XboxOne", "XboxSeries"], "displayImage": "http://store-images.s-microsoft.com/image/apps.4",
		"mediaItemType": "Application", "modernTitleId": "1717113201", "isBundle": false,
		"achievement": {"currentAchievements": 2, "totalAchievements": 0, "currentGamerscore": 15, "totalGamerscore": 2740, "progressPercentage": 1.0, "sourceVersion": 2},
		"stats": null, "gamePass": null, "images": [{"url": "http://store-images.s-microsoft.com/image/apps.2", "type": "Logo"}],
		"titleHistory": null, "detail": null, "friendsWhoPlayed": null, "alternateTitleIds": [], "contentBoards": null,
		"xboxLiveTier": "Full", "isStreamable": true}]}`
)

// recordedTitleBatch is the title hub's batch answer as
// OpenXbox/xbox-webapi-python records it (tests/data/responses/
// titlehub_batch.json, its second title, taken without the detail
// decoration: every field kept, lists cut to one item, long values
// shortened).
const recordedTitleBatch = `{"xuid": null, "titles": [{"titleId": "1717113201", "pfn": "Microsoft.SeaofThieves_8wekyb3d8bbwe",
	"bingId": null, "serviceConfigId": "00000000-0000-0000-0000-000066591171", "windowsPhoneProductId": "200c2ce3-f2d5-4085-ac78-b8cf7226ffd6",
	"name": "Sea of Thieves", "type": "Game", "devices": ["PC", "XboxOne", "XboxSeries"], "displayImage": "http://store-images.s-microsoft.com/image/apps.4",
	"mediaItemType": "Application", "modernTitleId": "1717113201", "isBundle": false,
	"achievement": {"currentAchievements": 0, "totalAchievements": 0, "currentGamerscore": 0, "totalGamerscore": 0, "progressPercentage": 0.0, "sourceVersion": 0},
	"stats": null, "gamePass": null, "images": [{"url": "http://store-images.s-microsoft.com/image/apps.2", "type": "Logo"}],
	"titleHistory": null, "detail": null, "friendsWhoPlayed": null, "alternateTitleIds": [], "contentBoards": null, "xboxLiveTier": "Full"}]}`

// unlockFirst has xuid1 unlock title1's first achievement (10 gamerscore),
// as XSAPI reports progress, so that the histories list title1.
func unlockFirst(t *testing.T, h *Handler) {
	t.Helper()
	upd := fmt.Sprintf(`{"action":"progressUpdate","serviceConfigId":%q,"titleId":%s,"userId":%q,"achievements":[{"id":"1","percentComplete":100}]}`,
		SCID(title1), title1, xuid1)
	if r := do(t, h, "POST", "https://achievements.xboxlive.com/users/xuid("+xuid1+")/achievements/"+SCID(title1)+"/update", Token(xuid1, title1), upd); r.status >= 300 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
}

// TestTitleHubBatch: a batch names titles by titleIds (numbers or strings)
// and by the mock's package family names, answered in the order asked in
// the recorded shape, unknown names left out; with a user in the path it
// carries the user's progress, without one "xuid" is null; an empty or
// malformed batch is refused.
func TestTitleHubBatch(t *testing.T) {
	h := NewHandler()
	unlockFirst(t, h)
	// xbox-webapi-python's get_titles_batch: pfns, no user, contract 2.
	byPFN := statsRequest(t, h, "POST", "https://titlehub.xboxlive.com/titles/batch/decoration/achievement,image",
		"2", `{"pfns": ["Mock.Title1717113201_8wekyb3d8bbwe", "Microsoft.XboxApp_8wekyb3d8bbwe"], "windowsPhoneProductIds": []}`)
	if d := wiretest.ShapeDiff([]byte(recordedTitleBatch), []byte(byPFN.body)); byPFN.status != 200 || d != "" {
		t.Errorf("batch by pfn %d (-recorded +mock):\n%s", byPFN.status, d)
	}
	if !strings.HasPrefix(byPFN.body, `{"xuid":null,"titles":[{"titleId":"1717113201"`) || strings.Count(byPFN.body, `"titleId"`) != 1 {
		t.Errorf("batch by pfn: want the one known title and no user: %s", byPFN.body)
	}
	mine := statsRequest(t, h, "POST", "https://titlehub.xboxlive.com/users/xuid("+xuid1+")/titles/batch/decoration/achievement,image",
		"2", `{"pfns": null, "titleIds": ["`+title1+`", 1717113201]}`)
	if d := wiretest.ShapeDiff([]byte(recordedTitleBatch), []byte(mine.body)); mine.status != 200 || d != "" {
		t.Errorf("batch by title id %d (-recorded +mock):\n%s", mine.status, d)
	}
	if !strings.HasPrefix(mine.body, `{"xuid":"`+xuid1+`","titles":[{"titleId":"`+title1+`"`) || !strings.Contains(mine.body, `"currentGamerscore":10`) ||
		strings.Count(mine.body, `"titleId"`) != 2 {
		t.Errorf("batch with a user: want both titles, in order, with the user's progress: %s", mine.body)
	}
	for name, body := range map[string]string{
		"empty":           `{"pfns": [], "titleIds": []}`,
		"not a title id":  `{"titleIds": ["halo"]}`,
		"past 32 bits":    `{"titleIds": [4294967296]}`,
		"over 500":        `{"titleIds": [` + strings.Repeat(`1,`, 500) + `1]}`,
		"not a JSON body": `pfns=x`,
	} {
		if r := statsRequest(t, h, "POST", "https://titlehub.xboxlive.com/titles/batch/decoration/detail", "2", body); r.status != 400 {
			t.Errorf("batch, %s: %d %s, want 400", name, r.status, r.body)
		}
	}
}

// TestTitleHub: the title history lists the titles the achievements
// history lists, with the same counts, and a title's information answers
// for any title; both in the recorded shapes.
func TestTitleHub(t *testing.T) {
	h := NewHandler()
	unlockFirst(t, h)
	hist := statsRequest(t, h, "GET", "https://titlehub.xboxlive.com/users/xuid("+xuid1+")/titles/titlehistory/decoration/achievement,image,titlehistory", "2", "")
	recordedTitleHistory, err := os.ReadFile("testdata/recorded/xbox-webapi-npm/titlehub_titlehistory.json")
	if err != nil {
		t.Fatal(err)
	}
	if d := wiretest.ShapeDiff(recordedTitleHistory, []byte(hist.body)); hist.status != 200 || d != "" {
		t.Errorf("title history %d (-recorded +mock):\n%s", hist.status, d)
	}
	if !strings.Contains(hist.body, `"titleId":"`+title1+`"`) || !strings.Contains(hist.body, `"currentGamerscore":10`) {
		t.Errorf("title history lacks the title played: %s", hist.body)
	}
	info := statsRequest(t, h, "GET", "https://titlehub.xboxlive.com/users/me/titles/titleid(1717113201)/decoration/achievement,image", "2", "")
	if d := wiretest.ShapeDiff([]byte(recordedTitleInfo), []byte(info.body)); info.status != 200 || d != "" {
		t.Errorf("title info %d (-recorded +mock):\n%s", info.status, d)
	}
	if r := statsRequest(t, h, "GET", "https://titlehub.xboxlive.com/users/me/titles/halo/decoration/achievement", "2", ""); r.status != 404 {
		t.Errorf("a title not named titleid(T): %d", r.status)
	}
}
