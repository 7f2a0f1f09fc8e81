package mock

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWritesUnderAnotherTitlesSCIDRefused: a title writes sessions, handles
// and SmartMatch tickets only under its own service configuration: one of
// another title the mock knows (derived by SCID, or named by Config.SCIDs)
// is answered 403, as docs/MOCK.md says ("403 for another title's SCID").
// A SCID of no title the mock knows is taken, so that tests may name a real
// game's. Reads under another title's SCID are answered: the Python
// client's recordings read a game's statistics with the Xbox app's token
// (xbox-webapi-python tests/data/responses/userstats_*.json).
func TestWritesUnderAnotherTitlesSCIDRefused(t *testing.T) {
	const configured = "8d050174-412b-4d51-a29b-d55a34edfdb7" // title 3's, by Config.SCIDs
	const title3 = "333"
	const unknown = "1370999b-fca2-4c53-8ec5-73493bcb67e5" // no title's here
	h := Must(New(Config{SCIDs: map[string]string{title3: strings.ToUpper(configured)}}))
	own, other := Token(xuid1, title1), Token(xuid2, title2)
	sessionURL := func(scid, name string) string {
		return "https://sessiondirectory.xboxlive.com/serviceconfigs/" + scid + "/sessiontemplates/lobby/sessions/" + name
	}
	join := `{"members":{"me":{"constants":{"system":{"initialize":true}}}}}`
	ref := func(scid string) string {
		return `{"scid":"` + scid + `","templateName":"lobby","name":"s"}`
	}
	invite := func(scid, title string) string {
		return `{"type":"invite","version":1,"sessionRef":` + ref(scid) + `,"invitedXuid":"` + xuid1 + `","inviteAttributes":{"titleId":"` + title + `"}}`
	}
	ticket := func(scid string) string {
		return `{"giveUpDuration":30,"preserveSession":"never","ticketSessionRef":` + ref(scid) + `}`
	}
	if r := do(t, h, "PUT", sessionURL(SCID(title1), "s"), own, join); r.status != 201 {
		t.Fatalf("title 1 writing its own session: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		name, method, url, auth, body string
		want                          int
	}{
		{"a session under another title's derived SCID", "PUT", sessionURL(SCID(title1), "t"), other, join, 403},
		{"the same SCID in upper case", "PUT", sessionURL(strings.ToUpper(SCID(title1)), "t"), other, join, 403},
		{"a session under another title's configured SCID", "PUT", sessionURL(configured, "t"), own, join, 403},
		{"an invite to another title's session", "POST", "https://sessiondirectory.xboxlive.com/handles", other, invite(SCID(title1), title2), 403},
		{"a search handle for another title's session", "POST", "https://sessiondirectory.xboxlive.com/handles", other,
			`{"type":"search","version":1,"sessionRef":` + ref(SCID(title1)) + `}`, 403},
		{"a ticket at another title's hopper", "POST", "https://smartmatch.xboxlive.com/serviceconfigs/" + SCID(title1) + "/hoppers/ranked", other, ticket(SCID(title2)), 403},
		{"a ticket for another title's session", "POST", "https://smartmatch.xboxlive.com/serviceconfigs/" + SCID(title2) + "/hoppers/ranked", other, ticket(SCID(title1)), 403},
		{"a session under a SCID of no title the mock knows", "PUT", sessionURL(unknown, "t"), other, join, 201},
		{"title 3 under its configured SCID", "PUT", sessionURL(configured, "t"), Token(xuid1, title3), join, 201},
		{"title 3 under the SCID it would have had: nobody's", "PUT", sessionURL(SCID(title3), "t"), Token(xuid1, title3), join, 201},
		{"an invite to the caller's own session", "POST", "https://sessiondirectory.xboxlive.com/handles", own, invite(SCID(title1), title1), 201},
		{"a ticket at the caller's own hopper", "POST", "https://smartmatch.xboxlive.com/serviceconfigs/" + SCID(title2) + "/hoppers/ranked", other, ticket(SCID(title2)), 200},
		{"reading another title's session", "GET", sessionURL(SCID(title1), "s"), other, "", 200},
		{"reading another title's statistics", "GET", "https://userstats.xboxlive.com/users/xuid(" + xuid1 + ")/scids/" + SCID(title1) + "/stats/kills", other, "", 200},
		{"reading another title's leaderboard", "GET", "https://leaderboards.xboxlive.com/scids/" + SCID(title1) + "/leaderboards/stat(kills)", other, "", 200},
	} {
		if r := do(t, h, tc.method, tc.url, tc.auth, tc.body); r.status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.want)
		}
	}
	var doc session
	decodeJSON(t, do(t, h, "GET", sessionURL(SCID(title1), "t"), own, ""), &doc)
	if doc.ChangeNumber != 0 {
		t.Errorf("a refused write made the session: %+v", doc)
	}
}

// TestNonMemberWriteRefusedWithTheSession: a user who is not a member of a
// session and does not join it may read it but not write it: MPSD answers
// 403 with the session as stored ("The session can't be updated by the
// user, but it can be read", the multiplayer session status codes), and
// the session is unchanged. Joining and writing in one request is taken.
func TestNonMemberWriteRefusedWithTheSession(t *testing.T) {
	h := NewHandler()
	url := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + SCID(title1) + "/sessiontemplates/lobby/sessions/s"
	owner, stranger := Token(xuid1, title1), Token(xuid2, title1)
	if r := do(t, h, "PUT", url, owner, `{"members":{"me":{"constants":{"system":{"initialize":true}}}},"properties":{"custom":{"map":"dust"}}}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	for _, body := range []string{
		`{"properties":{"custom":{"map":"mine"}}}`,
		`{"properties":{"system":{"joinRestriction":"none"}}}`,
		`{"members":{"me":null},"properties":{"custom":{"map":"mine"}}}`,
		`{"constants":{"custom":{"x":1}}}`,
	} {
		r := do(t, h, "PUT", url, stranger, body)
		var got session
		if r.status != 403 || json.Unmarshal([]byte(r.body), &got) != nil || got.ChangeNumber != 1 || got.Properties["custom"]["map"] != "dust" {
			t.Errorf("a stranger's write %s: %d %s, want 403 with the session as stored", body, r.status, r.body)
		}
	}
	var doc session
	decodeJSON(t, do(t, h, "GET", url, stranger, ""), &doc)
	if doc.ChangeNumber != 1 || doc.Properties["custom"]["map"] != "dust" || doc.MembersInfo.Count != 1 {
		t.Errorf("after the strangers' writes: %+v", doc)
	}
	if r := do(t, h, "PUT", url, stranger, `{"members":{"me":{"properties":{"system":{"active":true}}}},"properties":{"custom":{"map":"mine"}}}`); r.status != 200 {
		t.Errorf("joining and writing: %d %s, want 200", r.status, r.body)
	}
	if r := do(t, h, "PUT", url, owner, `{"properties":{"custom":{"map":"again"}}}`); r.status != 200 {
		t.Errorf("a member's write: %d %s, want 200", r.status, r.body)
	}
}
