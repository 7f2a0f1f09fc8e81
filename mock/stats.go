package mock

import (
	"cmp"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/xblid"
)

// The user stats service. Contract 1 (XSAPI user_statistics_service.cpp):
// GET /users/xuid(N)/scids/{scid}/stats/{a,b} answers the user at the root,
// {"xuid", "scids": [{"scid", "stats": [{"statname", "type", "value"}]}]}, and
// POST /batch?operation=read answers {"users": [...]} of the same records.
// Contracts 2 and 3 (xbox-webapi-python's userstats provider) answer the
// GET as {"statlistscollection": [...]}, each stat with its properties,
// and POST /batch with arrangebyfield, groups,
// stats and xuids as {"groups", "statlistscollection"}.
// The leaderboard service: GET /scids/{scid}/leaderboards/{name} (event-based
// stats, contract 3.1) and .../leaderboards/stat({name}) (title-managed,
// 4.1). Values are derived from the user and stat name, so they are stable.

type stat struct {
	StatName string `json:"statname"`
	Type     string `json:"type"`
	Value    string `json:"value"`
}

type statsUser struct {
	XUID  string      `json:"xuid"`
	Scids []scidStats `json:"scids"`
}

type scidStats struct {
	Scid  string `json:"scid"`
	Stats []stat `json:"stats"`
}

// The service's bounds on one request.
const (
	maxStatUsers   = 100
	maxStatNames   = 100
	maxStatNameLen = 256
)

// statNamesOK reports whether names are 1 to 100 names of at most 256 bytes.
func statNamesOK(names []string) bool {
	if len(names) == 0 || len(names) > maxStatNames {
		return false
	}
	for _, n := range names {
		if n == "" || len(n) > maxStatNameLen {
			return false
		}
	}
	return true
}

func statValue(xuid, name string) int64 {
	f := fnv.New64a()
	f.Write([]byte(xuid + "/" + strings.ToLower(name)))
	return int64(f.Sum64() % 10000)
}

// statOf returns xuid's stat name in the title whose SCID is scid: in the
// default world derived from the XUID and the name, in a seeded one the
// value it seeded (names compared without case), and ok false where it
// seeded none: the service leaves out a stat the user never wrote.
func (w *world) statOf(xuid, scid, name string) (v int64, ok bool) {
	ix := w.ix.Load()
	if !ix.seeded {
		return statValue(xuid, name), true
	}
	if a := ix.accounts[xuid]; a != nil {
		for _, t := range a.Titles {
			if !strings.EqualFold(w.scidOf(t.TitleID), scid) {
				continue
			}
			for n, v := range t.Stats {
				if strings.EqualFold(n, name) {
					return v, true
				}
			}
		}
	}
	return 0, false
}

func (w *world) statsOf(xuid, scid string, names []string) statsUser {
	s := scidStats{Scid: scid, Stats: make([]stat, 0, len(names))}
	for _, n := range names {
		if v, ok := w.statOf(xuid, scid, n); ok {
			s.Stats = append(s.Stats, stat{StatName: n, Type: "Integer", Value: strconv.FormatInt(v, 10)})
		}
	}
	return statsUser{XUID: xuid, Scids: []scidStats{s}}
}

// statsService answers the user stats service.
type statsService struct{ *world }

func (s statsService) routes() []route {
	return []route{
		{http.MethodGet, pat("/users/xuid({n})/scids/{}/stats/{}"), s.serveStats, "1; 2 and 3 (statlistscollection, include=valuemetadata)"},
		{http.MethodPost, pat("/batch"), s.serveStatsBatch, "1 (?operation=read); 2 (arrangebyfield, groups)"},
	}
}

func (s statsService) serveStats(c *call) {
	names := splitList(c.params[2], nil)
	if !statNamesOK(names) {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "name 1 to 100 stats of at most 256 bytes")
		return
	}
	switch v := strings.TrimSpace(c.r.Header.Get("x-xbl-contract-version")); v {
	case "", "1":
		writeJSON(c.w, http.StatusOK, s.statsOf(c.params[0], c.params[1], names))
	case "2", "3":
		writeJSON(c.w, http.StatusOK, struct {
			Lists []statList `json:"statlistscollection"`
		}{[]statList{s.statListOf(c.params[0], c.params[1], names)}})
	default:
		writeError(c.w, http.StatusBadRequest, "BadRequest", "the user stats service answers contract versions 1, 2 and 3")
	}
}

// statList is one user's stats as contracts 2 and 3 send them
// (OpenXbox/xbox-webapi-python tests/data/responses/
// userstats_by_scid_with_metadata.json and userstats_batch.json).
type statList struct {
	ArrangeByField   string     `json:"arrangebyfield"`
	ArrangeByFieldID string     `json:"arrangebyfieldid"`
	Stats            []statItem `json:"stats"`
}

