package mock_test

import (
	"encoding/json"
	"fmt"
	"github.com/xblgo/fgrl/internal/racebuild"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// Outside attacks (attack56) on the mock as a test harness: one user
// against another's data, FGRL as SPEC.md and docs/MOCK.md state it, and
// the bounds of bodies and state. Every request goes through
// Handler.RoundTrip, in process, with no socket.

const (
	attack56A     = "2533274791234567"
	attack56B     = "2533274799999999"
	attack56Title = "1234567890"
)

type attack56Answer struct {
	status int
	header http.Header
	body   string
}

func attack56Do(t *testing.T, h *mock.Handler, method, url, auth string, body io.Reader, hdr ...string) attack56Answer {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return attack56Answer{resp.StatusCode, resp.Header, string(b)}
}

func attack56S(t *testing.T, h *mock.Handler, method, url, auth, body string, hdr ...string) attack56Answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	return attack56Do(t, h, method, url, auth, rd, hdr...)
}

type attack56Clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *attack56Clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *attack56Clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func attack56Update(xuid, title string, ids map[string]int) string {
	var parts []string
	for id, pct := range ids {
		parts = append(parts, fmt.Sprintf(`{"id":%q,"percentComplete":%d}`, id, pct))
	}
	n, _ := strconv.ParseUint(title, 10, 32)
	return fmt.Sprintf(`{"action":"progressUpdate","serviceConfigId":%q,"titleId":%d,"userId":%q,"achievements":[%s]}`,
		mock.SCID(title), n, xuid, strings.Join(parts, ","))
}

func attack56UpdateURL(xuid, title string) string {
	return "https://achievements.xboxlive.com/users/xuid(" + xuid + ")/achievements/" + mock.SCID(title) + "/update"
}

func attack56Gamerscore(t *testing.T, h *mock.Handler, xuid string) int {
	t.Helper()
	r := attack56S(t, h, "GET", "https://profile.xboxlive.com/users/xuid("+xuid+")/profile/settings?settings=Gamerscore", mock.Token(xuid, attack56Title), "")
	var p struct {
		ProfileUsers []struct {
			Settings []struct{ ID, Value string }
		}
	}
	if err := json.Unmarshal([]byte(r.body), &p); err != nil || len(p.ProfileUsers) != 1 || len(p.ProfileUsers[0].Settings) != 1 {
		t.Fatalf("profile: %d %s", r.status, r.body)
	}
	n, _ := strconv.Atoi(p.ProfileUsers[0].Settings[0].Value)
	return n
}

// BREAK. docs/MOCK.md, "One world": "the title history (title hub,
// achievements) lists the titles with progress or stats; the gamerscore
// adds up the unlocks"; achievements.go: a title has 5 achievements
// ("1".."5", 10 gamerscore each), and an update of "unknown achievement"
// is 400. An update naming achievement 1 under other spellings that
// strconv.Atoi reads as 1 ("01", "001", "+1", "+01", ...) is taken, each
// spelling kept as an achievement of its own: the title history then
// says more achievements earned than the title has, a current
// gamerscore over its max, and the profile's Gamerscore grows by 10 for
// each spelling.
func TestAttack56AchievementIDSpellingsInflateGamerscore(t *testing.T) {
	h := mock.NewHandler()
	const title = "777"
	tok := mock.Token(attack56A, title)
	before := attack56Gamerscore(t, h, attack56A)
	ids := map[string]int{"1": 100}
	for _, s := range []string{"01", "001", "0001", "+1", "+01", "+001", "00001", "000001", "0000001", "00000001"} {
		ids[s] = 100
	}
	r := attack56S(t, h, "POST", attack56UpdateURL(attack56A, title), tok, attack56Update(attack56A, title, ids))
	t.Logf("update naming achievement 1 under %d spellings: %d %s", len(ids), r.status, r.body)
	refused := r.status == http.StatusBadRequest // the fix: an update naming an id in another spelling is refused whole
	r = attack56S(t, h, "GET", "https://achievements.xboxlive.com/users/xuid("+attack56A+")/history/titles", tok, "")
	var hist struct {
		Titles []struct {
			TitleID            uint32 `json:"titleId"`
			EarnedAchievements int    `json:"earnedAchievements"`
			CurrentGamerscore  int    `json:"currentGamerscore"`
			MaxGamerscore      int    `json:"maxGamerscore"`
		} `json:"titles"`
	}
	if err := json.Unmarshal([]byte(r.body), &hist); err != nil {
		t.Fatalf("history: %d %s", r.status, r.body)
	}
	for _, ti := range hist.Titles {
		if ti.TitleID != 777 {
			continue
		}
		if ti.EarnedAchievements > 5 || ti.CurrentGamerscore > ti.MaxGamerscore {
			t.Errorf("title 777 in the history: %d achievements earned of 5, gamerscore %d of max %d", ti.EarnedAchievements, ti.CurrentGamerscore, ti.MaxGamerscore)
		}
	}
	if after := attack56Gamerscore(t, h, attack56A); after-before > 10 {
		t.Errorf("profile Gamerscore %d -> %d after unlocking achievement 1 of one title (10 gamerscore)", before, after)
	}
	r = attack56S(t, h, "GET", "https://titlehub.xboxlive.com/users/xuid("+attack56A+")/titles/titleid(777)/decoration/achievement", tok, "")
	if want := map[bool]string{false: `"currentAchievements":1,`, true: `"currentAchievements":0,`}[refused]; !strings.Contains(r.body, want) {
		i := strings.Index(r.body, `"achievement":`)
		t.Errorf("title hub for 777 (the update refused: %v), want %s: %.160s", refused, want, r.body[max(i, 0):])
	}
}

