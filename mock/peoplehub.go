package mock

import (
	"net/http"
	"slices"
	"strconv"
)

// The people hub: the friends list with decorations, as the published
// clients ask for it first after signing in (OpenXbox/xbox-webapi-python
// people provider, contract 3): GET /users/{user}/people/social[/decoration/{list}]
// and POST /users/{user}/people/batch[/decoration/{list}] with {"xuids"}.
// Shapes from tests/data/responses/people_friends_own.json. The people are
// the ones the social service lists (peopleOf), with the gamertag, presence
// and profile details the other services answer for them.

type hubPerson struct {
	XUID                   string           `json:"xuid"`
	IsFavorite             bool             `json:"isFavorite"`
	IsFollowingCaller      bool             `json:"isFollowingCaller"`
	IsFollowedByCaller     bool             `json:"isFollowedByCaller"`
	IsIdentityShared       bool             `json:"isIdentityShared"`
	AddedDateTimeUtc       *string          `json:"addedDateTimeUtc"`
	DisplayName            string           `json:"displayName"`
	RealName               string           `json:"realName"`
	DisplayPicRaw          string           `json:"displayPicRaw"`
	ShowUserAsAvatar       string           `json:"showUserAsAvatar"`
	Gamertag               string           `json:"gamertag"`
	GamerScore             string           `json:"gamerScore"`
	ModernGamertag         string           `json:"modernGamertag"`
	ModernGamertagSuffix   string           `json:"modernGamertagSuffix"`
	UniqueModernGamertag   string           `json:"uniqueModernGamertag"`
	XboxOneRep             string           `json:"xboxOneRep"`
	PresenceState          string           `json:"presenceState"`
	PresenceText           string           `json:"presenceText"`
	PresenceDevices        *[]any           `json:"presenceDevices"`
	IsBroadcasting         bool             `json:"isBroadcasting"`
	IsCloaked              *bool            `json:"isCloaked"`
	IsQuarantined          bool             `json:"isQuarantined"`
	IsXbox360Gamerpic      bool             `json:"isXbox360Gamerpic"`
	LastSeenDateTimeUtc    *string          `json:"lastSeenDateTimeUtc"`
	Suggestion             hubSuggestion    `json:"suggestion"`
	Recommendation         *struct{}        `json:"recommendation"`
	Search                 *struct{}        `json:"search"`
	TitleHistory           *struct{}        `json:"titleHistory"`
	MultiplayerSummary     *hubMultiplayer  `json:"multiplayerSummary"`
	RecentPlayer           hubRecentPlayer  `json:"recentPlayer"`
	Follower               hubFollower      `json:"follower"`
	PreferredColor         *hubColor        `json:"preferredColor"`
	PresenceDetails        *[]hubPresence   `json:"presenceDetails"`
	TitlePresence          hubTitlePresence `json:"titlePresence"`
	TitleSummaries         *[]any           `json:"titleSummaries"`
	PresenceTitleIDs       []string         `json:"presenceTitleIds"`
	Detail                 *hubDetail       `json:"detail"`
	CommunityManagerTitles *[]any           `json:"communityManagerTitles"`
	SocialManager          hubSocialManager `json:"socialManager"`
	Broadcast              []any            `json:"broadcast"`
	TournamentSummary      *struct{}        `json:"tournamentSummary"`
	Avatar                 hubAvatar        `json:"avatar"`
	LinkedAccounts         []any            `json:"linkedAccounts"`
	ColorTheme             string           `json:"colorTheme"`
	PreferredFlag          string           `json:"preferredFlag"`
	PreferredPlatforms     []any            `json:"preferredPlatforms"`
}

