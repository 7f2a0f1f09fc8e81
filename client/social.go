package client

import (
	"context"
	"iter"
	"net/url"
	"strconv"
)

var (
	socialAPI  = api{service: "social", host: "social.xboxlive.com", contract: "3", rule: "social"}
	privacyAPI = api{service: "privacy", host: "privacy.xboxlive.com", contract: "1", rule: "privacy"}
)

// Person is one of a user's social relationships.
type Person struct {
	XUID       string `json:"xuid"`
	IsFavorite bool   `json:"isFavorite"`
	IsFriend   bool   `json:"isFriend"`
	// IsFollowingCaller and IsFollowedByCaller are the follow model's
	// relationship; the service fills IsFollowingCaller as IsFriend.
	IsFollowingCaller  bool     `json:"isFollowingCaller"`
	IsFollowedByCaller bool     `json:"isFollowedByCaller"`
	AddedDateTimeUtc   string   `json:"addedDateTimeUtc"` // RFC 3339
	SocialNetworks     []string `json:"socialNetworks,omitempty"`
}

// People is one page of a user's relationships.
type People struct {
	Items []Person
	// TotalCount is the number of relationships in all pages.
	TotalCount int
	// Next is the startIndex of the next page; 0 on the last page.
	Next int
}

// GetPeople returns one page of the people a user has a relationship with
// (GET /users/xuid(X)/people?view=All&startIndex=S&maxItems=M). maxItems 0
// lets the service choose. XSAPI 2510 sends view=FriendList for its "All"
// filter; this call asks for view=All, the service's documented default.
func (u *User) GetPeople(ctx context.Context, xuid string, startIndex, maxItems int) (People, error) {
	a := socialAPI
	a.name = "GetPeople"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return People{}, err
	}
	if startIndex < 0 || maxItems < 0 {
		return People{}, invalid(a, "startIndex and maxItems may not be negative")
	}
	q := url.Values{"view": {"All"}}
	if startIndex > 0 {
		q.Set("startIndex", strconv.Itoa(startIndex))
	}
	if maxItems > 0 {
		q.Set("maxItems", strconv.Itoa(maxItems))
	}
	var out struct {
		TotalCount *int     `json:"totalCount"`
		People     []Person `json:"people"`
	}
	status, err := u.call(ctx, a, "GET", userPath(xuid, "people"), q, nil, &out)
	if err != nil {
		return People{}, err
	}
	if out.TotalCount == nil || out.People == nil {
		return People{}, lacks(a, status, `"totalCount" and "people"`)
	}
	p := People{Items: out.People, TotalCount: *out.TotalCount}
	if end := startIndex + len(out.People); len(out.People) > 0 && end < p.TotalCount {
		p.Next = end
	}
	return p, nil
}

// AllPeople iterates over every relationship of a user, pageSize a request.
func (u *User) AllPeople(ctx context.Context, xuid string, pageSize int) iter.Seq2[Person, error] {
	return pages(ctx, func(ctx context.Context, token string) (Page[Person], error) {
		start := 0
		if token != "" {
			start, _ = strconv.Atoi(token)
		}
		p, err := u.GetPeople(ctx, xuid, start, pageSize)
		pg := Page[Person]{Items: p.Items}
		if p.Next > 0 {
			pg.ContinuationToken = strconv.Itoa(p.Next)
		}
		return pg, err
	})
}

// Permission is the answer to a privacy check.
type Permission struct {
	IsAllowed bool `json:"isAllowed"`
	Reasons   []struct {
		Reason string `json:"reason"`
		// RestrictedSetting names the privacy setting behind a
		// "PrivilegeRestrictsTarget"-style reason, when there is one.
		RestrictedSetting string `json:"restrictedSetting,omitempty"`
	} `json:"reasons"`
}

// CheckPermission asks whether the acting user may do setting (such as
// "CommunicateUsingText") with target
// (GET /users/xuid(X)/permission/validate?setting=S&target=xuid(T)).
func (u *User) CheckPermission(ctx context.Context, setting, targetXuid string) (Permission, error) {
	a := privacyAPI
	a.name = "CheckPermission"
	if setting == "" {
		return Permission{}, invalid(a, "setting is required")
	}
	if err := checkXUID(a, "target", targetXuid); err != nil {
		return Permission{}, err
	}
	if err := checkXUID(a, "the acting user", u.xuid); err != nil {
		return Permission{}, err
	}
	var p struct {
		IsAllowed *bool `json:"isAllowed"`
		Permission
	}
	q := url.Values{"setting": {setting}, "target": {userSeg(targetXuid)}}
	status, err := u.call(ctx, a, "GET", userPath(u.xuid, "permission", "validate"), q, nil, &p)
	if err != nil {
		return Permission{}, err
	}
	if p.IsAllowed == nil {
		return Permission{}, lacks(a, status, `"isAllowed"`)
	}
	p.Permission.IsAllowed = *p.IsAllowed
	return p.Permission, nil
}
