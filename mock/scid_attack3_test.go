package mock

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Third outside attack on the mock's services (after db85649): the rule
// "403 for a write under another title's SCID" and the non-member rule.

func attack3SessionURL(scid, name string) string {
	return "https://sessiondirectory.xboxlive.com/serviceconfigs/" + scid + "/sessiontemplates/lobby/sessions/" + name
}

const attack3Join = `{"members":{"me":{"constants":{"system":{"initialize":true}}}},"properties":{"custom":{"map":"mine"}}}`

func attack3Ref(scid string) string {
	return `{"scid":"` + scid + `","templateName":"lobby","name":"s"}`
}

func attack3Ticket(scid string) string {
	return `{"giveUpDuration":30,"preserveSession":"never","ticketSessionRef":` + attack3Ref(scid) + `}`
}

// attack3SessionUnchanged fails t unless the session at url is as its owner
// made it: change number 1 and custom.map "dust".
func attack3SessionUnchanged(t *testing.T, h *Handler, url, tok, when string) {
	t.Helper()
	var doc session
	r := do(t, h, "GET", url, tok, "")
	if r.status != 200 || json.Unmarshal([]byte(r.body), &doc) != nil {
		t.Fatalf("%s: reading the session: %d %s", when, r.status, r.body)
	}
	if doc.ChangeNumber != 1 || doc.Properties["custom"]["map"] != "dust" || doc.MembersInfo.Count != 1 {
		t.Errorf("%s: the session changed: %s", when, r.body)
	}
}

// TestAttack3DerivedSCIDOfWideTitleIDRefused: docs/MOCK.md lines 22-27 ("403
// for a write under another title's SCID ... A SCID is another title's ...
// when it is the one the mock derives (`mock.SCID`) for another title ID
// that `Config.SCIDs` gives no other"). A token's title ID may be any
// decimal up to 64 bytes (token.go maxIDBytes); for a title ID of 2^48 or
// more, mock.SCID writes 13 or more hex digits, which otherTitlesSCID
// (achievements.go) does not take for a derived SCID (it wants exactly 12),
// so another title writes that title's sessions, handles and tickets.
// (RELIABILITY.md line 438 says title IDs are checked by internal/xblid,
// 32 bits, "wherever one is taken (... the mock's routes ...)": refusing
// the wide title's token also satisfies this test, which then skips.)
func TestAttack3DerivedSCIDOfWideTitleIDRefused(t *testing.T) {
	const wide = "281474976710657" // 2^48+1: SCID ...-1000000000001
	h := NewHandler()
	scid := SCID(wide)
	owner := Token(xuid1, wide)
	if r := do(t, h, "PUT", attack3SessionURL(scid, "s"),
		owner, `{"members":{"me":{}},"properties":{"custom":{"map":"dust"}}}`); r.status != 201 {
		// The token of a title ID over 32 bits is refused (xblid.CheckTitle):
		// no session to reach, the promise holds.
		t.Skipf("title %s's token is refused: %d", wide, r.status)
	}
	other := Token(xuid2, title1)
	for _, tc := range []struct{ name, method, url, body string }{
		{"a session", "PUT", attack3SessionURL(scid, "s"), attack3Join},
		{"a new session", "PUT", attack3SessionURL(scid, "t"), attack3Join},
		{"a search handle", "POST", "https://sessiondirectory.xboxlive.com/handles", `{"type":"search","version":1,"sessionRef":` + attack3Ref(scid) + `}`},
		{"a ticket at its hopper", "POST", "https://smartmatch.xboxlive.com/serviceconfigs/" + scid + "/hoppers/ranked", attack3Ticket(SCID(title1))},
	} {
		if r := do(t, h, tc.method, tc.url, other, tc.body); r.status != 403 {
			t.Errorf("title %s writing %s under title %s's derived SCID %s: %d, want 403 (or the wide title's token refused)", title1, tc.name, wide, scid, r.status)
		}
	}
	attack3SessionUnchanged(t, h, attack3SessionURL(scid, "s"), owner, "after title 1's writes")
}

