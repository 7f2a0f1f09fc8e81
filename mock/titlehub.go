package mock

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// The title hub, as the published clients ask it for a user's title history
// and a title's information (OpenXbox/xbox-webapi-python titlehub provider,
// contract 2): GET /users/{user}/titles/titlehistory/decoration/{list} and
// GET /users/{user}/titles/titleid(T)/decoration/{list}. Shapes from
// tests/data/responses/titlehub_titlehistory.json and titlehub_titleinfo.json.
// The titles are the ones the achievements service's history lists, with
// the same counts; decorated sections (achievement, image, titlehistory)
// only when asked for; "detail" (the store's description of a title) is
// answered null, as the mock has no store. It has no published FGRL rule: the limits data counts
// it at the trace analyzer's general 10 / 30.

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
	Detail                *struct{}            `json:"detail"`
	FriendsWhoPlayed      *[]any               `json:"friendsWhoPlayed"`
	AlternateTitleIDs     *[]string            `json:"alternateTitleIds"`
	ContentBoards         *[]any               `json:"contentBoards"`
	XboxLiveTier          string               `json:"xboxLiveTier"`
	IsStreamable          *bool                `json:"isStreamable,omitempty"`
}

type (
	// hubTitles is both routes' answer: the user and the titles.
	hubTitles struct {
		XUID   string     `json:"xuid"`
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
	hubTitleHistory struct {
		LastTimePlayed string `json:"lastTimePlayed"`
		Visible        bool   `json:"visible"`
		CanHide        bool   `json:"canHide"`
	}
)

func titlehubRoutes() []route {
	return []route{
		{http.MethodGet, pat("/users/{user}/titles/titlehistory/decoration/{}"), serveTitleHubHistory, "2"},
		{http.MethodGet, pat("/users/{user}/titles/{}/decoration/{}"), serveTitleHubInfo, "2"},
	}
}

// hubTitleOf is one title, with the user's progress t, as the title hub
// shows it, with the decorations dec.
func (h *Handler) hubTitleOf(t titleProgress, dec map[string]bool) hubTitle {
	img := "https://images-eds-ssl.xboxlive.com/image?url=mock-title-" + t.title
	pfn := "Mock.Title" + t.title + "_8wekyb3d8bbwe"
	product := strings.Replace(h.scidOf(t.title), "00000000", "10000000", 1) // a GUID of its own, stable
	ht := hubTitle{TitleID: t.title, PFN: &pfn, WindowsPhoneProductID: &product, ServiceConfigID: h.scidOf(t.title), Name: "Title " + t.title, Type: "Game",
		Devices: []string{"XboxOne", "XboxSeries"}, DisplayImage: img, MediaItemType: "Application", ModernTitleID: t.title,
		XboxLiveTier: "Full"}
	if dec["achievement"] {
		ht.Achievement = &hubTitleAchievement{CurrentAchievements: t.earned, TotalAchievements: achievementsPerTitle,
			CurrentGamerscore: t.gamerscore, TotalGamerscore: 10 * achievementsPerTitle,
			ProgressPercentage: float64(100*t.gamerscore) / float64(10*achievementsPerTitle), SourceVersion: 2}
	}
	if dec["image"] {
		ht.Images = &[]hubImage{{img, "BoxArt"}}
	}
	if dec["titlehistory"] {
		ht.TitleHistory = &hubTitleHistory{LastTimePlayed: "2024-01-01T00:00:00.0000000Z", Visible: true, CanHide: true}
	}
	return ht
}

// decorationsOf returns the lower-cased decorations a hub request names:
// the comma-separated list of its last path capture after the user's, none
// when the path has no /decoration/ part.
func decorationsOf(params []string) map[string]bool {
	d := map[string]bool{}
	if len(params) < 2 {
		return d
	}
	for _, s := range strings.Split(params[len(params)-1], ",") {
		d[strings.ToLower(strings.TrimSpace(s))] = true
	}
	return d
}

func serveTitleHubHistory(h *Handler, c *call) {
	xuid := c.user(c.params[0])
	dec := decorationsOf(c.params)
	titles := []hubTitle{}
	for _, t := range h.titlesPlayed(xuid) {
		titles = append(titles, h.hubTitleOf(t, dec))
	}
	writeJSON(c.w, http.StatusOK, hubTitles{xuid, titles})
}

// serveTitleHubInfo answers one title (titleid(T)), with the user's
// progress in it.
func serveTitleHubInfo(h *Handler, c *call) {
	id, ok := strings.CutPrefix(strings.ToLower(c.params[1]), "titleid(")
	id, ok2 := strings.CutSuffix(id, ")")
	if _, err := strconv.ParseUint(id, 10, 32); !ok || !ok2 || err != nil {
		writeError(c.w, http.StatusNotFound, "NotFound", "no such title: want titleid(T)")
		return
	}
	xuid := c.user(c.params[0])
	t := titleProgress{title: id}
	for _, p := range h.titlesPlayed(xuid) {
		if p.title == id {
			t = p
		}
	}
	ht := h.hubTitleOf(t, decorationsOf(c.params))
	streamable := false
	ht.IsStreamable = &streamable
	ht.AlternateTitleIDs = &[]string{}
	ht.GamePass = json.RawMessage("null")
	writeJSON(c.w, http.StatusOK, hubTitles{xuid, []hubTitle{ht}})
}
