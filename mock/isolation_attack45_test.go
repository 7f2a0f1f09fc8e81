package mock

import (
	"strings"
	"testing"
)

// held: docs/MOCK.md "A user who is not a member of a session and does
// not join it (`members.me`) may read it but not write it: 403", the
// presence service's "a user may set only their own presence", and
// DELETE /handles/{id} "403 for another user's" (searchhandle.go). User
// B's token, under every spelling of A's XUID in the path, changes
// neither A's presence, cloak, session entry nor search handle.
func TestAttack45OneUserCannotWriteAnothers(t *testing.T) {
	h := NewHandler()
	a, b := Token(xuid1, title1), Token(xuid2, title1)
	if r := do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", a, `{"state":"active"}`); r.status != 200 {
		t.Fatalf("A's presence: %d %s", r.status, r.body)
	}
	before := do(t, h, "GET", "https://userpresence.xboxlive.com/users/xuid("+xuid1+")", a, "").body
	for _, u := range []string{"xuid(" + xuid1 + ")", "XUID(" + xuid1 + ")", "xuid(" + xuid1 + ")%20", "xuid%28" + xuid1 + "%29"} {
		for _, w := range []struct{ method, path, body string }{
			{"POST", "/users/" + u + "/devices/current/titles/current", `{"state":"inactive"}`},
			{"DELETE", "/users/" + u + "/devices/current/titles/current", ""},
			{"PUT", "/users/" + u + "/state", `{"state":"Cloaked"}`},
		} {
			if r := do(t, h, w.method, "https://userpresence.xboxlive.com"+w.path, b, w.body); r.status < 400 {
				t.Errorf("B's %s %s: %d", w.method, w.path, r.status)
			}
		}
	}
	if after := do(t, h, "GET", "https://userpresence.xboxlive.com/users/xuid("+xuid1+")", a, "").body; after != before {
		t.Errorf("A's presence changed by B's writes:\n%s\n%s", before, after)
	}
	scid := SCID(title1)
	sess := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + scid + "/sessiontemplates/lobby/sessions/s1"
	if r := do(t, h, "PUT", sess, a, `{"constants":{"system":{"maxMembersCount":10,"visibility":"open"}},"members":{"me":{"properties":{"x":1}}}}`); r.status != 201 {
		t.Fatalf("session: %d %s", r.status, r.body)
	}
	for _, body := range []string{
		`{"members":{"0":null}}`,
		`{"members":{"0":{"properties":{"x":2}}}}`,
		`{"members":{"me":{},"0":null}}`,
		`{"members":{"me":{},"0":{"properties":{"x":3}}}}`,
	} {
		if r := do(t, h, "PUT", sess, b, body); r.status < 400 {
			t.Errorf("B's write %s to A's entry: %d %s", body, r.status, r.body)
		}
	}
	if r := do(t, h, "GET", sess, a, ""); !strings.Contains(r.body, `"x":1`) {
		t.Errorf("A's member entry changed: %s", r.body)
	}
	hb := `{"type":"search","version":1,"sessionRef":{"scid":"` + scid + `","templateName":"lobby","name":"s1"}}`
	r := do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", a, hb)
	if r.status != 201 {
		t.Fatalf("handle: %d %s", r.status, r.body)
	}
	i := strings.Index(r.body, `"id":"`)
	id := r.body[i+6 : i+6+strings.Index(r.body[i+6:], `"`)]
	for _, p := range []string{id, strings.ToUpper(id), id + "%20"} {
		if r := do(t, h, "DELETE", "https://sessiondirectory.xboxlive.com/handles/"+p, b, ""); r.status < 400 {
			t.Errorf("B deleting A's handle %s: %d", p, r.status)
		}
	}
}
