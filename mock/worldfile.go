package mock

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
)

// World is the people the mock's services answer about: accounts with
// their gamertags, relationships, recent players, titles played,
// achievement progress and stats. Every service reads the same World, so
// the gamertag XSTS claims is the one profile, people hub and leaderboards
// answer, and a friend list is what social, people hub and presence all
// see.
//
// The zero World is the default one, open and derived: every XUID exists,
// with the gamertag "Player" and its last four digits (DefaultAccount's is
// "MockPlayer"), twelve mutual friends (the next twelve XUIDs), Gold tier,
// and stats derived from the XUID and the stat's name. A seeded World (one
// with accounts, from Config.World, Handler.SetWorld, the admin API or
// xblcall mock --world) is closed: its accounts hold exactly what it says,
// and any other XUID has a derived gamertag and nothing else.
//
// Apps are the applications registered with the sign-in services, which
// send a code only to a redirect URI the client registered (or to a
// loopback address): PublishedApps, and a World's own, which replace a
// published app of the same client ID.
type World struct {
	Accounts []WorldAccount `json:"accounts"`
	Apps     []WorldApp     `json:"apps,omitempty"`
}

// WorldAccount is one user of a seeded World.
type WorldAccount struct {
	XUID string `json:"xuid"`
	// Gamertag is the user's gamertag, 1 to 15 characters, one per
	// account (compared without case); empty means the derived one.
	Gamertag string `json:"gamertag,omitempty"`
	// Gamerscore is the profile's gamerscore, at least what the unlocked
	// achievements of Titles give (10 each); nil means exactly that.
	// Achievements unlocked later add to it.
	Gamerscore *int `json:"gamerscore,omitempty"`
	// Tier is the account tier: "Gold" (the default) or "Silver".
	Tier string `json:"tier,omitempty"`
	// Friends are followed both ways; Follows only by this account;
	// Favorites are some of the two. Each names another account of the
	// World.
	Friends   []string `json:"friends,omitempty"`
	Follows   []string `json:"follows,omitempty"`
	Favorites []string `json:"favorites,omitempty"`
	// RecentPlayers are the accounts played with lately, newest first.
	RecentPlayers []WorldEncounter `json:"recentPlayers,omitempty"`
	// Titles are the titles played: the title history.
	Titles []WorldTitle `json:"titles,omitempty"`
}

// WorldEncounter is a recent player: another account and the titles
// played together.
type WorldEncounter struct {
	XUID   string   `json:"xuid"`
	Titles []string `json:"titles,omitempty"`
}

// WorldTitle is a title an account has played.
type WorldTitle struct {
	TitleID string `json:"titleId"`
	// LastPlayed is an RFC 3339 time; empty means 2024-01-01T00:00:00Z.
	LastPlayed string `json:"lastPlayed,omitempty"`
	// Achievements are progress by achievement id ("1" to "5", the mock's
	// achievements of every title), in percent: 100 is unlocked.
	Achievements map[string]int `json:"achievements,omitempty"`
	// Stats are the user's stats in the title, by name.
	Stats map[string]int64 `json:"stats,omitempty"`
}

// Bounds of a World.
const (
	// MaxWorldBytes bounds a world file ReadWorld reads.
	MaxWorldBytes = 16 << 20
	// MaxWorldAccounts bounds a World's accounts.
	MaxWorldAccounts = 10000
	maxGamertag      = 15
	maxTitles        = 1000
	maxGamerscore    = 100_000_000
	defaultPlayed    = "2024-01-01T00:00:00.0000000Z"
	baseGamerscore   = 1250 // a derived account's gamerscore before its unlocks
)

// worldFile is the kind of a world's file: its lists of objects are
// bounded as check bounds them, so that a file of empty ones is refused
// before they are decoded.
var worldFile = datafile.Kind{Name: "world", MaxBytes: MaxWorldBytes, Lists: map[string]int{
	"/accounts":                          MaxWorldAccounts,
	"/accounts/*/friends":                maxPeople,
	"/accounts/*/follows":                maxPeople,
	"/accounts/*/favorites":              maxPeople,
	"/accounts/*/recentPlayers":          maxPeople,
	"/accounts/*/recentPlayers/*/titles": maxTitles,
	"/accounts/*/titles":                 maxTitles,
	"/accounts/*/titles/*/achievements":  achievementsPerTitle,
	"/accounts/*/titles/*/stats":         maxStatNames,
	"/apps":                              maxApps,
	"/apps/*/redirectUris":               maxRedirectURIs,
}, Totals: map[string]int{
	"/accounts/*/titles":        maxInAll,
	"/accounts/*/recentPlayers": maxInAll,
}}