type (
	hubSuggestion struct {
		Type     *string `json:"Type"`
		Priority int     `json:"Priority"`
		Reasons  *[]any  `json:"Reasons"`
		TitleID  *string `json:"TitleId"`
	}
	hubMultiplayer struct {
		InMultiplayerSession int `json:"InMultiplayerSession"`
		InParty              int `json:"InParty"`
	}
	hubRecentPlayer struct {
		Titles []string `json:"titles"` // title IDs (xbox-webapi-python peoplehub models RecentPlayer)
		Text   *string  `json:"text"`
	}
	hubFollower struct {
		Text             *string `json:"text"`
		FollowedDateTime string  `json:"followedDateTime"`
	}
	hubColor struct {
		PrimaryColor   string `json:"primaryColor"`
		SecondaryColor string `json:"secondaryColor"`
		TertiaryColor  string `json:"tertiaryColor"`
	}
	hubPresence struct {
		IsBroadcasting   bool    `json:"IsBroadcasting"`
		Device           string  `json:"Device"`
		PresenceText     string  `json:"PresenceText"`
		State            string  `json:"State"`
		TitleID          string  `json:"TitleId"`
		TitleType        *string `json:"TitleType"`
		IsPrimary        bool    `json:"IsPrimary"`
		IsGame           bool    `json:"IsGame"`
		RichPresenceText *string `json:"RichPresenceText"`
	}
	hubTitlePresence struct {
		IsCurrentlyPlaying bool    `json:"IsCurrentlyPlaying"`
		PresenceText       *string `json:"PresenceText"`
		TitleName          *string `json:"TitleName"`
		TitleID            *string `json:"TitleId"`
	}
	hubDetail struct {
		AccountTier    string `json:"accountTier"`
		Bio            string `json:"bio"`
		IsVerified     bool   `json:"isVerified"`
		Location       string `json:"location"`
		Tenure         string `json:"tenure"`
		Watermarks     []any  `json:"watermarks"`
		Blocked        bool   `json:"blocked"`
		Mute           bool   `json:"mute"`
		FollowerCount  int    `json:"followerCount"`
		FollowingCount int    `json:"followingCount"`
		HasGamePass    bool   `json:"hasGamePass"`
	}
	hubSocialManager struct {
		TitleIDs []any `json:"titleIds"`
		Pages    []any `json:"pages"`
	}
	hubAvatar struct {
		UpdateTimeOffset    string    `json:"updateTimeOffset"`
		SpritesheetMetadata *struct{} `json:"spritesheetMetadata"`
	}
)

// peopleHubService answers the people hub.
type peopleHubService struct{ *world }

func (s peopleHubService) routes() []route {
	const base = "/users/{user}/people"
	return []route{
		{http.MethodGet, pat(base + "/social"), s.servePeopleHub, "3"},
		{http.MethodGet, pat(base + "/social/decoration/{}"), s.servePeopleHub, "3"},
		{http.MethodPost, pat(base + "/batch"), s.servePeopleHubBatch, "3"},
		{http.MethodPost, pat(base + "/batch/decoration/{}"), s.servePeopleHubBatch, "3"},
		{http.MethodGet, pat(base + "/recentplayers"), s.serveRecentPlayers, "3"},
		{http.MethodGet, pat(base + "/recentplayers/decoration/{}"), s.serveRecentPlayers, "3"},
	}
}

// serveRecentPlayers answers the people the user played with lately, newest
// first, each with the titles played together (the people hub's answer, as
// the npm xbox-webapi people provider recentPlayers and
// xbox-webapi-python's people provider ask for it).
func (s peopleHubService) serveRecentPlayers(c *call) {
	owner := c.user(c.params[0])
	mine := map[string]person{}
	for _, p := range s.peopleOf(owner) {
		mine[p.XUID] = p
	}
	dec := c.decorations()
	people := []hubPerson{}
	for _, e := range s.recentPlayersOf(owner) {
		p, ok := mine[e.XUID]
		if !ok {
			p = person{XUID: e.XUID}
		}
		hp := s.hubPersonOf(p, dec)
		hp.RecentPlayer.Titles = append(hp.RecentPlayer.Titles, e.Titles...)
		people = append(people, hp)
	}
	writeHub(c, people)
}

func (s peopleHubService) servePeopleHub(c *call) {
	owner := c.user(c.params[0])
	dec := c.decorations()
	var people []hubPerson
	for _, p := range s.peopleOf(owner) {
		people = append(people, s.hubPersonOf(p, dec))
	}
	writeHub(c, people)
}

