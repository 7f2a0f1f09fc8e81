package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
)

// The people hub, the title hub and user search: what third-party clients
// call first after signing in (OpenXbox/xbox-webapi-python's people,
// titlehub and usersearch providers; the npm xbox-webapi package). None has
// a published FGRL limit; the limits data counts them at the trace
// analyzer's general 10 / 30.
var (
	peoplehubAPI  = api{service: "peoplehub", host: "peoplehub.xboxlive.com", contract: "3", rule: "peoplehub"}
	titlehubAPI   = api{service: "titlehub", host: "titlehub.xboxlive.com", contract: "2", rule: "titlehub"}
	usersearchAPI = api{service: "usersearch", host: "usersearch.xboxlive.com", contract: "1", rule: "usersearch"}
)

// friendDecorations are the sections GetFriends asks the people hub for,
// those xbox-webapi-python's get_friends_by_xuid asks for by default.
const friendDecorations = "preferredcolor,detail,multiplayersummary,presencedetail"

// HubPerson is a person as the people hub shows them: the relationship,
// the profile, presence and, where asked for, details.
type HubPerson struct {
	XUID                 string `json:"xuid"`
	Gamertag             string `json:"gamertag"`
	DisplayName          string `json:"displayName"`
	ModernGamertag       string `json:"modernGamertag"`
	UniqueModernGamertag string `json:"uniqueModernGamertag"`
	GamerScore           string `json:"gamerScore"`
	DisplayPicRaw        string `json:"displayPicRaw"`
	IsFavorite           bool   `json:"isFavorite"`
	IsFollowingCaller    bool   `json:"isFollowingCaller"`
	IsFollowedByCaller   bool   `json:"isFollowedByCaller"`
	// PresenceState is "Online" or "Offline"; PresenceText what the
	// dashboard shows ("Home", a title's rich presence).
	PresenceState string `json:"presenceState"`
	PresenceText  string `json:"presenceText"`
	// LastSeenDateTimeUtc is when an offline person was last seen (RFC
	// 3339), "" when the service does not say.
	LastSeenDateTimeUtc string `json:"lastSeenDateTimeUtc"`
	// PresenceDetails are the titles the person is in, device by device
	// (the presencedetail decoration).
	PresenceDetails []HubPresence `json:"presenceDetails"`
	// Detail is the detail decoration: tier and follower counts; nil when
	// not asked for.
	Detail *HubDetail `json:"detail"`
	// RecentPlayer is, for a recent player, the titles played together
	// (title IDs); nil otherwise.
	RecentPlayer *struct {
		Titles []string `json:"titles"`
		Text   string   `json:"text"`
	} `json:"recentPlayer"`
}

// HubPresence is one title a person is in.
type HubPresence struct {
	Device       string `json:"Device"`
	State        string `json:"State"`
	TitleID      string `json:"TitleId"`
	PresenceText string `json:"PresenceText"`
	IsPrimary    bool   `json:"IsPrimary"`
	IsGame       bool   `json:"IsGame"`
}

// HubDetail is the people hub's detail decoration.
type HubDetail struct {
	AccountTier    string `json:"accountTier"`
	Bio            string `json:"bio"`
	Location       string `json:"location"`
	Tenure         string `json:"tenure"`
	FollowerCount  int    `json:"followerCount"`
	FollowingCount int    `json:"followingCount"`
	HasGamePass    bool   `json:"hasGamePass"`
}

// GetFriends returns the people a user follows, with their presence
// (titles, device by device) and details
// (GET peoplehub /users/xuid(X)/people/social/decoration/preferredcolor,detail,multiplayersummary,presencedetail).
func (u *User) GetFriends(ctx context.Context, xuid string) ([]HubPerson, error) {
	a := peoplehubAPI
	a.name = "GetFriends"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return nil, err
	}
	return u.hubPeople(ctx, a, userPath(xuid, "people", "social", "decoration", friendDecorations))
}

// GetRecentPlayers returns the people the acting user played with lately,
// newest first, each with the titles played together in RecentPlayer
// (GET peoplehub /users/xuid(X)/people/recentplayers).
func (u *User) GetRecentPlayers(ctx context.Context) ([]HubPerson, error) {
	a := peoplehubAPI
	a.name = "GetRecentPlayers"
	if err := checkXUID(a, "the acting user", u.xuid); err != nil {
		return nil, err
	}
	return u.hubPeople(ctx, a, userPath(u.xuid, "people", "recentplayers"))
}

func (u *User) hubPeople(ctx context.Context, a api, p reqPath) ([]HubPerson, error) {
	var out struct {
		People []HubPerson `json:"people"`
	}
	status, err := u.call(ctx, a, "GET", p, nil, nil, &out)
	if err != nil {
		return nil, err
	}
	if out.People == nil {
		return nil, lacks(a, status, `"people"`)
	}
	if err := eachNamed(a, status, `"xuid"`, out.People, func(x HubPerson) string { return x.XUID }); err != nil {
		return nil, err
	}
	return out.People, nil
}