type statItem struct {
	// GroupProperties is {} in a batch's stats (userstats_batch_by_scid.json;
	// a group's stats carry the group's in userstats_batch.json), absent
	// from the GET's.
	GroupProperties *struct{} `json:"groupproperties,omitempty"`
	XUID            string    `json:"xuid"`
	Scid            string    `json:"scid"`
	Name            string    `json:"name"`
	Type            string    `json:"type"`
	Value           string    `json:"value"`
	// Properties is always there, {} when the title configured none: in
	// both recordings of the GET (userstats_by_scid.json, contract 2;
	// ..._with_metadata.json, contract 3 with include=valuemetadata) and
	// the batch's; xbox-webapi-python's Stat model requires it.
	Properties map[string]string `json:"properties"`
}

func (w *world) statListOf(xuid, scid string, names []string) statList {
	l := statList{ArrangeByField: "xuid", ArrangeByFieldID: xuid, Stats: make([]statItem, 0, len(names))}
	for _, n := range names {
		v, ok := w.statOf(xuid, scid, n)
		if !ok {
			continue
		}
		l.Stats = append(l.Stats, statItem{XUID: xuid, Scid: scid, Name: n, Type: "Integer", Value: strconv.FormatInt(v, 10),
			Properties: map[string]string{}})
	}
	return l
}

// statsBatchRequest is POST /batch in the form published clients send with
// contract 2 (xbox-webapi-python userstats get_stats_batch, xbox-webapi on
// npm getUserTitleStats): no query, the stats named with a titleId or a
// scid each. The Python client sends titleId as a number, the Node client
// as a string; json.Number takes both.
type statsBatchRequest struct {
	ArrangeByField string `json:"arrangebyfield"`
	Groups         []struct {
		Name    string      `json:"name"`
		TitleID json.Number `json:"titleId"`
		Scid    string      `json:"scid"`
	} `json:"groups"`
	Stats []struct {
		Name    string      `json:"name"`
		TitleID json.Number `json:"titleId"`
		Scid    string      `json:"scid"`
	} `json:"stats"`
	XUIDs []string `json:"xuids"`
}

// serveStatsBatchGroups answers the contract-2 batch: each user's stats at
// the top, and each group the request names (its stats are title
// configuration the mock does not have, so none).
func (s statsService) serveStatsBatchGroups(c *call) {
	var req statsBatchRequest
	if !c.decode(&req) {
		return
	}
	names := make([]string, 0, len(req.Stats))
	var scid string
	for _, st := range req.Stats {
		names = append(names, st.Name)
		if st.Scid != "" {
			scid = strings.ToLower(st.Scid)
		} else if scid == "" {
			if _, err := strconv.ParseUint(st.TitleID.String(), 10, 32); err != nil {
				writeError(c.w, http.StatusBadRequest, "BadRequest", "each stat needs a scid or a titleId")
				return
			}
			scid = s.scidOf(st.TitleID.String())
		}
	}
	if req.ArrangeByField != "xuid" || len(req.XUIDs) == 0 || len(req.XUIDs) > maxStatUsers || !statNamesOK(names) {
		writeError(c.w, http.StatusBadRequest, "BadRequest", `arrangebyfield "xuid", 1 to 100 xuids and 1 to 100 stats of at most 256 bytes`)
		return
	}
	type group struct {
		Name    string     `json:"name"`
		TitleID string     `json:"titleid,omitempty"`
		Scid    string     `json:"scid,omitempty"`
		Lists   []statList `json:"statlistscollection"`
	}
	out := struct {
		Groups []group    `json:"groups"`
		Lists  []statList `json:"statlistscollection"`
	}{Groups: []group{}}
	for _, x := range req.XUIDs {
		if xblid.CheckXUID(x) != nil {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "xuids must hold xuids")
			return
		}
		l := s.statListOf(x, scid, names)
		for i := range l.Stats {
			l.Stats[i].GroupProperties = &struct{}{}
		}
		out.Lists = append(out.Lists, l)
	}
	for _, g := range req.Groups {
		gr := group{Name: g.Name, TitleID: g.TitleID.String(), Scid: strings.ToLower(g.Scid), Lists: []statList{}}
		for _, x := range req.XUIDs {
			gr.Lists = append(gr.Lists, statList{ArrangeByField: "xuid", ArrangeByFieldID: x, Stats: []statItem{}})
		}
		out.Groups = append(out.Groups, gr)
	}
	writeJSON(c.w, http.StatusOK, out)
}

func (s statsService) serveStatsBatch(c *call) {
	if c.r.URL.RawQuery == "" && contractAtLeast(c.r, 2) {
		s.serveStatsBatchGroups(c)
		return
	}
	if c.query("operation") != "read" {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "operation=read is required")
		return
	}
	var req struct {
		RequestedUsers []string `json:"requestedusers"`
		RequestedScids []struct {
			Scid           string   `json:"scid"`
			RequestedStats []string `json:"requestedstats"`
		} `json:"requestedscids"`
	}
	if !c.decode(&req) {
		return
	}
	if slices.ContainsFunc(req.RequestedUsers, notXUID) {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "requestedusers must hold xuids")
		return
	}
	if len(req.RequestedUsers) == 0 || len(req.RequestedUsers) > maxStatUsers || len(req.RequestedScids) != 1 ||
		!statNamesOK(req.RequestedScids[0].RequestedStats) || len(req.RequestedScids[0].Scid) > maxStatNameLen {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "name 1 to 100 users, one scid and 1 to 100 stats of at most 256 bytes")
		return
	}
	sc := req.RequestedScids[0]
	users := make([]statsUser, 0, len(req.RequestedUsers))
	for _, x := range req.RequestedUsers {
		users = append(users, s.statsOf(x, sc.Scid, sc.RequestedStats))
	}
	writeJSON(c.w, http.StatusOK, struct {
		Users []statsUser `json:"users"`
	}{users})
}

