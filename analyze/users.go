package analyze

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
)

// userInfo is what an Analyzer keeps of a user: its userhash (kept: cut to
// maxKeptText, copied) and, once the trace's answers give them, its XUID
// and gamertag. A user costs 24 bytes here until then: a trace of many
// users, each a call, holds one per call.
type userInfo struct {
	hash string
	id   *identity
}

// identity is a user's XUID and gamertag, each at most 40 bytes, as the
// answers that give them said (escaped in the report).
type identity struct{ xuid, gamertag string }

// user returns the user of userhash hash (as kept: cut to maxKeptText).
func (a *Analyzer) user(hash string) int32 {
	hash = safetext.Cut(hash, maxKeptText)
	if id, ok := a.users[hash]; ok {
		return id
	}
	id := int32(len(a.userInfo))
	hash = strings.Clone(hash) // never a part of the trace's text: it would keep all of it
	a.users[hash] = id
	a.userInfo = append(a.userInfo, userInfo{hash: hash})
	return id
}

// learnIdentity reads a user's XUID and gamertag from the answers that
// give them: the user's own profile settings and presence.
func (a *Analyzer) learnIdentity(u int32, host, p string, c *Call) {
	info := &a.userInfo[u]
	if info.id != nil && info.id.xuid != "" && info.id.gamertag != "" || c.Status != 200 || len(c.ResponseBody) == 0 {
		return
	}
	var xuid, gamertag string
	switch {
	case host == "profile.xboxlive.com" && strings.HasPrefix(p, "/users/me/profile/settings"):
		var resp struct {
			ProfileUsers []struct {
				ID       string `json:"id"`
				Settings []struct{ ID, Value string }
			} `json:"profileUsers"`
		}
		if json.Unmarshal(c.ResponseBody, &resp) == nil && len(resp.ProfileUsers) == 1 {
			pu := resp.ProfileUsers[0]
			xuid = pu.ID
			for _, s := range pu.Settings {
				if s.ID == "Gamertag" {
					gamertag = cmp.Or(gamertag, s.Value)
				}
			}
		}
	case (host == "userpresence.xboxlive.com" || host == "presence.xboxlive.com") && p == "/users/me":
		var resp struct {
			XUID string `json:"xuid"`
		}
		if json.Unmarshal(c.ResponseBody, &resp) == nil {
			xuid = resp.XUID
		}
	}
	if xuid == "" && gamertag == "" {
		return
	}
	if info.id == nil {
		info.id = &identity{}
	}
	if info.id.xuid == "" {
		info.id.xuid = keep(safetext.Cut(xuid, 40))
	}
	if info.id.gamertag == "" {
		info.id.gamertag = keep(safetext.Cut(gamertag, 40))
	}
}

// xuid and gamertag are the user's, or "".
func (u userInfo) xuid() string {
	if u.id == nil {
		return ""
	}
	return u.id.xuid
}

func (u userInfo) gamertag() string {
	if u.id == nil {
		return ""
	}
	return u.id.gamertag
}

// name is how a report names user u (before it escapes it).
func (a *Analyzer) name(u int32) string {
	info := a.userInfo[u]
	xuid, gamertag := info.xuid(), info.gamertag()
	switch {
	case gamertag != "" && xuid != "":
		return gamertag + " (" + xuid + ")"
	case gamertag != "":
		return gamertag
	case xuid != "":
		return "xuid " + xuid
	}
	return "userhash " + info.hash
}
