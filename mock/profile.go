package mock

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/xblid"
)

// The profile service: GET /users/{me|xuid(N)|gt(G)}/profile/settings?settings=A,B
// and POST /users/batch/profile/settings. A user addressed by gamertag
// (OpenXbox/xbox-webapi-python profile provider get_profile_by_gamertag) is
// the world's account with that gamertag, compared without case; any other
// gets 404.

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

// profileService answers the profile service.
type profileService struct{ *world }

func (s profileService) routes() []route {
	return []route{
		{http.MethodGet, pat("/users/{user}/profile/settings"), s.serveProfile, "2"},
		{http.MethodPost, pat("/users/batch/profile/settings"), s.serveProfileBatch, "2"},
		{http.MethodGet, pat("/users/gt({})/profile/settings"), s.serveProfileByGamertag, "2"},
	}
}

func (s profileService) serveProfile(c *call) {
	settings := splitList(c.query("settings"))
	writeJSON(c.w, http.StatusOK, profileResponse{[]profileUser{s.profileOf(c.user(c.params[0]), settings)}})
}

// serveProfileByGamertag answers GET /users/gt(G)/profile/settings.
func (s profileService) serveProfileByGamertag(c *call) {
	xuid, ok := s.xuidOfGamertag(c.params[0])
	if !ok {
		writeError(c.w, http.StatusNotFound, "NotFound", "no user has this gamertag")
		return
	}
	writeJSON(c.w, http.StatusOK, profileResponse{[]profileUser{s.profileOf(xuid, splitList(c.query("settings")))}})
}

func (s profileService) serveProfileBatch(c *call) {
	var req struct {
		UserIDs  []json.RawMessage `json:"userIds"` // XUIDs as strings (XSAPI) or numbers (xbox-webapi-python)
		Settings []string          `json:"settings"`
	}
	if !c.decode(&req) {
		return
	}
	if len(req.UserIDs) == 0 || len(req.UserIDs) > 100 {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "userIds must hold 1 to 100 xuids")
		return
	}
	resp := profileResponse{ProfileUsers: make([]profileUser, 0, len(req.UserIDs))}
	for _, raw := range req.UserIDs {
		x := strings.Trim(string(raw), `"`)
		if xblid.CheckXUID(x) != nil {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "userIds must hold xuids")
			return
		}
		resp.ProfileUsers = append(resp.ProfileUsers, s.profileOf(x, req.Settings))
	}
	writeJSON(c.w, http.StatusOK, resp)
}

// profileValues are the setting ids the profile service knows, lower-cased
// (OpenXbox/xbox-webapi-python xbox/webapi/api/provider/profile/models.py
// ProfileSettings, and the modern gamertag ids XSAPI asks for), with the
// value each has in the mock's world: "" where the world has none. The
// gamertag ids (nameSettings) answer the user's gamertag instead.
var profileValues = map[string]string{
	"gamedisplayname": "", "appdisplayname": "", "gamertag": "", "moderngamertag": "", "uniquemoderngamertag": "",
	"moderngamertagsuffix": "",
	"gamedisplaypicraw":    "https://images-eds-ssl.xboxlive.com/image?url=mock&format=png",
	"appdisplaypicraw":     "https://images-eds-ssl.xboxlive.com/image?url=mock&format=png",
	"publicgamerpic":       "https://images-eds-ssl.xboxlive.com/image?url=mock",
	"showuserasavatar":     "0",
	"tenurelevel":          "0",
	"xboxonerep":           "GoodPlayer",
	"preferredcolor":       "https://dlassets-ssl.xboxlive.com/public/content/ppl/colors/00000.json",
	"location":             "", "bio": "", "watermarks": "", "realname": "", "realnameoverride": "",
	"isquarantined": "0",
}

// nameSettings are the setting ids whose value is the gamertag.
var nameSettings = []string{"gamedisplayname", "appdisplayname", "gamertag", "moderngamertag", "uniquemoderngamertag"}

// profileValue returns the value of setting id for xuid, and whether the
// service knows the id.
func (w *world) profileValue(xuid, id string) (string, bool) {
	switch id = strings.ToLower(id); {
	case slices.Contains(nameSettings, id):
		return w.gamertagOf(xuid), true
	case id == "gamerscore":
		return strconv.Itoa(w.gamerscoreOf(xuid)), true
	case id == "accounttier":
		return w.tierOf(xuid), true
	}
	v, ok := profileValues[id]
	return v, ok
}

// profileOf returns a user's settings, in the order asked, every one the
// service knows answered (unknown ids are left out), from the world;
// values are stable across runs.
func (w *world) profileOf(xuid string, settings []string) profileUser {
	if len(settings) == 0 {
		settings = []string{"GameDisplayName", "Gamertag", "Gamerscore"}
	}
	u := profileUser{ID: xuid, HostID: xuid, Settings: make([]profileSetting, 0, len(settings))}
	for _, s := range settings {
		if v, ok := w.profileValue(xuid, s); ok {
			u.Settings = append(u.Settings, profileSetting{ID: s, Value: v})
		}
	}
	return u
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
