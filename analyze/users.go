package analyze

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
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

// userKey is how the analysis names the user of userhash uhs (what an
// Authorization sends before its ';'): uhs when it is one
// (xblauth.UserHash), and otherwise '#' and its digest
// (xblauth.UserDigest), which groups the calls that send the same value
// without keeping it: it may be a token sent in the userhash's place. A
// digest so written is its own key, so that a trace this package's
// readers redacted groups as the calls it was read from.
func userKey(uhs string) string {
	if xblauth.UserHash(uhs) || isUserDigest(uhs) {
		return uhs
	}
	return "#" + xblauth.UserDigest(uhs)
}

// isUserDigest reports whether s is a digest as userKey writes it: '#'
// and 16 lower-case hex digits.
func isUserDigest(s string) bool {
	if len(s) != 17 || s[0] != '#' {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// userOf returns the key (userKey) of the user of a call whose
// Authorization is auth, and false when auth names none (it is no XBL3.0
// value: the call has no token). A value redactAuth kept parses: its
// token is "REDACTED".
//
// An XBL3.0 value that Parse refuses but that carries a token after its
// ';' (an empty userhash, white space around it, a value past
// xblauth.MaxHeader) is a user's too (xblauth.UserText), named as userKey
// names it: a call that sends a token is never read as one without, which
// would count it against no user's limits.
func userOf(auth string) (string, bool) {
	uhs, ok := xblauth.UserText(auth)
	if !ok {
		return "", false
	}
	return userKey(uhs), true
}

// redactAuth is an Authorization value as a Call this package reads or
// records keeps it: "XBL3.0 x=<user>;REDACTED", the user's key (userOf),
// so that the calls of a userhash that is not one stay one user's; any
// other value as xblauth.Redact keeps it.
func redactAuth(h string) string {
	if u, ok := userOf(h); ok {
		return "XBL3.0 x=" + u + ";" + xblauth.Redacted
	}
	return xblauth.Redact(h)
}

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
