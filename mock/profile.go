package mock

import (
	"net/http"
	"strings"
)

// The profile service: GET /users/{me|xuid(N)}/profile/settings?settings=A,B
// and POST /users/batch/profile/settings.

type profileSetting struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

type profileUser struct {
	ID              string           `json:"id"`
	HostID          string           `json:"hostId"`
	Settings        []profileSetting `json:"settings"`
	IsSponsoredUser bool             `json:"isSponsoredUser"`
}

type profileResponse struct {
	ProfileUsers []profileUser `json:"profileUsers"`
}

func profileRoutes() []route {
	return []route{
		{http.MethodGet, pat("/users/{user}/profile/settings"), serveProfile, "2"},
		{http.MethodPost, pat("/users/batch/profile/settings"), serveProfileBatch, "2"},
	}
}

func serveProfile(h *Handler, c *call) {
	settings := splitList(c.query("settings"))
	writeJSON(c.w, http.StatusOK, profileResponse{[]profileUser{profileOf(c.user(c.params[0]), h.gamertagOf(c.user(c.params[0])), settings)}})
}

func serveProfileBatch(h *Handler, c *call) {
	var req struct {
		UserIDs  []string `json:"userIds"`
		Settings []string `json:"settings"`
	}
	if !c.decode(h, &req) {
		return
	}
	if len(req.UserIDs) == 0 || len(req.UserIDs) > 100 {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "userIds must hold 1 to 100 xuids")
		return
	}
	resp := profileResponse{ProfileUsers: make([]profileUser, 0, len(req.UserIDs))}
	for _, x := range req.UserIDs {
		resp.ProfileUsers = append(resp.ProfileUsers, profileOf(x, h.gamertagOf(x), req.Settings))
	}
	writeJSON(c.w, http.StatusOK, resp)
}

// profileOf returns a user's settings, derived from the xuid so that answers
// are stable across runs, with the user's gamertag gt.
func profileOf(xuid, gt string, settings []string) profileUser {
	if len(settings) == 0 {
		settings = []string{"GameDisplayName", "Gamertag", "Gamerscore"}
	}
	u := profileUser{ID: xuid, HostID: xuid, Settings: make([]profileSetting, 0, len(settings))}
	for _, s := range settings {
		var v string
		switch strings.ToLower(s) {
		case "gamertag", "gamedisplayname", "appdisplayname", "moderngamertag":
			v = gt
		case "gamerscore":
			v = "1250"
		case "gamedisplaypicraw", "appdisplaypicraw":
			v = "https://images-eds-ssl.xboxlive.com/image?url=mock"
		case "accounttier":
			v = "Gold"
		default:
			continue
		}
		u.Settings = append(u.Settings, profileSetting{ID: s, Value: v})
	}
	return u
}

// gamertagOf returns the gamertag of xuid in the mock's one world: an
// account's own (the one its XSTS token claims, SetAccount), else the
// derived one.
func (h *Handler) gamertagOf(xuid string) string {
	h.signIn.mu.Lock()
	a, ok := h.signIn.accounts[xuid]
	h.signIn.mu.Unlock()
	if ok && a.Gamertag != "" {
		return a.Gamertag
	}
	return gamertag(xuid)
}

// gamertag is the gamertag derived from a XUID: "Player" and its last four
// digits.
func gamertag(xuid string) string {
	if len(xuid) > 4 {
		xuid = xuid[len(xuid)-4:]
	}
	return "Player" + xuid
}

// splitList returns the non-empty items of a comma-separated list, trimmed.
func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			if out == nil {
				out = make([]string, 0, strings.Count(s, ",")+1)
			}
			out = append(out, f)
		}
	}
	return out
}
