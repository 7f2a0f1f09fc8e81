package client

import (
	"context"
	"iter"
	"net/url"
	"strconv"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
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

// GetPeople returns one page of the people a user has a relationship with
// (GET /users/xuid(X)/people?view=All&startIndex=S&maxItems=M). maxItems 0
// lets the service choose; continuationToken is "" for the first page, then
// the page's ContinuationToken (the service pages by index: the token is the
// next startIndex). XSAPI 2510 sends view=FriendList for its "All" filter;
// this call asks for view=All, the service's documented default.
// A page holding one person twice, or a person whose id is no XUID (a
// second spelling of one, "0"+XUID), is an error.
func (u *User) GetPeople(ctx context.Context, xuid string, maxItems int, continuationToken string) (Page[Person], error) {
	a := socialAPI
	a.name = "GetPeople"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return Page[Person]{}, err
	}
	start := 0
	if continuationToken != "" {
		n, err := strconv.Atoi(continuationToken)
		if err != nil || n < 0 {
			return Page[Person]{}, invalid(a, "continuationToken "+safetext.Quote(continuationToken, 40)+" is not one GetPeople gave")
		}
		start = n
	}
	if maxItems < 0 {
		return Page[Person]{}, invalid(a, "maxItems may not be negative")
	}
	q := url.Values{"view": {"All"}}
	if start > 0 {
		q.Set("startIndex", strconv.Itoa(start))
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
		return Page[Person]{}, err
	}
	if out.TotalCount == nil || out.People == nil {
		return Page[Person]{}, lacks(a, status, `"totalCount" and "people"`)
	}
	if err := notNegative(a, status, "totalCount", *out.TotalCount); err != nil {
		return Page[Person]{}, err
	}
	for _, p := range out.People { // one spelling a user: "0"+XUID would be a second record of one
		if xblid.CheckXUID(p.XUID) != nil {
			return Page[Person]{}, lacks(a, status, "a XUID for each person (one is "+safetext.Quote(p.XUID, 32)+")")
		}
	}
	if err := onceEach(a, status, out.People, func(p Person) string { return p.XUID }); err != nil {
		return Page[Person]{}, err
	}
	p := Page[Person]{Items: out.People, TotalCount: *out.TotalCount}
	if end := start + len(out.People); len(out.People) > 0 && end < p.TotalCount {
		p.ContinuationToken = strconv.Itoa(end)
	}
	return p, nil
}

// AllPeople iterates over every relationship of a user, pageSize a request.
func (u *User) AllPeople(ctx context.Context, xuid string, pageSize int) iter.Seq2[Person, error] {
	return pages(ctx, api{service: socialAPI.service, name: "AllPeople"}, func(ctx context.Context, continuationToken string) (Page[Person], error) {
		return u.GetPeople(ctx, xuid, pageSize, continuationToken)
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
