package mock

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The title hub, as the published clients ask it for a user's title history
// and a title's information (OpenXbox/xbox-webapi-python titlehub provider,
// contract 2): GET /users/{user}/titles/titlehistory/decoration/{list},
// GET /users/{user}/titles/titleid(T)/decoration/{list} (or pfn(P), P the
// package family name the mock gives the title) and POST
// [/users/{user}]/titles/batch/decoration/{list}. Shapes from
// tests/data/responses/titlehub_titlehistory.json, titlehub_titleinfo.json
// and titlehub_batch.json.
// The titles are the ones the achievements service's history lists, with
// the same counts; decorated sections (achievement, detail, image,
// titlehistory) only when asked for. The mock has no Store, so "detail"
// (the Store's description of a title) holds the title's name as its
// vuiDisplayName and nothing else: empty strings for the description,
// short description, developer and publisher, empty lists of attributes,
// availabilities, capabilities and genres, minAge 0, releaseDate null,
// xboxLiveGoldRequired false. It has no published FGRL rule: the limits
// data counts it at the trace analyzer's general 10 / 30.

type hubTitle struct {
	TitleID               string               `json:"titleId"`
	PFN                   *string              `json:"pfn"`
	BingID                *string              `json:"bingId"`
	ServiceConfigID       string               `json:"serviceConfigId"`
	WindowsPhoneProductID *string              `json:"windowsPhoneProductId"`
	Name                  string               `json:"name"`
	Type                  string               `json:"type"`
	Devices               []string             `json:"devices"`
	DisplayImage          string               `json:"displayImage"`
	MediaItemType         string               `json:"mediaItemType"`
	ModernTitleID         string               `json:"modernTitleId"`
	IsBundle              bool                 `json:"isBundle"`
	Achievement           *hubTitleAchievement `json:"achievement"`
	Stats                 *struct{}            `json:"stats"`
	GamePass              json.RawMessage      `json:"gamePass,omitempty"` // null in a title's information, absent in the history
	Images                *[]hubImage          `json:"images"`
	TitleHistory          *hubTitleHistory     `json:"titleHistory"`
	Detail                *hubTitleDetail      `json:"detail"`
	FriendsWhoPlayed      *[]any               `json:"friendsWhoPlayed"`
	AlternateTitleIDs     *[]string            `json:"alternateTitleIds"`
	ContentBoards         *[]any               `json:"contentBoards"`
	XboxLiveTier          string               `json:"xboxLiveTier"`
	IsStreamable          *bool                `json:"isStreamable,omitempty"`
}

type (
	// hubTitles is every title hub answer: the user (null in a batch
	// without one) and the titles.
	hubTitles struct {
		XUID   *string    `json:"xuid"`
		Titles []hubTitle `json:"titles"`
	}
	hubTitleAchievement struct {
		CurrentAchievements int     `json:"currentAchievements"`
		TotalAchievements   int     `json:"totalAchievements"`
		CurrentGamerscore   int     `json:"currentGamerscore"`
		TotalGamerscore     int     `json:"totalGamerscore"`
		ProgressPercentage  float64 `json:"progressPercentage"`
		SourceVersion       int     `json:"sourceVersion"`
	}
	hubImage struct {
		URL  string `json:"url"`
		Type string `json:"type"`
	}
	hubTitleDetail struct {
		Attributes           []any    `json:"attributes"`
		Availabilities       []any    `json:"availabilities"`
		Capabilities         []string `json:"capabilities"`
		Description          string   `json:"description"`
		DeveloperName        string   `json:"developerName"`
		Genres               []string `json:"genres"`
		PublisherName        string   `json:"publisherName"`
		MinAge               int      `json:"minAge"`
		ReleaseDate          *string  `json:"releaseDate"`
		ShortDescription     string   `json:"shortDescription"`
		VUIDisplayName       string   `json:"vuiDisplayName"`
		XboxLiveGoldRequired bool     `json:"xboxLiveGoldRequired"`
	}
	hubTitleHistory struct {
		LastTimePlayed string `json:"lastTimePlayed"`
		Visible        bool   `json:"visible"`
		CanHide        bool   `json:"canHide"`
	}
)

// titleHubService answers the title hub.
type titleHubService struct{ *world }

