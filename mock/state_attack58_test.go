package mock_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// Outside attacks (attack58) on the third fixes to the mock's state:
// achievement ids, sessions past the bound, search handles, the people
// hub batch and the people read's bound.

// held: RELIABILITY.md third attacks, "an id is its achievement's own
// spelling or the update is refused (400)". Other spellings of 1 (a
// leading zero or sign, a decimal, an exponent, hex, blanks, a full-width
// or Arabic-Indic digit) are 400 and leave the gamerscore alone; "1"
// written with a JSON escape is the spelling "1" and taken; the same id
// twice in one update earns it once (304 once earned).
func TestAttack58AchievementIDSpellings(t *testing.T) {
	h := mock.NewHandler()
	tok := mock.Token(attack56A, attack56Title)
	before := attack56Gamerscore(t, h, attack56A)
	for _, id := range []string{"01", "+1", "1.0", "1e0", "0x1", " 1", "1 ", "\uff11", "\u0661", "1\u0000", "-0", "6", "0"} {
		if r := attack56S(t, h, "POST", attack56UpdateURL(attack56A, attack56Title), tok, attack56Update(attack56A, attack56Title, map[string]int{id: 100})); r.status != 400 {
			t.Errorf("update naming achievement %q: %d %.120s, want 400", id, r.status, r.body)
		}
	}
	if g := attack56Gamerscore(t, h, attack56A); g != before {
		t.Errorf("gamerscore %d after refused updates, was %d", g, before)
	}
	body := strings.Replace(attack56Update(attack56A, attack56Title, map[string]int{"1": 100}), `"id":"1"`, `"id":"\u0031"`, 1)
	if !strings.Contains(body, `\u0031`) {
		t.Fatalf("body %s", body)
	}
	if r := attack56S(t, h, "POST", attack56UpdateURL(attack56A, attack56Title), tok, body); r.status >= 300 {
		t.Errorf("\\u0031: %d %s", r.status, r.body)
	}
	twice := strings.Replace(body, `{"id":"\u0031","percentComplete":100}`, `{"id":"1","percentComplete":100},{"id":"1","percentComplete":100}`, 1)
	if r := attack56S(t, h, "POST", attack56UpdateURL(attack56A, attack56Title), tok, twice); r.status >= 300 && r.status != 304 {
		t.Errorf("twice: %d %s", r.status, r.body)
	}
	if g := attack56Gamerscore(t, h, attack56A); g != before+10 {
		t.Errorf("gamerscore %d after achievement 1 earned (three spellings of it, once twice), want %d", g, before+10)
	}
}

const attack58Sessions = "https://sessiondirectory.xboxlive.com/serviceconfigs/"

// held: mpsd.go writeSession "refused, not answered as stored"; the
// session's update (not creation) past what the mock keeps is 400 and
// leaves the stored session as it was; a second session pushing the
// first out is taken and the first dropped (mock.Config.MaxStateBytes:
// "older records of the same kind are dropped"), never both answered as
// kept with one missing.
func TestAttack58SessionUpdatePastBound(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{MaxStateBytes: 256 << 10}))
	base := attack58Sessions + mock.SCID(attack56Title) + "/sessiontemplates/lobby/sessions/"
	tok := mock.Token(attack56A, attack56Title)
	name := strings.Repeat("n", 4000)
	if r := attack56S(t, h, "PUT", base+name, tok, `{"members":{"me":{}}}`); r.status != 201 {
		t.Fatalf("small session: %d %s", r.status, r.body)
	}
	stored := attack56S(t, h, "GET", base+name, tok, "")
	big := `{"properties":{"custom":{"p":"` + strings.Repeat("x", 61500) + `"}}}`
	r := attack56S(t, h, "PUT", base+name, tok, big)
	after := attack56S(t, h, "GET", base+name, tok, "")
	switch {
	case r.status == 200 && after.status == 200 && strings.Contains(after.body, strings.Repeat("x", 61500)):
		// kept: fine
	case r.status == 400 && after.status == 200 && after.body == stored.body:
		// refused, unchanged: fine
	default:
		t.Errorf("update past the bound: %d; then read %d (%d bytes; before %d bytes)", r.status, after.status, len(after.body), len(stored.body))
	}
	// A second session pushes the first out.
	if r := attack56S(t, h, "PUT", base+"first", tok, `{"properties":{"custom":{"p":"`+strings.Repeat("a", 40000)+`"}},"members":{"me":{}}}`); r.status != 201 {
		t.Fatalf("first: %d %.200s", r.status, r.body)
	}
	if r := attack56S(t, h, "PUT", base+"second", tok, `{"properties":{"custom":{"p":"`+strings.Repeat("b", 40000)+`"}},"members":{"me":{}}}`); r.status != 201 {
		t.Fatalf("second: %d %.200s", r.status, r.body)
	}
	if g := attack56S(t, h, "GET", base+"second", tok, ""); g.status != 200 {
		t.Errorf("the second session, answered 201, then read: %d", g.status)
	}
	t.Logf("the first session after the second: %d", attack56S(t, h, "GET", base+"first", tok, "").status)
}

