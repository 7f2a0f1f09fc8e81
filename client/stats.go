package client

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"strings"
)

var (
	statsAPI       = api{service: "userstats", host: "userstats.xboxlive.com", contract: "1"}
	leaderboardAPI = api{service: "leaderboards", host: "leaderboards.xboxlive.com", contract: "1"}
)

// Stat is one statistic value.
type Stat struct {
	Name  string `json:"statname"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

type statsUser struct {
	Xuid  string `json:"xuid"`
	Scids []struct {
		Scid  string `json:"scid"`
		Stats []Stat `json:"stats"`
	} `json:"scids"`
}

func (s statsUser) stats() []Stat {
	var out []Stat
	for _, sc := range s.Scids {
		out = append(out, sc.Stats...)
	}
	return out
}

// GetStats returns named statistics of one user
// (GET /users/xuid(X)/scids/{scid}/stats/{names}).
func (u *User) GetStats(ctx context.Context, xuid, scid string, names []string) ([]Stat, error) {
	a := statsAPI
	a.name = "GetStats"
	if err := checkCount(a, "names", len(names), 1, 100); err != nil {
		return nil, err
	}
	var out struct {
		User statsUser `json:"user"`
	}
	path := "/users/xuid(" + xuid + ")/scids/" + url.PathEscape(scid) + "/stats/" + url.PathEscape(strings.Join(names, ","))
	if _, err := u.call(ctx, a, "GET", path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.User.stats(), nil
}

// GetStatsBatch returns named statistics of 1 to 100 users, by xuid
// (POST /batch).
func (u *User) GetStatsBatch(ctx context.Context, xuids []string, scid string, names []string) (map[string][]Stat, error) {
	a := statsAPI
	a.name = "GetStatsBatch"
	if err := checkCount(a, "xuids", len(xuids), 1, 100); err != nil {
		return nil, err
	}
	type scidStats struct {
		Scid           string   `json:"scid"`
		RequestedStats []string `json:"requestedstats"`
	}
	in := struct {
		RequestedUsers []string    `json:"requestedusers"`
		RequestedScids []scidStats `json:"requestedscids"`
	}{xuids, []scidStats{{scid, names}}}
	var out struct {
		Users []statsUser `json:"users"`
	}
	if _, err := u.call(ctx, a, "POST", "/batch", nil, in, &out); err != nil {
		return nil, err
	}
	m := make(map[string][]Stat, len(out.Users))
	for _, su := range out.Users {
		m[su.Xuid] = su.stats()
	}
	return m, nil
}

// LeaderboardRow is one ranked user.
type LeaderboardRow struct {
	Xuid       string   `json:"xuid"`
	Gamertag   string   `json:"gamertag"`
	Rank       int      `json:"rank"`
	Percentile float64  `json:"percentile"`
	Values     []string `json:"values"`
}

// GetLeaderboard returns one page of a leaderboard, such as
// "stat(kills)" (GET /scids/{scid}/leaderboards/{name}). maxItems 0 lets
// the service choose.
func (u *User) GetLeaderboard(ctx context.Context, scid, name string, maxItems int, token string) (Page[LeaderboardRow], error) {
	a := leaderboardAPI
	a.name = "GetLeaderboard"
	q := url.Values{}
	if maxItems > 0 {
		q.Set("maxItems", strconv.Itoa(maxItems))
	}
	if token != "" {
		q.Set("continuationToken", token)
	}
	var out struct {
		PagingInfo struct {
			ContinuationToken *string `json:"continuationToken"`
		} `json:"pagingInfo"`
		UserList []LeaderboardRow `json:"userList"`
	}
	if _, err := u.call(ctx, a, "GET", "/scids/"+url.PathEscape(scid)+"/leaderboards/"+url.PathEscape(name), q, nil, &out); err != nil {
		return Page[LeaderboardRow]{}, err
	}
	return Page[LeaderboardRow]{Items: out.UserList, ContinuationToken: deref(out.PagingInfo.ContinuationToken)}, nil
}

// AllLeaderboard iterates over a whole leaderboard, pageSize rows a request.
func (u *User) AllLeaderboard(ctx context.Context, scid, name string, pageSize int) iter.Seq2[LeaderboardRow, error] {
	return pages(ctx, func(ctx context.Context, token string) (Page[LeaderboardRow], error) {
		return u.GetLeaderboard(ctx, scid, name, pageSize, token)
	})
}