// TestAttack3LeadingZeroTitleWritesAnotherTitlesSCID: docs/MOCK.md lines
// 22-27, as above. The mock tells titles apart by the token's title ID as
// written: achievement updates refuse a token of title "01111111111" for
// title 1111111111 ("titleId is not the caller's title", achievements.go
// check), and limits' keys are the string. But mock.SCID parses the title
// as a number, so the token of title "01111111111" owns title
// 1111111111's derived SCID and writes its sessions (arguable: the same
// number written twice). RELIABILITY.md line 438: "a XUID or title ID is
// written with no leading zero, by the one check of identifiers
// (internal/xblid), wherever one is taken (files, flags, the mock's
// routes, ...)": the token of title "01111111111" should be refused (401)
// or its write refused (403); it is taken and writes.
func TestAttack3LeadingZeroTitleWritesAnotherTitlesSCID(t *testing.T) {
	h := NewHandler()
	url := attack3SessionURL(SCID(title2), "s")
	owner := Token(xuid1, title2)
	if r := do(t, h, "PUT", url, owner, `{"members":{"me":{}},"properties":{"custom":{"map":"dust"}}}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	padded := Token(xuid2, "0"+title2)
	// The mock's own rule elsewhere: that token is not title 1111111111's.
	upd := `{"action":"progressUpdate","serviceConfigId":"` + SCID(title2) + `","titleId":` + title2 + `,"userId":"` + xuid2 + `","achievements":[{"id":"1","percentComplete":100}]}`
	if r := do(t, h, "POST", "https://achievements.xboxlive.com/users/xuid("+xuid2+")/achievements/"+SCID(title2)+"/update", padded, upd); r.status != 403 && r.status != 401 {
		t.Fatalf("achievements took title %q as title %s: %d %s", "0"+title2, title2, r.status, r.body)
	}
	if r := do(t, h, "PUT", url, padded, attack3Join); r.status != 403 && r.status != 401 {
		t.Errorf("title %q writing title %s's session: %d, want 403 (or the token refused, 401)", "0"+title2, title2, r.status)
	}
	attack3SessionUnchanged(t, h, url, owner, "after the padded title's write")
}

// held: docs/MOCK.md lines 22-27. Other spellings of title 1's SCID
// (upper case, braces, whitespace, percent-encoding, 13 digits, leading
// zero) written by title 2 are refused or reach a session of their own:
// title 1's stored session never changes, and handles and tickets naming
// it in upper case are refused.
func TestAttack3SCIDSpellingsNeverReachAnotherTitlesSession(t *testing.T) {
	h := NewHandler()
	scid := SCID(title1)
	owner, other := Token(xuid1, title1), Token(xuid2, title2)
	if r := do(t, h, "PUT", attack3SessionURL(scid, "s"), owner, `{"members":{"me":{}},"properties":{"custom":{"map":"dust"}}}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	enc := strings.Replace(scid, "0", "%30", -1)
	for _, sp := range []string{
		strings.ToUpper(scid),
		"{" + scid + "}", "%7B" + scid + "%7D",
		"%20" + scid, scid + "%20", scid + "%09",
		enc,
		"00000000-0000-0000-0000-0" + scid[24:], // 13 digits
		"000000000-0000-0000-0000-" + scid[24:],
		strings.Replace(scid, "-", "", -1),
		scid + ".", scid + "%00",
	} {
		r := do(t, h, "PUT", attack3SessionURL(sp, "s"), other, attack3Join)
		if r.status >= 500 {
			t.Errorf("spelling %q: %d %s", sp, r.status, r.body)
		}
		r = do(t, h, "PUT", attack3SessionURL(sp, "S"), other, `{"properties":{"custom":{"map":"mine"}}}`)
		if r.status >= 500 {
			t.Errorf("spelling %q: %d %s", sp, r.status, r.body)
		}
	}
	attack3SessionUnchanged(t, h, attack3SessionURL(scid, "s"), owner, "after title 2's spellings")
	for _, tc := range []struct{ name, url, body string }{
		{"a search handle, SCID upper case", "https://sessiondirectory.xboxlive.com/handles",
			`{"type":"search","version":1,"sessionRef":` + attack3Ref(strings.ToUpper(scid)) + `}`},
		{"an invite, SCID upper case", "https://sessiondirectory.xboxlive.com/handles",
			`{"type":"invite","version":1,"sessionRef":` + attack3Ref(strings.ToUpper(scid)) + `,"invitedXuid":"` + xuid1 + `","inviteAttributes":{"titleId":"` + title2 + `"}}`},
		{"a ticket for its session, upper case", "https://smartmatch.xboxlive.com/serviceconfigs/" + SCID(title2) + "/hoppers/ranked", attack3Ticket(strings.ToUpper(scid))},
		{"a ticket at its hopper, percent-encoded", "https://smartmatch.xboxlive.com/serviceconfigs/" + enc + "/hoppers/ranked", attack3Ticket(SCID(title2))},
	} {
		if r := do(t, h, "POST", tc.url, other, tc.body); r.status != 403 {
			t.Errorf("%s: %d %s, want 403", tc.name, r.status, r.body)
		}
	}
}

// held: docs/MOCK.md lines 22-27. Config.SCIDs given in upper case, and two
// titles configured with one SCID: each configured title writes it, a
// third title is refused in any case.
func TestAttack3ConfiguredSCIDSharedAndUpperCase(t *testing.T) {
	const shared = "8D050174-412B-4D51-A29B-D55A34EDFDB7"
	h := Must(New(Config{SCIDs: map[string]string{"333": shared, "444": shared}}))
	url := attack3SessionURL(strings.ToLower(shared), "s")
	if r := do(t, h, "PUT", url, Token(xuid1, "333"), `{"members":{"me":{}},"properties":{"custom":{"map":"dust"}}}`); r.status != 201 {
		t.Fatalf("title 333: %d %s", r.status, r.body)
	}
	for i := 0; i < 20; i++ { // map order
		if r := do(t, h, "PUT", attack3SessionURL(shared, "x"), Token(xuid2, "444"), attack3Join); r.status != 201 && r.status != 200 {
			t.Fatalf("title 444 under its own configured SCID: %d %s", r.status, r.body)
		}
		if r := do(t, h, "PUT", url, Token(xuid2, title1), attack3Join); r.status != 403 {
			t.Fatalf("title 1 under titles 333/444's SCID: %d %s", r.status, r.body)
		}
	}
	attack3SessionUnchanged(t, h, url, Token(xuid1, "333"), "after title 1's writes")
}

// held: docs/MOCK.md lines 33-35 ("A user who is not a member of a session
// and does not join it (`members.me`) may read it but not write it: 403
// with the session as stored"). Ways around it: "Me", "me": null,
// "me": false, a member's index with or without me, a member who left
// writing again; none changes the session.
func TestAttack3NonMemberSpellingsRefused(t *testing.T) {
	h := NewHandler()
	url := attack3SessionURL(SCID(title1), "s")
	owner, stranger := Token(xuid1, title1), Token(xuid2, title1)
	if r := do(t, h, "PUT", url, owner, `{"members":{"me":{}},"properties":{"custom":{"map":"dust"}}}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	for _, body := range []string{
		`{"members":{"Me":{}},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"ME":{"properties":{}}},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"me":null},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"me":false},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"me":[]},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"me":"x"},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"0":{"properties":{"x":1}}},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"0":null,"me":{}},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"me":{},"1":null,"0":{}},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"me":{},"me":null},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{},"properties":{"custom":{"map":"mine"}}}`,
		`{"members":{"me":{}},"properties":{"custom":{"map":"mine"},"other":{}}}`,
	} {
		if r := do(t, h, "PUT", url, stranger, body); r.status != 403 && r.status != 400 {
			t.Errorf("a stranger's write %s: %d %s, want 403 or 400", body, r.status, r.body)
		}
		attack3SessionUnchanged(t, h, url, owner, "after "+body)
	}
	// A member who leaves is a stranger again.
	h2 := NewHandler()
	if r := do(t, h2, "PUT", url, owner, `{"members":{"me":{}},"properties":{"custom":{"map":"dust"}}}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if r := do(t, h2, "PUT", url, stranger, `{"members":{"me":{}}}`); r.status != 200 {
		t.Fatalf("join: %d %s", r.status, r.body)
	}
	if r := do(t, h2, "PUT", url, stranger, `{"members":{"me":null}}`); r.status != 200 {
		t.Fatalf("leave: %d %s", r.status, r.body)
	}
	var doc session
	r := do(t, h2, "PUT", url, stranger, `{"properties":{"custom":{"map":"mine"}}}`)
	if r.status != 403 || json.Unmarshal([]byte(r.body), &doc) != nil || doc.Properties["custom"]["map"] != "dust" {
		t.Errorf("a member who left, writing again: %d %s, want 403 with the session", r.status, r.body)
	}
}

