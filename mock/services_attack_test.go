package mock

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serveNoPanic runs one request through h.ServeHTTP and turns a panic of
// the handler into a test failure, so that one broken case does not end
// the whole test binary.
func serveNoPanic(t *testing.T, h *Handler, method, url, auth, body string) (status int, out string, panicked any) {
	t.Helper()
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	var req *http.Request
	if rd != nil {
		req = httptest.NewRequest(method, url, rd)
	} else {
		req = httptest.NewRequest(method, url, nil)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	func() {
		defer func() { panicked = recover() }()
		h.ServeHTTP(rec, req)
	}()
	return rec.Code, rec.Body.String(), panicked
}

// TestAttackLeaderboardShortXUIDNoPanic: a seeded world may hold any XUID
// xblid.CheckXUID takes, "5" included (the world file's check is
// CheckXUID; TestSessionsSocialPrivacy itself sends invitedXuid "5"). A
// leaderboard that ranks such an account must answer, not panic: "bad
// input never panics", and the world was accepted whole by LoadWorld's
// own check.
func TestAttackLeaderboardShortXUIDNoPanic(t *testing.T) {
	w, err := ReadWorld(strings.NewReader(`{"accounts": [
		{"xuid": "5", "gamertag": "Short", "titles": [{"titleId": "1234567890", "stats": {"kills": 9}}]},
		{"xuid": "2533274791234567", "gamertag": "Ada", "titles": [{"titleId": "1234567890", "stats": {"kills": 42}}]}
	]}`))
	if err != nil {
		t.Fatalf("the world is refused: %v", err)
	}
	h := Must(New(Config{World: w}))
	url := "https://leaderboards.xboxlive.com/scids/" + SCID(title1) + "/leaderboards/kills"
	status, body, p := serveNoPanic(t, h, "GET", url, Token(xuid1, title1), "")
	if p != nil {
		t.Fatalf("GET %s with an account of XUID \"5\" ranked: the handler panicked: %v", url, p)
	}
	if status != 200 || !strings.Contains(body, `"xuid":"5"`) {
		t.Errorf("GET %s: %d %s, want 200 ranking XUID 5", url, status, body)
	}
}

// TestAttackMPSDMemberEntryIsTheMembersOwn: a session member entry belongs
// to its member. In MPSD a caller writes its own entry as members/me; the
// mock's doc comment: "members are added, changed or (null) removed, "me"
// standing for the caller". A stranger (not a member) or another member
// must not rewrite or remove user 1's member entry by its index: one user
// never changes another's data.
func TestAttackMPSDMemberEntryIsTheMembersOwn(t *testing.T) {
	h := NewHandler()
	u1, u2, u3 := Token(xuid1, title1), Token(xuid2, title1), Token("2533274790000777", title1)
	url := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + SCID(title1) + "/sessiontemplates/quick/sessions/atk"
	if r := do(t, h, "PUT", url, u1, `{"members":{"me":{"properties":{"system":{"active":true},"custom":{"loadout":"mine"}}}}}`); r.status != 201 {
		t.Fatalf("user 1 creates and joins: %d %s", r.status, r.body)
	}
	if r := do(t, h, "PUT", url, u2, `{"members":{"me":{"properties":{"system":{"active":true}}}}}`); r.status != 200 {
		t.Fatalf("user 2 joins: %d %s", r.status, r.body)
	}
	// user 2, a member, rewrites user 1's entry (index 0).
	r := do(t, h, "PUT", url, u2, `{"members":{"0":{"properties":{"custom":{"loadout":"HIJACKED"}},"roles":{"team":"red"}}}}`)
	var doc session
	decodeJSON(t, do(t, h, "GET", url, u1, ""), &doc)
	if got := fmt.Sprint(doc.Members["0"].Properties["custom"]); strings.Contains(got, "HIJACKED") || doc.Members["0"].Roles != nil {
		t.Errorf("user 2 rewrote user 1's member entry (PUT answered %d): member 0 now %+v", r.status, doc.Members["0"])
	}
	// user 3, no member at all, removes user 1.
	r = do(t, h, "PUT", url, u3, `{"members":{"0":null}}`)
	var after session // a fresh value: Unmarshal into doc would keep its members
	decodeJSON(t, do(t, h, "GET", url, u1, ""), &after)
	if _, ok := after.Members["0"]; !ok {
		t.Errorf("user 3, not a member, removed user 1 from the session (PUT answered %d %s)", r.status, r.body)
	}
}
