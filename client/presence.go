package client

import (
	"context"
	"net/url"
)

var (
	presenceAPI      = api{service: "presence", host: "userpresence.xboxlive.com", contract: "3", rule: "presence/read"}
	presenceWriteAPI = api{service: "presence", host: "userpresence.xboxlive.com", contract: "3", rule: "presence/write"}
)

// Presence is a user's presence record.
type Presence struct {
	XUID    string           `json:"xuid"`
	State   string           `json:"state"` // "Online", "Away", "Offline"
	Devices []PresenceDevice `json:"devices,omitempty"`
	// LastSeen is where an offline user was last seen, when the service
	// knows.
	LastSeen *LastSeen `json:"lastSeen,omitempty"`
}

// LastSeen is the last device and title an offline user was seen on.
type LastSeen struct {
	DeviceType string `json:"deviceType"`
	TitleID    string `json:"titleId"`
	TitleName  string `json:"titleName"`
	Timestamp  string `json:"timestamp"` // RFC 3339
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
	State        string            `json:"state"` // "Active" or "Inactive"
	LastModified string            `json:"lastModified"`
	Activity     *PresenceActivity `json:"activity,omitempty"`
}

// PresenceActivity is what the user is doing in a title: the rich presence
// string the service rendered from the title's configured strings.
type PresenceActivity struct {
	RichPresence string `json:"richPresence,omitempty"`
}

// RichPresence names one of the rich presence strings configured for the
// title's service configuration, with the ids of the tokens that fill its
// placeholders. It is not free text.
type RichPresence struct {
	SCID   string   // the service configuration the strings belong to
	ID     string   // the string's id, such as "playingMap"
	Params []string // token ids for the string's placeholders
}

// GetPresence returns one user's presence (GET /users/xuid(X)?level=all;
// with Config.BatchWindow, one POST /users/batch for the lookups made
// together, and a lookup alone in its window as without one).
func (u *User) GetPresence(ctx context.Context, xuid string) (Presence, error) {
	a := presenceAPI
	a.name = "GetPresence"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return Presence{}, err
	}
	if w := u.c.cfg.BatchWindow; w > 0 {
		return u.c.presences.lookup(ctx, u.xuid, "presence", xuid, w)
	}
	p, _, err := u.getPresence(ctx, a, xuid)
	return p, err
}

// getPresence is one user's presence as its own call, with the answer's
// status.
func (u *User) getPresence(ctx context.Context, a api, xuid string) (Presence, int, error) {
	var p Presence
	status, err := u.call(ctx, a, "GET", userPath(xuid), url.Values{"level": {"all"}}, nil, &p)
	switch {
	case err != nil:
	case p.XUID == "" || p.State == "":
		return Presence{}, status, lacks(a, status, `"xuid" and "state"`)
	case p.XUID != xuid: // another user's record is not this one's presence
		return Presence{}, status, lacks(a, status, "the record of the user asked for (it is another's)")
	}
	return p, status, err
}

// presenceBatch is the presence batcher's call: one GetPresenceBatch,
// under GetPresence's name, for key's acting user.
func (c *Client) presenceBatch(ctx context.Context, key batchKey, xuids []string) (map[string]Presence, int, error) {
	a := presenceAPI
	a.name = "GetPresence"
	u := c.As(key.user)
	if len(xuids) == 1 { // alone: no batch call listing one user (analyze.RuleSmallBatch)
		p, status, err := u.getPresence(ctx, a, xuids[0])
		return map[string]Presence{p.XUID: p}, status, err
	}
	all, status, err := u.getPresenceBatch(ctx, a, xuids)
	return byXUID(all, func(p Presence) string { return p.XUID }), status, err
}

// missingPresence is GetPresence's error for a batch answer of status
// without the user's record.
func missingPresence(status int) error {
	a := presenceAPI
	a.name = "GetPresence"
	return lacks(a, status, "the user's record in the batch answer")
}

// GetPresenceBatch returns the presence of 1 to 1100 users
// (POST /users/batch).
//
// An answer holding a record of a user not asked for, or two records of
// one user, is an error: none of its records is returned.
func (u *User) GetPresenceBatch(ctx context.Context, xuids []string) ([]Presence, error) {
	a := presenceAPI
	a.name = "GetPresenceBatch"
	ps, _, err := u.getPresenceBatch(ctx, a, xuids)
	return ps, err
}

// getPresenceBatch is GetPresenceBatch for the API a names, with the
// answer's status.
func (u *User) getPresenceBatch(ctx context.Context, a api, xuids []string) ([]Presence, int, error) {
	if err := checkXUIDs(a, "xuids", xuids, 1, 1100); err != nil {
		return nil, 0, err
	}
	in := struct {
		Users            []string `json:"users"`
		Level            string   `json:"level"`
		OnlineOnly       bool     `json:"onlineOnly"`
		BroadcastingOnly bool     `json:"broadcastingOnly"`
	}{Users: xuids, Level: "all"}
	var out []Presence
	status, err := u.call(ctx, a, "POST", path("users", "batch"), nil, in, &out)
	switch {
	case err != nil:
		return nil, status, err
	case out == nil:
		return nil, status, lacks(a, status, "a list of presence records")
	}
	if err := onlyAsked(a, status, xuids, out, func(p Presence) string { return p.XUID }); err != nil {
		return nil, status, err
	}
	return out, status, nil
}

// SetPresence sets the acting user's presence in the title: active or not,
// with an optional rich presence string configured for the title
// (POST /users/xuid(X)/devices/current/titles/current).
func (u *User) SetPresence(ctx context.Context, active bool, rich *RichPresence) error {
	a := presenceWriteAPI
	a.name = "SetPresence"
	if err := checkXUID(a, "the acting user", u.xuid); err != nil {
		return err
	}
	type richJSON struct {
		ID     string   `json:"id"`
		SCID   string   `json:"scid"`
		Params []string `json:"params,omitempty"`
	}
	type activity struct {
		RichPresence richJSON `json:"richPresence"`
	}
	in := struct {
		State    string    `json:"state"`
		Activity *activity `json:"activity,omitempty"`
	}{State: "inactive"}
	if active {
		in.State = "active"
	}
	if rich != nil {
		scid, err := normSCID(a, "rich presence scid", rich.SCID)
		if err != nil {
			return err
		}
		if rich.ID == "" {
			return invalid(a, "the rich presence id is required")
		}
		in.Activity = &activity{richJSON{rich.ID, scid, rich.Params}}
	}
	_, err := u.call(ctx, a, "POST", userPath(u.xuid, "devices", "current", "titles", "current"), nil, in, nil)
	return err
}
