package client

import (
	"context"
	"iter"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
)

var achievementsAPI = api{service: "achievements", host: "achievements.xboxlive.com", contract: "2", rule: "achievements"}

// Achievement is one achievement and the user's progress on it, as the
// achievements service (contract 2) describes it.
type Achievement struct {
	ID                string             `json:"id"`
	ServiceConfigID   string             `json:"serviceConfigId"`
	Name              string             `json:"name"`
	TitleAssociations []TitleAssociation `json:"titleAssociations"`
	ProgressState     string             `json:"progressState"` // "NotStarted", "InProgress", "Achieved"
	Progression       Progression        `json:"progression"`
	Description       string             `json:"description"`
	LockedDescription string             `json:"lockedDescription"`
	IsSecret          bool               `json:"isSecret"`
	// AchievementType is "Persistent", or "Challenge" for one that can be
	// unlocked only within its TimeWindow.
	AchievementType string      `json:"achievementType"`
	TimeWindow      *TimeWindow `json:"timeWindow"`
	Rewards         []Reward    `json:"rewards"`
	// Deeplink launches the title at the achievement (base64), "" when it
	// has none.
	Deeplink string `json:"deeplink"`
}

// TimeWindow is when a challenge can be unlocked (RFC 3339 times).
type TimeWindow struct {
	StartDate string `json:"startDate"`
	EndDate   string `json:"endDate"`
}

// MediaAsset is an image an achievement or reward shows.
type MediaAsset struct {
	Name string `json:"name"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// TitleAssociation names a title an achievement belongs to.
type TitleAssociation struct {
	Name string `json:"name"`
	ID   uint32 `json:"id"`
}

// Progression is a user's progress on an achievement.
type Progression struct {
	Requirements []Requirement `json:"requirements"`
	TimeUnlocked string        `json:"timeUnlocked"` // RFC 3339; year 1 when locked
}

// Requirement is one condition of an achievement. Current is "" (the
// service sends null) before any progress.
type Requirement struct {
	ID      string `json:"id"`
	Current string `json:"current"`
	Target  string `json:"target"`
}

// Reward is what unlocking gives, such as 10 "Gamerscore" or an "InApp"
// item with its name, description and image.
type Reward struct {
	Value       string      `json:"value"`
	Type        string      `json:"type"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	MediaAsset  *MediaAsset `json:"mediaAsset"`
}

// Percent returns the progress from 0 to 100: 100 once achieved, otherwise
// the first requirement's current value as a share of its target (0 when
// the service gave no numbers, or gave ones that are not finite, or a
// target that is not positive).
func (a *Achievement) Percent() int {
	if a.ProgressState == "Achieved" {
		return 100
	}
	if len(a.Progression.Requirements) == 0 {
		return 0
	}
	r := a.Progression.Requirements[0]
	cur, err1 := strconv.ParseFloat(r.Current, 64)
	target, err2 := strconv.ParseFloat(r.Target, 64)
	if err1 != nil || err2 != nil || !(target > 0 && cur > 0) || math.IsInf(target, 0) || math.IsInf(cur, 0) {
		return 0 // NaN is not > 0
	}
	return int(min(100, cur*100/target))
}

type achievementsAnswer struct {
	Achievements []Achievement `json:"achievements"`
	PagingInfo   *struct {
		ContinuationToken *string `json:"continuationToken"`
	} `json:"pagingInfo"`
}

