package mock

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The people hub: the friends list with decorations, as the published
// clients ask for it first after signing in (OpenXbox/xbox-webapi-python
// people provider, contract 3): GET /users/{user}/people/social[/decoration/{list}]
// and POST /users/{user}/people/batch[/decoration/{list}] with {"xuids"};
// and as XSAPI's Social Manager asks for it (peoplehub_service.cpp,
// contract 7): GET /users/{user}/people/friends/decoration/{list}, the
// people of the social list who follow back (isFriend), and the batch.
// Shapes from tests/data/responses/people_friends_own.json and
// people_batch.json; at contract 7 and later a person carries isFriend
// and useAvatar (both booleans) in place of showUserAsAvatar, as XSAPI's
// PeoplehubTests.cpp records it. The people are the ones the social
// service lists (peopleOf), with the gamertag, presence and profile
// details the other services answer for them.
//
// The decorations: presencedetail lists, for a person online, one record
// per title they are in, from their presence (device, state, title, and
// PresenceText "NAME" or "NAME - RICH PRESENCE", the form XSAPI takes the
// title's name from; the mock's titles are all games); an offline person
// has none. titlehistory(T) says when the person last played title T
// (lastTimePlayed as the title history has it, lastTimePlayedText how long
// ago, such as "8 months ago"), null when they have not played it.
// preferredcolor, multiplayersummary and detail as recorded.

