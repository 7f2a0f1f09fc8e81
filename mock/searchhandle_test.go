package mock

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/internal/wiretest"
)

// recordedSearchHandle is a search handle as MPSD answers a query
// (microsoft/xbox-live-api Tests/UnitTests/Tests/Services/TestResponses/
// Multiplayer.json searchHandlesResponseJson, its one result, without
// roleInfo: the mock's sessions have no roles).
const recordedSearchHandle = `{"type": "search", "sessionRef": {"scid": "MockScid", "templateName": "GlobalLFGSessionTemplateName", "name": "LFGSession_A"},
  "searchAttributes": {"tags": ["micsrequired", "girlsonly"], "strings": {"Class": "A"}, "numbers": {"Skill_D": 10.145, "Skill_I": 14}},
  "version": 1, "id": "7a4d0a99-4e23-4eba-9894-5173cf123fb4", "createTime": "2013-02-01T00:00:00Z",
  "customProperties": {"Joinability": "joinable_by_friends", "GameMode": "Team Assault", "Map": "Helmand Valley"},
  "relatedInfo": {"joinRestriction": "None", "closed": false, "maxMembersCount": 10, "membersCount": 1, "visibility": "open", "sessionOwners": ["1", "2"]}}`

const lfgScid = "1370999b-fca2-4c53-8ec5-73493bcb67e5"

// lfgSession writes a session as xuid and makes it findable with the
// attributes XSAPI's test sends (searchHandleJson), class and skill
// changed; it returns the handle's answer.
func lfgSession(t *testing.T, h *Handler, xuid, name, class, skill string) result {
	t.Helper()
	sess := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + lfgScid + "/sessiontemplates/GlobalLFGSessionTemplateName/sessions/" + name
	if r := do(t, h, "PUT", sess, Token(xuid, title1), `{"constants": {"system": {"maxMembersCount": 10, "visibility": "open"}},
		"properties": {"custom": {"Joinability": "joinable_by_friends", "GameMode": "Team Assault", "Map": "Helmand Valley"}}, "members": {"me": {"constants": {"system": {"xuid": "`+xuid+`", "initialize": true}}}}}`); r.status != 201 {
		t.Fatalf("session: %d %s", r.status, r.body)
	}
	return do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", Token(xuid, title1),
		`{"type": "search", "sessionRef": {"scid": "`+lfgScid+`", "templateName": "GlobalLFGSessionTemplateName", "name": "`+name+`"},
		"searchAttributes": {"tags": ["micsrequired", "girlsonly"], "strings": {"Class": "`+class+`"}, "numbers": {"Skill_D": 10.145, "Skill_I": `+skill+`}}, "version": 1}`)
}

