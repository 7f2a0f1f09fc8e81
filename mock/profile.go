package mock

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
		{http.MethodGet, pat("/users/{user}/profile/settings/people/{}"), s.serveProfilePeople, "2"},
	}
}

// serveProfilePeople answers GET /users/{me|xuid(N)}/profile/settings/
// people/people: the settings of everyone in the user's people list, in
// the shape of a batch (the profile REST reference, "GET
// (/users/{ownerId}/profile/settings/people/{userList})": "people" is the
// only list; XSAPI's ProfileTests ask for it as "People"). Another list
// is 404. Another user's list is answered, as the social service answers
// another user's people.
func (s profileService) serveProfilePeople(c *call) {
	if !strings.EqualFold(c.params[1], "people") {
		writeError(c.w, http.StatusNotFound, "NotFound", `"people" is the only list`)
		return
	}
	owner := c.user(c.params[0])
	settings := splitList(c.query("settings"), nil)
	if !settingsOK(c, settings) {
		return
	}
	people := s.peopleOf(owner)
	if len(people)*len(settings) > maxProfileValues {
		// A people list is up to maxPeople long: its 1,000 people's 100
		// settings were a 10 MB answer.
		writeError(c.w, http.StatusBadRequest, "BadRequest", "the people list's "+strconv.Itoa(len(people))+" people times "+
			strconv.Itoa(len(settings))+" settings are over "+strconv.Itoa(maxProfileValues)+" values: name fewer settings")
		return
	}
	users := make([]profileUser, 0, len(people))
	for _, p := range people {
		users = append(users, s.profileOf(p.XUID, settings, nil))
	}
	writeProfiles(c.w, users...)
}

func (s profileService) serveProfile(c *call) {
	s.writeProfileOf(c, c.user(c.params[0]))
}

// writeProfileOf answers a read of xuid's settings that the query names.
func (s profileService) writeProfileOf(c *call, xuid string) {
	var sb [8]string // on the stack, for the few settings a read asks
	var pb [8]profileSetting
	settings := splitList(c.query("settings"), sb[:0])
	if !settingsOK(c, settings) {
		return
	}
	writeProfiles(c.w, s.profileOf(xuid, settings, pb[:0]))
}

// serveProfileByGamertag answers GET /users/gt(G)/profile/settings.
func (s profileService) serveProfileByGamertag(c *call) {
	xuid, ok := s.xuidOfGamertag(c.params[0])
	if !ok {
		writeError(c.w, http.StatusNotFound, "NotFound", "no user has this gamertag")
		return
	}
	s.writeProfileOf(c, xuid)
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
	if !settingsOK(c, req.Settings) {
		return
	}
	users := make([]profileUser, 0, len(req.UserIDs))
	for _, raw := range req.UserIDs {
		x := strings.Trim(string(raw), `"`)
		if xblid.CheckXUID(x) != nil {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "userIds must hold xuids")
			return
		}
		users = append(users, s.profileOf(x, req.Settings, nil))
	}
	writeProfiles(c.w, users...)
}

// maxProfileSettings bounds the settings one read names. A setting may be
// named again and again and is answered for every user of the read (100
// in a batch), so without a bound a 1 MiB batch naming "Bio" 174,000
// times was a 419 MB answer; with it the largest answer, 100 users' 100
// settings, is about 1 MB (TestProfileReadsBounded). The service's own
// bound is not published; a client has no reason to name more than the 21
// settings the mock knows (profileValues, gamerscore, accounttier), and
// XSAPI names six (microsoft/xbox-live-api, profile_service's
// SETTINGS_ARRAY).
const maxProfileSettings = 100

// maxProfileValues bounds the values one read answers (users times
// settings): a batch's largest, 100 users' 100 settings, about 1 MB.
const maxProfileValues = 100 * maxProfileSettings

// settingsOK reports whether a read names at most maxProfileSettings
// settings; when not, it has answered 400.
func settingsOK(c *call, settings []string) bool {
	if len(settings) <= maxProfileSettings {
		return true
	}
	writeError(c.w, http.StatusBadRequest, "BadRequest", "settings must name at most "+strconv.Itoa(maxProfileSettings)+" settings")
	return false
}

// writeProfiles answers 200 with users, as writeJSON(w, http.StatusOK,
// profileResponse{users}) would, byte for byte (FuzzProfileJSON), without
// encoding/json's reflection: the profile read is the answer the mock
// serves most (bench/wrk-tokens.lua), and json.Marshal was a fifth of its
// CPU (BENCHMARKS.md §3c).
func writeProfiles(w http.ResponseWriter, users ...profileUser) {
	writeRaw(w, http.StatusOK, appendProfiles(make([]byte, 0, 160*len(users)+32), users))
}

