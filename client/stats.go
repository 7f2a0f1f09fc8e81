package client

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
)

var (
	statsAPI = api{service: "userstats", host: "userstats.xboxlive.com", contract: "1", rule: "stats-read"}
	// Event-based stats leaderboards are contract 3.1, title-managed stat
	// leaderboards 4.1 (XSAPI leaderboard_service.cpp).
	leaderboardAPI     = api{service: "leaderboards", host: "leaderboards.xboxlive.com", contract: "3.1", rule: "leaderboards"}
	statLeaderboardAPI = api{service: "leaderboards", host: "leaderboards.xboxlive.com", contract: "4.1", rule: "leaderboards",
		pathHas: "/leaderboards/stat("}
)

// Stat is one statistic value.
type Stat struct {
	Name  string `json:"statname"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// UserStats are one user's statistics, per service configuration.
type UserStats struct {
	XUID  string      `json:"xuid"`
	SCIDs []SCIDStats `json:"scids"`
}

// SCIDStats are the statistics of one service configuration.
type SCIDStats struct {
	SCID  string `json:"scid"`
	Stats []Stat `json:"stats"`
}

// Stats returns every statistic of s, in order.
func (s UserStats) Stats() []Stat {
	var out []Stat
	for _, sc := range s.SCIDs {
		out = append(out, sc.Stats...)
	}
	return out
}

// GetStats returns named statistics of one user
// (GET /users/xuid(X)/scids/{scid}/stats/{a,b}, contract 1). The answer's
// root is the user: {"xuid", "scids": [{"scid", "stats"}]}.
// An answer whose root is another user, or that holds no statistics of
// scid, is an error.
func (u *User) GetStats(ctx context.Context, xuid, scid string, names []string) (UserStats, error) {
	a := statsAPI
	a.name = "GetStats"
	scid, err := u.checkStatsArgs(a, xuid, scid, names)
	if err != nil {
		return UserStats{}, err
	}
	var out UserStats
	status, err := u.call(ctx, a, "GET", userPath(xuid, "scids", scid, "stats", strings.Join(names, ",")), nil, nil, &out)
	if err != nil {
		return UserStats{}, err
	}
	switch {
	case out.XUID == "" || out.SCIDs == nil:
		return UserStats{}, lacks(a, status, `"xuid" and "scids"`)
	case out.XUID != xuid: // another user's statistics are not this one's
		return UserStats{}, lacks(a, status, "the statistics of the user asked for (they are another's)")
	}
	if err := ofSCID(a, status, scid, out); err != nil {
		return UserStats{}, err
	}
	return out, nil
}

// ofSCID checks that s holds statistics of scid, the service
// configuration asked for: an answer of others' only is not its. Others
// beside it are kept, as XSAPI keeps them (its StatsTests.cpp
// defaultSingleUserStatsResponse answers one SCID's request with two).
func ofSCID(a api, status int, scid string, s UserStats) error {
	for _, sc := range s.SCIDs {
		if strings.EqualFold(sc.SCID, scid) {
			return nil
		}
	}
	return lacks(a, status, "the statistics of the service configuration asked for")
}

func (u *User) checkStatsArgs(a api, xuid, scid string, names []string) (string, error) {
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return "", err
	}
	if err := checkCount(a, "names", len(names), 1, 100); err != nil {
		return "", err
	}
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, ",/") {
			return "", invalid(a, "a stat name may not be empty or hold ',' or '/': "+safetext.Quote(n, 64))
		}
	}
	return normSCID(a, "scid", scid)
}

// GetStatsBatch returns named statistics of 1 to 100 users, by xuid
// (POST /batch?operation=read, contract 1).
//
// An answer holding a record of a user not asked for, or two records of
// one user, or a user's record without statistics of scid, is an error:
// none of its records is returned.
func (u *User) GetStatsBatch(ctx context.Context, xuids []string, scid string, names []string) (map[string]UserStats, error) {
	a := statsAPI
	a.name = "GetStatsBatch"
	if err := checkXUIDs(a, "xuids", xuids, 1, 100); err != nil {
		return nil, err
	}
	scid, err := u.checkStatsArgs(a, xuids[0], scid, names)
	if err != nil {
		return nil, err
	}
	type scidStats struct {
		SCID           string   `json:"scid"`
		RequestedStats []string `json:"requestedstats"`
	}
	in := struct {
		RequestedUsers []string    `json:"requestedusers"`
		RequestedScids []scidStats `json:"requestedscids"`
	}{xuids, []scidStats{{scid, names}}}
	var out struct {
		Users []UserStats `json:"users"`
	}
	status, err := u.call(ctx, a, "POST", path("batch"), url.Values{"operation": {"read"}}, in, &out)
	if err != nil {
		return nil, err
	}
	if out.Users == nil {
		return nil, lacks(a, status, `"users"`)
	}
	if err := onlyAsked(a, status, xuids, out.Users, func(s UserStats) string { return s.XUID }); err != nil {
		return nil, err
	}
	for _, su := range out.Users {
		if err := ofSCID(a, status, scid, su); err != nil {
			return nil, err
		}
	}
	m := make(map[string]UserStats, len(out.Users))
	for _, su := range out.Users {
		m[su.XUID] = su
	}
	return m, nil
}

// LeaderboardRow is one ranked user.
type LeaderboardRow struct {
	XUID     string `json:"xuid"`
	Gamertag string `json:"gamertag"`
	// UniqueModernGamertag is the gamertag with its suffix, such as
	// "Name#1234".
	UniqueModernGamertag string  `json:"uniquemoderngamertag"`
	Rank                 int     `json:"rank"`
	GlobalRank           int     `json:"globalrank"` // 0 when the service sent none
	Percentile           float64 `json:"percentile"` // 1.0 is the top
	// Value is the row's score. Contract 3.1 answers send it as "value";
	// older ones as "values", whose first element fills Value.
	Value  string   `json:"value"`
	Values []string `json:"values,omitempty"`
}

// Leaderboard is one page of a leaderboard.
type Leaderboard struct {
	Page[LeaderboardRow] // TotalCount: the rows of the whole leaderboard
	// Column names the ranked statistic and its type ("Integer", "Double",
	// "String").
	Column LeaderboardColumn
}

// LeaderboardColumn describes the ranked statistic.
type LeaderboardColumn struct {
	StatName string `json:"statName"`
	Type     string `json:"type"`
}

type leaderboardAnswer struct {
	PagingInfo *struct {
		ContinuationToken *string `json:"continuationToken"`
	} `json:"pagingInfo"`
	LeaderboardInfo *struct {
		TotalCount       int               `json:"totalCount"`
		ColumnDefinition LeaderboardColumn `json:"columnDefinition"`
	} `json:"leaderboardInfo"`
	UserList []LeaderboardRow `json:"userList"`
}

// GetLeaderboard returns one page of an event-based stats leaderboard
// configured for the title (GET /scids/{scid}/leaderboards/{name}, contract
// 3.1). maxItems 0 lets the service choose; pass the previous page's
// ContinuationToken for the next.
func (u *User) GetLeaderboard(ctx context.Context, scid, name string, maxItems int, continuationToken string) (Leaderboard, error) {
	a := leaderboardAPI
	a.name = "GetLeaderboard"
	return u.leaderboard(ctx, a, scid, name, name, "", maxItems, continuationToken)
}

// GetStatLeaderboard returns one page of the global leaderboard of a
// title-managed statistic (GET /scids/{scid}/leaderboards/stat({stat}),
// contract 4.1).
// A page whose column names another statistic is an error.
func (u *User) GetStatLeaderboard(ctx context.Context, scid, stat string, maxItems int, continuationToken string) (Leaderboard, error) {
	a := statLeaderboardAPI
	a.name = "GetStatLeaderboard"
	return u.leaderboard(ctx, a, scid, stat, "stat("+stat+")", stat, maxItems, continuationToken)
}

// leaderboard gets one page of the leaderboard at seg; column, when not
// "", is the statistic its column must name (another's page is refused).
func (u *User) leaderboard(ctx context.Context, a api, scid, name, seg, column string, maxItems int, continuationToken string) (Leaderboard, error) {
	scid, err := normSCID(a, "scid", scid)
	if err != nil {
		return Leaderboard{}, err
	}
	if name == "" || maxItems < 0 {
		return Leaderboard{}, invalid(a, "the leaderboard name is required and maxItems may not be negative")
	}
	q := url.Values{}
	if maxItems > 0 {
		q.Set("maxItems", strconv.Itoa(maxItems))
	}
	if continuationToken != "" {
		q.Set("continuationToken", continuationToken)
	}
	var out leaderboardAnswer
	status, err := u.call(ctx, a, "GET", path("scids", scid, "leaderboards", seg), q, nil, &out)
	if err != nil {
		return Leaderboard{}, err
	}
	if out.LeaderboardInfo == nil || out.UserList == nil {
		return Leaderboard{}, lacks(a, status, `"leaderboardInfo" and "userList"`)
	}
	if err := notNegative(a, status, "totalCount", out.LeaderboardInfo.TotalCount); err != nil {
		return Leaderboard{}, err
	}
	if err := eachNamed(a, status, `"xuid"`, out.UserList, func(r LeaderboardRow) string { return r.XUID }); err != nil {
		return Leaderboard{}, err
	}
	if c := out.LeaderboardInfo.ColumnDefinition.StatName; column != "" && c != column { // none named is not the one asked for
		return Leaderboard{}, lacks(a, status, "the leaderboard of the statistic asked for (it is "+safetext.Quote(c, 64)+"'s)")
	}
	for i := range out.UserList {
		if r := &out.UserList[i]; r.Value == "" && len(r.Values) > 0 {
			r.Value = r.Values[0]
		}
	}
	lb := Leaderboard{Page: Page[LeaderboardRow]{Items: out.UserList, TotalCount: out.LeaderboardInfo.TotalCount},
		Column: out.LeaderboardInfo.ColumnDefinition}
	if out.PagingInfo != nil {
		lb.ContinuationToken = deref(out.PagingInfo.ContinuationToken)
	}
	return lb, nil
}

// AllLeaderboard iterates over a whole event-based leaderboard, pageSize
// rows a request.
func (u *User) AllLeaderboard(ctx context.Context, scid, name string, pageSize int) iter.Seq2[LeaderboardRow, error] {
	return pages(ctx, api{service: leaderboardAPI.service, name: "AllLeaderboard"}, func(ctx context.Context, continuationToken string) (Page[LeaderboardRow], error) {
		lb, err := u.GetLeaderboard(ctx, scid, name, pageSize, continuationToken)
		return lb.Page, err
	})
}
