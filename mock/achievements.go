package mock

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The achievements service, contract 2 in the shapes of
// OpenXbox/xbox-webapi-python tests/data/responses/achievements_one_details.json,
// and contract 1 (the Xbox 360 service: GET .../achievements earned,
// GET .../titleachievements all) in those of achievements_360_all.json; any
// other contract version is refused with 400:
// GET /users/xuid(N)/achievements?titleId=T&maxItems=M&continuationToken=C,
// GET /users/xuid(N)/achievements/{scid}/{id} (a list of one), and
// POST /users/xuid(N)/achievements/{scid}/update, whose progress persists.
// The service compares SCIDs case-sensitively (XSAPI
// achievement_service_internal.cpp): an update must name the caller's title's
// SCID in lower case, in path and body, or it is refused with 403.

const achievementsPerTitle = 5

// achievementScore is the gamerscore each of the mock's achievements gives.
const achievementScore = 10

type achievement struct {
	ID                string             `json:"id"`
	ServiceConfigID   string             `json:"serviceConfigId"`
	Name              string             `json:"name"`
	TitleAssociations []titleAssociation `json:"titleAssociations"`
	ProgressState     string             `json:"progressState"`
	Progression       progression        `json:"progression"`
	MediaAssets       []mediaAsset       `json:"mediaAssets"`
	Platforms         []string           `json:"platforms"`
	IsSecret          bool               `json:"isSecret"`
	Description       string             `json:"description"`
	LockedDescription string             `json:"lockedDescription"`
	ProductID         string             `json:"productId"`
	AchievementType   string             `json:"achievementType"`
	ParticipationType string             `json:"participationType"`
	TimeWindow        *timeWindow        `json:"timeWindow"`
	Rewards           []reward           `json:"rewards"`
	EstimatedTime     string             `json:"estimatedTime"`
	Deeplink          *string            `json:"deeplink"`
	IsRevoked         bool               `json:"isRevoked"`
}

type titleAssociation struct {
	Name string `json:"name"`
	ID   uint32 `json:"id"`
}

type progression struct {
	Requirements []requirement `json:"requirements"`
	TimeUnlocked string        `json:"timeUnlocked"`
}

type requirement struct {
	ID                    string  `json:"id"`
	Current               *string `json:"current"` // null before any progress
	Target                string  `json:"target"`
	OperationType         string  `json:"operationType"`
	ValueType             string  `json:"valueType"`
	RuleParticipationType string  `json:"ruleParticipationType"`
}