// titleDecorations are the sections the title hub calls ask for, as
// xbox-webapi-python's get_title_history does by default.
const titleDecorations = "achievement,image,scid"

// Title is a title as the title hub shows it, with the user's progress.
type Title struct {
	TitleID         string   `json:"titleId"`
	Name            string   `json:"name"`
	PFN             string   `json:"pfn"`
	ServiceConfigID string   `json:"serviceConfigId"`
	Type            string   `json:"type"`
	Devices         []string `json:"devices"`
	DisplayImage    string   `json:"displayImage"`
	// Achievement is the user's progress (the achievement decoration).
	Achievement *struct {
		CurrentAchievements int     `json:"currentAchievements"`
		TotalAchievements   int     `json:"totalAchievements"`
		CurrentGamerscore   int     `json:"currentGamerscore"`
		TotalGamerscore     int     `json:"totalGamerscore"`
		ProgressPercentage  float64 `json:"progressPercentage"`
	} `json:"achievement"`
	// TitleHistory says when the user last played it, in a history.
	TitleHistory *struct {
		LastTimePlayed string `json:"lastTimePlayed"`
	} `json:"titleHistory"`
}

// GetTitleHistory returns the titles a user played, most recent first, at
// most maxItems of them (1 to 1000)
// (GET titlehub /users/xuid(X)/titles/titlehistory/decoration/achievement,image,scid?maxItems=N).
// An answer of more than maxItems titles is an error.
func (u *User) GetTitleHistory(ctx context.Context, xuid string, maxItems int) ([]Title, error) {
	a := titlehubAPI
	a.name = "GetTitleHistory"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return nil, err
	}
	if err := checkCount(a, "maxItems", maxItems, 1, 1000); err != nil {
		return nil, err
	}
	q := url.Values{"maxItems": {strconv.Itoa(maxItems)}}
	ts, status, err := u.titles(ctx, a, userPath(xuid, "titles", "titlehistory", "decoration", titleDecorations), q)
	if err == nil && len(ts) > maxItems {
		return nil, lacks(a, status, "at most maxItems ("+strconv.Itoa(maxItems)+") titles")
	}
	return ts, err
}

// GetTitle returns a title with the acting user's progress in it
// (GET titlehub /users/xuid(X)/titles/titleid(T)/decoration/achievement,image,scid).
// An answer naming another title is an error.
func (u *User) GetTitle(ctx context.Context, titleID string) (Title, error) {
	a := titlehubAPI
	a.name = "GetTitle"
	if err := checkXUID(a, "the acting user", u.xuid); err != nil {
		return Title{}, err
	}
	if err := checkTitle(a, titleID); err != nil {
		return Title{}, err
	}
	ts, status, err := u.titles(ctx, a, userPath(u.xuid, "titles", "titleid("+titleID+")", "decoration", titleDecorations), nil)
	if err != nil {
		return Title{}, err
	}
	switch {
	case len(ts) != 1:
		return Title{}, lacks(a, status, "one title")
	case ts[0].TitleID != titleID: // another title is not this one
		return Title{}, lacks(a, status, "the title asked for (it names "+safetext.Quote(ts[0].TitleID, 16)+")")
	}
	return ts[0], nil
}

// titles gets a list of titles, with the answer's status.
func (u *User) titles(ctx context.Context, a api, p reqPath, q url.Values) ([]Title, int, error) {
	var out struct {
		Titles []Title `json:"titles"`
	}
	status, err := u.call(ctx, a, "GET", p, q, nil, &out)
	if err != nil {
		return nil, status, err
	}
	if out.Titles == nil {
		return nil, status, lacks(a, status, `"titles"`)
	}
	if err := eachNamed(a, status, `"titleId"`, out.Titles, func(x Title) string { return x.TitleID }); err != nil {
		return nil, status, err
	}
	return out.Titles, status, nil
}

// UserSearchResult is one account a user search found.
type UserSearchResult struct {
	XUID          string `json:"id"`
	Gamertag      string `json:"gamertag"`
	DisplayPicURI string `json:"displayPicUri"`
}

// SearchUsers returns the accounts whose gamertag matches query, as the
// service ranks them (GET usersearch /suggest?q=Q).
func (u *User) SearchUsers(ctx context.Context, query string) ([]UserSearchResult, error) {
	a := usersearchAPI
	a.name = "SearchUsers"
	if q := strings.TrimSpace(query); q == "" || len(q) > 60 {
		return nil, invalid(a, "query "+safetext.Quote(query, 40)+" must hold 1 to 60 bytes")
	}
	var out struct {
		Results []struct {
			Result UserSearchResult `json:"result"`
		} `json:"results"`
	}
	status, err := u.call(ctx, a, "GET", path("suggest"), url.Values{"q": {query}}, nil, &out)
	if err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, lacks(a, status, `"results"`)
	}
	found := make([]UserSearchResult, 0, len(out.Results))
	for _, r := range out.Results {
		found = append(found, r.Result)
	}
	if err := eachNamed(a, status, `"result" with an "id"`, found, func(x UserSearchResult) string { return x.XUID }); err != nil {
		return nil, err
	}
	return found, nil
}