func (s peopleHubService) servePeopleHubBatch(c *call) {
	var req struct {
		XUIDs []string `json:"xuids"`
	}
	if !c.decode(&req) {
		return
	}
	if len(req.XUIDs) == 0 || len(req.XUIDs) > 100 || slices.ContainsFunc(req.XUIDs, notXUID) {
		// One that is no XUID is refused, as the profile, presence and
		// stats batches refuse it, rather than answered as a person.
		writeError(c.w, http.StatusBadRequest, "BadRequest", "xuids must hold 1 to 100 xuids")
		return
	}
	dec := c.decorations()
	mine := map[string]person{}
	for _, p := range s.peopleOf(c.user(c.params[0])) {
		mine[p.XUID] = p
	}
	people := make([]hubPerson, 0, len(req.XUIDs))
	for _, x := range req.XUIDs {
		p, ok := mine[x]
		if !ok {
			p = person{XUID: x}
		}
		people = append(people, s.hubPersonOf(p, dec))
	}
	writeHub(c, people)
}

func writeHub(c *call, people []hubPerson) {
	if people == nil {
		people = []hubPerson{}
	}
	writeJSON(c.w, http.StatusOK, struct {
		People                []hubPerson `json:"people"`
		RecommendationSummary *struct{}   `json:"recommendationSummary"`
		FriendFinderState     *struct{}   `json:"friendFinderState"`
		AccountLinkDetails    *struct{}   `json:"accountLinkDetails"`
	}{People: people})
}

// hubPersonOf is one person as the people hub shows them: the relation the
// social service lists, the gamertag, presence and profile details the
// other services answer; decorated sections only when asked for.
func (w *world) hubPersonOf(p person, dec map[string]bool) hubPerson {
	gt := w.gamertagOf(p.XUID)
	pres := w.presenceOf(p.XUID)
	hp := hubPerson{XUID: p.XUID, IsFavorite: p.IsFavorite, IsFollowingCaller: p.IsFollowingCaller, IsFollowedByCaller: p.IsFollowedByCaller,
		DisplayName: gt, Gamertag: gt, ModernGamertag: gt, UniqueModernGamertag: gt,
		DisplayPicRaw: profileValues["gamedisplaypicraw"], ShowUserAsAvatar: "0", GamerScore: strconv.Itoa(w.gamerscoreOf(p.XUID)),
		XboxOneRep: "GoodPlayer", PresenceState: pres.State, PresenceText: pres.State,
		RecentPlayer: hubRecentPlayer{Titles: []string{}}, Follower: hubFollower{FollowedDateTime: "0001-01-01T00:00:00"},
		PresenceTitleIDs: []string{}, SocialManager: hubSocialManager{TitleIDs: []any{}, Pages: []any{}}, Broadcast: []any{},
		Avatar: hubAvatar{UpdateTimeOffset: "0001-01-01T00:00:00+00:00"}, LinkedAccounts: []any{}, ColorTheme: "gamerpicblur",
		PreferredPlatforms: []any{}}
	if p.AddedDateTimeUtc != "" {
		hp.AddedDateTimeUtc = &p.AddedDateTimeUtc
	}
	if pres.LastSeen != nil {
		hp.LastSeenDateTimeUtc = &pres.LastSeen.Timestamp
	}
	if dec["multiplayersummary"] {
		hp.MultiplayerSummary = &hubMultiplayer{}
	}
	if dec["preferredcolor"] {
		hp.PreferredColor = &hubColor{"107c10", "102b14", "155715"}
	}
	if dec["presencedetail"] {
		hp.PresenceDetails = &[]hubPresence{}
	}
	if dec["detail"] {
		hp.Detail = &hubDetail{AccountTier: w.tierOf(p.XUID), Tenure: profileValues["tenurelevel"],
			Watermarks: []any{}, FollowerCount: w.followerCount(p.XUID), FollowingCount: len(w.peopleOf(p.XUID))}
	}
	return hp
}
