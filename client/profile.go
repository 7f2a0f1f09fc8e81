package client

import (
	"context"
	"fmt"

	"github.com/xblgo/fgrl/hresult"
)

var profileAPI = api{service: "profile", host: "profile.xboxlive.com", contract: "2", rule: "profile"}

// Profile is one user's profile settings.
type Profile struct {
	XUID string
	// IsSponsoredUser marks a guest account sponsored by another user.
	IsSponsoredUser bool
	// Settings maps a setting name ("Gamertag", "Gamerscore",
	// "GameDisplayPicRaw", ...) to its value.
	Settings map[string]string
}

// GetProfiles returns the named settings of 1 to 100 users
// (POST /users/batch/profile/settings).
func (u *User) GetProfiles(ctx context.Context, xuids, settings []string) ([]Profile, error) {
	a := profileAPI
	a.name = "GetProfiles"
	if err := checkXUIDs(a, "xuids", xuids, 1, 100); err != nil {
		return nil, err
	}
	var out struct {
		ProfileUsers []struct {
			ID              string `json:"id"`
			IsSponsoredUser bool   `json:"isSponsoredUser"`
			Settings        []struct {
				ID    string `json:"id"`
				Value string `json:"value"`
			} `json:"settings"`
		} `json:"profileUsers"`
	}
	if settings == nil {
		settings = []string{}
	}
	in := struct {
		UserIDs  []string `json:"userIds"`
		Settings []string `json:"settings"`
	}{xuids, settings}
	status, err := u.call(ctx, a, "POST", path("users", "batch", "profile", "settings"), nil, in, &out)
	if err != nil {
		return nil, err
	}
	if out.ProfileUsers == nil {
		return nil, lacks(a, status, `"profileUsers"`)
	}
	profiles := make([]Profile, 0, len(out.ProfileUsers))
	for _, pu := range out.ProfileUsers {
		p := Profile{XUID: pu.ID, IsSponsoredUser: pu.IsSponsoredUser, Settings: make(map[string]string, len(pu.Settings))}
		for _, s := range pu.Settings {
			p.Settings[s.ID] = s.Value
		}
		profiles = append(profiles, p)
	}
	return profiles, nil
}

// checkCount refuses, without sending, a list whose length the service
// would reject.
func checkCount(a api, what string, n, lo, hi int) error {
	if n < lo || n > hi {
		return &Error{code: hresult.E_INVALIDARG, Service: a.service, API: a.name,
			Message: fmt.Sprintf("%s must hold %d to %d items, not %d", what, lo, hi, n)}
	}
	return nil
}

func invalid(a api, msg string) error {
	return &Error{code: hresult.E_INVALIDARG, Service: a.service, API: a.name, Message: msg}
}