// TestSearchHandles: a search handle made as XSAPI makes one is found by
// the queries XSAPI sends (by template, filter and order), in the
// recorded shape, until its creator deletes it.
func TestSearchHandles(t *testing.T) {
	// Queries are limited to 1 in 15 s: a legacy title runs them all.
	h := Must(New(Config{LegacyTitles: []string{title1}}))
	a := lfgSession(t, h, xuid1, "LFGSession_A", "A", "14")
	if d := wiretest.ShapeDiff([]byte(recordedSearchHandle), []byte(a.body)); a.status != 201 || d != "" {
		t.Fatalf("create: %d (-recorded +mock)\n%s\n%s", a.status, d, a.body)
	}
	if r := lfgSession(t, h, xuid2, "LFGSession_B", "B", "20"); r.status != 201 {
		t.Fatalf("create B: %d %s", r.status, r.body)
	}
	query := func(orderBy, filter string) string {
		t.Helper()
		r := do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles/query", Token(xuid1, title1),
			`{"type": "search", "scid": "`+lfgScid+`", "templateName": "GlobalLFGSessionTemplateName", "orderBy": "`+orderBy+`", "filter": "`+filter+`"}`)
		if r.status != 200 {
			return strconv.Itoa(r.status)
		}
		var out struct {
			Results []searchHandle `json:"results"`
		}
		decodeJSON(t, r, &out)
		var names []string
		for _, sh := range out.Results {
			names = append(names, strings.TrimPrefix(sh.SessionRef.Name, "LFGSession_"))
		}
		return strings.Join(names, ",")
	}
	got := map[string]string{}
	for _, q := range [][2]string{
		{"", ""},
		{"Numbers/Skill_I desc", ""},
		{"", "Strings/Class eq 'a'"},
		{"", "Numbers/Skill_I gt 15"},
		{"", "Numbers/Skill_I ge 14 AND Strings/Class ne 'B'"},
		{"", "(Strings/Class eq 'B' or Numbers/Skill_D lt 0) and Tags/tag eq 'micsrequired'"},
		{"", "Tags/tag eq 'nomics'"},
		{"Strings/Class desc", "MemberXuids/any(d:d eq '" + xuid2 + "') or OwnerXuids/any(d:d eq '" + xuid1 + "')"},
		{"", "Strings/Class eq"},
		{"Skill asc", ""},
	} {
		got[q[0]+" | "+q[1]] = query(q[0], q[1])
	}
	want := map[string]string{
		" | ":                      "A,B",
		"Numbers/Skill_I desc | ":  "B,A",
		" | Strings/Class eq 'a'":  "A",
		" | Numbers/Skill_I gt 15": "B",
		" | Numbers/Skill_I ge 14 AND Strings/Class ne 'B'":                                "A",
		" | (Strings/Class eq 'B' or Numbers/Skill_D lt 0) and Tags/tag eq 'micsrequired'": "B",
		" | Tags/tag eq 'nomics'": "",
		"Strings/Class desc | MemberXuids/any(d:d eq '" + xuid2 + "') or OwnerXuids/any(d:d eq '" + xuid1 + "')": "B,A",
		" | Strings/Class eq": "400",
		"Skill asc | ":        "400",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("queries (-want +got)\n%s", d)
	}
	var made searchHandle
	decodeJSON(t, a, &made)
	del := "https://sessiondirectory.xboxlive.com/handles/" + made.ID
	for _, step := range []struct {
		who    string
		status int
	}{{xuid2, 403}, {xuid1, 204}, {xuid1, 404}} {
		if r := do(t, h, "DELETE", del, Token(step.who, title1), ""); r.status != step.status {
			t.Errorf("delete as %s: %d %s, want %d", step.who, r.status, r.body, step.status)
		}
	}
	if q := query("", ""); q != "B" {
		t.Errorf("after the delete: %q, want B", q)
	}
	r := do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", Token(xuid1, title1),
		`{"type": "search", "sessionRef": {"scid": "`+lfgScid+`", "templateName": "GlobalLFGSessionTemplateName", "name": "none"}, "version": 1}`)
	if r.status != 404 {
		t.Errorf("a handle for no session: %d %s, want 404", r.status, r.body)
	}
}

// FuzzSearchFilter: any filter parses or is refused with a short error,
// and a parsed one runs on a handle without panicking.
func FuzzSearchFilter(f *testing.F) {
	for _, s := range []string{"Strings/Class eq 'A'", "Numbers/Skill gt 1e3 and (Tags/t ne 'x' or OwnerXuids/any(d:d eq '1'))",
		"((((Strings/a eq ''''))))", "MemberXuids/any(d:d eq '2')", "Numbers/x le -.5e-3"} {
		f.Add(s)
	}
	sh := &searchHandle{SearchAttributes: searchAttributes{Tags: []string{"x"}, Strings: map[string]string{"Class": "A"},
		Numbers: map[string]float64{"Skill": 3}}, RelatedInfo: handleRelatedInfo{SessionOwners: []string{"1"}}, members: []string{"1"}}
	f.Fuzz(func(t *testing.T, s string) {
		match, err := parseFilter(s)
		if err != nil {
			if len(err.Error()) > 200 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		match(sh)
	})
}
