package client

import (
	"context"
	"net/url"
)

var presenceAPI = api{service: "presence", host: "userpresence.xboxlive.com", contract: "3"}

// Presence is a user's presence record.
type Presence struct {
	Xuid    string           `json:"xuid"`
	State   string           `json:"state"` // "Online", "Away", "Offline"
	Devices []PresenceDevice `json:"devices,omitempty"`
}

// PresenceDevice is one device a user is present on.
type PresenceDevice struct {
	Type   string          `json:"type"`
	Titles []PresenceTitle `json:"titles"`
}

// PresenceTitle is a title running on a device.
type PresenceTitle struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Placement    string            `json:"placement"`
	State        string            `json:"state"`
	LastModified string            `json:"lastModified"`
	Activity     *PresenceActivity `json:"activity,omitempty"`
}

// PresenceActivity is what the user is doing in a title.
type PresenceActivity struct {
	RichPresence string `json:"richPresence,omitempty"`
}

// GetPresence returns one user's presence (GET /users/xuid(X)).
func (u *User) GetPresence(ctx context.Context, xuid string) (Presence, error) {
	a := presenceAPI
	a.name = "GetPresence"
	var p Presence
	_, err := u.call(ctx, a, "GET", "/users/xuid("+xuid+")", url.Values{"level": {"all"}}, nil, &p)
	return p, err
}

// GetPresenceBatch returns the presence of 1 to 1100 users
// (POST /users/batch).
func (u *User) GetPresenceBatch(ctx context.Context, xuids []string) ([]Presence, error) {
	a := presenceAPI
	a.name = "GetPresenceBatch"
	if err := checkCount(a, "xuids", len(xuids), 1, 1100); err != nil {
		return nil, err
	}
	in := struct {
		Users []string `json:"users"`
		Level string   `json:"level"`
	}{xuids, "all"}
	var out []Presence
	_, err := u.call(ctx, a, "POST", "/users/batch", nil, in, &out)
	return out, err
}

// SetPresence sets the acting user's presence in the title: active or not,
// with an optional rich presence string
// (POST /users/xuid(X)/devices/current/titles/current).
func (u *User) SetPresence(ctx context.Context, active bool, richPresence string) error {
	a := presenceAPI
	a.name = "SetPresence"
	state := "inactive"
	if active {
		state = "active"
	}
	in := struct {
		ID       string            `json:"id"`
		State    string            `json:"state"`
		Activity *PresenceActivity `json:"activity,omitempty"`
	}{ID: u.c.cfg.TitleID, State: state}
	if richPresence != "" {
		in.Activity = &PresenceActivity{RichPresence: richPresence}
	}
	_, err := u.call(ctx, a, "POST", "/users/xuid("+u.xuid+")/devices/current/titles/current", nil, in, nil)
	return err
}