// appendProfiles appends profileResponse{users} as json.Marshal writes it.
func appendProfiles(b []byte, users []profileUser) []byte {
	if users == nil {
		return append(b, `{"profileUsers":null}`...)
	}
	b = append(b, `{"profileUsers":[`...)
	for i := range users {
		u := &users[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"id":`...), u.ID)
		b = appendJSONString(append(b, `,"hostId":`...), u.HostID)
		b = append(b, `,"settings":`...)
		if u.Settings == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for j, st := range u.Settings {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(append(b, `{"id":`...), st.ID)
				b = append(appendJSONString(append(b, `,"value":`...), st.Value), '}')
			}
			b = append(b, ']')
		}
		b = append(strconv.AppendBool(append(b, `,"isSponsoredUser":`...), u.IsSponsoredUser), '}')
	}
	return append(b, "]}"...)
}

// shortEscapes are the control characters JSON escapes as \b, \f, \n, \r
// and \t, in that order.
const shortEscapes = "\b\f\n\r\t"

// appendJSONString appends s as json.Marshal writes a string: ASCII here,
// with encoding/json's escapes (a quote and a backslash after a backslash;
// \b, \f, \n, \r, \t; any other control character, and HTML's <, > and &,
// as \u00XX), and any other text by encoding/json itself, which also
// replaces invalid UTF-8 and escapes U+2028 and U+2029. Not jsontext's
// AppendQuote (datafile's): it escapes neither HTML's characters nor
// U+2028/2029, and the answers stay byte for byte what they were.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	n := len(b)
	b = append(b, '"')
	start := 0 // s[start:i] is to be written as it is
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			// A copy, so that the interface json.Marshal takes keeps none
			// of the caller's strings, which then stay on its stack. A
			// string always encodes.
			q, _ := json.Marshal(strings.Clone(s))
			return append(b[:n], q...)
		case c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&':
			continue
		}
		b = append(b, s[start:i]...)
		switch k := strings.IndexByte(shortEscapes, c); {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case k >= 0:
			b = append(b, '\\', "bfnrt"[k])
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	return append(append(b, s[start:]...), '"')
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
// service knows the id, which it compares without case.
func (w *world) profileValue(xuid, id string) (string, bool) {
	var lb [24]byte // longer than any id the service knows
	key, ascii := lb[:0], len(id) <= len(lb)
	for i := 0; ascii && i < len(id); i++ {
		c := id[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		key, ascii = append(key, c), c < utf8.RuneSelf
	}
	if !ascii {
		// strings.ToLower's Unicode folding ("\u212a" is 'k'), as before.
		key = []byte(strings.ToLower(id))
	}
	switch {
	case slices.ContainsFunc(nameSettings, func(n string) bool { return n == string(key) }):
		return w.gamertagOf(xuid), true
	case string(key) == "gamerscore":
		return strconv.Itoa(w.gamerscoreOf(xuid)), true
	case string(key) == "accounttier":
		return w.tierOf(xuid), true
	}
	v, ok := profileValues[string(key)]
	return v, ok
}

// profileOf returns a user's settings, in the order asked, every one the
// service knows answered (unknown ids are left out), from the world;
// values are stable across runs. The settings are appended to into, or
// to a slice of their own for a nil into.
func (w *world) profileOf(xuid string, settings []string, into []profileSetting) profileUser {
	if len(settings) == 0 {
		settings = []string{"GameDisplayName", "Gamertag", "Gamerscore"}
	}
	if into == nil {
		into = make([]profileSetting, 0, len(settings))
	}
	u := profileUser{ID: xuid, HostID: xuid, Settings: into[:0]}
	for _, s := range settings {
		if v, ok := w.profileValue(xuid, s); ok {
			u.Settings = append(u.Settings, profileSetting{ID: s, Value: v})
		}
	}
	return u
}

// notXUID reports whether x is not a XUID as the services write one
// (xblid.CheckXUID: decimal, no leading zero): a batch naming one is
// refused, as profile's is, rather than answer one user under two
// spellings.
func notXUID(x string) bool { return xblid.CheckXUID(x) != nil }

// gamertag is the gamertag derived from a XUID: "Player" and its last four
// digits.
func gamertag(xuid string) string {
	if len(xuid) > 4 {
		xuid = xuid[len(xuid)-4:]
	}
	return "Player" + xuid
}

// splitList appends to into the non-empty items of a comma-separated
// list, trimmed.
func splitList(s string, into []string) []string {
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			into = append(into, f)
		}
	}
	return into
}
