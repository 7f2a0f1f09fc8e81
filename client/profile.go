package client

import (
	"context"
	"fmt"

	"github.com/xblgo/fgrl/hresult"
)

var profileAPI = api{service: "profile", host: "profile.xboxlive.com", contract: "2"}

// Profile is one user's profile settings.
type Profile struct {
	Xuid string
	// Settings maps a setting name ("Gamertag", "Gamerscore",
	// "GameDisplayPicRaw", ...) to its value.
	Settings map[string]string
}

// GetProfiles returns the named settings of 1 to 100 users
// (POST /users/batch/profile/settings).
func (u *User) GetProfiles(ctx context.Context, xuids, settings []string) ([]Profile, error) {
	a := profileAPI
	a.name = "GetProfiles"
	if err := checkCount(a, "xuids", len(xuids), 1, 100); err != nil {
		return nil, err
	}
	var out struct {
		ProfileUsers []struct {
			ID       string `json:"id"`
			Settings []struct {
				ID    string `json:"id"`
				Value string `json:"value"`
			} `json:"settings"`
		} `json:"profileUsers"`
	}
	in := struct {
		UserIDs  []string `json:"userIds"`
		Settings []string `json:"settings"`
	}{xuids, settings}
	if _, err := u.call(ctx, a, "POST", "/users/batch/profile/settings", nil, in, &out); err != nil {
		return nil, err
	}
	profiles := make([]Profile, 0, len(out.ProfileUsers))
	for _, pu := range out.ProfileUsers {
		p := Profile{Xuid: pu.ID, Settings: make(map[string]string, len(pu.Settings))}
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
		return &Error{HRESULT: hresult.E_INVALIDARG, Service: a.service, API: a.name,
			Message: fmt.Sprintf("%s must hold %d to %d items, not %d", what, lo, hi, n)}
	}
	return nil
}

func invalid(a api, msg string) error {
	return &Error{HRESULT: hresult.E_INVALIDARG, Service: a.service, API: a.name, Message: msg}
}