const leaderboardSize = 250

// leaderboardRow is a row as contract 3.1 and later send it: the score in
// "value". Older contracts send "values", a list (XSAPI LeaderboardTests.cpp).
type leaderboardRow struct {
	Gamertag             string   `json:"gamertag"`
	ModernGamertag       string   `json:"moderngamertag"`
	ModernGamertagSuffix string   `json:"moderngamertagsuffix"`
	UniqueModernGamertag string   `json:"uniquemoderngamertag"`
	XUID                 string   `json:"xuid"`
	Percentile           float64  `json:"percentile"`
	Rank                 int      `json:"rank"`
	GlobalRank           int      `json:"globalrank"`
	Value                *string  `json:"value,omitempty"`
	Values               []string `json:"values,omitempty"`
}

type leaderboardAnswer struct {
	PagingInfo struct {
		ContinuationToken *string `json:"continuationToken"`
		TotalItems        int     `json:"totalItems"`
	} `json:"pagingInfo"`
	LeaderboardInfo struct {
		TotalCount       int `json:"totalCount"`
		ColumnDefinition struct {
			StatName string `json:"statName"`
			Type     string `json:"type"`
		} `json:"columnDefinition"`
	} `json:"leaderboardInfo"`
	UserList []leaderboardRow `json:"userList"`
}

// leaderboardsService answers the leaderboard service.
type leaderboardsService struct{ *world }

func (s leaderboardsService) routes() []route {
	return []route{{http.MethodGet, pat("/scids/{}/leaderboards/{}"), s.serveLeaderboard, "1 and 2 (values), 3 and later (value)"}}
}

func (s leaderboardsService) serveLeaderboard(c *call) {
	name := c.params[1]
	if s, ok := strings.CutPrefix(strings.ToLower(name), "stat("); ok {
		name = strings.TrimSuffix(name[len(name)-len(s):], ")")
	}
	ranked := s.ranking(c.params[0], name)
	start, end, next, ok := page(c, len(ranked))
	if !ok {
		return
	}
	valueField := contractAtLeast(c.r, 3)
	var a leaderboardAnswer
	a.PagingInfo.ContinuationToken, a.PagingInfo.TotalItems = next, len(ranked)
	a.LeaderboardInfo.TotalCount = len(ranked)
	a.LeaderboardInfo.ColumnDefinition.StatName, a.LeaderboardInfo.ColumnDefinition.Type = name, "Integer"
	a.UserList = make([]leaderboardRow, 0, end-start)
	for i := start; i < end; i++ {
		x := ranked[i].xuid
		score := strconv.FormatInt(ranked[i].score, 10)
		gt := s.gamertagOf(x)
		suffix := x[max(0, len(x)-4):] // a XUID may be shorter than four digits
		row := leaderboardRow{Gamertag: gt, ModernGamertag: gt, ModernGamertagSuffix: suffix,
			UniqueModernGamertag: gt + "#" + suffix, XUID: x, Rank: i + 1, GlobalRank: i + 1,
			Percentile: 1 - float64(i)/float64(len(ranked))}
		if valueField {
			row.Value = &score
		} else {
			row.Values = []string{score}
		}
		a.UserList = append(a.UserList, row)
	}
	writeJSON(c.w, http.StatusOK, a)
}

type rankedUser struct {
	xuid  string
	score int64
}

// ranking returns a leaderboard's users, best first: in the default world
// leaderboardSize derived players, in a seeded one the accounts that have
// the stat in the title of scid (ties by XUID).
func (w *world) ranking(scid, stat string) []rankedUser {
	ix := w.ix.Load()
	var out []rankedUser
	if !ix.seeded {
		out = make([]rankedUser, leaderboardSize)
		for i := range out {
			out[i] = rankedUser{strconv.Itoa(2533274790000000 + i), int64((leaderboardSize - i) * 10)}
		}
		return out
	}
	for _, a := range ix.src.Accounts {
		if v, ok := w.statOf(a.XUID, scid, stat); ok {
			out = append(out, rankedUser{a.XUID, v})
		}
	}
	slices.SortFunc(out, func(p, q rankedUser) int { return cmp.Or(cmp.Compare(q.score, p.score), cmp.Compare(p.xuid, q.xuid)) })
	return out
}

// contractAtLeast reports whether the request's x-xbl-contract-version
// (such as "3.1") is at least major.
func contractAtLeast(r *http.Request, major int) bool {
	v := r.Header.Get("x-xbl-contract-version")
	v, _, _ = strings.Cut(v, ".")
	n, err := strconv.Atoi(v)
	return err == nil && n >= major
}
