package mock

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
// the people it follows (its friends and follows, then those who named it a
// friend, in the world's order), whether they follow back, and its
// favourites; and counts each account's followers. A friendship is one
// relationship both ways, whichever account of the two names it.
func (ix *worldIndex) relate() {
	follows := map[[2]string]bool{} // {follower, followed}
	order := map[string][]string{}  // follower: whom, in the order first named
	follow := func(a, x string) {
		if k := [2]string{a, x}; !follows[k] {
			follows[k] = true
			order[a] = append(order[a], x)
		}
	}
	for _, a := range ix.src.Accounts {
		for _, x := range a.Friends {
			follow(a.XUID, x)
		}
		for _, x := range a.Follows {
			follow(a.XUID, x)
		}
	}
	for _, a := range ix.src.Accounts {
		for _, x := range a.Friends {
			follow(x, a.XUID)
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
		for _, x := range order[a.XUID] {
			back := follows[[2]string{x, a.XUID}]
			ps = append(ps, person{XUID: x, AddedDateTimeUtc: added, IsFavorite: favorite[x],
				IsFriend: back, IsFollowingCaller: back, IsFollowedByCaller: true, SocialNetworks: []string{}})
		}
		ix.people[a.XUID] = ps
	}
}

// world is the World the services answer from, indexed, and what calls
// wrote since (state): all a service reads and writes. A service holds a
// *world and nothing of the Handler, so it cannot reach the pipeline, the
// configuration or the journal. It is safe for concurrent use: readers load
// the index without a lock; mu serialises its changes, and state has its
// own lock.
type world struct {
	ix    atomic.Pointer[worldIndex]
	mu    sync.Mutex // serialises changes of ix
	state *state
	now   func() time.Time
	// scids are Config.SCIDs; signInTitle the title of the XSTS tokens the
	// sign-in mints (Config.SignInTitle).
	scids       map[string]string
	signInTitle string
	// rta is the RTA service's hub, told of every change (rtaevents.go);
	// nil tells none.
	rta *rtaHub
	// lapses times each Online presence record's lapse (presence.go).
	lapses presenceLapses
	// evicted are the presence records the state evicted in the change
	// under way (state.mu), told to RTA subscribers once it is made
	// (forgetEvicted).
	evicted []presenceRecord
}

// newWorld returns the world seeded with w (checked), its state bounded by
// s.
func newWorld(w World, s *state, now func() time.Time, scids map[string]string, signInTitle string) *world {
	wd := &world{state: s, now: now, scids: scids, signInTitle: signInTitle}
	s.presence.onEvict = func(_ string, p presenceRecord) { wd.evicted = append(wd.evicted, p) }
	wd.ix.Store(indexWorld(w, len(w.Accounts) > 0))
	return wd
}

// change resets the services' state, after change (under mu) when there
// is one, and tells RTA subscribers what changed of what they follow
// (SetWorld, ResetWorld). No presence change falls between the snapshot of
// what they were told and the events (lapses.mu), and the lapses timed go
// with the records.
func (w *world) change(change func()) {
	w.lapses.mu.Lock()
	defer w.lapses.mu.Unlock()
	before := w.rta.snapshot()
	w.mu.Lock()
	if change != nil {
		change()
	}
	w.resetState()
	w.mu.Unlock()
	w.stopLapses()
	w.rta.worldChanged(before)
}

// resetState empties the services' state: what the world seeds (its
// progress, relationships and stats) is read from the world itself, so it
// is never evicted and comes back whole. The caller holds mu.
func (w *world) resetState() {
	w.state.mu.Lock()
	defer w.state.mu.Unlock()
	w.state.clear()
}

// setGamertag makes gt the gamertag of xuid in the world (SetAccount).
func (w *world) setGamertag(xuid, gt string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	src := w.ix.Load().src
	src.Accounts = slices.Clone(src.Accounts)
	if i := slices.IndexFunc(src.Accounts, func(a WorldAccount) bool { return a.XUID == xuid }); i >= 0 {
		src.Accounts[i].Gamertag = gt
	} else {
		src.Accounts = append(src.Accounts, WorldAccount{XUID: xuid, Gamertag: gt})
	}
	w.ix.Store(indexWorld(src, w.ix.Load().seeded))
}

// account returns xuid's account in the world, nil for a XUID the world
// does not name.
func (w *world) account(xuid string) *WorldAccount { return w.ix.Load().accounts[xuid] }

// gamertagOf returns the gamertag of xuid in the world: its account's,
// else the derived one.
func (w *world) gamertagOf(xuid string) string {
	if a := w.account(xuid); a != nil && a.Gamertag != "" {
		return a.Gamertag
	}
	return gamertag(xuid)
}

// xuidOfGamertag returns the XUID of the account whose gamertag is gt
// (without case). A derived gamertag names only four digits of a XUID, so
// only accounts are found.
func (w *world) xuidOfGamertag(gt string) (string, bool) {
	ix := w.ix.Load()
	if x, ok := ix.byTag[strings.ToLower(gt)]; ok {
		return x, true
	}
	return "", false
}

// peopleOf returns whom xuid follows, as the social service lists them.
func (w *world) peopleOf(xuid string) []person {
	ix := w.ix.Load()
	if ix.seeded {
		return ix.people[xuid]
	}
	return derivedPeople(xuid)
}

// tierOf returns xuid's account tier.
func (w *world) tierOf(xuid string) string {
	if a := w.account(xuid); a != nil && a.Tier != "" {
		return a.Tier
	}
	return "Gold"
}

// gamerscoreOf returns xuid's gamerscore: the account's as seeded (or the
// derived base) plus what was unlocked since.
func (w *world) gamerscoreOf(xuid string) int {
	a := w.account(xuid)
	seeded, base := 0, baseGamerscore
	if w.ix.Load().seeded {
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
	for _, t := range w.titlesPlayed(xuid) {
		now += t.gamerscore
	}
	return base + now
}

// seededTitle returns xuid's title as the world seeded it.
func (w *world) seededTitle(xuid, title string) (WorldTitle, bool) {
	if t := w.ix.Load().titles[xuid+"/"+title]; t != nil {
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
func (w *world) followerCount(xuid string) int {
	ix := w.ix.Load()
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
func (w *world) recentPlayersOf(xuid string) []WorldEncounter {
	ix := w.ix.Load()
	if ix.seeded {
		if a := ix.accounts[xuid]; a != nil {
			return a.RecentPlayers
		}
		return nil
	}
	n, _ := strconv.ParseUint(xuid, 10, 64)
	out := make([]WorldEncounter, recentPlayers)
	for i := range out {
		out[i] = WorldEncounter{XUID: strconv.FormatUint(n+peoplePerUser+uint64(i)+1, 10), Titles: []string{w.signInTitle}}
	}
	return out
}

// searchGamertags returns up to n XUIDs of accounts whose gamertag holds
// q (lower case): those whose gamertag starts with q first, then by
// gamertag.
func (w *world) searchGamertags(q string, n int) []string {
	ix := w.ix.Load()
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