// maxInAll bounds the titles of all a world's accounts together, and
// their recent players.
const maxInAll = 100_000

// ReadWorld reads a World from a world file, JSON or YAML (at most
// MaxWorldBytes), and checks it as SetWorld does. What is wrong is a
// *datafile.Error naming the line and field.
func ReadWorld(r io.Reader) (World, error) {
	var w World
	if err := worldFile.Read(r, &w, w.check); err != nil {
		return World{}, err
	}
	return w, nil
}

// LoadWorld reads the named world file as ReadWorld reads one; its errors
// name the file.
func LoadWorld(name string) (World, error) {
	var w World
	if err := worldFile.Load(name, &w, w.check); err != nil {
		return World{}, err
	}
	return w, nil
}

// worldError is what is wrong with a world, at field.
func worldError(field, reason string) error {
	return &datafile.Error{File: "world", Field: field, Reason: reason}
}

// check reports the first thing wrong with w, as a *datafile.Error.
func (w *World) check() error {
	if len(w.Accounts) > MaxWorldAccounts {
		return worldError("accounts", fmt.Sprintf("more than %d accounts", MaxWorldAccounts))
	}
	where := make(map[string]int, len(w.Accounts))
	tags := make(map[string]int, len(w.Accounts))
	for i, a := range w.Accounts {
		f := fmt.Sprintf("accounts[%d]", i)
		if xblid.CheckXUID(a.XUID) != nil {
			return worldError(f+".xuid", xblid.ErrXUID.Error())
		}
		if j, dup := where[a.XUID]; dup {
			return worldError(f+".xuid", fmt.Sprintf("accounts[%d] has the same XUID", j))
		}
		where[a.XUID] = i
		if err := checkGamertag(a.Gamertag); err != "" {
			return worldError(f+".gamertag", err)
		}
		if a.Gamertag != "" {
			if j, dup := tags[strings.ToLower(a.Gamertag)]; dup {
				return worldError(f+".gamertag", fmt.Sprintf("accounts[%d] has the same gamertag", j))
			}
			tags[strings.ToLower(a.Gamertag)] = i
		}
		if a.Tier != "" && a.Tier != "Gold" && a.Tier != "Silver" {
			return worldError(f+".tier", `want "Gold" or "Silver"`)
		}
	}
	titles, players := 0, 0
	for i, a := range w.Accounts {
		f := fmt.Sprintf("accounts[%d]", i)
		if err := a.checkRelations(f, where); err != nil {
			return err
		}
		if err := a.checkTitles(f); err != nil {
			return err
		}
		titles, players = titles+len(a.Titles), players+len(a.RecentPlayers)
		switch {
		case titles > maxInAll:
			return worldError(f+".titles", fmt.Sprintf("more than %d titles in all the accounts", maxInAll))
		case players > maxInAll:
			return worldError(f+".recentPlayers", fmt.Sprintf("more than %d recent players in all the accounts", maxInAll))
		}
	}
	return checkApps(w.Apps)
}