// TestAttack3SearchHandleIDsOfTwoUsersDistinct: mock/searchhandle.go's doc
// ("DELETE /handles/{id} removes a handle its creator made: 204 ... 403 for
// another user's"), repeated in docs/MOCK.md's MPSD rows. A handle's id is
// statValue(session name, xuid) — a number below 10000 — and the clock's
// nanoseconds; under a fixed clock (Config.Now, or a synctest bubble, where
// time stands still) a second user who names a session whose value
// matches the first's gets the same id, and the handle store's put
// replaces the first user's handle with theirs: the first user's handle
// is gone from queries and its creator's DELETE is refused 403.
func TestAttack3SearchHandleIDsOfTwoUsersDistinct(t *testing.T) {
	at := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return at }}))
	a, b := Token(xuid1, title1), Token(xuid2, title1)
	want := statValue("s", xuid1)
	name := ""
	for i := 0; i < 1_000_000 && name == ""; i++ {
		if n := "n" + strconv.Itoa(i); statValue(n, xuid2) == want {
			name = n
		}
	}
	if name == "" {
		t.Fatal("no name found")
	}
	handle := func(tok, n string) string {
		if r := do(t, h, "PUT", attack3SessionURL(SCID(title1), n), tok, `{"members":{"me":{}}}`); r.status != 201 {
			t.Fatalf("session %s: %d %s", n, r.status, r.body)
		}
		r := do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", tok,
			`{"type":"search","version":1,"sessionRef":{"scid":"`+SCID(title1)+`","templateName":"lobby","name":"`+n+`"},"searchAttributes":{"tags":["x"]}}`)
		var sh struct{ ID string }
		if r.status != 201 || json.Unmarshal([]byte(r.body), &sh) != nil {
			t.Fatalf("handle for %s: %d %s", n, r.status, r.body)
		}
		return sh.ID
	}
	idA := handle(a, "s")
	idB := handle(b, name)
	if idA == idB {
		t.Errorf("two users' handles got one id %s", idA)
	}
	var res struct{ Results []json.RawMessage }
	decodeJSON(t, do(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles/query", a,
		`{"type":"search","scid":"`+SCID(title1)+`","templateName":"lobby"}`), &res)
	if len(res.Results) != 2 {
		t.Errorf("query: %d handles, want 2 (the first user's was replaced)", len(res.Results))
	}
	if r := do(t, h, "DELETE", "https://sessiondirectory.xboxlive.com/handles/"+idA, a, ""); r.status != 204 {
		t.Errorf("the creator deleting its handle: %d %s, want 204", r.status, r.body)
	}
}