type mediaAsset struct {
	Name string `json:"name"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

type reward struct {
	Name        *string     `json:"name"`
	Description *string     `json:"description"`
	Value       string      `json:"value"`
	Type        string      `json:"type"`
	MediaAsset  *mediaAsset `json:"mediaAsset"`
	ValueType   string      `json:"valueType"`
}

// timeWindow is when a challenge can be unlocked.
type timeWindow struct {
	StartDate string `json:"startDate"`
	EndDate   string `json:"endDate"`
}

type pagingInfo struct {
	ContinuationToken *string `json:"continuationToken"`
	TotalRecords      int     `json:"totalRecords"`
}

type achievementList struct {
	Achievements []achievement `json:"achievements"`
	PagingInfo   pagingInfo    `json:"pagingInfo"`
}

// achievementsService answers the achievements service.
type achievementsService struct{ *world }

func (s achievementsService) routes() []route {
	const x = "/users/xuid({n})/achievements"
	return []route{
		{http.MethodGet, pat(x), s.serveAchievements, "1 (Xbox 360: earned) and 2"},
		{http.MethodGet, pat("/users/xuid({n})/titleachievements"), s.serveTitleAchievements, "1 (Xbox 360: all)"},
		{http.MethodGet, pat("/users/xuid({n})/history/titles"), s.serveTitleHistory, "1 (Xbox 360) and 2"},
		{http.MethodGet, pat(x + "/{}/{}"), s.serveAchievement, "2"},
		{http.MethodPost, pat(x + "/{}/update"), s.serveAchievementUpdate, "2"},
	}
}

// SCID returns the service configuration ID the mock gives a title unless
// Config.SCIDs names another: lower-case hex, as the service stores SCIDs.
func SCID(titleID string) string {
	n, _ := strconv.ParseUint(titleID, 10, 64)
	return fmt.Sprintf(derivedSCID+"%012x", n)
}

// scidOf returns the SCID of a title: Config.SCIDs', else SCID's.
func (w *world) scidOf(title string) string {
	if s, ok := w.scids[title]; ok {
		return s
	}
	return SCID(title)
}

// derivedSCID is the form of the SCIDs SCID makes: the title ID in hex in
// the last group, at least twelve digits.
const derivedSCID = "00000000-0000-0000-0000-"

// otherTitlesSCID reports whether scid is the SCID of a title the mock knows
// other than title: one Config.SCIDs names, or one of the form SCID makes,
// whose title is the title ID it encodes, written as a title ID is (no
// leading zero), for a title Config.SCIDs gives no other SCID. A SCID of no
// title the mock knows (a real game's, say, not configured) is nobody's:
// it is taken, as the caller's own, so that tests may name any.
func (w *world) otherTitlesSCID(scid, title string) bool {
	if s, ok := w.scids[title]; ok && strings.EqualFold(s, scid) {
		return false
	}
	for t, s := range w.scids {
		if strings.EqualFold(s, scid) {
			return t != title
		}
	}
	owner, ok := derivedOwner(scid)
	if !ok {
		return false
	}
	if _, configured := w.scids[owner]; configured {
		return false // nobody's: its title has another
	}
	return owner != title
}

// derivedOwner returns the title ID a SCID of SCID's form encodes, without
// a leading zero, whatever the case of its hex digits or their count (12
// to 16).
func derivedOwner(scid string) (string, bool) {
	n := len(scid) - len(derivedSCID)
	if n < 12 || n > 16 || !strings.EqualFold(scid[:len(derivedSCID)], derivedSCID) {
		return "", false
	}
	id, err := strconv.ParseUint(scid[len(derivedSCID):], 16, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatUint(id, 10), true
}

// refuseOtherTitlesSCID answers c 403 and reports true when scid is another
// title's than c's caller's (otherTitlesSCID): a title writes only under its
// own service configuration.
func (w *world) refuseOtherTitlesSCID(c *call, scid string) bool {
	if !w.otherTitlesSCID(scid, c.id.title) {
		return false
	}
	writeError(c.w, http.StatusForbidden, "Forbidden", "the service configuration is another title's")
	return true
}

func (w *world) achievementsOf(xuid, title string) []achievement {
	scid := w.scidOf(title)
	progress := w.progressOf(xuid, title)
	out := make([]achievement, achievementsPerTitle)
	for i := range out {
		id := strconv.Itoa(i + 1)
		out[i] = makeAchievement(title, scid, id, progress[id])
	}
	return out
}

// progressOf returns xuid's progress in title by achievement id: what the
// world seeded, raised by what was written since.
func (w *world) progressOf(xuid, title string) map[string]int {
	out := map[string]int{}
	if t, ok := w.seededTitle(xuid, title); ok {
		maps.Copy(out, t.Achievements)
	}
	w.state.mu.Lock()
	written, _ := w.state.progress.get(xuid + "/" + title)
	for id, pct := range written {
		out[id] = max(out[id], pct)
	}
	w.state.mu.Unlock()
	return out
}

func makeAchievement(title, scid, id string, pct int) achievement {
	tid, _ := strconv.ParseUint(title, 10, 32)
	state, unlocked := "NotStarted", "0001-01-01T00:00:00.0000000Z"
	var current *string
	switch {
	case pct >= 100:
		state, unlocked = "Achieved", "2024-01-01T00:00:00.0000000Z"
	case pct > 0:
		state = "InProgress"
	}
	if pct > 0 {
		s := strconv.Itoa(pct)
		current = &s
	}
	a := achievement{
		ID: id, ServiceConfigID: scid, Name: "Achievement " + id,
		TitleAssociations: []titleAssociation{{Name: titleName(title), ID: uint32(tid)}},
		ProgressState:     state,
		Progression: progression{Requirements: []requirement{{ID: "00000000-0000-0000-0000-00000000000" + id,
			Current: current, Target: "100", OperationType: "Sum", ValueType: "Integer", RuleParticipationType: "Individual"}},
			TimeUnlocked: unlocked},
		MediaAssets:       []mediaAsset{{Name: id + ".png", Type: "Icon", URL: "https://images-eds.xboxlive.com/image?url=mock-" + id}},
		Platforms:         []string{"Durango"},
		Description:       "Unlocked achievement " + id + ".",
		LockedDescription: "Unlock achievement " + id + ".",
		ProductID:         "00000000-0000-0000-0000-000000000000",
		AchievementType:   "Persistent", ParticipationType: "Individual",
		Rewards:       []reward{{Value: strconv.Itoa(achievementScore), Type: "Gamerscore", ValueType: "Int"}},
		EstimatedTime: "00:00:00",
	}
	if id == challengeID {
		challenge(&a, title)
	}
	return a
}

// challengeID is the achievement of every title that is a challenge, as
// XSAPI's test answer has one (AchievementsTests.cpp): a time window, an
// in-app reward with its name, description and media asset, and a deep
// link.
const challengeID = "5"

func challenge(a *achievement, title string) {
	name, desc := "Reward "+a.ID, "In-app reward for achievement "+a.ID+"."
	a.AchievementType = "Challenge"
	a.TimeWindow = &timeWindow{StartDate: "2024-01-01T00:00:00Z", EndDate: "2100-07-01T00:00:00Z"}
	a.Rewards = append(a.Rewards, reward{Name: &name, Description: &desc, Value: "1", Type: "InApp", ValueType: "String",
		MediaAsset: &mediaAsset{Name: "reward-" + a.ID + ".png", Type: "Icon", URL: "https://images-eds.xboxlive.com/image?url=mock-reward-" + a.ID}})
	link := base64.StdEncoding.EncodeToString([]byte("ms-xbl-" + title + "://achievement/" + a.ID))
	a.Deeplink = &link
}

// achievementsContract returns the contract version a request asks for:
// 1 (the Xbox 360 shape) or 2 (the default, as XSAPI sends it); ok is false,
// with a 400 answered, for any other.
func achievementsContract(c *call) (v int, ok bool) {
	switch strings.TrimSpace(c.r.Header.Get("x-xbl-contract-version")) {
	case "1":
		return 1, true
	case "", "2":
		return 2, true
	}
	writeError(c.w, http.StatusBadRequest, "BadRequest", "the achievements service answers contract versions 1 and 2")
	return 0, false
}

// titleOf returns the titleId query, else the caller's title, or answers
// 400.
func titleOf(c *call) (string, bool) {
	title := c.query("titleId")
	if title == "" {
		title = c.id.title
	}
	if _, err := strconv.ParseUint(title, 10, 32); err != nil {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "titleId must be a decimal title id")
		return "", false
	}
	return title, true
}

func (s achievementsService) serveAchievements(c *call) {
	v, ok := achievementsContract(c)
	if !ok {
		return
	}
	title, ok := titleOf(c)
	if !ok {
		return
	}
	if v == 1 { // the Xbox 360 service: the achievements earned
		var earned []achievement360
		for _, a := range s.achievements360(c.params[0], title) {
			if a.Unlocked {
				earned = append(earned, a)
			}
		}
		serve360(c, earned)
		return
	}
	all := s.achievementsOf(c.params[0], title)
	start, end, next, ok := page(c, len(all))
	if !ok {
		return
	}
	writeJSON(c.w, http.StatusOK, achievementList{all[start:end], pagingInfo{next, len(all)}})
}

// serveTitleAchievements answers every achievement of a title in the Xbox
// 360 shape (contract 1).
func (s achievementsService) serveTitleAchievements(c *call) {
	if _, ok := achievementsContract(c); !ok {
		return
	}
	title, ok := titleOf(c)
	if !ok {
		return
	}
	serve360(c, s.achievements360(c.params[0], title))
}

// achievement360 is an achievement in the Xbox 360 shape (contract 1), as
// OpenXbox/xbox-webapi-python records it
// (tests/data/responses/achievements_360_all.json).
type achievement360 struct {
	ID                int    `json:"id"`
	TitleID           uint32 `json:"titleId"`
	Name              string `json:"name"`
	Sequence          int    `json:"sequence"`
	Flags             int    `json:"flags"`
	UnlockedOnline    bool   `json:"unlockedOnline"`
	Unlocked          bool   `json:"unlocked"`
	IsSecret          bool   `json:"isSecret"`
	Platform          int    `json:"platform"`
	Gamerscore        int    `json:"gamerscore"`
	ImageID           int    `json:"imageId"`
	Description       string `json:"description"`
	LockedDescription string `json:"lockedDescription"`
	Type              int    `json:"type"`
	IsRevoked         bool   `json:"isRevoked"`
	TimeUnlocked      string `json:"timeUnlocked"`
}

// achievements360 returns a title's achievements in the Xbox 360 shape, the
// same ones, with the same progress, the contract-2 answers hold.
func (w *world) achievements360(xuid, title string) []achievement360 {
	tid, _ := strconv.ParseUint(title, 10, 32)
	var out []achievement360
	for i, a := range w.achievementsOf(xuid, title) {
		unlocked := a.ProgressState == "Achieved"
		out = append(out, achievement360{ID: i + 1, TitleID: uint32(tid), Name: a.Name, Flags: 9, Unlocked: unlocked,
			UnlockedOnline: unlocked, Platform: 255, Gamerscore: 10, ImageID: i + 1, Description: a.Description,
			LockedDescription: a.LockedDescription, Type: 1, TimeUnlocked: a.Progression.TimeUnlocked})
	}
	return out
}

// serve360 answers a list of Xbox 360 achievements, paged.
func serve360(c *call, all []achievement360) {
	start, end, next, ok := page(c, len(all))
	if !ok {
		return
	}
	writeJSON(c.w, http.StatusOK, struct {
		Achievements []achievement360 `json:"achievements"`
		PagingInfo   pagingInfo       `json:"pagingInfo"`
		Version      string           `json:"version"`
	}{append([]achievement360{}, all[start:end]...), pagingInfo{next, len(all)}, "0001-01-01T00:00:00.0000000Z"})
}

// titleProgress is what a user has earned in one title.
type titleProgress struct {
	title              string
	earned, gamerscore int
	lastPlayed         string
}

// titlesPlayed returns the titles xuid has played, in title order: the
// world's title history, the titles it seeded and those with achievement
// progress written since.
func (w *world) titlesPlayed(xuid string) []titleProgress {
	played := map[string]string{} // title -> last played
	if a := w.account(xuid); a != nil {
		for _, t := range a.Titles {
			played[t.TitleID] = t.LastPlayed
		}
	}
	w.state.mu.Lock()
	for _, k := range w.state.progress.withPrefix(xuid + "/") {
		if _, ok := played[k[len(xuid)+1:]]; !ok {
			played[k[len(xuid)+1:]] = ""
		}
	}
	w.state.mu.Unlock()
	out := make([]titleProgress, 0, len(played))
	for _, title := range slices.Sorted(maps.Keys(played)) {
		t := titleProgress{title: title, lastPlayed: xblTime(cmp.Or(played[title], defaultPlayed))}
		for _, pct := range w.progressOf(xuid, title) {
			if pct >= 100 {
				t.earned++
				t.gamerscore += achievementScore
			}
		}
		out = append(out, t)
	}
	return out
}

// The title history entries of contract 2 (xbox-webapi-python
// achievements_one_recent_progress.json) and contract 1, the Xbox 360
// service's (achievements_360_recent_progress.json).
type (
	historyTitle struct {
		LastUnlock         string `json:"lastUnlock"`
		TitleID            uint32 `json:"titleId"`
		ServiceConfigID    string `json:"serviceConfigId"`
		TitleType          string `json:"titleType"`
		Platform           string `json:"platform"`
		Name               string `json:"name"`
		EarnedAchievements int    `json:"earnedAchievements"`
		CurrentGamerscore  int    `json:"currentGamerscore"`
		MaxGamerscore      int    `json:"maxGamerscore"`
	}
	historyTitle360 struct {
		LastPlayed          string `json:"lastPlayed"`
		CurrentAchievements int    `json:"currentAchievements"`
		CurrentGamerscore   int    `json:"currentGamerscore"`
		Sequence            int    `json:"sequence"`
		TitleID             uint32 `json:"titleId"`
		TitleType           int    `json:"titleType"`
		Platforms           []int  `json:"platforms"`
		Name                string `json:"name"`
		TotalAchievements   int    `json:"totalAchievements"`
		TotalGamerscore     int    `json:"totalGamerscore"`
	}
)

// serveTitleHistory answers the titles in which the user has progress,
// with the same counts their achievements answer.
func (s achievementsService) serveTitleHistory(c *call) {
	v, ok := achievementsContract(c)
	if !ok {
		return
	}
	played := s.titlesPlayed(c.params[0])
	start, end, next, ok := page(c, len(played))
	if !ok {
		return
	}
	if v == 1 {
		titles := make([]historyTitle360, 0, end-start)
		for _, t := range played[start:end] {
			tid, _ := strconv.ParseUint(t.title, 10, 32)
			titles = append(titles, historyTitle360{LastPlayed: t.lastPlayed, CurrentAchievements: t.earned, CurrentGamerscore: t.gamerscore,
				TitleID: uint32(tid), TitleType: 1, Platforms: []int{1}, Name: titleName(t.title),
				TotalAchievements: achievementsPerTitle, TotalGamerscore: achievementScore * achievementsPerTitle})
		}
		writeJSON(c.w, http.StatusOK, struct {
			Titles     []historyTitle360 `json:"titles"`
			PagingInfo pagingInfo        `json:"pagingInfo"`
			Version    string            `json:"version"`
		}{titles, pagingInfo{next, len(played)}, defaultPlayed})
		return
	}
	titles := make([]historyTitle, 0, end-start)
	for _, t := range played[start:end] {
		tid, _ := strconv.ParseUint(t.title, 10, 32)
		titles = append(titles, historyTitle{LastUnlock: t.lastPlayed, TitleID: uint32(tid), ServiceConfigID: s.scidOf(t.title),
			TitleType: "DGame", Platform: "Durango", Name: titleName(t.title), EarnedAchievements: t.earned,
			CurrentGamerscore: t.gamerscore, MaxGamerscore: achievementScore * achievementsPerTitle})
	}
	writeJSON(c.w, http.StatusOK, struct {
		Titles     []historyTitle `json:"titles"`
		PagingInfo pagingInfo     `json:"pagingInfo"`
	}{titles, pagingInfo{next, len(played)}})
}

func (s achievementsService) serveAchievement(c *call) {
	scid, id := c.params[1], c.params[2]
	if scid != s.scidOf(c.id.title) {
		writeError(c.w, http.StatusNotFound, "NotFound", "no such service configuration")
		return
	}
	for _, a := range s.achievementsOf(c.params[0], c.id.title) {
		if a.ID == id {
			writeJSON(c.w, http.StatusOK, achievementList{[]achievement{a}, pagingInfo{nil, 1}})
			return
		}
	}
	writeError(c.w, http.StatusNotFound, "NotFound", "no such achievement")
}

// achievementUpdate is the body of an update, as XSAPI writes it.
type achievementUpdate struct {
	Action          string          `json:"action"`
	ServiceConfigID string          `json:"serviceConfigId"`
	TitleID         json.RawMessage `json:"titleId"`
	UserID          string          `json:"userId"`
	Achievements    []struct {
		ID              string `json:"id"`
		PercentComplete int    `json:"percentComplete"`
	} `json:"achievements"`
}

// check returns the status and message refusing u, sent by c to the
// title whose SCID is scid, or 0.
func (u *achievementUpdate) check(scid string, c *call) (int, string) {
	var title uint32
	switch {
	case u.Action != "progressUpdate":
		return http.StatusBadRequest, `action must be "progressUpdate"`
	case json.Unmarshal(u.TitleID, &title) != nil:
		return http.StatusBadRequest, "titleId must be a JSON number"
	case u.UserID != c.id.xuid || c.params[0] != c.id.xuid:
		return http.StatusForbidden, "a user may update only their own achievements"
	case strconv.FormatUint(uint64(title), 10) != c.id.title:
		return http.StatusForbidden, "titleId is not the caller's title"
	case c.params[1] != scid || u.ServiceConfigID != c.params[1]:
		return http.StatusForbidden, "the service configuration is not the caller's title's"
	case len(u.Achievements) == 0:
		return http.StatusBadRequest, "achievements is empty"
	}
	for _, a := range u.Achievements {
		// An id is the achievement's own spelling ("1"), not another
		// that reads as its number ("01", "+1"): each spelling would be
		// an achievement of its own.
		n, err := strconv.Atoi(a.ID)
		if err != nil || n < 1 || n > achievementsPerTitle || a.ID != strconv.Itoa(n) || a.PercentComplete < 0 || a.PercentComplete > 100 {
			return http.StatusBadRequest, "unknown achievement or percentComplete outside 0..100"
		}
	}
	return 0, ""
}

func (s achievementsService) serveAchievementUpdate(c *call) {
	var req achievementUpdate
	if !c.decode(&req) {
		return
	}
	if status, msg := req.check(s.scidOf(c.id.title), c); status != 0 {
		writeError(c.w, status, strings.ReplaceAll(http.StatusText(status), " ", ""), msg)
		return
	}
	if !s.raiseProgress(c.id.xuid+"/"+c.id.title, &req) {
		c.w.WriteHeader(http.StatusNotModified)
		return
	}
	c.w.WriteHeader(http.StatusOK)
}

// raiseProgress stores the update and reports whether anything rose:
// progress never goes back.
func (w *world) raiseProgress(key string, u *achievementUpdate) bool {
	w.state.mu.Lock()
	defer w.state.mu.Unlock()
	p, _ := w.state.progress.get(key)
	if p == nil {
		p = make(map[string]int)
	}
	xuid, title, _ := strings.Cut(key, "/")
	seeded, _ := w.seededTitle(xuid, title)
	changed := false
	for _, a := range u.Achievements {
		if a.PercentComplete > max(p[a.ID], seeded.Achievements[a.ID]) {
			p[a.ID] = a.PercentComplete
			changed = true
		}
	}
	w.state.progress.put(key, p, int64(32*len(p))) // ids are 1..5: a few bytes each
	return changed
}

// page reads maxItems and continuationToken (an offset) for a list of total
// items; on bad input it answers 400 and returns ok false.
func page(c *call, total int) (start, end int, next *string, ok bool) {
	maxItems := 100
	if s := c.query("maxItems"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "maxItems must be 1 to 1000")
			return 0, 0, nil, false
		}
		maxItems = n
	}
	if s := c.query("continuationToken"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > total {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "bad continuationToken")
			return 0, 0, nil, false
		}
		start = n
	}
	end = min(total, start+maxItems)
	if end < total {
		tok := strconv.Itoa(end)
		next = &tok
	}
	return start, end, next, true
}