func (s titleHubService) routes() []route {
	return []route{
		{http.MethodGet, pat("/users/{user}/titles/titlehistory/decoration/{}"), s.serveTitleHubHistory, "2"},
		{http.MethodGet, pat("/users/{user}/titles/{}/decoration/{}"), s.serveTitleHubInfo, "2"},
		{http.MethodPost, pat("/titles/batch/decoration/{}"), s.serveTitleHubBatch, "2"},
		{http.MethodPost, pat("/users/{user}/titles/batch/decoration/{}"), s.serveTitleHubBatch, "2"},
	}
}

// hubTitleOf is one title, with the user's progress t, as the title hub
// shows it, with the decorations dec.
func (w *world) hubTitleOf(t titleProgress, dec map[string]bool) hubTitle {
	img := "https://images-eds-ssl.xboxlive.com/image?url=mock-title-" + t.title
	pfn := mockPFN(t.title)
	product := strings.Replace(w.scidOf(t.title), "00000000", "10000000", 1) // a GUID of its own, stable
	ht := hubTitle{TitleID: t.title, PFN: &pfn, WindowsPhoneProductID: &product, ServiceConfigID: w.scidOf(t.title), Name: titleName(t.title), Type: "Game",
		Devices: []string{"XboxOne", "XboxSeries"}, DisplayImage: img, MediaItemType: "Application", ModernTitleID: t.title,
		XboxLiveTier: "Full"}
	if dec["achievement"] {
		ht.Achievement = &hubTitleAchievement{CurrentAchievements: t.earned, TotalAchievements: achievementsPerTitle,
			CurrentGamerscore: t.gamerscore, TotalGamerscore: achievementScore * achievementsPerTitle,
			ProgressPercentage: float64(100*t.gamerscore) / float64(10*achievementsPerTitle), SourceVersion: 2}
	}
	if dec["detail"] {
		ht.Detail = &hubTitleDetail{Attributes: []any{}, Availabilities: []any{}, Capabilities: []string{}, Genres: []string{},
			VUIDisplayName: ht.Name}
	}
	if dec["image"] {
		ht.Images = &[]hubImage{{img, "BoxArt"}}
	}
	if dec["titlehistory"] && t.lastPlayed != "" {
		ht.TitleHistory = &hubTitleHistory{LastTimePlayed: t.lastPlayed, Visible: true, CanHide: true}
	}
	return ht
}

// decorations returns the lower-cased decorations a hub request names:
// the comma-separated list after /decoration/, its path's last capture;
// none when the path has no /decoration/ part.
func (c *call) decorations() map[string]bool {
	d := map[string]bool{}
	if len(c.params) == 0 || !strings.Contains(strings.ToLower(c.r.URL.Path), "/decoration/") {
		return d
	}
	for _, s := range strings.Split(c.params[len(c.params)-1], ",") {
		d[strings.ToLower(strings.TrimSpace(s))] = true
	}
	return d
}

// serveTitleHubHistory answers the titles the user played, the most
// recently played first, at most maxItems (1 to 1000; all by default).
func (s titleHubService) serveTitleHubHistory(c *call) {
	xuid := c.user(c.params[0])
	played := s.titlesPlayed(xuid)
	n := len(played)
	if s := c.query("maxItems"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 || n > 1000 {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "maxItems must be 1 to 1000")
			return
		}
	}
	slices.SortStableFunc(played, func(a, b titleProgress) int { return strings.Compare(b.lastPlayed, a.lastPlayed) })
	dec := c.decorations()
	dec["titlehistory"] = true // a history always says when (titlehub_titlehistory.json)
	titles := []hubTitle{}
	streamable := false
	for _, t := range played[:min(n, len(played))] {
		ht := s.hubTitleOf(t, dec)
		ht.GamePass, ht.IsStreamable = json.RawMessage("null"), &streamable // as the 2020-11 recording has them
		titles = append(titles, ht)
	}
	writeJSON(c.w, http.StatusOK, hubTitles{&xuid, titles})
}

