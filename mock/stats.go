package mock

import (
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
)

// The user stats service (GET /users/xuid(N)/scids/{scid}/stats/{a,b} and
// POST /batch) and the leaderboard service
// (GET /scids/{scid}/leaderboards/stat({name})?maxItems=M&continuationToken=C).
// Values are derived from the user and stat name, so they are stable.

type stat struct {
	StatName string `json:"statname"`
	Type     string `json:"type"`
	Value    string `json:"value"`
}

type statsUser struct {
	Xuid     string      `json:"xuid"`
	Gamertag string      `json:"gamertag"`
	Scids    []scidStats `json:"scids"`
}

type scidStats struct {
	Scid  string `json:"scid"`
	Stats []stat `json:"stats"`
}

func statValue(xuid, name string) int64 {
	f := fnv.New64a()
	f.Write([]byte(xuid + "/" + strings.ToLower(name)))
	return int64(f.Sum64() % 10000)
}

func statsOf(xuid, scid string, names []string) statsUser {
	s := scidStats{Scid: scid, Stats: make([]stat, 0, len(names))}
	for _, n := range names {
		s.Stats = append(s.Stats, stat{StatName: n, Type: "Integer", Value: strconv.FormatInt(statValue(xuid, n), 10)})
	}
	return statsUser{Xuid: xuid, Gamertag: gamertag(xuid), Scids: []scidStats{s}}
}

func statsRoutes() []route {
	return []route{
		{http.MethodGet, re(`/users/xuid\((\d{1,20})\)/scids/([^/]+)/stats/([^/]+)`), serveStats},
		{http.MethodPost, re(`/batch`), serveStatsBatch},
	}
}

func serveStats(h *Handler, c *call) {
	names := splitList(c.params[2])
	if len(names) == 0 || len(names) > 100 {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "name 1 to 100 stats")
		return
	}
	writeJSON(c.w, http.StatusOK, struct {
		User statsUser `json:"user"`
	}{statsOf(c.params[0], c.params[1], names)})
}

func serveStatsBatch(h *Handler, c *call) {
	var req struct {
		RequestedUsers []string `json:"requestedusers"`
		RequestedScids []struct {
			Scid           string   `json:"scid"`
			RequestedStats []string `json:"requestedstats"`
		} `json:"requestedscids"`
	}
	if !c.decode(h, &req) {
		return
	}
	if len(req.RequestedUsers) == 0 || len(req.RequestedUsers) > 100 || len(req.RequestedScids) != 1 {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "name 1 to 100 users and one scid")
		return
	}
	sc := req.RequestedScids[0]
	users := make([]statsUser, 0, len(req.RequestedUsers))
	for _, x := range req.RequestedUsers {
		users = append(users, statsOf(x, sc.Scid, sc.RequestedStats))
	}
	writeJSON(c.w, http.StatusOK, struct {
		Users []statsUser `json:"users"`
	}{users})
}

const leaderboardSize = 250

type leaderboardRow struct {
	Gamertag   string   `json:"gamertag"`
	Xuid       string   `json:"xuid"`
	Percentile float64  `json:"percentile"`
	Rank       int      `json:"rank"`
	Values     []string `json:"values"`
}

func leaderboardRoutes() []route {
	return []route{{http.MethodGet, re(`/scids/([^/]+)/leaderboards/([^/]+)`), serveLeaderboard}}
}

func serveLeaderboard(h *Handler, c *call) {
	start, end, next, ok := page(c, leaderboardSize)
	if !ok {
		return
	}
	rows := make([]leaderboardRow, 0, end-start)
	for i := start; i < end; i++ {
		x := strconv.Itoa(2533274790000000 + i)
		rows = append(rows, leaderboardRow{Gamertag: gamertag(x), Xuid: x, Rank: i + 1,
			Percentile: float64(i+1) / leaderboardSize, Values: []string{strconv.Itoa((leaderboardSize - i) * 10)}})
	}
	writeJSON(c.w, http.StatusOK, struct {
		PagingInfo struct {
			ContinuationToken *string `json:"continuationToken"`
			TotalItems        int     `json:"totalItems"`
		} `json:"pagingInfo"`
		LeaderboardInfo struct {
			DisplayName string `json:"displayName"`
			TotalCount  int    `json:"totalCount"`
		} `json:"leaderboardInfo"`
		UserList []leaderboardRow `json:"userList"`
	}{
		PagingInfo: struct {
			ContinuationToken *string `json:"continuationToken"`
			TotalItems        int     `json:"totalItems"`
		}{next, leaderboardSize},
		LeaderboardInfo: struct {
			DisplayName string `json:"displayName"`
			TotalCount  int    `json:"totalCount"`
		}{c.params[1], leaderboardSize},
		UserList: rows,
	})
}
