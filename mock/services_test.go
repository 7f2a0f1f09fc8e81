package mock

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decodeJSON(t *testing.T, r result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("status %d body %q: %v", r.status, r.body, err)
	}
}

func TestProfile(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	var got profileResponse
	decodeJSON(t, do(t, h, "GET", "https://profile.xboxlive.com/users/xuid(42)/profile/settings?settings=Gamertag,Gamerscore", tok, ""), &got)
	want := profileResponse{[]profileUser{{ID: "42", HostID: "42", Settings: []profileSetting{
		{"Gamertag", "Player42"}, {"Gamerscore", "1250"}}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile mismatch (-want +got):\n%s", diff)
	}
	decodeJSON(t, do(t, h, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", tok,
		`{"userIds":["1","2"],"settings":["GameDisplayName"]}`), &got)
	if len(got.ProfileUsers) != 2 || got.ProfileUsers[1].Settings[0].Value != "Player2" {
		t.Errorf("batch = %+v", got)
	}
	decodeJSON(t, do(t, h, "GET", "https://profile.xboxlive.com/users/me/profile/settings", tok, ""), &got)
	if got.ProfileUsers[0].ID != xuid1 {
		t.Errorf("me resolved to %q, want %q", got.ProfileUsers[0].ID, xuid1)
	}
}

func TestPresenceSetThenGet(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	var rec presenceRecord
	decodeJSON(t, do(t, h, "GET", "https://userpresence.xboxlive.com/users/xuid("+xuid1+")", tok, ""), &rec)
	if rec.State != "Offline" {
		t.Errorf("before set: %+v", rec)
	}
	set := "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")/devices/current/titles/current"
	if r := do(t, h, "POST", set, tok, `{"id":"`+title1+`","state":"active","activity":{"richPresence":"In a match"}}`); r.status != 200 {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	var batch []presenceRecord
	decodeJSON(t, do(t, h, "POST", "https://userpresence.xboxlive.com/users/batch", Token(xuid2, title1),
		`{"users":["`+xuid1+`","`+xuid2+`"]}`), &batch)
	if len(batch) != 2 || batch[0].State != "Online" || batch[0].Devices[0].Titles[0].Activity.RichPresence != "In a match" || batch[1].State != "Offline" {
		t.Errorf("batch after set = %+v", batch)
	}
	if r := do(t, h, "POST", set, Token(xuid2, title1), `{}`); r.status != 403 {
		t.Errorf("setting another user's presence: %d, want 403", r.status)
	}
	do(t, h, "DELETE", set, tok, "")
	decodeJSON(t, do(t, h, "GET", "https://userpresence.xboxlive.com/users/me", tok, ""), &rec)
	if rec.State != "Offline" {
		t.Errorf("after clear: %+v", rec)
	}
}

func TestAchievements(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	base := "https://achievements.xboxlive.com/users/xuid(" + xuid1 + ")/achievements"
	var list struct {
		Achievements []achievement `json:"achievements"`
		PagingInfo   pagingInfo    `json:"pagingInfo"`
	}
	decodeJSON(t, do(t, h, "GET", base+"?titleId="+title1+"&maxItems=2", tok, ""), &list)
	if len(list.Achievements) != 2 || list.PagingInfo.ContinuationToken == nil || *list.PagingInfo.ContinuationToken != "2" || list.PagingInfo.TotalRecords != 5 {
		t.Fatalf("page 1 = %+v", list)
	}
	decodeJSON(t, do(t, h, "GET", base+"?titleId="+title1+"&maxItems=10&continuationToken=2", tok, ""), &list)
	if len(list.Achievements) != 3 || list.PagingInfo.ContinuationToken != nil {
		t.Errorf("page 2 = %+v", list)
	}
	upd := base + "/" + SCID(title1) + "/update"
	if r := do(t, h, "POST", upd, tok, `{"achievements":[{"id":"2","percentComplete":40}]}`); r.status != 200 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if r := do(t, h, "POST", upd, tok, `{"achievements":[{"id":"2","percentComplete":30}]}`); r.status != 304 {
		t.Errorf("update backwards: %d, want 304", r.status)
	}
	if r := do(t, h, "POST", upd, tok, `{"achievements":[{"id":"9","percentComplete":30}]}`); r.status != 400 {
		t.Errorf("update unknown: %d, want 400", r.status)
	}
	var one struct {
		Achievement achievement `json:"achievement"`
	}
	decodeJSON(t, do(t, h, "GET", base+"/"+SCID(title1)+"/2", tok, ""), &one)
	if one.Achievement.ProgressState != "InProgress" || one.Achievement.Progression.Requirements[0].Current != "40" {
		t.Errorf("after update: %+v", one.Achievement)
	}
	if r := do(t, h, "GET", base+"/"+SCID(title1)+"/99", tok, ""); r.status != 404 {
		t.Errorf("unknown achievement: %d", r.status)
	}
}

func TestStatsAndLeaderboard(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	var single struct {
		User statsUser `json:"user"`
	}
	decodeJSON(t, do(t, h, "GET", "https://userstats.xboxlive.com/users/xuid(7)/scids/abc/stats/kills,deaths", tok, ""), &single)
	if len(single.User.Scids[0].Stats) != 2 || single.User.Xuid != "7" {
		t.Errorf("stats = %+v", single)
	}
	var batch struct {
		Users []statsUser `json:"users"`
	}
	decodeJSON(t, do(t, h, "POST", "https://userstats.xboxlive.com/batch", tok,
		`{"requestedusers":["7","8"],"requestedscids":[{"scid":"abc","requestedstats":["kills"]}]}`), &batch)
	if len(batch.Users) != 2 || batch.Users[0].Scids[0].Stats[0].Value != single.User.Scids[0].Stats[0].Value {
		t.Errorf("batch stats = %+v; want the same value as the single read", batch)
	}
	var lb struct {
		PagingInfo struct {
			ContinuationToken *string `json:"continuationToken"`
		} `json:"pagingInfo"`
		UserList []leaderboardRow `json:"userList"`
	}
	decodeJSON(t, do(t, h, "GET", "https://leaderboards.xboxlive.com/scids/abc/leaderboards/stat(kills)?maxItems=100&continuationToken=200", tok, ""), &lb)
	if len(lb.UserList) != 50 || lb.UserList[0].Rank != 201 || lb.PagingInfo.ContinuationToken != nil {
		t.Errorf("last leaderboard page: %d rows, first rank %d", len(lb.UserList), lb.UserList[0].Rank)
	}
	if r := do(t, h, "GET", "https://leaderboards.xboxlive.com/scids/abc/leaderboards/x?continuationToken=zz", tok, ""); r.status != 400 {
		t.Errorf("bad token: %d, want 400", r.status)
	}
}

func TestSessionsSocialPrivacy(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	url := "https://sessiondirectory.xboxlive.com/serviceconfigs/abc/sessiontemplates/quick/sessions/s1"
	if r := do(t, h, "PUT", url, tok, `{"properties":{"system":{"joinRestriction":"followed"}}}`); r.status != 201 {
		t.Errorf("create: %d %s", r.status, r.body)
	}
	if r := do(t, h, "PUT", url, tok, `{"properties":{}}`); r.status != 200 {
		t.Errorf("replace: %d", r.status)
	}
	if r := do(t, h, "GET", url, tok, ""); r.status != 200 || r.body != `{"properties":{}}` {
		t.Errorf("get: %d %s", r.status, r.body)
	}
	if r := do(t, h, "PUT", url, tok, `[1]`); r.status != 400 {
		t.Errorf("non-object session: %d, want 400", r.status)
	}
	var people struct {
		TotalCount int      `json:"totalCount"`
		People     []person `json:"people"`
	}
	decodeJSON(t, do(t, h, "GET", "https://social.xboxlive.com/users/me/people", tok, ""), &people)
	if people.TotalCount != 3 || len(people.People) != 3 {
		t.Errorf("people = %+v", people)
	}
	var perm struct {
		IsAllowed bool `json:"isAllowed"`
	}
	decodeJSON(t, do(t, h, "GET", "https://privacy.xboxlive.com/users/me/permission/validate?setting=CommunicateUsingText&target=xuid(5)", tok, ""), &perm)
	if !perm.IsAllowed {
		t.Error("permission refused, want allowed")
	}
	decodeJSON(t, do(t, h, "GET", "https://privacy.xboxlive.com/users/me/permission/validate?setting=CommunicateUsingText&target=xuid(0)", tok, ""), &perm)
	if perm.IsAllowed {
		t.Error("permission to xuid(0) allowed, want refused")
	}
}

func TestHandlesAndTickets(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	r := do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", tok,
		`{"type":"invite","sessionRef":{"scid":"abc","templateName":"quick","name":"s1"},"invitedXuid":"5"}`)
	if r.status != 201 || r.body != `{"id":"handle-s1-5","type":"invite"}` {
		t.Errorf("invite: %d %s", r.status, r.body)
	}
	if r := do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", tok, `{}`); r.status != 400 {
		t.Errorf("invite without a session: %d", r.status)
	}
	if r := do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles/query?include=relatedInfo", tok, `{"type":"search"}`); r.status != 200 || r.body != `{"results":[]}` {
		t.Errorf("query: %d %s", r.status, r.body)
	}
	r = do(t, h, "POST", "https://smartmatch.xboxlive.com/serviceconfigs/abc/hoppers/ranked", tok, `{"preserveSession":"Always"}`)
	if r.status != 200 || r.body != `{"ticketId":"ticket-`+xuid1+`-ranked","waitTime":60}` {
		t.Errorf("ticket: %d %s", r.status, r.body)
	}
}
