package mock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
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
	if r := do(t, h, "POST", set, tok, `{"state":"active","activity":{"richPresence":{"id":"inMatch","scid":"`+SCID(title1)+`","params":["dust"]}}}`); r.status != 200 {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	var batch []presenceRecord
	decodeJSON(t, do(t, h, "POST", "https://userpresence.xboxlive.com/users/batch", Token(xuid2, title1),
		`{"users":["`+xuid1+`","`+xuid2+`"]}`), &batch)
	if len(batch) != 2 || batch[0].State != "Online" || batch[0].Devices[0].Titles[0].Activity.RichPresence != "inMatch(dust)" || batch[1].State != "Offline" {
		t.Errorf("batch after set = %+v", batch)
	}
	if r := do(t, h, "POST", set, Token(xuid2, title1), `{}`); r.status != 403 {
		t.Errorf("setting another user's presence: %d, want 403", r.status)
	}
	if r := do(t, h, "DELETE", set, Token(xuid2, title1), ""); r.status != 403 {
		t.Errorf("clearing another user's presence: %d, want 403 as a set of it", r.status)
	}
	if got := batch[0].Devices[0].Titles[0].State; got != "Active" {
		t.Errorf("title state %q, want \"Active\" as recorded", got)
	}
	do(t, h, "DELETE", set, tok, "")
	decodeJSON(t, do(t, h, "GET", "https://userpresence.xboxlive.com/users/me", tok, ""), &rec)
	if rec.State != "Offline" || rec.LastSeen == nil || rec.LastSeen.TitleID != title1 || rec.LastSeen.Timestamp == "" {
		t.Errorf("after clear: %+v, want offline with lastSeen", rec)
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
	body := func(scid, title, id string, pct int) string {
		return fmt.Sprintf(`{"action":"progressUpdate","serviceConfigId":%q,"titleId":%s,"userId":%q,"achievements":[{"id":%q,"percentComplete":%d}]}`,
			scid, title, xuid1, id, pct)
	}
	for _, tt := range []struct {
		name, url, body string
		status          int
	}{
		{"raise", upd, body(SCID(title1), title1, "2", 40), 200},
		{"backwards", upd, body(SCID(title1), title1, "2", 30), 304},
		{"unknown achievement", upd, body(SCID(title1), title1, "9", 30), 400},
		{"titleId as a string", upd, body(SCID(title1), `"`+title1+`"`, "2", 50), 400},
		{"another title's scid", base + "/" + SCID("42") + "/update", body(SCID("42"), title1, "2", 50), 403},
		{"upper-case scid", base + "/" + strings.ToUpper(SCID(title1)) + "/update", body(strings.ToUpper(SCID(title1)), title1, "2", 50), 403},
		{"another title", upd, body(SCID(title1), "42", "2", 50), 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := do(t, h, "POST", tt.url, tok, tt.body); r.status != tt.status {
				t.Errorf("update: %d %s, want %d", r.status, r.body, tt.status)
			}
		})
	}
	var one achievementList
	decodeJSON(t, do(t, h, "GET", base+"/"+SCID(title1)+"/2", tok, ""), &one)
	if len(one.Achievements) != 1 || one.Achievements[0].ProgressState != "InProgress" ||
		one.Achievements[0].Progression.Requirements[0].Current == nil || *one.Achievements[0].Progression.Requirements[0].Current != "40" {
		t.Errorf("after update: %+v", one)
	}
	if r := do(t, h, "GET", base+"/"+SCID(title1)+"/99", tok, ""); r.status != 404 {
		t.Errorf("unknown achievement: %d", r.status)
	}
}