func attack56Heap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BREAK. mock.Config: "MaxStateBytes caps the bytes of service state the
// mock keeps (presence, achievement progress, session documents ...).
// Past it, older records of the same kind are dropped." An achievement
// id is kept as the update spells it (any spelling strconv.Atoi reads as
// 1..5, so "0...01" of any length), and counted as 32 bytes: 24 users'
// updates each naming "0" x 512 KiB + "1" leave 12 MiB held as progress
// with MaxStateBytes 1 MiB (measured against 24 updates of the same size
// whose id is "1").
func TestAttack56AchievementProgressBytesUncounted(t *testing.T) {
	const users, pad = 24, 512 << 10
	grow := func(long bool) int64 {
		h := mock.Must(mock.New(mock.Config{MaxStateBytes: 1 << 20}))
		before := attack56Heap()
		for i := range users {
			x := strconv.Itoa(2533274790000000 + i)
			id := "1"
			body := ""
			if long {
				id = strings.Repeat("0", pad) + "1"
				body = attack56Update(x, attack56Title, map[string]int{id: 50})
			} else {
				body = attack56Update(x, attack56Title, map[string]int{id: 50})
				body = body[:len(body)-1] + strings.Repeat(" ", pad) + "}" // as long, read whole, kept nothing more
			}
			r := attack56S(t, h, "POST", attack56UpdateURL(x, attack56Title), mock.Token(x, attack56Title), body)
			if long && r.status == http.StatusBadRequest {
				continue // the fix: an id in another spelling than its own is refused, nothing kept
			}
			if r.status != 200 {
				t.Fatalf("update %d (long %v): %d %s", i, long, r.status, r.body)
			}
		}
		h.ForgetCalls()
		after := attack56Heap()
		runtime.KeepAlive(h)
		return int64(after) - int64(before)
	}
	control := grow(false)
	grown := grow(true)
	held := grown - control
	t.Logf("heap held: %d with long ids, %d with id \"1\": the ids hold %d bytes against MaxStateBytes %d", grown, control, held, 1<<20)
	if held > 4<<20 {
		t.Errorf("achievement progress holds %d bytes, over 4x MaxStateBytes (1 MiB)", held)
	}
}