type hubPerson struct {
	XUID                   string           `json:"xuid"`
	IsFavorite             bool             `json:"isFavorite"`
	IsFollowingCaller      bool             `json:"isFollowingCaller"`
	IsFollowedByCaller     bool             `json:"isFollowedByCaller"`
	IsFriend               *bool            `json:"isFriend,omitempty"` // contract 7 and later
	IsIdentityShared       bool             `json:"isIdentityShared"`
	AddedDateTimeUtc       *string          `json:"addedDateTimeUtc"`
	DisplayName            string           `json:"displayName"`
	RealName               string           `json:"realName"`
	DisplayPicRaw          string           `json:"displayPicRaw"`
	ShowUserAsAvatar       string           `json:"showUserAsAvatar,omitempty"` // before contract 7
	UseAvatar              *bool            `json:"useAvatar,omitempty"`        // contract 7 and later
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
	TitleHistory           *hubPlayed       `json:"titleHistory"`
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
	hubPlayed struct {
		TitleName          string `json:"titleName"`
		TitleID            string `json:"titleId"`
		LastTimePlayed     string `json:"lastTimePlayed"`
		LastTimePlayedText string `json:"lastTimePlayedText"`
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

// hubContract is the contract column of the people hub's routes: every
// answer has contract 3's shape, or contract 7's when asked for it.
const hubContract = "3 and 7 (isFriend, useAvatar)"

func (s peopleHubService) routes() []route {
	const base = "/users/{user}/people"
	return []route{
		{http.MethodGet, pat(base + "/social"), s.servePeopleHub, hubContract},
		{http.MethodGet, pat(base + "/social/decoration/{}"), s.servePeopleHub, hubContract},
		{http.MethodGet, pat(base + "/friends"), s.serveFriends, hubContract},
		{http.MethodGet, pat(base + "/friends/decoration/{}"), s.serveFriends, hubContract},
		{http.MethodPost, pat(base + "/batch"), s.servePeopleHubBatch, hubContract},
		{http.MethodPost, pat(base + "/batch/decoration/{}"), s.servePeopleHubBatch, hubContract},
		{http.MethodGet, pat(base + "/recentplayers"), s.serveRecentPlayers, hubContract},
		{http.MethodGet, pat(base + "/recentplayers/decoration/{}"), s.serveRecentPlayers, hubContract},
	}
}

// hubAsk is what a people hub request asks of each person: the
// decorations, and contract 7's shape (XSAPI's).
type hubAsk struct {
	dec map[string]bool
	v7  bool
}

func askOf(c *call) hubAsk { return hubAsk{c.decorations(), contractAtLeast(c.r, 7)} }

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
	ask := askOf(c)
	people := []hubPerson{}
	for _, e := range s.recentPlayersOf(owner) {
		p, ok := mine[e.XUID]
		if !ok {
			p = person{XUID: e.XUID}
		}
		hp := s.hubPersonOf(p, ask)
		hp.RecentPlayer.Titles = append(hp.RecentPlayer.Titles, e.Titles...)
		people = append(people, hp)
	}
	writeHub(c, people)
}

// servePeopleHub answers the people the user follows (/people/social).
func (s peopleHubService) servePeopleHub(c *call) {
	s.writePeople(c, func(person) bool { return true })
}

// serveFriends answers the user's friends (/people/friends, XSAPI's Social
// Manager's social graph): the people they follow who follow them back.
func (s peopleHubService) serveFriends(c *call) {
	s.writePeople(c, func(p person) bool { return p.IsFriend })
}

// writePeople answers the people of the user's social list that keep
// reports true for, in its order.
func (s peopleHubService) writePeople(c *call, keep func(person) bool) {
	ask := askOf(c)
	var people []hubPerson
	for _, p := range s.peopleOf(c.user(c.params[0])) {
		if keep(p) {
			people = append(people, s.hubPersonOf(p, ask))
		}
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
	ask := askOf(c)
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
		people = append(people, s.hubPersonOf(p, ask))
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
func (w *world) hubPersonOf(p person, ask hubAsk) hubPerson {
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
	if ask.v7 {
		friend, avatar := p.IsFriend, false // as showUserAsAvatar "0" says before 7
		hp.IsFriend, hp.UseAvatar, hp.ShowUserAsAvatar = &friend, &avatar, ""
	}
	if p.AddedDateTimeUtc != "" {
		hp.AddedDateTimeUtc = &p.AddedDateTimeUtc
	}
	if pres.LastSeen != nil {
		hp.LastSeenDateTimeUtc = &pres.LastSeen.Timestamp
	}
	dec := ask.dec
	if dec["multiplayersummary"] {
		hp.MultiplayerSummary = &hubMultiplayer{}
	}
	if dec["preferredcolor"] {
		hp.PreferredColor = &hubColor{"107c10", "102b14", "155715"}
	}
	if dec["presencedetail"] {
		details := presenceDetailsOf(pres)
		hp.PresenceDetails = &details
	}
	if title, ok := titleHistoryDecoration(dec); ok {
		hp.TitleHistory = w.playedOf(p.XUID, title)
	}
	if dec["detail"] {
		hp.Detail = &hubDetail{AccountTier: w.tierOf(p.XUID), Tenure: profileValues["tenurelevel"],
			Watermarks: []any{}, FollowerCount: w.followerCount(p.XUID), FollowingCount: len(w.peopleOf(p.XUID))}
	}
	return hp
}

// presenceDetailsOf is the presencedetail decoration of a presence record:
// a record per title the user is in, none ([]) when they are offline.
func presenceDetailsOf(pres presenceRecord) []hubPresence {
	out := []hubPresence{}
	if pres.State != "Online" {
		return out
	}
	for _, d := range pres.Devices {
		for _, t := range d.Titles {
			hp := hubPresence{Device: d.Type, PresenceText: t.Name, State: t.State, TitleID: t.ID,
				IsPrimary: t.Placement == "Full", IsGame: true}
			if t.Activity != nil {
				rich := t.Activity.RichPresence
				hp.PresenceText += " - " + rich
				hp.RichPresenceText = &rich
			}
			out = append(out, hp)
		}
	}
	return out
}

// titleHistoryDecoration returns the title a titlehistory(T) decoration names.
func titleHistoryDecoration(dec map[string]bool) (string, bool) {
	for d := range dec {
		if t, ok := strings.CutPrefix(d, "titlehistory("); ok {
			return strings.CutSuffix(t, ")")
		}
	}
	return "", false
}

// playedOf is the titlehistory(title) decoration of xuid: when they last
// played title, nil when they have not.
func (w *world) playedOf(xuid, title string) *hubPlayed {
	t := w.progressIn(xuid, title)
	if t.lastPlayed == "" {
		return nil
	}
	text := ""
	if at, err := time.Parse(time.RFC3339, t.lastPlayed); err == nil {
		text = agoText(w.now(), at)
	}
	return &hubPlayed{TitleName: titleName(title), TitleID: title, LastTimePlayed: t.lastPlayed, LastTimePlayedText: text}
}

// agoText says how long before now t was, as the people hub words it
// ("8 months ago"): in the largest of years (365 days), months (30 days),
// days, hours and minutes that fits once, at least "1 minute ago".
func agoText(now, t time.Time) string {
	d := now.Sub(t)
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"year", 365 * 24 * time.Hour}, {"month", 30 * 24 * time.Hour}, {"day", 24 * time.Hour}, {"hour", time.Hour}} {
		if d >= u.d {
			return plural(int(d/u.d), u.name) + " ago"
		}
	}
	return plural(max(1, int(d/time.Minute)), "minute") + " ago"
}

// plural is n and name, with an s when n is not 1.
func plural(n int, name string) string {
	if n == 1 {
		return "1 " + name
	}
	return strconv.Itoa(n) + " " + name + "s"
}