// serveTitleHubInfo answers one title (titleid(T) or pfn(P)), with the
// user's progress in it.
func (s titleHubService) serveTitleHubInfo(c *call) {
	id, ok := titleNamed(c.params[1])
	if !ok {
		writeError(c.w, http.StatusNotFound, "NotFound", "no such title: want titleid(T) or pfn(P) of a mock title")
		return
	}
	xuid := c.user(c.params[0])
	ht := s.hubTitleOf(s.progressIn(xuid, id), c.decorations())
	streamable := false
	ht.IsStreamable = &streamable
	ht.AlternateTitleIDs = &[]string{}
	ht.GamePass = json.RawMessage("null")
	writeJSON(c.w, http.StatusOK, hubTitles{&xuid, []hubTitle{ht}})
}

// progressIn is xuid's progress in title, none where xuid has not played
// it or xuid is "".
func (w *world) progressIn(xuid, title string) titleProgress {
	if xuid != "" {
		for _, p := range w.titlesPlayed(xuid) {
			if p.title == title {
				return p
			}
		}
	}
	return titleProgress{title: title}
}

// maxHubBatch bounds the titles one title hub batch names; published tools
// send up to 500 at once.
const maxHubBatch = 500

// serveTitleHubBatch answers POST [/users/{user}]/titles/batch/decoration/
// {list}: the titles named by titleIds (numbers or strings) and by package
// family names (pfns; the mock's titles are "Mock.Title<T>_8wekyb3d8bbwe"),
// in the order asked, unknown names left out, as
// tests/data/responses/titlehub_batch.json records it; "xuid" and the
// user's progress only in the form with a user.
func (s titleHubService) serveTitleHubBatch(c *call) {
	var req struct {
		PFNs     []string      `json:"pfns"`
		TitleIDs []json.Number `json:"titleIds"`
	}
	if !c.decode(&req) {
		return
	}
	if n := len(req.PFNs) + len(req.TitleIDs); n == 0 || n > maxHubBatch {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "name 1 to 500 titles in pfns and titleIds")
		return
	}
	ids := make([]string, 0, len(req.TitleIDs)+len(req.PFNs))
	for _, n := range req.TitleIDs {
		if _, err := strconv.ParseUint(n.String(), 10, 32); err != nil {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "titleIds must hold 32-bit title ids")
			return
		}
		ids = append(ids, n.String())
	}
	for _, pfn := range req.PFNs {
		if id, ok := titleOfPFN(pfn); ok {
			ids = append(ids, id)
		}
	}
	var xuid string
	if len(c.params) > 1 {
		xuid = c.user(c.params[0])
	}
	dec := c.decorations()
	titles := make([]hubTitle, 0, len(ids))
	for _, id := range ids {
		ht := s.hubTitleOf(s.progressIn(xuid, id), dec)
		ht.AlternateTitleIDs = &[]string{}
		ht.GamePass = json.RawMessage("null")
		titles = append(titles, ht)
	}
	out := hubTitles{Titles: titles}
	if xuid != "" {
		out.XUID = &xuid
	}
	writeJSON(c.w, http.StatusOK, out)
}

// titleNamed returns the title id a title information path names:
// titleid(T), or pfn(P) with P one of the mock's package family names.
func titleNamed(seg string) (string, bool) {
	open, arg, ok := strings.Cut(seg, "(")
	arg, ok2 := strings.CutSuffix(arg, ")")
	if !ok || !ok2 {
		return "", false
	}
	switch strings.ToLower(open) {
	case "titleid":
		_, err := strconv.ParseUint(arg, 10, 32)
		return arg, err == nil
	case "pfn":
		return titleOfPFN(arg)
	}
	return "", false
}

// titleName is the name the mock gives title id, in every service that
// names a title (achievements, presence, the title and people hubs).
func titleName(id string) string { return "Title " + id }

// mockPFN is the package family name of the mock's title id.
func mockPFN(id string) string { return "Mock.Title" + id + "_8wekyb3d8bbwe" }

// titleOfPFN returns the title id of one of the mock's package family
// names.
func titleOfPFN(pfn string) (string, bool) {
	id, ok := strings.CutPrefix(pfn, "Mock.Title")
	id, ok2 := strings.CutSuffix(id, "_8wekyb3d8bbwe")
	if _, err := strconv.ParseUint(id, 10, 32); !ok || !ok2 || err != nil {
		return "", false
	}
	return id, true
}