// BREAK. mock.Config: "MaxStateBytes caps the bytes of service state the
// mock keeps ... Past it, older records of the same kind are dropped."
// A search handle copies its session's custom properties into a map,
// counted at the size of its JSON; properties of many small objects
// (`{"":1}`) hold many times their JSON's bytes. With MaxStateBytes 1 MiB
// (256 KiB for handles, DefaultMaxStateBytes "shared equally by kind"),
// 64 handles of one session of 60 KB of such properties hold more than
// 4 MiB of heap; as many of a session of one 60 KB string hold little.
func TestAttack56SearchHandlesHeapBounded(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	const handles = 64
	grow := func(heavy bool) int64 {
		h := mock.Must(mock.New(mock.Config{MaxStateBytes: 1 << 20}))
		scid := mock.SCID(attack56Title)
		sess := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + scid + "/sessiontemplates/lobby/sessions/big"
		prop := `"` + strings.Repeat("x", 60000) + `"`
		if heavy {
			prop = "[" + strings.TrimSuffix(strings.Repeat(`{"":1},`, 60000/7), ",") + "]"
		}
		body := `{"constants":{"system":{"maxMembersCount":10,"visibility":"open"}},"properties":{"custom":{"p":` + prop + `}},"members":{"me":{}}}`
		tok := mock.Token(attack56A, attack56Title)
		if r := attack56S(t, h, "PUT", sess, tok, body); r.status != 201 {
			t.Fatalf("session (heavy %v, %d bytes): %d %.300s", heavy, len(body), r.status, r.body)
		}
		hb := `{"type":"search","version":1,"sessionRef":{"scid":"` + scid + `","templateName":"lobby","name":"big"}}`
		if r := attack56S(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", tok, hb); r.status != 201 { // warm-up
			t.Fatalf("first handle: %d %.200s", r.status, r.body)
		}
		h.ForgetCalls()
		before := attack56Heap()
		for i := range handles {
			x := strconv.Itoa(2533274790000000 + i) // 30 / 15 s per user: one user each
			if r := attack56S(t, h, "POST", "https://sessiondirectory.xboxlive.com/handles", mock.Token(x, attack56Title), hb); r.status != 201 {
				t.Fatalf("handle %d: %d %.200s", i, r.status, r.body)
			}
		}
		h.ForgetCalls()
		after := attack56Heap()
		runtime.KeepAlive(h)
		return int64(after) - int64(before)
	}
	light := grow(false)
	heavy := grow(true)
	t.Logf("heap held by %d handles: %d with one string property, %d with {\"\":1} properties of the same JSON size (MaxStateBytes 1 MiB)", handles, light, heavy)
	if heavy > 4<<20 {
		t.Errorf("%d search handles hold %d bytes of heap, over 4x MaxStateBytes (1 MiB)", handles, heavy)
	}
}

// BREAK. mock.Config: "MaxStateBytes ... Past it, older records of the
// same kind are dropped"; mpsd.go: a PUT answers "the whole session as
// stored ... 201 when it created the session". With MaxStateBytes 256
// KiB (64 KiB a kind), a session of 62,000 bytes, under the 64 KiB a
// session may have, named by a name of 4,000 bytes, is answered 201 with
// the document, yet not kept: the next read of it is 404, and the older
// session that was there is not dropped for it.
func TestAttack56SessionAnsweredCreatedButNotKept(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{MaxStateBytes: 256 << 10}))
	scid := mock.SCID(attack56Title)
	base := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + scid + "/sessiontemplates/lobby/sessions/"
	tok := mock.Token(attack56A, attack56Title)
	if r := attack56S(t, h, "PUT", base+"small", tok, `{"members":{"me":{}}}`); r.status != 201 {
		t.Fatalf("small session: %d %s", r.status, r.body)
	}
	name := strings.Repeat("n", 4000)
	body := `{"properties":{"custom":{"p":"` + strings.Repeat("x", 61500) + `"}},"members":{"me":{}}}`
	r := attack56S(t, h, "PUT", base+name, tok, body)
	if r.status == http.StatusBadRequest {
		// The fix: a session the mock cannot keep is refused, not
		// answered as stored.
		if g := attack56S(t, h, "GET", base+name, tok, ""); g.status != 404 {
			t.Errorf("a session refused, then read: %d", g.status)
		}
		return
	}
	if r.status != 201 {
		t.Fatalf("session: %d %.200s", r.status, r.body)
	}
	t.Logf("a session of %d bytes named by %d bytes answered 201", len(r.body), len(name))
	if g := attack56S(t, h, "GET", base+name, tok, ""); g.status != 200 {
		t.Errorf("the session answered 201 (%d bytes), then read: %d %.200s", len(r.body), g.status, g.body)
	}
	if g := attack56S(t, h, "GET", base+"small", tok, ""); g.status == 200 {
		t.Logf("the older session is still there: nothing was dropped to make room")
	}
	// The reference: the same session under a short name is kept (the
	// older one dropped for it).
	if r := attack56S(t, h, "PUT", base+"short", tok, body); r.status != 201 {
		t.Fatalf("short-named session: %d", r.status)
	}
	if g := attack56S(t, h, "GET", base+"short", tok, ""); g.status != 200 {
		t.Errorf("short-named session read: %d", g.status)
	}
}

