package mock

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The social service, contract 3 (XSAPI social_service.cpp,
// social_relationship_result.cpp; SocialTests.cpp):
// GET /users/{me|xuid(N)}/people?view=V&startIndex=S&maxItems=M answers
// {"totalCount", "people": [...]}, the view one of All (the default),
// Favorite, FriendList or LegacyXboxLiveFriends; GET /users/{user}/summary
// (contract 2) sums the same relationships up; POST /users/{user}/people/xuids
// lists the relationships with the XUIDs named. The privacy service:
// GET /users/{me|xuid(N)}/permission/validate?setting=S&target=xuid(M)
// (XSAPI PrivacyTests.cpp).

type person struct {
	XUID               string   `json:"xuid"`
	AddedDateTimeUtc   string   `json:"addedDateTimeUtc"`
	IsFavorite         bool     `json:"isFavorite"`
	IsFriend           bool     `json:"isFriend"`
	IsFollowingCaller  bool     `json:"isFollowingCaller"`
	IsFollowedByCaller bool     `json:"isFollowedByCaller"`
	SocialNetworks     []string `json:"socialNetworks"`
}

// peoplePerUser is how many relationships each mock user has.
const peoplePerUser = 12

// socialService answers the social service.
type socialService struct{ *world }

func (s socialService) routes() []route {
	return []route{
		{http.MethodGet, pat("/users/{user}/people"), s.servePeople, "3"},
		{http.MethodGet, pat("/users/{user}/summary"), s.serveSummary, "2"},
		{http.MethodGet, pat("/users/gt({})/summary"), s.serveSummaryByGamertag, "2"},
		{http.MethodPost, pat("/users/{user}/people/xuids"), s.servePeopleByXUIDs, "1"},
	}
}

// servePeopleByXUIDs answers POST /users/{user}/people/xuids {"xuids": [...]}
// (OpenXbox/xbox-webapi-csharp PeopleService, PeopleBatchRequest.json): the
// user's relationships with those of the XUIDs it has one with, in the
// order asked.
func (s socialService) servePeopleByXUIDs(c *call) {
	var req struct {
		XUIDs []string `json:"xuids"`
	}
	if !c.decode(&req) {
		return
	}
	if len(req.XUIDs) == 0 || len(req.XUIDs) > maxPeople {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "xuids must hold 1 to 1000 xuids")
		return
	}
	mine := map[string]person{}
	for _, p := range s.peopleOf(c.user(c.params[0])) {
		mine[p.XUID] = p
	}
	people := []person{}
	for _, x := range req.XUIDs {
		if p, ok := mine[x]; ok {
			people = append(people, p)
			delete(mine, x)
		}
	}
	writeJSON(c.w, http.StatusOK, struct {
		TotalCount int      `json:"totalCount"`
		People     []person `json:"people"`
	}{len(people), people})
}

// summary is the social service's summary of a user's relationships, as
// seen by the caller (OpenXbox/xbox-webapi-python
// tests/data/responses/people_summary_own.json; xbox-webapi-python's people
// provider asks for it with contract 2).
type summary struct {
	TargetFollowingCount                  int    `json:"targetFollowingCount"`
	TargetFollowerCount                   int    `json:"targetFollowerCount"`
	IsCallerFollowingTarget               bool   `json:"isCallerFollowingTarget"`
	IsTargetFollowingCaller               bool   `json:"isTargetFollowingCaller"`
	HasCallerMarkedTargetAsFavorite       bool   `json:"hasCallerMarkedTargetAsFavorite"`
	HasCallerMarkedTargetAsIdentityShared bool   `json:"hasCallerMarkedTargetAsIdentityShared"`
	LegacyFriendStatus                    string `json:"legacyFriendStatus"`
	AvailablePeopleSlots                  int    `json:"availablePeopleSlots"`
	RecentChangeCount                     int    `json:"recentChangeCount"`
	Watermark                             string `json:"watermark"`
}

// maxPeople is how many relationships a user may have.
const maxPeople = 1000

// serveSummary answers the summary from the same relationships /people
// lists: the target's counts are its own list's, and the caller's relation
// to the target is the one the caller's list (or the target's) holds.
func (s socialService) serveSummary(c *call) { s.summarize(c, c.user(c.params[0])) }

