package mock

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
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

// worldIndex is a checked World ready to answer from.
type worldIndex struct {
	src       World
	seeded    bool
	accounts  map[string]*WorldAccount // by XUID
	byTag     map[string]string        // lower-case gamertag -> XUID
	people    map[string][]person      // a seeded world's relationships by XUID
	followers map[string]int           // a seeded world's follower counts by XUID
	titles    map[string]*WorldTitle   // by XUID + "/" + title ID
	apps      map[string][]string      // redirect URIs by lower-case client ID (indexApps)
}

// indexWorld indexes w; seeded says whether it is closed (a seeded world)
// or the default one, whose relationships are derived.
func indexWorld(w World, seeded bool) *worldIndex {
	ix := &worldIndex{src: w, seeded: seeded, accounts: map[string]*WorldAccount{},
		byTag: map[string]string{}, people: map[string][]person{}, followers: map[string]int{}, titles: map[string]*WorldTitle{},
		apps: indexApps(w.Apps)}
	if len(w.Accounts) == 0 { // the default world's one account
		ix.src.Accounts = []WorldAccount{{XUID: DefaultAccount.XUID, Gamertag: DefaultAccount.Gamertag}}
	}
	for i := range ix.src.Accounts {
		a := &ix.src.Accounts[i]
		ix.accounts[a.XUID] = a
		ix.byTag[strings.ToLower(cmp.Or(a.Gamertag, gamertag(a.XUID)))] = a.XUID
		for j := range a.Titles {
			ix.titles[a.XUID+"/"+a.Titles[j].TitleID] = &a.Titles[j]
		}
	}
	if ix.seeded {
		ix.relate()
	}
	return ix
}

// relate lists each account's relationships as the social service does:
// the people it follows in the world's order, whether they follow back,
// and its favourites; and counts each account's followers.
func (ix *worldIndex) relate() {
	follows := map[[2]string]bool{} // {follower, followed}
	for _, a := range ix.src.Accounts {
		for _, x := range a.Friends {
			follows[[2]string{a.XUID, x}], follows[[2]string{x, a.XUID}] = true, true
		}
		for _, x := range a.Follows {
			follows[[2]string{a.XUID, x}] = true
		}
	}
	for k := range follows {
		ix.followers[k[1]]++
	}
	added := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	for _, a := range ix.src.Accounts {
		favorite := map[string]bool{}
		for _, x := range a.Favorites {
			favorite[x] = true
		}
		var ps []person
		for _, x := range slices.Concat(a.Friends, a.Follows) {
			back := follows[[2]string{x, a.XUID}]
			ps = append(ps, person{XUID: x, AddedDateTimeUtc: added, IsFavorite: favorite[x],
				IsFriend: back, IsFollowingCaller: back, IsFollowedByCaller: true, SocialNetworks: []string{}})
		}
		ix.people[a.XUID] = ps
	}
}

// SetWorld replaces the mock's world with w and resets the services'
// state to it: presence, sessions and achievement progress made since are
// dropped. A zero World is the default one. It
// answers a *datafile.Error, changing nothing, for a World that cannot be.
func (h *Handler) SetWorld(w World) error {
	if err := w.check(); err != nil {
		return err
	}
	h.worldMu.Lock()
	defer h.worldMu.Unlock()
	h.world.Store(indexWorld(w, len(w.Accounts) > 0))
	h.resetState()
	return nil
}

// World returns the world the mock answers from as it was seeded: no
// accounts for the default world.
func (h *Handler) World() World {
	ix := h.world.Load()
	if !ix.seeded {
		return World{Accounts: []WorldAccount{}, Apps: ix.src.Apps}
	}
	return ix.src
}

// ResetWorld puts the services back to the world as it was seeded:
// presence, sessions and progress from then on are dropped. FGRL's counts
// are not touched (the admin API's DELETE keys resets them).
func (h *Handler) ResetWorld() {
	h.worldMu.Lock()
	defer h.worldMu.Unlock()
	h.resetState()
}

// resetState empties the services' state: what the world seeds (its
// progress, relationships and stats) is read from the world itself, so it
// is never evicted and comes back whole. The caller holds worldMu.
func (h *Handler) resetState() {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	h.state.clear()
}

// setGamertag makes gt the gamertag of xuid in the world (SetAccount).
func (h *Handler) setGamertag(xuid, gt string) {
	h.worldMu.Lock()
	defer h.worldMu.Unlock()
	w := h.world.Load().src
	w.Accounts = slices.Clone(w.Accounts)
	if i := slices.IndexFunc(w.Accounts, func(a WorldAccount) bool { return a.XUID == xuid }); i >= 0 {
		w.Accounts[i].Gamertag = gt
	} else {
		w.Accounts = append(w.Accounts, WorldAccount{XUID: xuid, Gamertag: gt})
	}
	h.world.Store(indexWorld(w, h.world.Load().seeded))
}