func TestStatsAndLeaderboard(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	var single statsUser
	decodeJSON(t, do(t, h, "GET", "https://userstats.xboxlive.com/users/xuid(7)/scids/abc/stats/kills,deaths", tok, ""), &single)
	if len(single.Scids[0].Stats) != 2 || single.XUID != "7" {
		t.Errorf("stats = %+v", single)
	}
	var batch struct {
		Users []statsUser `json:"users"`
	}
	batchBody := `{"requestedusers":["7","8"],"requestedscids":[{"scid":"abc","requestedstats":["kills"]}]}`
	decodeJSON(t, do(t, h, "POST", "https://userstats.xboxlive.com/batch?operation=read", tok, batchBody), &batch)
	if len(batch.Users) != 2 || batch.Users[0].Scids[0].Stats[0].Value != single.Scids[0].Stats[0].Value {
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
	if r := do(t, h, "POST", "https://userstats.xboxlive.com/batch", tok, batchBody); r.status != 400 {
		t.Errorf("batch without operation=read: %d, want 400", r.status)
	}
	if lb.UserList[0].Percentile > 0.2 || lb.UserList[0].Values == nil {
		t.Errorf("row 201 of 250 (contract 1): percentile %v, values %v; want near 0.2 and a values list", lb.UserList[0].Percentile, lb.UserList[0].Values)
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
	if r := do(t, h, "PUT", url, tok, `{"properties":{"custom":{"map":"dust"}},"members":{"me":{"properties":{"system":{"active":true}}}}}`); r.status != 200 {
		t.Errorf("update: %d %s", r.status, r.body)
	}
	var doc session
	decodeJSON(t, do(t, h, "GET", url, tok, ""), &doc)
	if doc.ChangeNumber != 2 || doc.Properties["custom"]["map"] != "dust" || doc.Properties["system"]["joinRestriction"] != "followed" ||
		doc.MembersInfo.Count != 1 || doc.Members["0"].Constants["system"].(map[string]any)["xuid"] != xuid1 {
		t.Errorf("get: %+v", doc)
	}
	if r := do(t, h, "PUT", url, tok, `[1]`); r.status != 400 {
		t.Errorf("non-object session: %d, want 400", r.status)
	}
	var people struct {
		TotalCount int      `json:"totalCount"`
		People     []person `json:"people"`
	}
	decodeJSON(t, do(t, h, "GET", "https://social.xboxlive.com/users/me/people", tok, ""), &people)
	if people.TotalCount != peoplePerUser || len(people.People) != peoplePerUser {
		t.Errorf("people = %+v", people)
	}
	var perm struct {
		IsAllowed bool `json:"isAllowed"`
	}
	decodeJSON(t, do(t, h, "GET", "https://privacy.xboxlive.com/users/me/permission/validate?setting=CommunicateUsingText&target=xuid(5)", tok, ""), &perm)
	if !perm.IsAllowed {
		t.Error("permission refused, want allowed")
	}
	decodeJSON(t, do(t, h, "GET", "https://social.xboxlive.com/users/me/people?view=Favorite&maxItems=1&startIndex=1", tok, ""), &people)
	if people.TotalCount != 2 || len(people.People) != 1 || !people.People[0].IsFavorite {
		t.Errorf("favourites page 2 = %+v", people)
	}
	if r := do(t, h, "GET", "https://social.xboxlive.com/users/me/people?view=Nope", tok, ""); r.status != 400 {
		t.Errorf("unknown view: %d, want 400", r.status)
	}
	decodeJSON(t, do(t, h, "GET", "https://privacy.xboxlive.com/users/me/permission/validate?setting=CommunicateUsingText&target=xuid(0)", tok, ""), &perm)
	if perm.IsAllowed {
		t.Error("permission to xuid(0) allowed, want refused")
	}
	for _, target := range []string{"xuid(abc)", "xuid(5", "xuid()", "5", "xuid(123456789012345678901)"} {
		r := do(t, h, "GET", "https://privacy.xboxlive.com/users/me/permission/validate?setting=CommunicateUsingText&target="+target, tok, "")
		if r.status != 400 {
			t.Errorf("target %q: %d, want 400", target, r.status)
		}
	}
}

func TestHandlesAndTickets(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	ref := `"sessionRef":{"scid":"abc","templateName":"quick","name":"s1"}`
	var inv inviteHandle
	decodeJSON(t, do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", tok,
		`{"type":"invite",`+ref+`,"version":1,"invitedXuid":"5","inviteAttributes":{"titleId":"`+title1+`"}}`), &inv)
	if inv.ID == "" || inv.SenderXuid != xuid1 || inv.InvitedXuid != "5" || inv.SessionRef.Name != "s1" || inv.Expiration == "" {
		t.Errorf("invite: %+v", inv)
	}
	for _, tt := range []struct{ name, url, body string }{
		{"invite without a session", "https://sessiondirectory.xboxlive.com/handles", `{}`},
		{"invite without attributes", "https://sessiondirectory.xboxlive.com/handles", `{"type":"invite",` + ref + `,"version":1,"invitedXuid":"5"}`},
		{"ticket without giveUpDuration", "https://smartmatch.xboxlive.com/serviceconfigs/abc/hoppers/ranked", `{"preserveSession":"always"}`},
		{"rich presence as text", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", `{"state":"active","activity":{"richPresence":"In a match"}}`},
		{"unknown feedback type", "https://reputation.xboxlive.com/users/xuid(5)/feedback", `{"sessionRef":null,"feedbackType":"Rude","textReason":"","evidenceId":null}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := do(t, h, "POST", tt.url, tok, tt.body); r.status != 400 {
				t.Errorf("%d %s, want 400", r.status, r.body)
			}
		})
	}
	if r := do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles/query?include=relatedInfo", tok, `{"type":"search"}`); r.status != 400 {
		t.Errorf("a query naming no scid and template: %d %s, want 400", r.status, r.body)
	}
	var ticket struct {
		TicketID string `json:"ticketId"`
		WaitTime int    `json:"waitTime"`
	}
	decodeJSON(t, do(t, h, "POST", "https://smartmatch.xboxlive.com/serviceconfigs/abc/hoppers/ranked", tok,
		`{"giveUpDuration":30,"preserveSession":"never","ticketSessionRef":{"scid":"abc","templateName":"quick","name":"s1"}}`), &ticket)
	if ticket.TicketID == "" || ticket.WaitTime != 60 {
		t.Errorf("ticket: %+v", ticket)
	}
}

// TestProfileEverySetting: the batch call as xbox-webapi-python sends it
// (userIds as numbers, its 14 settings: xbox/webapi/api/provider/profile
// get_profiles) gets every setting back, in the order asked, as the service
// answers it (tests/data/responses/profile_batch.json answers all 14).
func TestProfileEverySetting(t *testing.T) {
	settings := []string{"GameDisplayName", "AppDisplayName", "AppDisplayPicRaw", "Gamerscore", "Gamertag", "GameDisplayPicRaw",
		"AccountTier", "TenureLevel", "XboxOneRep", "PreferredColor", "Location", "Bio", "Watermarks", "RealName"}
	body, _ := json.Marshal(map[string]any{"settings": settings, "userIds": []int64{2533274791234567, 2533274790000042}})
	req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings", strings.NewReader(string(body)))
	req.Header.Set("Authorization", Token(xuid1, title1))
	req.Header.Set("x-xbl-contract-version", "2")
	resp, err := NewHandler().RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p profileResponse
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || resp.StatusCode != 200 || len(p.ProfileUsers) != 2 {
		t.Fatalf("%d %v %+v", resp.StatusCode, err, p)
	}
	for _, u := range p.ProfileUsers {
		var got []string
		for _, s := range u.Settings {
			got = append(got, s.ID)
		}
		if diff := cmp.Diff(settings, got); diff != "" {
			t.Errorf("%s's settings (-asked +answered):\n%s", u.ID, diff)
		}
	}
	if gt := p.ProfileUsers[0].Settings[4].Value; gt != DefaultAccount.Gamertag {
		t.Errorf("Gamertag %q, want the account's %q", gt, DefaultAccount.Gamertag)
	}
}

// TestProfilePeople: GET /users/me/profile/settings/people/people (the
// profile REST reference's sample request, contract 2) answers the
// settings of everyone the caller follows, in the order of their people
// list, as a batch does; the list's name in any case (XSAPI asks for
// "People"); another list 404; another user's list 403.
func TestProfilePeople(t *testing.T) {
	h := Must(New(Config{World: loadWorld(t, "testdata/world.json")}))
	const ada = "2533274791234567"
	var people struct{ People []struct{ XUID string } }
	decodeJSON(t, as(t, h, ada, "GET", "https://social.xboxlive.com/users/me/people", "1", ""), &people)
	if len(people.People) == 0 {
		t.Fatal("the world gives Ada no people")
	}
	var got profileResponse
	r := as(t, h, ada, "GET", "https://profile.xboxlive.com/users/me/profile/settings/people/People?settings=Gamertag,Gamerscore", "2", "")
	decodeJSON(t, r, &got)
	if len(got.ProfileUsers) != len(people.People) {
		t.Fatalf("%d profiles for %d people: %s", len(got.ProfileUsers), len(people.People), r.body)
	}
	for i, p := range people.People {
		u := got.ProfileUsers[i]
		if u.ID != p.XUID || len(u.Settings) != 2 || u.Settings[0].Value != h.world.gamertagOf(p.XUID) {
			t.Errorf("profile %d = %+v, want %s's gamertag and gamerscore", i, u, p.XUID)
		}
	}
	if r := do(t, h, "GET", "https://profile.xboxlive.com/users/me/profile/settings/people/friends?settings=Gamertag", Token(ada, title1), ""); r.status != 404 {
		t.Errorf("another list: %d, want 404", r.status)
	}
}

// TestEmptyPathSegments: a path with empty segments, as clients that join
// a base URL ending in '/' to a path starting with one send it, is served
// as the path without them (the front door's answer is not recorded), and
// counted as that call; the record keeps the path as sent.
func TestEmptyPathSegments(t *testing.T) {
	h := NewHandler()
	r := do(t, h, "GET", "https://profile.xboxlive.com//users//me/profile/settings?settings=Gamertag", Token(xuid1, title1), "")
	if r.status != http.StatusOK || !strings.Contains(r.body, `"profileUsers"`) || r.header.Get("RateLimit") == "" {
		t.Fatalf("//users//me: %d %s (RateLimit %q), want the profile, counted", r.status, r.body, r.header.Get("RateLimit"))
	}
	calls := h.Calls(CallFilter{})
	if got := calls[len(calls)-1].URL; !strings.Contains(got, "//users//me/") {
		t.Errorf("the record's URL %q, want the path as sent", got)
	}
}