// checkGamertag returns what is wrong with a gamertag, or "".
func checkGamertag(gt string) string {
	switch {
	case !utf8.ValidString(gt):
		return "not UTF-8"
	case utf8.RuneCountInString(gt) > maxGamertag:
		return fmt.Sprintf("longer than %d characters", maxGamertag)
	case strings.IndexFunc(gt, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return "holds a character that is not printable"
	case gt != strings.TrimSpace(gt):
		return "starts or ends with a space"
	}
	return ""
}

// checkRelations checks an account's friends, follows, favourites and
// recent players: other accounts of the world (where), each named once.
func (a *WorldAccount) checkRelations(f string, where map[string]int) error {
	seen := map[string]string{}
	for _, l := range []struct {
		name  string
		xuids []string
	}{{"friends", a.Friends}, {"follows", a.Follows}} {
		if len(l.xuids) > maxPeople {
			return worldError(f+"."+l.name, fmt.Sprintf("more than %d people", maxPeople))
		}
		for j, x := range l.xuids {
			ff := fmt.Sprintf("%s.%s[%d]", f, l.name, j)
			if err := a.checkOther(ff, x, where); err != nil {
				return err
			}
			if prev, dup := seen[x]; dup {
				return worldError(ff, "already in "+prev)
			}
			seen[x] = l.name
		}
	}
	if len(seen) > maxPeople {
		return worldError(f+".follows", fmt.Sprintf("more than %d people followed", maxPeople))
	}
	favorite := make(map[string]bool, len(a.Favorites))
	for j, x := range a.Favorites {
		if _, ok := seen[x]; !ok || favorite[x] {
			return worldError(fmt.Sprintf("%s.favorites[%d]", f, j), "not one of the friends or follows, or named twice")
		}
		favorite[x] = true
	}
	if len(a.RecentPlayers) > maxPeople {
		return worldError(f+".recentPlayers", fmt.Sprintf("more than %d people", maxPeople))
	}
	for j, e := range a.RecentPlayers {
		ff := fmt.Sprintf("%s.recentPlayers[%d]", f, j)
		if err := a.checkOther(ff+".xuid", e.XUID, where); err != nil {
			return err
		}
		if len(e.Titles) > maxTitles {
			return worldError(ff+".titles", fmt.Sprintf("more than %d titles", maxTitles))
		}
		for k, t := range e.Titles {
			if xblid.CheckTitle(t) != nil {
				return worldError(fmt.Sprintf("%s.titles[%d]", ff, k), xblid.ErrTitle.Error())
			}
		}
	}
	return nil
}

// checkOther checks that x names another account of the world.
func (a *WorldAccount) checkOther(field, x string, where map[string]int) error {
	switch _, ok := where[x]; {
	case xblid.CheckXUID(x) != nil:
		return worldError(field, xblid.ErrXUID.Error())
	case x == a.XUID:
		return worldError(field, "the account itself")
	case !ok:
		return worldError(field, "no account of the world has this XUID")
	}
	return nil
}

// checkTitles checks an account's titles and its gamerscore against them.
func (a *WorldAccount) checkTitles(f string) error {
	if len(a.Titles) > maxTitles {
		return worldError(f+".titles", fmt.Sprintf("more than %d titles", maxTitles))
	}
	earned := 0
	seen := make(map[string]bool, len(a.Titles))
	for j, t := range a.Titles {
		ff := fmt.Sprintf("%s.titles[%d]", f, j)
		if xblid.CheckTitle(t.TitleID) != nil {
			return worldError(ff+".titleId", xblid.ErrTitle.Error())
		}
		if seen[t.TitleID] {
			return worldError(ff+".titleId", "named twice")
		}
		seen[t.TitleID] = true
		if t.LastPlayed != "" {
			if _, err := time.Parse(time.RFC3339Nano, t.LastPlayed); err != nil {
				return worldError(ff+".lastPlayed", "not an RFC 3339 time")
			}
		}
		for _, id := range slices.Sorted(maps.Keys(t.Achievements)) {
			n, err := strconv.Atoi(id)
			if err != nil || n < 1 || n > achievementsPerTitle || id != strconv.Itoa(n) {
				return worldError(ff+".achievements."+safetext.Clip(id, 40), fmt.Sprintf("not an achievement of the mock's titles (1 to %d)", achievementsPerTitle))
			}
			if p := t.Achievements[id]; p < 0 || p > 100 {
				return worldError(ff+".achievements."+id, "progress is a percentage, 0 to 100")
			}
			if t.Achievements[id] == 100 {
				earned += achievementScore
			}
		}
		if len(t.Stats) > maxStatNames {
			return worldError(ff+".stats", fmt.Sprintf("more than %d stats", maxStatNames))
		}
		for name := range t.Stats {
			if name == "" || len(name) > maxStatNameLen {
				return worldError(ff+".stats", fmt.Sprintf("a stat's name is 1 to %d bytes", maxStatNameLen))
			}
		}
	}
	if g := a.Gamerscore; g != nil && (*g < earned || *g > maxGamerscore) {
		return worldError(f+".gamerscore", fmt.Sprintf("below the %d its unlocked achievements give, or above %d", earned, maxGamerscore))
	}
	return nil
}
