package mock

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/internal/wiretest"
	"github.com/xblgo/fgrl/throttle"
)

// recordedSuggest is the user search's answer as OpenXbox/xbox-webapi-python
// records it (tests/data/responses/usersearch_live_search.json, its first
// two results, the picture URLs shortened).
const recordedSuggest = `{"results": [
  {"text": "Tux", "result": {"id": "2533274895244106", "gamertag": "Tux", "displayPicUri": "http://images-eds.xboxlive.com/image?url=wHwb&format=png", "score": 0.0}},
  {"text": "TuX Rose", "result": {"id": "2533274826466726", "gamertag": "TuX Rose", "displayPicUri": "http://images-eds.xboxlive.com/image?url=wHwb&format=png", "score": 0.0}}
]}`

// recordedProfileByGamertag is the profile service's answer to
// GET /users/gt(e)/profile/settings as xbox-webapi-python records it
// (tests/data/responses/profile_by_gamertag.json, the picture URL
// shortened).
const recordedProfileByGamertag = `{"profileUsers": [{"id": "2669321029139235", "hostId": "2669321029139235", "settings": [
  {"id": "AppDisplayName", "value": "e"}, {"id": "Gamerscore", "value": "89410"}, {"id": "Gamertag", "value": "e"},
  {"id": "PublicGamerpic", "value": "http://images-eds.xboxlive.com/image?url=z951"}, {"id": "XboxOneRep", "value": "GoodPlayer"}],
  "isSponsoredUser": false}]}`

// TestUserSearch: the search answers the world's accounts whose gamertag
// holds the query, those starting with it first, in the recorded shape;
// an empty query is refused.
func TestUserSearch(t *testing.T) {
	h := seeded(t)
	r := as(t, h, ada, "GET", "https://usersearch.xboxlive.com/suggest?q=Y", "1", "")
	if d := wiretest.ShapeDiff([]byte(recordedSuggest), []byte(r.body)); d != "" {
		t.Errorf("(-recorded +mock)\n%s", d)
	}
	var got struct {
		Results []suggestion `json:"results"`
	}
	decodeJSON(t, r, &got)
	var tags []string
	for _, s := range got.Results {
		tags = append(tags, s.Result.Gamertag+" "+s.Result.ID)
	}
	if d := cmp.Diff([]string{"Cy " + cy}, tags); d != "" {
		t.Errorf("q=Y (-want +got)\n%s", d)
	}
	tags = nil
	decodeJSON(t, as(t, h, ada, "GET", "https://usersearch.xboxlive.com/suggest?q=a", "1", ""), &got)
	for _, s := range got.Results {
		tags = append(tags, s.Text)
	}
	if d := cmp.Diff([]string{"Ada"}, tags); d != "" {
		t.Errorf("q=a (-want +got)\n%s", d)
	}
	if r := statsRequest(t, h, "GET", "https://usersearch.xboxlive.com/suggest?q=", "1", ""); r.status != 400 {
		t.Errorf("an empty query: %d %s, want 400", r.status, r.body)
	}
}

// TestProfileByGamertag: a profile (and a social summary) addressed by
// gt(G) answers the account with that gamertag, without case, in the
// recorded shape; a gamertag no account has gets 404.
func TestProfileByGamertag(t *testing.T) {
	h := seeded(t)
	r := as(t, h, ada, "GET", "https://profile.xboxlive.com/users/gt(bO)/profile/settings?settings=AppDisplayName,Gamerscore,Gamertag,PublicGamerpic,XboxOneRep", "2", "")
	if d := wiretest.ShapeDiff([]byte(recordedProfileByGamertag), []byte(r.body)); d != "" {
		t.Errorf("(-recorded +mock)\n%s", d)
	}
	if !strings.Contains(r.body, `"id":"`+bo+`"`) || !strings.Contains(r.body, `{"id":"Gamertag","value":"Bo"}`) {
		t.Errorf("gt(bO): %s, want Bo's profile", r.body)
	}
	for _, seg := range []string{"gt(Nobody)", "gt()", "Bo"} {
		if r := statsRequest(t, h, "GET", "https://profile.xboxlive.com/users/"+seg+"/profile/settings", "2", ""); r.status != 404 {
			t.Errorf("%s: %d %s, want 404", seg, r.status, r.body)
		}
	}
	var sum summary
	decodeJSON(t, as(t, h, ada, "GET", "https://social.xboxlive.com/users/gt(CY)/summary", "2", ""), &sum)
	if sum.TargetFollowerCount != 1 || !sum.IsCallerFollowingTarget || sum.IsTargetFollowingCaller {
		t.Errorf("summary of gt(CY): %+v, want Ada following Cy, one way", sum)
	}
	if r := statsRequest(t, h, "GET", "https://social.xboxlive.com/users/gt(Nobody)/summary", "2", ""); r.status != 404 {
		t.Errorf("summary of no one: %d %s, want 404", r.status, r.body)
	}
	// Only gt(G) is served: any other segment is not counted.
	if k, err := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "profile"}); err != nil || k.Burst.Count != 2 {
		t.Errorf("profile counted %d (%v), want 2: the two calls that name gt(G)", k.Burst.Count, err)
	}
}

// TestUnpublishedLimits: the services with no published limit (people
// hub, title hub, user search) are counted at the trace analyzer's general
// rule, 10 in 15 s: the 11th call is refused.
func TestUnpublishedLimits(t *testing.T) {
	for _, url := range []string{"https://peoplehub.xboxlive.com/users/me/people/social", "https://titlehub.xboxlive.com/users/me/titles/titlehistory/decoration/achievement",
		"https://usersearch.xboxlive.com/suggest?q=Player"} {
		h := NewHandler()
		var codes []int
		for range 11 {
			codes = append(codes, statsRequest(t, h, "GET", url, "3", "").status)
		}
		if want := append(slices.Repeat([]int{200}, 10), 429); !slices.Equal(codes, want) {
			t.Errorf("%s: %v, want %v", url, codes, want)
		}
	}
}
