package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

var achievementsAPI = api{service: "achievements", host: "achievements.xboxlive.com", contract: "2"}

// Achievement is one achievement and the user's progress on it.
type Achievement struct {
	ID              string `json:"id"`
	ServiceConfigID string `json:"serviceConfigId"`
	Name            string `json:"name"`
	ProgressState   string `json:"progressState"` // "NotStarted", "InProgress", "Achieved"
	Progression     struct {
		Requirements []struct {
			ID      string `json:"id"`
			Current string `json:"current"`
			Target  string `json:"target"`
		} `json:"requirements"`
		TimeUnlocked string `json:"timeUnlocked"`
	} `json:"progression"`
	Rewards []struct {
		Value string `json:"value"`
		Type  string `json:"type"`
	} `json:"rewards"`
}

// Percent returns the progress of the first requirement, 0 to 100.
func (a *Achievement) Percent() int {
	if len(a.Progression.Requirements) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(a.Progression.Requirements[0].Current)
	return n
}

// ListAchievements returns one page of a user's achievements in a title
// (GET /users/xuid(X)/achievements). maxItems 0 lets the service choose;
// pass the previous page's ContinuationToken for the next.
func (u *User) ListAchievements(ctx context.Context, xuid, titleID string, maxItems int, token string) (Page[Achievement], error) {
	a := achievementsAPI
	a.name = "ListAchievements"
	q := url.Values{"titleId": {titleID}}
	if maxItems > 0 {
		q.Set("maxItems", strconv.Itoa(maxItems))
	}
	if token != "" {
		q.Set("continuationToken", token)
	}
	var out struct {
		Achievements []Achievement `json:"achievements"`
		PagingInfo   struct {
			ContinuationToken *string `json:"continuationToken"`
		} `json:"pagingInfo"`
	}
	if _, err := u.call(ctx, a, "GET", "/users/xuid("+xuid+")/achievements", q, nil, &out); err != nil {
		return Page[Achievement]{}, err
	}
	return Page[Achievement]{Items: out.Achievements, ContinuationToken: deref(out.PagingInfo.ContinuationToken)}, nil
}

// AllAchievements iterates over every achievement of a user in a title,
// fetching pages of pageSize as needed.
func (u *User) AllAchievements(ctx context.Context, xuid, titleID string, pageSize int) iter.Seq2[Achievement, error] {
	return pages(ctx, func(ctx context.Context, token string) (Page[Achievement], error) {
		return u.ListAchievements(ctx, xuid, titleID, pageSize, token)
	})
}

// GetAchievement returns one achievement
// (GET /users/xuid(X)/achievements/{scid}/{id}).
func (u *User) GetAchievement(ctx context.Context, xuid, scid, id string) (Achievement, error) {
	a := achievementsAPI
	a.name = "GetAchievement"
	var out struct {
		Achievement Achievement `json:"achievement"`
	}
	_, err := u.call(ctx, a, "GET", "/users/xuid("+xuid+")/achievements/"+url.PathEscape(scid)+"/"+url.PathEscape(id), nil, nil, &out)
	return out.Achievement, err
}

// UpdateAchievement raises the acting user's progress on an achievement to
// percent (POST /users/xuid(X)/achievements/{scid}/update). It reports
// whether anything changed: the service answers 304 when progress was
// already at or past percent.
func (u *User) UpdateAchievement(ctx context.Context, scid, id string, percent int) (changed bool, err error) {
	a := achievementsAPI
	a.name = "UpdateAchievement"
	if percent < 0 || percent > 100 {
		return false, invalid(a, "percent must be 0 to 100")
	}
	type progress struct {
		ID              string `json:"id"`
		PercentComplete int    `json:"percentComplete"`
	}
	in := struct {
		Action          string     `json:"action"`
		ServiceConfigID string     `json:"serviceConfigId"`
		TitleID         string     `json:"titleId"`
		UserID          string     `json:"userId"`
		Achievements    []progress `json:"achievements"`
	}{"progressUpdate", scid, u.c.cfg.TitleID, u.xuid, []progress{{id, percent}}}
	status, err := u.call(ctx, a, "POST", "/users/xuid("+u.xuid+")/achievements/"+url.PathEscape(scid)+"/update", nil, in, nil)
	return err == nil && status != http.StatusNotModified, err
}