// ListAchievements returns one page of a user's achievements in a title
// (GET /users/xuid(X)/achievements?titleId=T). maxItems 0 lets the service
// choose; pass the previous page's ContinuationToken for the next.
// A page holding an achievement of other titles only (its title
// associations), or one achievement twice (its SCID in either case), is
// an error.
func (u *User) ListAchievements(ctx context.Context, xuid, titleID string, maxItems int, continuationToken string) (Page[Achievement], error) {
	a := achievementsAPI
	a.name = "ListAchievements"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return Page[Achievement]{}, err
	}
	if err := checkTitle(a, titleID); err != nil {
		return Page[Achievement]{}, err
	}
	q := url.Values{"titleId": {titleID}}
	if maxItems > 0 {
		q.Set("maxItems", strconv.Itoa(maxItems))
	}
	if continuationToken != "" {
		q.Set("continuationToken", continuationToken)
	}
	var out achievementsAnswer
	status, err := u.call(ctx, a, "GET", userPath(xuid, "achievements"), q, nil, &out)
	if err != nil {
		return Page[Achievement]{}, err
	}
	if out.Achievements == nil || out.PagingInfo == nil {
		return Page[Achievement]{}, lacks(a, status, `"achievements" and "pagingInfo"`)
	}
	if err := eachNamed(a, status, `"id"`, out.Achievements, func(x Achievement) string { return x.ID }); err != nil {
		return Page[Achievement]{}, err
	}
	// A SCID is a GUID: one in either case (ofSCID compares it so too).
	if err := onceEach(a, status, out.Achievements, func(x Achievement) string { return strings.ToLower(x.ServiceConfigID) + "/" + x.ID }); err != nil {
		return Page[Achievement]{}, err
	}
	for _, x := range out.Achievements {
		if !ofTitle(x, titleID) {
			return Page[Achievement]{}, lacks(a, status, "achievements of the title asked for (achievement "+safetext.Quote(x.ID, 16)+" is another's)")
		}
	}
	return Page[Achievement]{Items: out.Achievements, ContinuationToken: deref(out.PagingInfo.ContinuationToken)}, nil
}

// ofTitle reports whether x is an achievement of the title titleID: its
// title associations name it, or name none.
func ofTitle(x Achievement, titleID string) bool {
	for _, ta := range x.TitleAssociations {
		if strconv.FormatUint(uint64(ta.ID), 10) == titleID {
			return true
		}
	}
	return len(x.TitleAssociations) == 0
}

// AllAchievements iterates over every achievement of a user in a title,
// fetching pages of pageSize as needed.
func (u *User) AllAchievements(ctx context.Context, xuid, titleID string, pageSize int) iter.Seq2[Achievement, error] {
	return pages(ctx, api{service: achievementsAPI.service, name: "AllAchievements"}, func(ctx context.Context, continuationToken string) (Page[Achievement], error) {
		return u.ListAchievements(ctx, xuid, titleID, pageSize, continuationToken)
	})
}

// GetAchievement returns one achievement
// (GET /users/xuid(X)/achievements/{scid}/{id}). The service answers a list
// holding it; like XSAPI, any other count is an error.
// An answer naming another achievement (its id, or a SCID other than
// scid) is an error.
func (u *User) GetAchievement(ctx context.Context, xuid, scid, id string) (Achievement, error) {
	a := achievementsAPI
	a.name = "GetAchievement"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return Achievement{}, err
	}
	scid, err := normSCID(a, "scid", scid)
	if err != nil {
		return Achievement{}, err
	}
	if id == "" {
		return Achievement{}, invalid(a, "the achievement id is required")
	}
	var out achievementsAnswer
	status, err := u.call(ctx, a, "GET", userPath(xuid, "achievements", scid, id), nil, nil, &out)
	if err != nil {
		return Achievement{}, err
	}
	if len(out.Achievements) != 1 {
		return Achievement{}, lacks(a, status, "exactly one achievement, got "+strconv.Itoa(len(out.Achievements)))
	}
	got := out.Achievements[0]
	if got.ID != id || got.ServiceConfigID != "" && !strings.EqualFold(got.ServiceConfigID, scid) { // another achievement is not this one
		return Achievement{}, lacks(a, status, "the achievement asked for (it names "+safetext.Quote(got.ServiceConfigID, 40)+"/"+safetext.Quote(got.ID, 16)+")")
	}
	return got, nil
}