// held: RELIABILITY.md third attacks, search handles' custom properties
// "held as their JSON": the handle's customProperties are the session's
// custom properties as the session answers them (the same JSON, numbers
// and escapes included), in the create answer and in a query's; and a
// session changed after the handle was made is logged (no document says
// whether a handle follows its session).
func TestAttack58SearchHandleCustomPropertiesAsSession(t *testing.T) {
	h := mock.NewHandler()
	scid := mock.SCID(attack56Title)
	sess := attack58Sessions + scid + "/sessiontemplates/lobby/sessions/s1"
	tok := mock.Token(attack56A, attack56Title)
	custom := `{"big":12345678901234567891,"f":0.1,"s":"<\u0026>","n":null,"o":{"z":1,"a":[1,2]}}`
	if r := attack56S(t, h, "PUT", sess, tok, `{"constants":{"system":{"maxMembersCount":4,"visibility":"open"}},"properties":{"custom":`+custom+`},"members":{"me":{}}}`); r.status != 201 {
		t.Fatalf("session: %d %s", r.status, r.body)
	}
	var s struct {
		Properties struct {
			Custom json.RawMessage `json:"custom"`
		} `json:"properties"`
	}
	json.Unmarshal([]byte(attack56S(t, h, "GET", sess, tok, "").body), &s)
	hb := `{"type":"search","version":1,"sessionRef":{"scid":"` + scid + `","templateName":"lobby","name":"s1"},"searchAttributes":{"tags":["t"]}}`
	r := attack56S(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", tok, hb)
	if r.status != 201 {
		t.Fatalf("handle: %d %s", r.status, r.body)
	}
	var hd struct {
		CustomProperties json.RawMessage `json:"customProperties"`
	}
	json.Unmarshal([]byte(r.body), &hd)
	var a, b bytes.Buffer
	json.Compact(&a, s.Properties.Custom)
	json.Compact(&b, hd.CustomProperties)
	if a.String() != b.String() {
		t.Errorf("the handle's customProperties %s, the session's %s", b.String(), a.String())
	}
	t.Logf("custom written %s, session answers %s", custom, a.String())
	q := `{"type":"search","scid":"` + scid + `","templateName":"lobby"}`
	if r := attack56S(t, h, "PUT", sess, tok, `{"properties":{"custom":{"big":2}}}`); r.status != 200 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	qr := attack56S(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles/query", tok, q)
	t.Logf("after the session changed, the query answers %d %.400s", qr.status, qr.body)
}

// held: RELIABILITY.md third attacks, the people hub batch naming a
// non-XUID is 400 "as the profile, presence and stats batches answer":
// more spellings (signs, blanks, full-width digits, an overflow, a NUL,
// leading zeros, xuid(), an exponent) each 400; two real XUIDs 200. ("0"
// is answered, as xblid.CheckXUID and the profile batch take it.)
func TestAttack58PeopleHubBatchSpellings(t *testing.T) {
	h := mock.NewHandler()
	u := "https://peoplehub.xboxlive.com/users/me/people/batch/decoration/detail"
	for i, bad := range []string{"+" + attack56B, attack56B + " ", "\t" + attack56B, "\uff12533274799999999", "18446744073709551616", attack56B + "\u0000", "00" + attack56B, "xuid(" + attack56B + ")", "2.533274799999999e15"} {
		body, _ := json.Marshal(map[string][]string{"xuids": {attack56A, bad}})
		tok := mock.Token(strconv.Itoa(2533274780000000+i), attack56Title) // one user each: 10 / 15 s
		if r := attack56S(t, h, "POST", u, tok, string(body)); r.status != 400 {
			t.Errorf("people hub batch naming %q: %d %.160s, want 400", bad, r.status, r.body)
		}
	}
	tok := mock.Token(attack56A, attack56Title)
	if r := attack56S(t, h, "POST", u, tok, `{"xuids":["`+attack56A+`","`+attack56B+`"]}`); r.status != 200 {
		t.Errorf("two XUIDs: %d %.200s", r.status, r.body)
	}
	if r := attack56S(t, h, "POST", u, tok, `{"xuids":[`+attack56B+`]}`); r.status != 400 {
		t.Errorf("a XUID as a JSON number: %d, want 400", r.status)
	}
}

// held: RELIABILITY.md third attacks, "people times settings over 10,000
// values is 400": at 1,000 friends, 10 settings (10,000) are served and
// 11 refused; the same name repeated counts each time; empty names and
// blanks count for nothing; no settings (the three defaults) is served.
func TestAttack58ProfilePeopleBoundEdges(t *testing.T) {
	const n = 1000
	w := mock.World{Accounts: make([]mock.WorldAccount, n+1)}
	friends := make([]string, n)
	for i := range n {
		friends[i] = strconv.Itoa(2533274790000001 + i)
		w.Accounts[i+1] = mock.WorldAccount{XUID: friends[i]}
	}
	w.Accounts[0] = mock.WorldAccount{XUID: "2533274790000000", Gamertag: "Popular", Friends: friends}
	h := mock.Must(mock.New(mock.Config{World: w}))
	tok := mock.Token("2533274790000000", attack56Title)
	read := func(settings string) attack56Answer {
		return attack56S(t, h, "GET", "https://profile.xboxlive.com/users/me/profile/settings/people/people?settings="+settings, tok, "")
	}
	rep := func(s string, k int) string { return strings.TrimSuffix(strings.Repeat(s+",", k), ",") }
	for _, c := range []struct {
		settings string
		want     int
	}{
		{rep("Gamertag", 10), 200},
		{rep("Gamertag", 11), 400},
		{rep("GameDisplayPicRaw", 10) + ",,, ,", 200},
		{"", 200},
	} {
		r := read(c.settings)
		if r.status != c.want {
			t.Errorf("settings %.60q: %d %.120s, want %d", c.settings, r.status, r.body, c.want)
		}
		if len(r.body) > 1_200_000 { // 10,000 GameDisplayPicRaw values: 1,131,018 bytes, "about 1 MB"
			t.Errorf("settings %.60q: a %d-byte answer", c.settings, len(r.body))
		}
	}
}