// serveSummaryByGamertag answers GET /users/gt(G)/summary
// (xbox-webapi-python get_friends_summary_by_gamertag,
// people_summary_by_gamertag.json; xbox-webapi-csharp PeopleService): the
// summary of the world's account with that gamertag, 404 for none.
func (s socialService) serveSummaryByGamertag(c *call) {
	target, ok := s.xuidOfGamertag(c.params[0])
	if !ok {
		writeError(c.w, http.StatusNotFound, "NotFound", "no user has this gamertag")
		return
	}
	s.summarize(c, target)
}

func (w *world) summarize(c *call, target string) {
	caller := c.id.xuid
	s := summary{LegacyFriendStatus: "None", AvailablePeopleSlots: maxPeople - peoplePerUser, Watermark: "0"}
	s.TargetFollowerCount = w.followerCount(target)
	for _, p := range w.peopleOf(target) {
		s.TargetFollowingCount++
		if p.XUID == caller && caller != target {
			s.IsCallerFollowingTarget, s.IsTargetFollowingCaller = p.IsFollowingCaller, p.IsFollowedByCaller
		}
	}
	for _, p := range w.peopleOf(caller) {
		if p.XUID == target && caller != target {
			s.IsCallerFollowingTarget, s.IsTargetFollowingCaller = p.IsFollowedByCaller, p.IsFollowingCaller
			s.HasCallerMarkedTargetAsFavorite = p.IsFavorite
			if len(p.SocialNetworks) > 0 {
				s.LegacyFriendStatus = "Friend"
			}
		}
	}
	writeJSON(c.w, http.StatusOK, s)
}

// derivedPeople returns the default world's relationships of xuid: the
// next peoplePerUser xuids, the first two favourites, every third one a
// legacy friend.
func derivedPeople(xuid string) []person {
	n, _ := strconv.ParseUint(xuid, 10, 64)
	added := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]person, peoplePerUser)
	for i := range out {
		p := person{XUID: strconv.FormatUint(n+uint64(i)+1, 10), IsFavorite: i < 2, IsFriend: true,
			IsFollowingCaller: true, IsFollowedByCaller: true, SocialNetworks: []string{},
			AddedDateTimeUtc: added.AddDate(0, 0, i).Format(time.RFC3339)}
		if i%3 == 0 {
			p.SocialNetworks = []string{"LegacyXboxLive"}
		}
		out[i] = p
	}
	return out
}

func inView(p person, view string) (keep, ok bool) {
	switch strings.ToLower(view) {
	case "", "all":
		return true, true
	case "favorite":
		return p.IsFavorite, true
	case "friendlist":
		return p.IsFriend, true
	case "legacyxboxlivefriends":
		return len(p.SocialNetworks) > 0, true
	}
	return false, false
}

func (s socialService) servePeople(c *call) {
	var people []person
	for _, p := range s.peopleOf(c.user(c.params[0])) {
		keep, ok := inView(p, c.query("view"))
		if !ok {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "view must be All, Favorite, FriendList or LegacyXboxLiveFriends")
			return
		}
		if keep {
			people = append(people, p)
		}
	}
	start, err1 := atoiOr(c.query("startIndex"), 0)
	maxItems, err2 := atoiOr(c.query("maxItems"), 100)
	if err1 != nil || err2 != nil || start < 0 || maxItems < 1 || maxItems > 1000 {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "startIndex must be 0 or more and maxItems 1 to 1000")
		return
	}
	total := len(people)
	people = people[min(start, total):min(start+maxItems, total)]
	writeJSON(c.w, http.StatusOK, struct {
		TotalCount int      `json:"totalCount"`
		People     []person `json:"people"`
	}{total, people})
}

func atoiOr(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}

// privacyService answers the privacy service.
type privacyService struct{ *world }

func (s privacyService) routes() []route {
	return []route{{http.MethodGet, pat("/users/{user}/permission/validate"), s.servePermission, "1"}}
}

type permissionReason struct {
	Reason string `json:"reason"`
}

func (s privacyService) servePermission(c *call) {
	setting, target := c.query("setting"), xuidDigits(c.query("target"))
	if setting == "" || target == "" {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "setting and target=xuid(N) are required")
		return
	}
	// Every permission is granted except toward xuid(0), which has blocked
	// everyone: a refused case for tests.
	allowed := target != "0"
	var reasons []permissionReason // absent when allowed
	if !allowed {
		reasons = append(reasons, permissionReason{Reason: "BlockListRestrictsTarget"})
	}
	writeJSON(c.w, http.StatusOK, struct {
		IsAllowed bool               `json:"isAllowed"`
		Reasons   []permissionReason `json:"reasons,omitempty"`
	}{allowed, reasons})
}