// UpdateAchievement raises the acting user's progress on an achievement to
// percent (POST /users/xuid(X)/achievements/{scid}/update). It reports
// whether anything changed: the service answers 304 when progress was
// already at or past percent. The SCID goes lower-cased in path and body and
// the title as a JSON number, as XSAPI sends them.
func (u *User) UpdateAchievement(ctx context.Context, scid, id string, percent int) (changed bool, err error) {
	a := achievementsAPI
	a.name = "UpdateAchievement"
	if percent < 0 || percent > 100 {
		return false, invalid(a, "percent must be 0 to 100")
	}
	if err := checkXUID(a, "the acting user", u.xuid); err != nil {
		return false, err
	}
	title, err := strconv.ParseUint(u.c.cfg.TitleID, 10, 32)
	if err != nil {
		return false, invalid(a, "Config.TitleID must be a decimal title id for an update")
	}
	if scid, err = normSCID(a, "scid", scid); err != nil {
		return false, err
	}
	type progress struct {
		ID              string `json:"id"`
		PercentComplete int    `json:"percentComplete"`
	}
	in := struct {
		Action          string     `json:"action"`
		ServiceConfigID string     `json:"serviceConfigId"`
		TitleID         uint64     `json:"titleId"`
		UserID          string     `json:"userId"`
		Achievements    []progress `json:"achievements"`
	}{"progressUpdate", scid, title, u.xuid, []progress{{id, percent}}}
	status, err := u.call(ctx, a, "POST", userPath(u.xuid, "achievements", scid, "update"), nil, in, nil)
	return err == nil && status != http.StatusNotModified, err
}

// checkTitle refuses a title id that is not a decimal 32-bit number.
func checkTitle(a api, titleID string) error {
	if err := xblid.CheckTitle(titleID); err != nil {
		return invalid(a, "titleId: "+err.Error())
	}
	return nil
}

// TitleProgress is a title in a user's achievement history.
type TitleProgress struct {
	TitleID            uint32 `json:"titleId"`
	Name               string `json:"name"`
	ServiceConfigID    string `json:"serviceConfigId"`
	TitleType          string `json:"titleType"`
	Platform           string `json:"platform"`
	LastUnlock         string `json:"lastUnlock"` // RFC 3339
	EarnedAchievements int    `json:"earnedAchievements"`
	CurrentGamerscore  int    `json:"currentGamerscore"`
	MaxGamerscore      int    `json:"maxGamerscore"`
}

// GetAchievementHistory returns one page of the titles in which a user has
// achievement progress (GET /users/xuid(X)/history/titles, contract 2).
// maxItems 0 lets the service choose; pass the previous page's
// ContinuationToken for the next. TotalCount is the service's
// totalRecords.
func (u *User) GetAchievementHistory(ctx context.Context, xuid string, maxItems int, continuationToken string) (Page[TitleProgress], error) {
	a := achievementsAPI
	a.name = "GetAchievementHistory"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return Page[TitleProgress]{}, err
	}
	if maxItems < 0 {
		return Page[TitleProgress]{}, invalid(a, "maxItems may not be negative")
	}
	q := url.Values{}
	if maxItems > 0 {
		q.Set("maxItems", strconv.Itoa(maxItems))
	}
	if continuationToken != "" {
		q.Set("continuationToken", continuationToken)
	}
	var out struct {
		Titles     []TitleProgress `json:"titles"`
		PagingInfo *struct {
			ContinuationToken *string `json:"continuationToken"`
			TotalRecords      int     `json:"totalRecords"`
		} `json:"pagingInfo"`
	}
	status, err := u.call(ctx, a, "GET", userPath(xuid, "history", "titles"), q, nil, &out)
	if err != nil {
		return Page[TitleProgress]{}, err
	}
	if out.Titles == nil || out.PagingInfo == nil {
		return Page[TitleProgress]{}, lacks(a, status, `"titles" and "pagingInfo"`)
	}
	if err := notNegative(a, status, "totalRecords", out.PagingInfo.TotalRecords); err != nil {
		return Page[TitleProgress]{}, err
	}
	if err := eachNamed(a, status, `"titleId"`, out.Titles, func(x TitleProgress) string {
		if x.TitleID == 0 {
			return ""
		}
		return "t"
	}); err != nil {
		return Page[TitleProgress]{}, err
	}
	return Page[TitleProgress]{Items: out.Titles, TotalCount: out.PagingInfo.TotalRecords,
		ContinuationToken: deref(out.PagingInfo.ContinuationToken)}, nil
}
