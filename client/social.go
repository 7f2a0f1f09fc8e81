package client

import (
	"context"
	"net/url"
)

var (
	socialAPI  = api{service: "social", host: "social.xboxlive.com", contract: "3"}
	privacyAPI = api{service: "privacy", host: "privacy.xboxlive.com", contract: "1"}
)

// Person is one of a user's social relationships.
type Person struct {
	Xuid              string `json:"xuid"`
	IsFavorite        bool   `json:"isFavorite"`
	IsFollowingCaller bool   `json:"isFollowingCaller"`
}

// GetPeople returns the people a user follows (GET /users/xuid(X)/people).
func (u *User) GetPeople(ctx context.Context, xuid string) ([]Person, error) {
	a := socialAPI
	a.name = "GetPeople"
	var out struct {
		People []Person `json:"people"`
	}
	_, err := u.call(ctx, a, "GET", "/users/xuid("+xuid+")/people", nil, nil, &out)
	return out.People, err
}

// Permission is the answer to a privacy check.
type Permission struct {
	IsAllowed bool `json:"isAllowed"`
	Reasons   []struct {
		Reason string `json:"reason"`
	} `json:"reasons"`
}

// CheckPermission asks whether the acting user may do setting (such as
// "CommunicateUsingText") with target
// (GET /users/xuid(X)/permission/validate).
func (u *User) CheckPermission(ctx context.Context, setting, targetXuid string) (Permission, error) {
	a := privacyAPI
	a.name = "CheckPermission"
	if setting == "" || targetXuid == "" {
		return Permission{}, invalid(a, "setting and target are required")
	}
	var p Permission
	q := url.Values{"setting": {setting}, "target": {"xuid(" + targetXuid + ")"}}
	_, err := u.call(ctx, a, "GET", "/users/xuid("+u.xuid+")/permission/validate", q, nil, &p)
	return p, err
}