// account returns xuid's account in the world, nil for a XUID the world
// does not name.
func (h *Handler) account(xuid string) *WorldAccount { return h.world.Load().accounts[xuid] }

// gamertagOf returns the gamertag of xuid in the world: its account's,
// else the derived one.
func (h *Handler) gamertagOf(xuid string) string {
	if a := h.account(xuid); a != nil && a.Gamertag != "" {
		return a.Gamertag
	}
	return gamertag(xuid)
}

// xuidOfGamertag returns the XUID of the account whose gamertag is gt
// (without case). A derived gamertag names only four digits of a XUID, so
// only accounts are found.
func (h *Handler) xuidOfGamertag(gt string) (string, bool) {
	ix := h.world.Load()
	if x, ok := ix.byTag[strings.ToLower(gt)]; ok {
		return x, true
	}
	return "", false
}

// peopleOf returns whom xuid follows, as the social service lists them.
func (h *Handler) peopleOf(xuid string) []person {
	ix := h.world.Load()
	if ix.seeded {
		return ix.people[xuid]
	}
	return derivedPeople(xuid)
}

// tierOf returns xuid's account tier.
func (h *Handler) tierOf(xuid string) string {
	if a := h.account(xuid); a != nil && a.Tier != "" {
		return a.Tier
	}
	return "Gold"
}

// gamerscoreOf returns xuid's gamerscore: the account's as seeded (or the
// derived base) plus what was unlocked since.
func (h *Handler) gamerscoreOf(xuid string) int {
	a := h.account(xuid)
	seeded, base := 0, baseGamerscore
	if h.world.Load().seeded {
		base = 0
	}
	if a != nil {
		for _, t := range a.Titles {
			for _, pct := range t.Achievements {
				if pct == 100 {
					seeded += achievementScore
				}
			}
		}
		if a.Gamerscore != nil {
			base = *a.Gamerscore - seeded
		}
	}
	now := 0
	for _, t := range h.titlesPlayed(xuid) {
		now += t.gamerscore
	}
	return base + now
}

// seededTitle returns xuid's title as the world seeded it.
func (h *Handler) seededTitle(xuid, title string) (WorldTitle, bool) {
	if t := h.world.Load().titles[xuid+"/"+title]; t != nil {
		return *t, true
	}
	return WorldTitle{}, false
}

// xblTime writes an RFC 3339 time as the services do: UTC with seven
// digits of fraction ("2024-01-01T00:00:00.0000000Z"); s as it is when it
// is not a time.
func xblTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z")
}

// followerCount returns how many people follow xuid.
func (h *Handler) followerCount(xuid string) int {
	ix := h.world.Load()
	if !ix.seeded {
		return peoplePerUser // the default world's relationships are mutual
	}
	return ix.followers[xuid]
}

// recentPlayers is how many recent players a default world's user has.
const recentPlayers = 3

// recentPlayersOf returns whom xuid played with lately, newest first: the
// world's, or in the default world the recentPlayers XUIDs after its
// people, met in the sign-in title.
func (h *Handler) recentPlayersOf(xuid string) []WorldEncounter {
	ix := h.world.Load()
	if ix.seeded {
		if a := ix.accounts[xuid]; a != nil {
			return a.RecentPlayers
		}
		return nil
	}
	n, _ := strconv.ParseUint(xuid, 10, 64)
	out := make([]WorldEncounter, recentPlayers)
	for i := range out {
		out[i] = WorldEncounter{XUID: strconv.FormatUint(n+peoplePerUser+uint64(i)+1, 10), Titles: []string{h.signInTitle()}}
	}
	return out
}

// searchGamertags returns up to n XUIDs of accounts whose gamertag holds
// q (lower case): those whose gamertag starts with q first, then by
// gamertag.
func (h *Handler) searchGamertags(q string, n int) []string {
	ix := h.world.Load()
	type hit struct {
		prefix bool
		tag    string
		xuid   string
	}
	var hits []hit
	for tag, x := range ix.byTag {
		if strings.Contains(tag, q) {
			hits = append(hits, hit{strings.HasPrefix(tag, q), tag, x})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.prefix != b.prefix {
			if a.prefix {
				return -1
			}
			return 1
		}
		return strings.Compare(a.tag, b.tag)
	})
	out := make([]string, 0, min(n, len(hits)))
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.xuid)
	}
	return out
}