// BREAK. mock.Config: "MaxBody bounds request bodies (0: 1 MiB); larger
// ones get 413." A body over MaxBody is answered as if it were not, when
// its JSON value ends before MaxBody (the rest is never read), or when
// the route reads no body at all (a GET, a presence clear): 200, not 413.
func TestAttack56BodiesOverMaxBodyGet413(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{MaxBody: 4 << 10}))
	tok := mock.Token(attack56A, attack56Title)
	pad := strings.Repeat(" ", 64<<10)
	for _, c := range []struct{ name, method, url, body string }{
		{"profile batch, padded after its value", "POST", "https://profile.xboxlive.com/users/batch/profile/settings", `{"userIds":["` + attack56B + `"],"settings":["Gamertag"]}` + pad},
		{"presence batch, padded after its value", "POST", "https://userpresence.xboxlive.com/users/batch", `{"users":["` + attack56B + `"]}` + pad},
		{"profile read with a body", "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", pad},
		{"presence clear with a body", "DELETE", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", pad},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := attack56S(t, h, c.method, c.url, tok, c.body)
			if r.status != http.StatusRequestEntityTooLarge {
				t.Errorf("%s with a %d-byte body (MaxBody 4096): %d %.120s, want 413", c.method, len(c.body), r.status, r.body)
			}
		})
	}
	// The reference the promise is read from holds: a JSON value over it.
	big := `{"userIds":["` + attack56B + `"],"settings":["Gamertag"],"x":"` + strings.Repeat("x", 8<<10) + `"}`
	if r := attack56S(t, h, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", tok, big); r.status != 413 {
		t.Errorf("a JSON value over MaxBody: %d, want 413", r.status)
	}
}

// BREAK. docs/MOCK.md: "Bodies are validated as the service does (400 for
// a body of the wrong shape ...)"; profile.go: "a batch naming one [that
// is no XUID] is refused, as profile's is, rather than answer one user
// under two spellings", as the presence and userstats batches now do.
// The people hub's batch answers any string in "xuids" as a person of
// its own: text that is no XUID ("<script>", "-1", "") and a second
// spelling of user A ("0" + A), with a gamertag and presence each.
func TestAttack56PeopleHubBatchTakesNonXUIDs(t *testing.T) {
	h := mock.NewHandler()
	tok := mock.Token(attack56A, attack56Title)
	for _, bad := range []string{"<script>", "-1", "", "0" + attack56A, " " + attack56B} {
		body, _ := json.Marshal(map[string][]string{"xuids": {bad}})
		r := attack56S(t, h, "POST", "https://peoplehub.xboxlive.com/users/me/people/batch/decoration/detail", tok, string(body))
		if r.status != 400 {
			t.Errorf("people hub batch naming %q: %d %.160s, want 400", bad, r.status, r.body)
		}
	}
	// The reference holds.
	if r := attack56S(t, h, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", tok, `{"userIds":["<script>"]}`); r.status != 400 {
		t.Errorf("profile batch naming <script>: %d, want 400", r.status)
	}
}

// held: docs/MOCK.md "A user who is not a member of a session and does not
// join it (`members.me`) may read it but not write it: 403 with the session
// as stored"; achievements.go "a user may update only their own
// achievements"; reputation.go "a user may not report themselves";
// DELETE /handles/{id} "403 for another user's". B writes none of A's
// data, under case and encoding variants of the path.
func TestAttack56OneUserCannotChangeAnothers(t *testing.T) {
	h := mock.NewHandler()
	a, b := mock.Token(attack56A, attack56Title), mock.Token(attack56B, attack56Title)
	scid := mock.SCID(attack56Title)
	sess := "https://sessiondirectory.xboxlive.com/serviceconfigs/" + scid + "/sessiontemplates/lobby/sessions/s1"
	if r := attack56S(t, h, "PUT", sess, a, `{"properties":{"custom":{"k":1}},"members":{"me":{"properties":{"x":1}}}}`); r.status != 201 {
		t.Fatalf("A's session: %d %s", r.status, r.body)
	}
	stored := attack56S(t, h, "GET", sess, a, "").body
	for _, u := range []string{sess, strings.Replace(sess, "sessiondirectory.xboxlive.com", "SessionDirectory.XboxLive.com", 1), strings.Replace(sess, "/sessions/s1", "/SESSIONS/S1", 1), strings.Replace(sess, "/s1", "/%73%31", 1)} {
		for _, body := range []string{`{"properties":{"custom":{"k":2}}}`, `{"constants":{"custom":{"c":1}}}`, `{"members":{"me":null}}`, `{"members":{"0":null}}`} {
			r := attack56S(t, h, "PUT", u, b, body)
			if r.status < 400 {
				t.Errorf("B's PUT %s %s: %d %.200s", u, body, r.status, r.body)
			}
		}
	}
	if after := attack56S(t, h, "GET", sess, a, "").body; after != stored {
		t.Errorf("A's session changed by B:\n%s\n%s", stored, after)
	}
	// B updates A's achievements: path A's, body A's, body B's.
	for _, c := range []struct{ url, body string }{
		{attack56UpdateURL(attack56A, attack56Title), attack56Update(attack56A, attack56Title, map[string]int{"1": 100})},
		{attack56UpdateURL(attack56A, attack56Title), attack56Update(attack56B, attack56Title, map[string]int{"1": 100})},
		{attack56UpdateURL(attack56B, attack56Title), attack56Update(attack56A, attack56Title, map[string]int{"1": 100})},
		{strings.Replace(attack56UpdateURL(attack56A, attack56Title), "xuid(", "XUID(", 1), attack56Update(attack56A, attack56Title, map[string]int{"1": 100})},
	} {
		if r := attack56S(t, h, "POST", c.url, b, c.body); r.status != 403 {
			t.Errorf("B's update %s: %d %s, want 403", c.url, r.status, r.body)
		}
	}
	if r := attack56S(t, h, "GET", "https://achievements.xboxlive.com/users/xuid("+attack56A+")/achievements/"+scid+"/1", a, ""); !strings.Contains(r.body, `"progressState":"NotStarted"`) {
		t.Errorf("A's achievement 1 after B's updates: %.300s", r.body)
	}
	// Reputation feedback about oneself, however the XUID is written.
	fb := `{"sessionRef":null,"feedbackType":"PositiveSkilledPlayer","textReason":"","evidenceId":null}`
	for _, u := range []string{"xuid(" + attack56A + ")", "XUID(" + attack56A + ")", "Xuid(" + attack56A + ")", "xuid%28" + attack56A + "%29", "xuid(0" + attack56A + ")"} {
		if r := attack56S(t, h, "POST", "https://reputation.xboxlive.com/users/"+u+"/feedback", a, fb); r.status < 400 {
			t.Errorf("A's feedback about %s (A): %d", u, r.status)
		}
	}
	if r := attack56S(t, h, "POST", "https://reputation.xboxlive.com/users/xuid("+attack56B+")/feedback", a, fb); r.status != 202 {
		t.Errorf("A's feedback about B: %d %s, want 202", r.status, r.body)
	}
}

// held: SPEC.md "Requests are counted per *user + title* pair, and
// separately per *service*", "Each request increments both counts",
// "Rejected requests still count", "Retry-After = integer seconds until
// the caller may retry", the body's fields; docs/MOCK.md "at a limit the
// answer is 429 with `Retry-After` (whole seconds, rounded up) and the
// documented JSON body". Profile 10 / 30 at one instant: A in title 1
// gets 10, the 11th 429; A in title 2 and B in title 1 still get 10 each;
// a batch of 100 users is one request; social and profile never share.
// A 429 at 7.25 s says Retry-After 8 and the burst body; the sustain
// edge refuses at 300 s - 1 ns (Retry-After 1) and serves at 300 s.
func TestAttack56FGRLKeysWindowsAndBody(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clk := &attack56Clock{t: t0}
	h := mock.Must(mock.New(mock.Config{Now: clk.now}))
	const prof = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	const batch = "https://profile.xboxlive.com/users/batch/profile/settings"
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = `"` + strconv.Itoa(2533274790000000+i) + `"`
	}
	batchBody := `{"userIds":[` + strings.Join(ids, ",") + `],"settings":["Gamertag"]}`
	served := func(tok string, n int, useBatch bool) int {
		ok := 0
		for range n {
			var r attack56Answer
			if useBatch {
				r = attack56S(t, h, "POST", batch, tok, batchBody)
			} else {
				r = attack56S(t, h, "GET", prof, tok, "")
			}
			if r.status == 200 {
				ok++
			}
		}
		return ok
	}
	a1, a2, b1 := mock.Token(attack56A, attack56Title), mock.Token(attack56A, "987654321"), mock.Token(attack56B, attack56Title)
	if n := served(a1, 5, true) + served(a1, 6, false); n != 10 {
		t.Errorf("A in title 1: %d served of 11 (5 batches of 100 users, 6 reads), want 10", n)
	}
	if n := served(a2, 12, false); n != 10 {
		t.Errorf("A in title 2: %d served of 12, want 10", n)
	}
	if n := served(b1, 12, false); n != 10 {
		t.Errorf("B in title 1: %d served of 12, want 10", n)
	}
	if r := attack56S(t, h, "GET", "https://social.xboxlive.com/users/me/summary", a1, ""); r.status != 200 {
		t.Errorf("social for A in title 1 after profile's burst: %d", r.status)
	}
	clk.set(t0.Add(7250 * time.Millisecond))
	r := attack56S(t, h, "GET", prof, a1, "")
	if r.status != 429 || r.header.Get("Retry-After") != "8" {
		t.Errorf("at 7.25 s: %d Retry-After %q, want 429 and 8", r.status, r.header.Get("Retry-After"))
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(r.body), &body); err != nil {
		t.Fatalf("429 body %q: %v", r.body, err)
	}
	want := map[string]any{"version": 1.0, "currentRequests": 12.0, "maxRequests": 10.0, "periodInSeconds": 15.0, "limitType": "Rate"}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("429 body %s = %v, want %v (%s)", k, body[k], v, r.body)
		}
	}
	if rb, err := ratelimit.ParseBody([]byte(r.body)); err != nil || rb.PeriodInSeconds != 15 {
		t.Errorf("the project's own parser reads the 429 body: %+v %v", rb, err)
	}
	// Fill the sustain window (30) in the next burst windows.
	for w := 1; w <= 2; w++ {
		clk.set(t0.Add(time.Duration(w) * 15 * time.Second))
		served(a1, 10, false)
	}
	d, _ := h.Counts(throttle.Key{User: mock.UserHash(attack56A), Title: attack56Title, Scope: "profile"})
	if d.Sustain.Count < 30 {
		t.Fatalf("sustain count %d after 33 calls", d.Sustain.Count)
	}
	clk.set(t0.Add(300*time.Second - time.Nanosecond))
	if r := attack56S(t, h, "GET", prof, a1, ""); r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Errorf("at 300 s - 1 ns: %d Retry-After %q, want 429 and 1", r.status, r.header.Get("Retry-After"))
	}
	clk.set(t0.Add(300 * time.Second))
	if r := attack56S(t, h, "GET", prof, a1, ""); r.status != 200 {
		t.Errorf("at 300 s: %d, want 200", r.status)
	}
}

// BREAK. docs/MOCK.md: "a profile read naming more than 100 settings (its
// query's `settings`, a batch's `settings`) is answered 400, a bound of
// the mock's, as the service publishes none, so that an answer stays
// about 1 MB at most (`TestProfileReadsBounded`)". The people read
// (`/users/{user}/profile/settings/people/people`) answers each setting
// for every person the user follows, and a seeded world gives a user up
// to 1,000 (worldfile.go, maxPeople): 100 settings for 1,000 friends is
// an answer of about 10 MB.
func TestAttack56ProfilePeopleReadBounded(t *testing.T) {
	const n = 1000
	w := mock.World{Accounts: make([]mock.WorldAccount, n+1)}
	friends := make([]string, n)
	for i := range n {
		friends[i] = strconv.Itoa(2533274790000001 + i)
		w.Accounts[i+1] = mock.WorldAccount{XUID: friends[i]}
	}
	w.Accounts[0] = mock.WorldAccount{XUID: "2533274790000000", Gamertag: "Popular", Friends: friends}
	h, err := mock.New(mock.Config{World: w})
	if err != nil {
		t.Fatal(err)
	}
	settings := strings.TrimSuffix(strings.Repeat("GameDisplayPicRaw,", 100), ",")
	r := attack56S(t, h, "GET", "https://profile.xboxlive.com/users/me/profile/settings/people/people?settings="+settings, mock.Token("2533274790000000", attack56Title), "")
	if r.status != 200 && r.status != 400 {
		t.Fatalf("people read: %d %.200s", r.status, r.body)
	}
	t.Logf("people read of 100 settings for %d friends: %d, %d bytes", n, r.status, len(r.body))
	if len(r.body) > 1_100_000 {
		t.Errorf("an answer of %d bytes, want about 1 MB at most", len(r.body))
	}
}
